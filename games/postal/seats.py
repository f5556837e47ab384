"""Who holds a seat and the links that open it: a player replaced, a seat's links rotated,
"email me my links", and an address marked failing."""

from __future__ import annotations

import logging
from datetime import datetime
from functools import partial

from celery import current_app
from django.core.exceptions import ValidationError
from django.core.validators import validate_email
from django.db import transaction
from django.utils.translation import gettext

from games.engines import text as engine_text
from games.models import Game, GMAction, Handover, PressEmail, Seat, Step
from games.notify import calendar, email_choices, languages, reminders, reports
from games.postal import access
from games.postal.errors import PostalError
from games.postal.games import single_line
from games.postal.gm_log import GMNote, check_shown_step, gm_reason, log_gm
from games.postal.locks import locked, seat_at
from games.postal.steps import latest_event, name_seats
from moderator.mail import queueing
from moderator.mail.models import OutboundEmail

# The package's logger: its lines keep the name whichever module writes them.
log = logging.getLogger("games.postal")

# The worker's part of "email me my links" (games/tasks.py), published by name: the task
# module imports this one.
SEND_LOST_LINKS = "games.send_lost_links"


def rotate_link(game_id: int, *, position: int, now: datetime) -> str:
    """Every link of the seat stops working; the seat is emailed a new one."""
    with transaction.atomic():
        game = locked(game_id)
        seat = seat_at(game, position)
        calendar.forget_seat_feed(seat)
        seat.link_version += 1
        seat.save(update_fields=["link_version"])
        token = access.mint([seat], now=now)[position]
        queueing.queue([reports.link_email(game, seat, token)], urgent=True)
    return token


def ask_lost_links(email: str) -> None:
    """The request's part of "email me my links": once its transaction commits, a worker
    is asked to send them (``send_lost_links``, the task SEND_LOST_LINKS, on the urgent
    queue). The request looks nothing up, so it does the same work and takes as long
    whether or not the address plays here. With the broker away nothing is sent, the
    warning is logged (without the address) and the asker is answered as always: asking
    again later sends the links."""
    transaction.on_commit(partial(_publish_lost_links, email))


def _publish_lost_links(email: str) -> None:
    try:
        current_app.tasks[SEND_LOST_LINKS].delay(email=email)
    except Exception:
        log.warning("could not enqueue a request for lost links; nothing is sent", exc_info=True)


def send_lost_links(email: str, *, now: datetime) -> int:
    """Email the address one message with a fresh link to each of its seats in games that
    are not over (the address in any case); returns how many seats. An address with no
    such seat gets nothing, and its asker is told the same (the view says nothing else).

    The seats' earlier links keep working: anyone may ask for any address's links, so
    asking must not close a player's bookmarked page (closing them is the GM's
    ``rotate_link``). The new links are minted for the email alone, as every email's are."""
    seats = list(
        Seat.objects.select_related("game")
        .filter(email__iexact=email.strip())
        .exclude(game__status__in=[Game.Status.FINISHED, Game.Status.ABANDONED])
        .order_by("game_id", "position")
    )
    if not seats:
        return 0
    with transaction.atomic():
        tokens = access.mint_each(seats, now=now)
        queueing.queue_once([reports.lost_links_email(seats, tokens, now)], urgent=True)
    return len(seats)


def replace_player(
    game_id: int,
    *,
    position: int,
    name: str,
    email: str,
    now: datetime,
    reason: str = "",
    by: int | None = None,
    shown_step: int | None = None,
    logged: engine_text.Text | None = None,
) -> Seat:
    """A new person takes the seat: new name and address, new link; the seat keeps its
    state, and the old person's links stop working. Logged for the players with
    ``reason`` (``GMAction``): by name, never by address; ``logged``: what the log says
    instead of the GM's handover, when the GM did not do it (a reserve took the seat).
    ``shown_step``: the step the GM's page showed (``check_shown_step``). The name and
    address that already hold the seat are refused (a double click): nothing changes ("Send
    a new link" gives a new link).

    From now on the game names the seat's player by the new name (``steps.name_seats``:
    the board, the prompts, what the game says); what was said before keeps the name it
    was said under.

    A person at another address starts a new tenure of the seat (``Seat.tenure``): the
    private messages of the one who leaves stay theirs, and the choices of their own (time
    zone, language, how often reports and messages are emailed, what plays a missed turn)
    become the newcomer's own, or the game's defaults; so do the missed turns, the
    extensions and away time used, and civil disorder: the newcomer starts with a clean
    record. The newcomer is welcomed with the game's rules, the seat's current report and
    their link (``welcome_email``); the one who leaves is told, without a link. The same
    person renamed, or at the same address written otherwise, keeps their record and gets
    a new link. Every token of the seat (links, the browsers they opened, the reply, press,
    stop and calendar addresses) holds the link version, which moves on."""
    note = GMNote(gm_reason(reason), by)
    name = single_line(name, "the name")
    email = single_line(email, "the email")
    try:
        validate_email(email)
    except ValidationError:
        raise PostalError(f"{email!r} is not one email address") from None
    with transaction.atomic():
        game = locked(game_id)
        # A seat is replaced in a finished game too: at the step it finished at.
        check_shown_step(game, shown_step, until_the_end=False)
        seat = seat_at(game, position)
        if seat.name == name and seat.email.lower() == email.lower():
            raise PostalError(
                gettext("nothing was done: %(name)s <%(email)s> already plays seat %(seat)d")
                % {"name": seat.name, "email": seat.email, "seat": seat.position + 1}
            )
        if game.seats.exclude(pk=seat.pk).filter(name__iexact=name).exists():
            raise PostalError(f"another player is already called {name!r}")
        log_gm(game, GMAction.Kind.REPLACE, logged or _replaced(seat, name, email), note, now)
        newcomer = seat.email.lower() != email.lower()
        # A reserve who takes a seat (``logged``): the emails say so in their own words,
        # with no "GM's reason".
        reserve = logged is not None
        reason = "" if reserve else note.reason
        mail: list[OutboundEmail] = []
        if newcomer:
            # Told in their own language, before the seat is the newcomer's.
            mail.append(reports.replaced_email(game, seat, name, reason, now, reserve=reserve))
            _new_tenure(game, seat, email, now)
        left, renamed = seat.name, seat.name != name
        seat.name, seat.email = name, email
        calendar.forget_seat_feed(seat)
        seat.link_version += 1
        seat.save(update_fields=SEAT_FIELDS)
        if newcomer:  # the newcomer's ladder and night remind them
            reminders.remind_again(games=[game.pk])
        if renamed:
            _say_new_name(game)
        token = access.mint([seat], now=now)[position]
        if newcomer:
            mail.append(_welcome(game, seat, token, left, reason, now, reserve=reserve))
        else:
            mail.append(reports.link_email(game, seat, token))
        queueing.queue(mail, urgent=True)
    return seat


# What replace_player changes on the seat (it is saved with exactly these).
SEAT_FIELDS = [
    "name",
    "email",
    "link_version",
    "nmr_count",
    "autopilot",
    "extensions_used",
    "missed_in_row",
    "away_hours_used",
    "civil_disorder_at",
    "held_since",
    "email_failing",
    "email_failing_at",
    "reports",
    "language",
    "reported_through",
    "tenure",
    "time_zone",
    "press_email",
    "press_told",
    "web_receipts",
    "bot",
]


def _new_tenure(game: Game, seat: Seat, email: str, now: datetime) -> None:
    """The seat's new tenure for the person at ``email``: the one who leaves keeps the
    seat in their record, abandoned; the newcomer's choices are their own (their
    address's defaults, else the game's), told from now on, with a clean record."""
    Handover.objects.create(
        seat=seat, name=seat.name, email=seat.email, held_since=seat.held_since, left_at=now
    )
    seat.held_since = now
    seat.tenure += 1
    seat.email_failing, seat.email_failing_at = "", None
    address = email_choices.normalise(email)
    seat.reports = email_choices.defaults([email]).get(address, "")
    seat.language = languages.of_addresses([email]).get(address, "")
    seat.time_zone = email_choices.zones([email]).get(address, "")
    seat.web_receipts = address in email_choices.web_receipt_addresses([email])
    seat.reported_through = latest_event(game)
    seat.press_email = PressEmail.EACH
    seat.press_told = _latest_message(game)
    # The missed turns and the civil disorder were the one who left's: a newcomer does not
    # start a deadline away from civil disorder, nor with the extensions and away time
    # spent. Their own autopilot choice, too.
    seat.autopilot = ""
    # The one who left may have played by a bot; the newcomer has not said so.
    seat.bot = False
    seat.nmr_count = seat.missed_in_row = 0
    seat.extensions_used = seat.away_hours_used = 0
    seat.civil_disorder_at = None


def _say_new_name(game: Game) -> None:
    """The game's state and its open step's with the seat's new name (``name_seats``)."""
    step = game.steps.filter(number=game.step_number, status=Step.Status.OPEN).first()
    name_seats(game, step)
    game.save(update_fields=["state"])
    if step is not None:
        step.save(update_fields=["state_before", "prompts"])


def _welcome(
    game: Game, seat: Seat, token: str, left: str, reason: str, now: datetime, *, reserve: bool
) -> OutboundEmail:
    """The newcomer's first email: the invitation of a game not started yet (its rules and
    their link; the first report comes at the start), the welcome with the seat's current
    report of a game under way, the new link alone of a game that is over. ``reserve``: a
    reserve took the seat (``logged``), not the GM's handover."""
    if game.state is None:
        return reports.invite_email(game, seat, token, now)
    if game.status in (Game.Status.FINISHED, Game.Status.ABANDONED):
        return reports.link_email(game, seat, token)
    return reports.welcome_email(
        game, seat, token, left=left, reason=reason, now=now, reserve=reserve
    )


def _latest_message(game: Game) -> int:
    """The id of the game's latest message between players (0: none yet)."""
    return game.press_messages.order_by("-id").values_list("id", flat=True).first() or 0


def _replaced(seat: Seat, name: str, email: str) -> engine_text.Text:
    """A replacement in the players' words: names only, never an address."""
    if seat.email.lower() != email.lower():
        return engine_text._(
            "The GM handed seat %(number)d from %(old)s to %(new)s",
            number=seat.position + 1,
            old=seat.name,
            new=name,
        )
    if seat.name != name:
        return engine_text._("The GM renamed %(old)s to %(new)s", old=seat.name, new=name)
    return engine_text._("The GM gave %(name)s a new link", name=seat.name)


def mark_bot(seat_id: int) -> None:
    """Say the seat is played by a bot (its player made a bot's token for it, or a bot's
    token sent its order), in a game that allows bots: everyone sees it from now on, in the
    archive too."""
    Seat.objects.filter(pk=seat_id, bot=False, game__bots_allowed=True).update(bot=True)


def mark_email_failing(game_id: int, address: str, reason: str, *, now: datetime) -> list[Seat]:
    """The ESP reported ``address`` bouncing, complaining or rejected: every seat of the
    game with that address not yet marked is marked with ``reason`` (the GM panel shows
    it; replacing the address clears it). Returns the seats marked now, in the caller's
    transaction."""
    seats = list(Seat.objects.filter(game_id=game_id, email__iexact=address, email_failing=""))
    Seat.objects.filter(pk__in=[seat.pk for seat in seats]).update(
        email_failing=reason, email_failing_at=now
    )
    return seats
