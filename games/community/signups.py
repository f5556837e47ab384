"""Open games: people sign up on the list of open games (``/open/``) instead of, or
besides, the GM's invitations, and seats in civil disorder are offered to a new player.

A sign-up counts once its address is confirmed through the link emailed to it. In a game
open to the first comers (``SignUpMode.FIRST``) a confirmed sign-up takes a seat while one
is left, else it waits on the waiting list; in a game whose GM approves each player
(``APPROVE``) it waits for the GM. The game starts when its last seat is taken in a FIRST
game, or when the GM starts it: the seats of the accepted sign-ups are made then, after the
invited players', in the order the sign-ups were confirmed. A sign-up for a seat in civil
disorder always waits for the GM, whose approval replaces the seat's player
(``postal.replace_player``).

A FIRST game keeps its waiting list once it starts, as its reserves, until it ends: it stays
on the list of open games ("full, running: join as a reserve") and every sign-up confirmed
while it runs (or is paused) waits as a reserve. When a seat falls into civil disorder the
first reserve, by the time they confirmed, takes it at once (``on_civil_disorder``, in the
resolution's transaction: ``postal.replace_player`` welcomes them with the rules, the seat's
report and its link, tells the one who leaves, and the GM's log says so); with no reserve
nothing happens, and a reserve confirmed later takes a seat still in civil disorder that no
sign-up waits for the GM to give. A reserve may withdraw through their link, and the GM may
decline one; those still waiting when the game ends are told so (``on_game_finished``).
Those who signed up and had not confirmed when the game started are told once that it
started: in a FIRST game, that confirming still makes them a reserve.

Every change runs as ``games.postal``'s do: one transaction, the game row locked first,
time passed in as ``now``; the game is started, closed and its seats changed by postal
(``games.postal.signup_actions``), in that transaction. Every change of a sign-up's state
is emailed to its person (``signup``; a reserve who takes a seat gets the seat's welcome);
the confirmation link (``signup-confirm``) is the
one link of a sign-up: it confirms it, then shows its state and lets its person withdraw.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from django.conf import settings
from django.core.exceptions import ValidationError
from django.core.validators import validate_email
from django.db import transaction
from django.urls import reverse
from django.utils import translation
from django.utils.translation import gettext

from games import postal
from games.community.openings import (
    UNDER_WAY,
    confirm_window,
    gm_name,
    is_full,
    is_open,
    is_reserve,
    lapsed,
    live,
    reserves,
    seats,
    takes_reserves,
    waiting_place,
    would_wait,
)
from games.engines import registry
from games.lib import schedule
from games.models import Game, Seat, SignUp, SignUpMode
from games.postal import signup_actions
from moderator import bidi, links
from moderator.mail import building, queueing
from moderator.mail.models import OutboundEmail

log = logging.getLogger("games.community")

State = SignUp.State
NAME_LENGTH = SignUp._meta.get_field("name").max_length or 60
EMAIL_LENGTH = 254


class SignUpNotFound(postal.PostalError):
    """A sign-up link that names no sign-up."""


class LinkExpired(postal.PostalError):
    """A confirmation link used after ``SIGNUP_CONFIRM_HOURS``: the sign-up lapsed."""


# --- the person's side: sign up, confirm, withdraw --------------------------------------------


@dataclass(frozen=True)
class SignedUp:
    """A new sign-up, the token of its link (emailed; never shown on a page) and whether
    confirming it now would put it on the waiting list or before the GM."""

    signup: SignUp
    token: str
    waits: bool


def _clean(name: str, email: str) -> tuple[str, str]:
    name, email = name.strip(), email.strip()
    if not name:
        raise postal.PostalError(gettext("write the name you want to play under"))
    if len(name) > NAME_LENGTH:
        raise postal.PostalError(
            gettext("a name has at most %(count)d characters") % {"count": NAME_LENGTH}
        )
    if any(ord(char) < 32 or char in building.LINE_BREAKS or char == "\x7f" for char in name):
        raise postal.PostalError(gettext("the name must be a single line of text"))
    if (refused := bidi.refusal(name, gettext("the name"))) is not None:
        raise postal.PostalError(refused)
    try:
        validate_email(email)
    except ValidationError:
        raise postal.PostalError(
            gettext("%(email)s is not one email address") % {"email": repr(email)}
        ) from None
    if len(email) > EMAIL_LENGTH:
        raise postal.PostalError(gettext("the email address is too long"))
    return name, email


def refusal(game: Game, position: int | None) -> str | None:
    """Why nobody may sign up (or confirm a sign-up) for ``game`` now, in their words; None
    when they may. ``position``: a seat in civil disorder of a running game."""
    title = {"title": game.title}
    if position is None:
        if takes_reserves(game):
            return None
        if game.status in UNDER_WAY:
            return gettext("%(title)s has started: it takes no more sign-ups") % title
        if game.status in (Game.Status.FINISHED, Game.Status.ABANDONED):
            return gettext("%(title)s is over: it takes no more sign-ups") % title
        if not is_open(game):
            return gettext("%(title)s is not open for sign-up") % title
        return None
    if game.status not in UNDER_WAY or not game.offer_seats:
        return gettext("%(title)s offers no seat to a new player now") % title
    seat = game.seats.filter(position=position).first()
    if seat is None or seat.civil_disorder_at is None or seat.status != Seat.Status.ACTIVE:
        return gettext("seat %(number)d of %(title)s no longer looks for a new player") % {
            "number": position + 1,
            **title,
        }
    return None


def sign_up(
    game_id: int, *, name: str, email: str, now: datetime, position: int | None = None
) -> SignedUp:
    """Sign ``name`` and ``email`` up for the game (for the seat at ``position`` in civil
    disorder, if given) and email the address its confirmation link (urgent). PostalError,
    and nothing written, for a game that takes no sign-up, an address that plays in it or
    has a live sign-up for it, or a name another player of the game has."""
    name, email = _clean(name, email)
    with transaction.atomic():
        game = Game.objects.select_for_update().select_related("gm").get(pk=game_id)
        why = refusal(game, position)
        if why is not None:
            raise postal.PostalError(why)
        others = game.seats.exclude(position=position) if position is not None else game.seats
        if game.seats.filter(email__iexact=email).exists():
            raise postal.PostalError(
                gettext("%(email)s already plays in %(title)s")
                % {"email": email, "title": game.title}
            )
        if game.signups.filter(live(now), email__iexact=email).exists():
            raise postal.PostalError(
                gettext(
                    "%(email)s has already signed up for %(title)s: the link emailed to it "
                    "confirms the sign-up or shows it (a link not used to confirm within "
                    "%(hours)d hours lapses; then the address may sign up again)"
                )
                % {"email": email, "title": game.title, "hours": settings.SIGNUP_CONFIRM_HOURS}
            )
        if (
            others.filter(name__iexact=name).exists()
            or game.signups.filter(live(now), name__iexact=name).exists()
        ):
            raise postal.PostalError(
                gettext(
                    "another player of %(title)s is already called %(name)s: choose another name"
                )
                % {"title": game.title, "name": repr(name)}
            )
        token = links.new_token()
        signup = SignUp.objects.create(
            game=game,
            name=name,
            email=email,
            token_hash=links.digest(token),
            position=position,
            created_at=now,
        )
        waits = would_wait(game, position)
        queueing.queue([confirm_email(game, signup, token, waits=waits)], urgent=True)
    return SignedUp(signup=signup, token=token, waits=waits)


def signup_for(token: str) -> SignUp | None:
    """The sign-up a link's token names, with its game and GM; None for any other token."""
    if not token or len(token) > 100:
        return None
    return (
        SignUp.objects.select_related("game__gm")
        .defer("game__state", "game__seed")
        .filter(token_hash=links.digest(token))
        .first()
    )


def _locked(token: str) -> tuple[Game, SignUp]:
    """The game (locked) and the sign-up of ``token``, read after the game's lock."""
    found = signup_for(token)
    if found is None:
        raise SignUpNotFound("this sign-up link is not valid")
    game = Game.objects.select_for_update().select_related("gm").get(pk=found.game_id)
    return game, SignUp.objects.select_related("game").get(pk=found.pk)


def confirm(token: str, *, now: datetime) -> SignUp:
    """Confirm the sign-up of ``token``: it takes a seat (FIRST, while one is left: the last
    seat taken starts the game) or waits (on the waiting list, or for the GM). Confirming a
    confirmed sign-up again changes nothing. PostalError, and nothing changed, for a lapsed
    link or a game that no longer takes sign-ups."""
    with transaction.atomic():
        game, signup = _locked(token)
        if signup.state != State.UNCONFIRMED:
            return signup
        if lapsed(signup, now):
            raise LinkExpired(
                gettext(
                    "this confirmation link expired %(hours)d hours after the sign-up: sign up "
                    "again"
                )
                % {"hours": settings.SIGNUP_CONFIRM_HOURS}
            )
        why = refusal(game, signup.position)
        if why is not None:
            raise postal.PostalError(why)
        takes_seat = not would_wait(game, signup.position)
        signup.state = State.ACCEPTED if takes_seat else State.WAITING
        signup.confirmed_at = now
        signup.save(update_fields=["state", "confirmed_at"])
        if signup.position is not None:
            _tell(game, signup, "asked-seat", now)
        elif takes_seat:
            _tell(game, signup, "seated", now)
        elif game.signup == SignUpMode.APPROVE:
            _tell(game, signup, "asked", now)
        elif takes_reserves(game):
            taken = _reserve_confirmed(game, signup, now)
            if taken is not None:
                return taken
        else:
            _tell(game, signup, "waiting", now)
        if takes_seat and seats(game).left == 0:
            _start_when_full(game, now)
    return signup


def withdraw(token: str, *, now: datetime) -> SignUp:
    """The person of ``token`` withdraws their confirmed sign-up, before the game starts
    (for a seat in civil disorder: before the GM decides; a reserve: while the game is
    under way). A seat freed in a FIRST game goes to the first on the waiting list."""
    with transaction.atomic():
        game, signup = _locked(token)
        if signup.state not in (State.WAITING, State.ACCEPTED):
            raise postal.PostalError(
                gettext("there is no confirmed sign-up to withdraw: it is %(state)s")
                % {"state": signup.get_state_display()}
            )
        if signup.position is None and game.status != Game.Status.RECRUITING:
            _check_withdrawable(game, signup)
        if signup.position is not None and signup.state == State.ACCEPTED:
            raise postal.PostalError(
                gettext("you play seat %(number)d of %(title)s now: ask its GM to replace you")
                % {"number": signup.position + 1, "title": game.title}
            )
        _end(game, signup, State.WITHDRAWN, "withdrawn", now)
    return signup


def _check_withdrawable(game: Game, signup: SignUp) -> None:
    """PostalError unless the sign-up, of a game no longer recruiting, is a reserve."""
    names = {"title": game.title, "gm": gm_name(game)}
    if is_reserve(game, signup):
        return
    if game.status not in UNDER_WAY:
        raise postal.PostalError(gettext("%(title)s is over: there is nothing to withdraw") % names)
    if signup.state == State.WAITING:
        raise postal.PostalError(
            gettext("%(title)s has started without you: there is nothing to withdraw") % names
        )
    raise postal.PostalError(
        gettext("%(title)s has started: ask its GM (%(gm)s) to replace you") % names
    )


def _end(game: Game, signup: SignUp, state: str, reason: str, now: datetime) -> None:
    """End ``signup`` (withdrawn, declined) and tell its person; a seat it held in a FIRST
    game goes to the first on the waiting list."""
    held_seat = signup.state == State.ACCEPTED and signup.position is None
    signup.state = state
    signup.decided_at = now
    signup.save(update_fields=["state", "decided_at"])
    _tell(game, signup, reason, now)
    if held_seat and game.signup == SignUpMode.FIRST:
        _promote(game, now)


def _promote(game: Game, now: datetime) -> None:
    first = (
        game.signups.filter(state=State.WAITING, position__isnull=True)
        .order_by("confirmed_at", "id")
        .first()
    )
    if first is None or seats(game).left == 0:
        return
    first.state = State.ACCEPTED
    first.decided_at = now
    first.save(update_fields=["state", "decided_at"])
    _tell(game, first, "promoted", now)
    if seats(game).left == 0:
        _start_when_full(game, now)


# --- the GM's side ------------------------------------------------------------------------------


def _gm_locked(game_id: int, signup_id: int) -> tuple[Game, SignUp]:
    game = Game.objects.select_for_update().select_related("gm").get(pk=game_id)
    signup = game.signups.filter(pk=signup_id).first()
    if signup is None:
        raise postal.PostalError("there is no such sign-up for this game")
    return game, signup


def approve(game_id: int, signup_id: int, *, now: datetime) -> SignUp:
    """The GM gives a waiting sign-up a seat: one left in a game not yet started, or the seat
    in civil disorder it asked for, whose player it then replaces (``postal.replace_player``:
    the seat's state stays, its new player gets a link; the seat is out of civil disorder,
    and the other sign-ups for it are told it is taken)."""
    with transaction.atomic():
        game, signup = _gm_locked(game_id, signup_id)
        if signup.state != State.WAITING:
            raise postal.PostalError(
                f"nothing was done: {signup.name}'s sign-up is no longer waiting (its state: "
                f"{signup.get_state_display()})"
            )
        if signup.position is not None:
            _replace(game, signup, now)
            return signup
        if game.status != Game.Status.RECRUITING:
            raise postal.PostalError(f"{game.title} has started: its seats are taken")
        if seats(game).left == 0:
            raise postal.PostalError(
                "every seat is taken: decline a player first, or start the game"
            )
        signup.state = State.ACCEPTED
        signup.decided_at = now
        signup.save(update_fields=["state", "decided_at"])
        _tell(game, signup, "approved", now)
    return signup


def _replace(game: Game, signup: SignUp, now: datetime) -> None:
    assert signup.position is not None
    why = refusal(game, signup.position)
    if why is not None:
        raise postal.PostalError(f"{why}: decline {signup.name}'s sign-up")
    signup_actions.take_over_seat(
        game, signup.position, name=signup.name, email=signup.email, now=now
    )
    signup.state = State.ACCEPTED
    signup.decided_at = now
    signup.save(update_fields=["state", "decided_at"])
    _tell(game, signup, "approved-seat", now)
    _end_rivals(game, signup, now)


def _end_rivals(game: Game, signup: SignUp, now: datetime) -> None:
    """``signup`` took its seat: the other sign-ups for the seat end, those confirmed told."""
    rivals = game.signups.filter(live(now), position=signup.position).exclude(pk=signup.pk)
    for rival in rivals.filter(state=State.WAITING):
        _end(game, rival, State.DECLINED, "seat-taken", now)
    rivals.filter(state=State.UNCONFIRMED).update(state=State.DECLINED, decided_at=now)


def decline(game_id: int, signup_id: int, *, now: datetime) -> SignUp:
    """The GM turns a sign-up down (waiting, a reserve, or holding a seat of a game not yet
    started); its person is told. A seat it held in a FIRST game goes to the first on the waiting
    list."""
    with transaction.atomic():
        game, signup = _gm_locked(game_id, signup_id)
        if signup.state not in (State.WAITING, State.ACCEPTED):
            raise postal.PostalError(
                f"nothing was done: there is nothing to decline in {signup.name}'s sign-up "
                f"(its state: {signup.get_state_display()})"
            )
        if signup.state == State.ACCEPTED and (
            signup.position is not None or game.status != Game.Status.RECRUITING
        ):
            raise postal.PostalError(
                f"{signup.name} plays in {game.title} now: replace the player instead"
            )
        if (
            signup.position is None
            and game.status != Game.Status.RECRUITING
            and not is_reserve(game, signup)
        ):
            raise postal.PostalError(
                f"{game.title} has started: {signup.name} was told it started without them"
            )
        _end(game, signup, State.DECLINED, "declined", now)
    return signup


def close(game_id: int, *, now: datetime) -> int:
    """The GM closes sign-ups: the game leaves the list of open games, its accepted
    sign-ups keep their seats, and those waiting are told no seat came free (returns how
    many)."""
    with transaction.atomic():
        game = Game.objects.select_for_update().select_related("gm").get(pk=game_id)
        if not is_open(game):
            raise postal.PostalError(f"{game.title} is not open for sign-up")
        signup_actions.close(game)
        waiting = list(game.signups.filter(state=State.WAITING, position__isnull=True))
        for signup in waiting:
            signup.state = State.DECLINED
            signup.decided_at = now
            _tell(game, signup, "closed", now)
        SignUp.objects.bulk_update(waiting, ["state", "decided_at"])
    return len(waiting)


def start(game_id: int, *, now: datetime, seed: bytes | None = None) -> Game:
    """The GM starts a game not yet started: the accepted sign-ups are seated after the
    invited players, in the order they were confirmed, and the game starts
    (``postal.start_game``: every seat gets its first report and link). It needs its
    engine's fewest players seated. The sign-ups still waiting, and those not yet confirmed,
    are told it started without them."""
    with transaction.atomic():
        game = Game.objects.select_for_update().select_related("gm").get(pk=game_id)
        if game.status not in (Game.Status.DRAFT, Game.Status.RECRUITING):
            raise postal.PostalError(
                f"the game is {game.status}; only a game not yet started can start"
            )
        counts = registry.players(game.engine, game.options)
        counted = seats(game)
        if counted.taken < counts.low:
            raise postal.PostalError(
                f"{counts.title} needs at least {counts.low} players; "
                f"{counted.taken} {'has' if counted.taken == 1 else 'have'} a seat"
            )
        return _start(game, now, seed)


def _start_when_full(game: Game, now: datetime) -> None:
    """The last seat was taken: the game starts. Should its rules refuse to start, the
    sign-ups stand and the game waits for its GM, who is told why."""
    try:
        with transaction.atomic():
            _start(game, now, None)
    except postal.PostalError as error:
        signup_actions.could_not_start(game, error.message)


def _start(game: Game, now: datetime, seed: bytes | None) -> Game:
    """Seat the accepted sign-ups and start the game; tell those waiting (in a FIRST game:
    now its reserves) and those not yet confirmed."""
    accepted = list(
        game.signups.filter(state=State.ACCEPTED, position__isnull=True).order_by(
            "confirmed_at", "id"
        )
    )
    started = signup_actions.seat_and_start(game, accepted, now=now, seed=seed)
    first_come = game.signup == SignUpMode.FIRST
    for signup in reserves(game):
        if first_come:
            # The waiting list of a first-come game stays, as its reserves.
            _tell(game, signup, "reserve-started", now)
            continue
        signup.decided_at = now
        signup.save(update_fields=["decided_at"])
        _tell(game, signup, "started", now)
    # Those who signed up and have not confirmed yet would find out only by confirming.
    for signup in game.signups.filter(
        state=State.UNCONFIRMED, position__isnull=True, created_at__gt=now - confirm_window()
    ):
        _tell(game, signup, "started-unreserved" if first_come else "started-unconfirmed", now)
    return started


# --- the reserves of a first-come game under way -------------------------------------------------


def on_civil_disorder(
    sender: object, *, game: Game, positions: list[int], now: datetime, **kwargs: Any
) -> None:
    """The seats at ``positions`` fell into civil disorder in the resolution now ending (the
    signal ``civil_disorder``, in its transaction, the game locked): in a FIRST game each
    goes to the first reserve, in the order they confirmed."""
    if game.signup != SignUpMode.FIRST:
        return
    for position in positions:
        _seat_first_reserve(game, position, now)


def _seat_first_reserve(game: Game, position: int, now: datetime) -> SignUp | None:
    """The first reserve takes the seat at ``position`` (``signup_actions``); a reserve the
    handover refuses (a name another seat took since) stays on the list, and the next is
    asked. None: no reserve took it."""
    for reserve in reserves(game):
        try:
            signup_actions.reserve_takes_seat(
                game, position, name=reserve.name, email=reserve.email, now=now
            )
        except postal.PostalError as refused:
            log.warning("reserve %s could not take seat %s: %s", reserve.pk, position, refused)
            continue
        reserve.state = State.ACCEPTED
        reserve.position = position
        reserve.decided_at = now
        reserve.save(update_fields=["state", "position", "decided_at"])
        _end_rivals(game, reserve, now)
        return reserve
    return None


def _reserve_confirmed(game: Game, signup: SignUp, now: datetime) -> SignUp | None:
    """``signup`` is a reserve now. A seat already in civil disorder that no sign-up waits
    for the GM to give goes to the first reserve at once; ``signup`` is told it is a reserve
    unless it took the seat (then it is returned, welcomed by the seat's email)."""
    asked = game.signups.filter(state=State.WAITING, position__isnull=False).values("position")
    seat = (
        game.seats.filter(civil_disorder_at__isnull=False, status=Seat.Status.ACTIVE)
        .exclude(position__in=asked)
        .order_by("civil_disorder_at", "position")
        .first()
    )
    taken = None if seat is None else _seat_first_reserve(game, seat.position, now)
    if taken is not None and taken.pk == signup.pk:
        return taken
    _tell(game, signup, "reserve", now)
    return None


def on_game_finished(sender: object, *, game: Game, now: datetime, **kwargs: Any) -> None:
    """The game ended (the signal ``game_finished``, in its transaction): its reserves still
    waiting are told no seat came to them."""
    if game.signup != SignUpMode.FIRST:
        return
    for reserve in reserves(game):
        reserve.decided_at = now
        reserve.save(update_fields=["decided_at"])
        _tell(game, reserve, "ended", now)


# --- emails ---------------------------------------------------------------------------------


def confirm_url(token: str) -> str:
    return f"{settings.SITE_URL}{reverse('signups:confirm', args=[token])}"


def game_url(game: Game) -> str:
    return f"{settings.SITE_URL}{reverse('signups:game', args=[game.public_id])}"


def _about(game: Game) -> dict[str, Any]:
    return {
        "game": game,
        "title": registry.title(game.engine, game.options),
        "rhythm": schedule.in_words(game.schedule),
        "gm_name": gm_name(game),
        "game_url": game_url(game),
    }


def confirm_email(game: Game, signup: SignUp, token: str, *, waits: bool) -> OutboundEmail:
    """The link that confirms the address (and later shows the sign-up), in the game's
    language, as every email of a sign-up."""
    with translation.override(game.language):
        return _confirm_email(game, signup, token, waits=waits)


def _confirm_email(game: Game, signup: SignUp, token: str, *, waits: bool) -> OutboundEmail:
    context = {
        **_about(game),
        "signup": signup,
        "link": confirm_url(token),
        "hours": settings.SIGNUP_CONFIRM_HOURS,
        "waits": waits,
        "approve": game.signup == SignUpMode.APPROVE,
        "full": is_full(game),
        "seat": None if signup.position is None else signup.position + 1,
        "reserve": signup.position is None and takes_reserves(game),
        "reserves_words": reserve_words(),
    }
    return building.build(
        "signup-confirm",
        to=signup.email,
        dedupe_key=f"signup-confirm:{signup.pk}",
        context=context,
        game=game,
    )


def reserve_words() -> str:
    """What a reserve is, in the active language."""
    return gettext(
        "If a seat falls into civil disorder (its player missed too many turns in a row), the "
        "first reserve takes it and is emailed a link to it; until then nothing is needed from "
        "you, and the link of your sign-up lets you withdraw."
    )


RESERVE_REASONS = ("reserve", "reserve-started", "started-unreserved", "ended")


def _reserve_message(game: Game, signup: SignUp, reason: str) -> tuple[str, str]:
    """``message`` for the reserves of a FIRST game under way, and those who may become one."""
    names = {"title": game.title}
    if reason == "reserve":
        return gettext("you are a reserve"), gettext(
            "Your sign-up is confirmed. %(title)s has started and every seat is taken: you "
            "are reserve number %(place)d. %(reserves)s"
        ) % {**names, "place": waiting_place(signup), "reserves": reserve_words()}
    if reason == "reserve-started":
        return gettext("the game started: you are a reserve"), gettext(
            "%(title)s has started with every seat taken: you stay on its list as reserve "
            "number %(place)d. %(reserves)s"
        ) % {**names, "place": waiting_place(signup), "reserves": reserve_words()}
    if reason == "started-unreserved":
        return gettext("the game started before you confirmed"), gettext(
            "%(title)s has started: every seat was taken before you confirmed your sign-up. "
            "Confirming it with its link still makes you a reserve. %(reserves)s"
        ) % {**names, "reserves": reserve_words()}
    if reason == "ended":
        return gettext("the game ended"), gettext(
            "%(title)s has ended before a seat came to you as a reserve. Thank you for "
            "standing by; other open games are on the list."
        ) % names
    raise ValueError(f"no message for {reason!r}")


def message(game: Game, signup: SignUp, reason: str) -> tuple[str, str]:
    """What a change of the sign-up's state tells its person: a subject and a paragraph,
    in the active language."""
    names = {
        "title": game.title,
        "gm": gm_name(game),
        "seat": "" if signup.position is None else signup.position + 1,
    }
    starts = gettext(
        "The game starts when every seat is taken, or when the GM starts it; your first turn "
        "report, with the link to your seat, comes by email then."
    )
    if reason in RESERVE_REASONS:
        return _reserve_message(game, signup, reason)
    if reason == "seated":
        return gettext("you have a seat"), gettext(
            "Your sign-up is confirmed and you have a seat. %(starts)s"
        ) % {"starts": starts}
    if reason == "waiting":
        return gettext("you are on the waiting list"), gettext(
            "Your sign-up is confirmed. Every seat is taken: you are number %(place)d on the "
            "waiting list. If a seat comes free before the game starts, the first on the list "
            "takes it and is told by email."
        ) % {"place": waiting_place(signup)}
    if reason == "asked":
        return gettext("your sign-up waits for the GM"), gettext(
            "Your sign-up is confirmed. %(gm)s, the GM, approves each player: you are told by "
            "email when they decide."
        ) % names
    if reason == "asked-seat":
        return gettext("your sign-up for seat %(seat)s waits for the GM") % names, gettext(
            "Your sign-up to take over seat %(seat)s is confirmed. %(gm)s, the GM, decides who "
            "takes it: you are told by email when they do."
        ) % names
    if reason == "promoted":
        return gettext("a seat came free: you have it"), gettext(
            "A seat came free and you were first on the waiting list: you have a seat now. "
            "%(starts)s"
        ) % {"starts": starts}
    if reason == "approved":
        return gettext("the GM gave you a seat"), gettext(
            "%(gm)s, the GM, gave you a seat. %(starts)s"
        ) % {**names, "starts": starts}
    if reason == "approved-seat":
        return gettext("you take over seat %(seat)s") % names, gettext(
            "%(gm)s, the GM, approved you: you take over seat %(seat)s of %(title)s as it "
            "stands. The link to your seat comes in its own email."
        ) % names
    if reason == "declined":
        return gettext("the GM declined your sign-up"), gettext(
            "%(gm)s, the GM, declined your sign-up. Nothing else is needed from you."
        ) % names
    if reason == "seat-taken":
        return gettext("seat %(seat)s went to another player") % names, gettext(
            "The GM gave seat %(seat)s to another player. Thank you for offering to play; "
            "other open games are on the list."
        ) % names
    if reason == "withdrawn":
        return gettext("you withdrew"), gettext(
            "You withdrew your sign-up. Nothing else is needed from you."
        )
    if reason == "started":
        return gettext("the game started without you"), gettext(
            "%(title)s has started: no seat came free for you on the waiting list. Thank you "
            "for signing up; other open games are on the list."
        ) % names
    if reason == "started-unconfirmed":
        return gettext("the game started before you confirmed"), gettext(
            "%(title)s has started without you: the GM started it before you confirmed your "
            "sign-up, so it no longer counts and its link signs you up for nothing. Thank you "
            "for signing up; other open games are on the list."
        ) % names
    if reason == "closed":
        return gettext("sign-ups are closed"), gettext(
            "%(gm)s, the GM, closed sign-ups before a seat came free for you. Thank you for "
            "signing up; other open games are on the list."
        ) % names
    raise ValueError(f"no message for {reason!r}")


def signup_email(game: Game, signup: SignUp, reason: str, now: datetime) -> OutboundEmail:
    with translation.override(game.language):
        return _signup_email(game, signup, reason, now)


def _signup_email(game: Game, signup: SignUp, reason: str, now: datetime) -> OutboundEmail:
    subject, words = message(game, signup, reason)
    context = {
        **_about(game),
        "signup": signup,
        "subject": subject,
        "message": words,
        "list_url": f"{settings.SITE_URL}{reverse('signups:list')}",
    }
    return building.build(
        "signup",
        to=signup.email,
        dedupe_key=f"signup:{signup.pk}:{reason}:{now.timestamp():.0f}",
        context=context,
        game=game,
        reply_to=game.gm.email or None,
    )


def _tell(game: Game, signup: SignUp, reason: str, now: datetime) -> None:
    queueing.queue([signup_email(game, signup, reason, now)])
