"""A player's choices for their seat: which emails come (and the one-click stop), an
automatic extension spent before the deadline, what plays a missed turn, the language."""

from __future__ import annotations

from datetime import datetime, timedelta

from django.db import transaction
from django.db.models import Max
from django.utils.translation import gettext, ngettext, pgettext_lazy

from games.community import press
from games.engines import registry
from games.engines import text as engine_text
from games.engines.base import Event
from games.lib import words
from games.models import Event as EventRow
from games.models import Game, PressEmail, Reports, Seat, Step
from games.notify import email_choices, ladder, languages, reminders
from games.postal.errors import PostalError, SeatNotFound
from games.postal.locks import locked, open_step_of, seat_at
from games.postal.steps import event_row, tell_deadline


def stop_email(seat: Seat, what: str) -> str:
    """An email's one-click unsubscribe (``access.STOPS``): no more step reports by email
    for this seat ("reports") or for every seat of its address, as its default too
    ("all-reports"), no more reminders for the address ("reminders"), or no more of the
    game's messages for this seat ("press": the GM's announcements still come). Nothing else
    changes: orders, the record and the seat's page stay as they are, and the emails a
    player must not miss (the first report, the final standings, receipts) still come.
    Returns what the player gets now, in words."""
    if what == "reminders":
        reminders.choose(seat, way=reminders.NONE)
        return gettext("%(email)s gets no reminders before deadlines, in any game") % {
            "email": seat.email
        }
    if what == "press":
        press.choose_email(seat.game_id, position=seat.position, choice=PressEmail.NONE)
        return gettext("%(name)s gets no messages of %(game)s by email") % {
            "name": seat.name,
            "game": seat.game.title,
        }
    if what not in ("reports", "all-reports"):
        raise PostalError(f"{what!r} is not an email that can be stopped")
    everywhere = what == "all-reports"
    chosen = choose_reports(
        seat.game_id, position=seat.position, choice=email_choices.NONE, everywhere=everywhere
    )
    if everywhere:
        games = len({other.game_id for other in chosen})
        return ngettext(
            "%(email)s gets no reports by email in its %(count)d game, nor in the games it "
            "joins later",
            "%(email)s gets no reports by email in its %(count)d games, nor in the games it "
            "joins later",
            games,
        ) % {"email": seat.email, "count": games}
    return gettext("%(name)s gets no reports of %(title)s by email") % {
        "name": seat.name,
        "title": seat.game.title,
    }


def choose_reports(
    game_id: int,
    *,
    position: int,
    choice: str,
    everywhere: bool,
    web_receipts: bool | None = None,
) -> list[Seat]:
    """How often the seat gets its step reports (``games.notify.email_choices``): for this seat,
    or (``everywhere``) for every seat of its address in every game, and as its player's
    default for the seats the address gets later. Returns the seats chosen for.
    ``web_receipts`` (None: unchanged): whether those seats get a receipt by email of the
    orders made on their pages (``Seat.web_receipts``), chosen alike.

    A seat that got every step's report until now is marked told of every event so far:
    from now on its emails tell what happens from now. PostalError for a choice that does
    not exist, and nothing changes."""
    if choice not in Reports.values:
        known = "; ".join(f"{value!r} ({label})" for value, label in Reports.choices)
        raise PostalError(f"{choice!r} is not a choice of how often to email; the choices: {known}")
    with transaction.atomic():
        try:
            seat = Seat.objects.select_related("game").get(game_id=game_id, position=position)
        except Seat.DoesNotExist:
            raise SeatNotFound("there is no such seat in this game") from None
        if everywhere:
            preference = email_choices.set_default(seat.email, choice, time_zone=seat.zone)
            if web_receipts is not None and preference.web_receipts != web_receipts:
                preference.web_receipts = web_receipts
                preference.save(update_fields=["web_receipts", "updated_at"])
            chosen = Seat.objects.filter(email__iexact=seat.email)
        else:
            if choice == email_choices.DIGEST:
                email_choices.preference_of(seat.email, time_zone=seat.zone)
            chosen = Seat.objects.filter(pk=seat.pk)
        seats = list(chosen.select_related("game").select_for_update(of=("self",)).order_by("pk"))
        latest = dict(
            EventRow.objects.filter(game_id__in={seat.game_id for seat in seats})
            .order_by()
            .values("game_id")
            .annotate(latest=Max("id"))
            .values_list("game_id", "latest")
        )
        for seat in seats:
            engine = registry.get(seat.game.engine)
            if not email_choices.tells_since(seat, engine):
                seat.reported_through = latest.get(seat.game_id, 0)
            seat.reports = choice
            if web_receipts is not None:
                seat.web_receipts = web_receipts
        Seat.objects.bulk_update(seats, ["reports", "reported_through", "web_receipts"])
    return seats


def choose_ladder(seat: Seat, rungs: list[ladder.Rung] | None, *, everywhere: bool) -> list[Seat]:
    """The reminder ladder (``games.notify.ladder``) of the seat, or (``everywhere``) of
    every seat of its address in every game and of the seats it gets later; None: back to
    the default (the address's for one seat, each game's for all of them). Returns the
    seats chosen for. BadLadder for a ladder that may not be, and nothing changes."""
    rungs = None if rungs is None else ladder.check(rungs)
    value = None if rungs is None else ladder.stored(rungs)
    with transaction.atomic():
        if not everywhere:
            Seat.objects.filter(pk=seat.pk).update(ladder=value)
            reminders.remind_again(games=[seat.game_id])
            return [seat]
        preference = email_choices.preference_of(seat.email, time_zone=seat.zone)
        preference.ladder = value
        preference.save(update_fields=["ladder", "updated_at"])
        seats = list(Seat.objects.filter(email__iexact=seat.email).order_by("pk"))
        Seat.objects.filter(pk__in=[other.pk for other in seats]).update(ladder=None)
        reminders.remind_again(emails=[seat.email])
        return seats


def use_extension(
    game_id: int, *, position: int, now: datetime, shown_deadline: int | None = None
) -> Step:
    """The seat's player spends one of their automatic extensions before the deadline:
    the open step's deadline moves on by the game's extension time, and it is emailed
    to the seats that owe an order and to those that get every report (``tell_deadline``).
    PostalError says why not (none left, no order owed, the game not running).
    ``shown_deadline``: the deadline the player's page showed (seconds since the epoch),
    when a person clicked: once it has moved (a double click, an extension already spent,
    the GM's change) nothing is spent."""
    with transaction.atomic():
        game = locked(game_id)
        seat = seat_at(game, position)
        if game.status != Game.Status.RUNNING:
            raise PostalError(
                gettext("the game is %(status)s; deadlines move only in a running game")
                % {"status": _status_in_words(game)}
            )
        if not game.extensions:
            raise PostalError(gettext("this game gives no extensions"))
        if seat.extensions_used >= game.extensions:
            raise PostalError(
                ngettext(
                    "you have used all %(count)d extension of this game",
                    "you have used all %(count)d extensions of this game",
                    game.extensions,
                )
                % {"count": game.extensions}
            )
        step = open_step_of(game)
        if position not in step.prompted_seats:
            raise PostalError(
                gettext("you owe no order %(this_step)s, so its deadline stays")
                % {"this_step": words.this_step(registry.get(game.engine).step_word)}
            )
        if step.deadline <= now:
            raise PostalError(gettext("the deadline has passed"))
        if shown_deadline is not None and int(step.deadline.timestamp()) != shown_deadline:
            raise PostalError(
                gettext(
                    "the deadline moved since your page showed it (an extension already used, "
                    "or the GM's change): see the new one"
                )
            )
        seat.extensions_used += 1
        seat.save(update_fields=["extensions_used"])
        step.deadline += timedelta(hours=game.extension_hours)
        step.save(update_fields=["deadline"])
        left = game.extensions - seat.extensions_used
        text = engine_text._(
            "%(name)s used an extension (%(left)s left): the deadline of %(step)s moved by "
            "%(hours)s",
            name=seat.name,
            left=engine_text.ngettext("%(count)d extension", "%(count)d extensions", left),
            step=words.step_words(game.rules.step_word, step.number),
            hours=engine_text.ngettext("%(count)d hour", "%(count)d hours", game.extension_hours),
        )
        event_row(game, step, Event(text)).save()
        tell_deadline(game, step, now, reason=words.Said(text))
    return step


def choose_autopilot(game_id: int, *, position: int, key: str) -> Seat:
    """The seat's player chooses what plays their turn when they miss a deadline: ""
    (the game's NMR default) or one of its engine's autopilots."""
    with transaction.atomic():
        game = locked(game_id)
        seat = seat_at(game, position)
        if game.status in (Game.Status.FINISHED, Game.Status.ABANDONED):
            raise PostalError(gettext("the game is over; nothing plays for you any more"))
        if key and registry.strategy(game.engine, key) is None:
            offered = ", ".join(s.key for s in registry.strategies(game.engine))
            raise PostalError(
                gettext("%(game)s has no autopilot %(key)s (it has: %(offered)s)")
                % {
                    "game": registry.get(game.engine).title,
                    "key": repr(key),
                    "offered": offered or gettext("none"),
                }
            )
        seat.autopilot = key
        seat.save(update_fields=["autopilot"])
    return seat


def choose_language(game_id: int, *, position: int, language: str) -> Seat:
    """The seat's own language for its page and emails ("": its game's; docs/languages.md).
    PostalError for a language the service does not write, and nothing changes."""
    if language and language not in languages.NAMES:
        raise PostalError(f"{language!r} is not a language of this service")
    with transaction.atomic():
        seat = (
            Seat.objects.select_related("game")
            .select_for_update(of=("self",))
            .get(game_id=game_id, position=position)
        )
        seat.language = language
        seat.save(update_fields=["language"])
    return seat


def _status_in_words(game: Game) -> str:
    """A game's state as a player's message names it."""
    return str(_STATUS_WORDS.get(game.status, game.status))


_STATUS_WORDS: dict[str, object] = {
    Game.Status.DRAFT: pgettext_lazy("the game is", "draft"),
    Game.Status.RECRUITING: pgettext_lazy("the game is", "recruiting"),
    Game.Status.RUNNING: pgettext_lazy("the game is", "running"),
    Game.Status.PAUSED: pgettext_lazy("the game is", "paused"),
    Game.Status.FINISHED: pgettext_lazy("the game is", "finished"),
    Game.Status.ABANDONED: pgettext_lazy("the game is", "abandoned"),
}
