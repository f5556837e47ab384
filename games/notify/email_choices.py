"""How often a player is emailed their step reports: every step, only when they owe an
order (with every event since their last email, so nothing is lost), in one daily digest,
or never (the seat's page shows every report; an email's one-click unsubscribe chooses it).

A seat's choice is ``Seat.reports``; blank, the game's default holds, from its engine: only
when it owes in a game where one seat at a time owes (``engine.sequential``), every step
otherwise. A player's default is ``EmailPreference.reports``, keyed by the normalised
address (a later account owns the row): a new seat of the address starts with it, and
choosing "all my seats" sets it together with every seat of the address
(``postal.choose_reports``).

Always sent, whatever the choice, because they are not step reports or because a player
must not miss them: the first report (the game has started), the final standings,
invitations, new links, receipts of orders sent by email and refusals, reminders before a
deadline the seat owes, and the GM's messages. The seat's page always shows every report.
A receipt of an order made on the seat's page comes only when its player turned them on
(``Seat.web_receipts``, and ``EmailPreference.web_receipts`` for the address's later
seats). Nothing that quotes a deadline comes once the game is over.

A new seat of an address starts with its player's choices: how often it gets reports
(``defaults``), receipts of its page's orders (``web_receipt_addresses``) and, of a
signed-in player, their time zone (``zones``), as it starts with their language
(``languages.of_addresses``).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from django.utils.functional import lazy
from django.utils.translation import gettext_lazy

from games.lib import words
from games.models import EmailPreference, Player, Reports, Seat, Step

EVERY, OWED, DIGEST, NONE = (
    Reports.EVERY.value,
    Reports.OWED.value,
    Reports.DIGEST.value,
    Reports.NONE.value,
)

# The choice in words: "You get this game's reports ..."; "every postal turn" is said in
# the game's own word (``you_get``).
YOU_GET = {
    OWED: gettext_lazy("only when you owe an order, with what happened since"),
    DIGEST: gettext_lazy("in one daily digest"),
    NONE: gettext_lazy("never by email: your seat's page shows every report"),
}


# The word for a step where a choice spans games (a player's own settings, for all their
# seats, and their seats' games later): every game of the registry calls its steps so.
ACROSS_GAMES = "postal turn"


def you_get(choice: str, step_word: str) -> str:
    """``choice`` in words, a step called by ``step_word`` (``Engine.step_word``, or
    ``ACROSS_GAMES``): "every postal turn", "every round", "in one daily digest"."""
    return words.every_step(step_word) if choice == EVERY else str(YOU_GET[choice])


def offered(step_word: str) -> list[tuple[str, Any]]:
    """The choices a form offers (``Reports``), "every step" said as ``step_word`` (see
    ``you_get``) in the language active when the form is shown."""
    every = lazy(words.every_step, str)(step_word)
    return [(value, every if value == EVERY else label) for value, label in Reports.choices]


# The scopes a player may apply a choice to, from the seat's page.
THIS_SEAT, ALL_SEATS = "seat", "all"


def normalise(address: str) -> str:
    """The key of an address's preferences: the same person whatever the case."""
    return address.strip().lower()


def game_default(engine: Any) -> str:
    return OWED if engine.sequential else EVERY


def effective(seat: Seat, engine: Any) -> str:
    """The seat's choice, or its game's default."""
    return seat.reports or game_default(engine)


def sends_report(seat: Seat, engine: Any, step: Step | None) -> bool:
    """Whether the report of ``step`` (None: the final standings) goes to ``seat`` now."""
    if step is None or step.number == 1:
        return True
    choice = effective(seat, engine)
    return choice == EVERY or (choice == OWED and seat.position in step.prompted_seats)


def tells_since(seat: Seat, engine: Any) -> bool:
    """Whether the seat's reports list every event since its last email (it does not get
    every step's report), rather than the step's own."""
    return effective(seat, engine) != EVERY


def defaults(addresses: Iterable[str]) -> dict[str, str]:
    """The players' defaults for new seats: normalised address -> choice (one query;
    addresses without a default are left out)."""
    wanted = {normalise(address) for address in addresses}
    return dict(
        EmailPreference.objects.filter(email__in=wanted)
        .exclude(reports="")
        .values_list("email", "reports")
    )


def web_receipt_addresses(addresses: Iterable[str]) -> set[str]:
    """Of ``addresses``, the normalised ones whose new seats get receipts of the orders
    made on their pages (one query)."""
    wanted = {normalise(address) for address in addresses}
    return set(
        EmailPreference.objects.filter(email__in=wanted, web_receipts=True).values_list(
            "email", flat=True
        )
    )


def zones(addresses: Iterable[str]) -> dict[str, str]:
    """The time zones signed-in players of ``addresses`` chose: normalised address ->
    zone, one query; an address without a choice is left out (its seats write times in
    their game's zone)."""
    wanted = {normalise(address) for address in addresses}
    return dict(
        Player.objects.filter(email__in=wanted)
        .exclude(time_zone="")
        .values_list("email", "time_zone")
    )


def set_default(address: str, choice: str, *, time_zone: str) -> EmailPreference:
    """The address's default for new seats ("": each game's own). A new row takes
    ``time_zone`` for its digests; an existing one keeps its own."""
    preference, _ = EmailPreference.objects.get_or_create(
        email=normalise(address), defaults={"time_zone": time_zone}
    )
    if preference.reports != choice:
        preference.reports = choice
        preference.save(update_fields=["reports", "updated_at"])
    return preference


def preference_of(address: str, *, time_zone: str) -> EmailPreference:
    """The address's row, made with its defaults when it has none: a seat choosing the
    digest needs one, whose hour and zone its digest follows and which the digest task
    claims."""
    preference, _ = EmailPreference.objects.get_or_create(
        email=normalise(address), defaults={"time_zone": time_zone}
    )
    return preference


def saved_preference(seat: Seat) -> EmailPreference | None:
    """The preferences saved for the seat's address, or None: one read for all that the
    seat's page says of them (``digest_time``, ``reminders.choice_of``)."""
    return saved_preference_of(seat.email)


def saved_preference_of(address: str) -> EmailPreference | None:
    """The preferences saved for ``address``, or None."""
    return EmailPreference.objects.filter(email=normalise(address)).first()


def digest_time(seat: Seat, preference: EmailPreference | None) -> str:
    """When the seat's address gets its daily digest (``preference``: its saved
    preferences), in words ("08:00 (Europe/Paris)")."""
    if preference is None:
        return f"{8:02d}:00 ({seat.zone})"
    return f"{preference.hour:02d}:00 ({preference.time_zone})"
