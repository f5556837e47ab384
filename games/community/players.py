"""A player: an email address and, once they signed in, a ``Player`` (a Django user
without a password). Their seats are every seat of the address, compared whatever its case
(the index ``seat_email_upper``).

Signing in (docs/players.md, "Signing in"): the player asks with their address (``ask``);
the address gets an email with a link and a 6-digit code, valid SIGNIN_MINUTES, for one
use. Following the link and pressing its button (``by_link``) or typing the code
(``by_code``) signs in the Player of the address, made on its first sign-in
(``player_for``). Only digests are stored: the link's SHA-256 (``moderator.links``), the
code's HMAC under the site's key and the link's digest, and the SHA-256 of the random id
of the browser that asked (``new_browser``). The code is taken from that browser alone,
so only it can guess: a code typed wrong ``CODE_ATTEMPTS`` times there voids the
sign-in, link and all, and a stranger typing codes for the address elsewhere voids
nothing of the player's.

A player's games (``my_games``) are the seats of the address, grouped by what they wait
for; their settings (``save_settings``) are their name, their time zone and the address's
email choices (``games.notify.email_choices``, ``games.notify.reminders``); their seats
follow their language and time zone through ``games.postal.player_actions``.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
from collections import defaultdict
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any

from django.conf import settings
from django.contrib.auth import get_user_model
from django.contrib.auth.hashers import make_password
from django.db import IntegrityError, transaction
from django.db.models import F, QuerySet
from django.utils import translation
from django.utils.crypto import salted_hmac
from django.utils.translation import gettext, gettext_lazy

from games import postal
from games.engines import registry
from games.lib import schedule
from games.models import EmailPreference, Game, Order, Player, Seat, SignIn, Step
from games.notify import email_choices, languages, reminders
from games.postal import access, player_actions
from moderator import links
from moderator.mail import building, queueing
from moderator.mail.models import OutboundEmail

if TYPE_CHECKING:
    from django_stubs_ext import StrOrPromise

# A signed-in player's session holds their Player's id under this key (access).
SESSION_KEY = access.PLAYER_SESSION_KEY
CODE_DIGITS = 6
NEXT_LENGTH = 200  # SignIn.next
CODE_ATTEMPTS = 5
# Django's User.username: the player's is "player:" and the address (or its digest for an
# address too long), which no GM's can be (a username of Django's forms has no ':').
USERNAME_LENGTH = 150
USERNAME_PREFIX = "player:"


def seats_of(email: str) -> QuerySet[Seat]:
    """Every seat of ``email``, in every game."""
    return Seat.objects.filter(email__iexact=email_choices.normalise(email))


def zone_of(player: Player, seats: list[Seat]) -> str:
    """The time zone a player's own pages count days and write times in: the one they
    chose in their settings, else the one their ``seats`` (in games not over) write times
    in when they all agree (chosen for them, or their game's), else UTC."""
    if player.time_zone:
        return player.time_zone
    zones = {seat.zone for seat in seats}
    return zones.pop() if len(zones) == 1 else "UTC"


def player_of(user: Any) -> Player | None:
    """The player a signed-in user is; None for a GM without seats or nobody."""
    if not getattr(user, "is_authenticated", False):
        return None
    return Player.objects.filter(user=user).first()


# --- signing in ------------------------------------------------------------------------------


class SignInRefused(Exception):
    """Why a sign-in link or code signs nobody in. ``reason``: one of the constants below;
    ``attempts_left``: for a wrong code, how many more may be typed."""

    def __init__(self, reason: str, *, attempts_left: int = 0) -> None:
        super().__init__(reason)
        self.reason = reason
        self.attempts_left = attempts_left


UNKNOWN = "unknown"  # no such link
EXPIRED = "expired"
USED = "used"
VOID = "void"  # its code was typed wrong CODE_ATTEMPTS times
WRONG_CODE = "wrong code"
NONE_WAITING = "none waiting"  # a code typed for an address with no sign-in asked


@dataclass(frozen=True)
class Asked:
    """A sign-in asked: its row, and the link's token and the code (emailed, never
    stored)."""

    sign_in: SignIn
    token: str
    code: str


def new_browser() -> str:
    """A browser's random id, kept in its signed cookie while it signs in (the views)."""
    return secrets.token_urlsafe(32)


def new_code() -> str:
    return f"{secrets.randbelow(10**CODE_DIGITS):0{CODE_DIGITS}d}"


def code_digest(token_hash: str, code: str) -> str:
    """The code as stored: an HMAC under the site's key, salted with the sign-in's link
    digest, so that the same code of two sign-ins is stored differently and a copy of the
    table alone cannot be searched for the million codes."""
    value = f"{token_hash}:{code}"
    return salted_hmac("games.community.players.signin-code", value, algorithm="sha256").hexdigest()


def signin_url(token: str) -> str:
    return f"{settings.SITE_URL}/signin/{token}/"


def ask(email: str, *, browser: str, now: datetime, next_path: str = "") -> Asked:
    """A new sign-in for ``email`` and its email (urgent: someone waits for it), in the
    player's language, else the page's, its code for the browser ``browser`` (its id,
    stored as a digest). Every address gets one, whether it plays here or not: a new
    player signs in so too. Earlier sign-ins of the address stay valid until they
    expire."""
    address = email_choices.normalise(email)
    chosen = Player.objects.filter(email=address).values_list("language", flat=True).first()
    token = links.new_token()
    code = new_code()
    token_hash = links.digest(token)
    with transaction.atomic():
        sign_in = SignIn.objects.create(
            email=address,
            token_hash=token_hash,
            code_hash=code_digest(token_hash, code),
            created_at=now,
            expires_at=now + timedelta(minutes=settings.SIGNIN_MINUTES),
            next=next_path if len(next_path) <= NEXT_LENGTH else "",
            browser_hash=links.digest(browser),
        )
        with translation.override(chosen or translation.get_language()):
            queueing.queue([signin_email(email.strip(), sign_in, token, code)], urgent=True)
    return Asked(sign_in, token, code)


def signin_email(to: str, sign_in: SignIn, token: str, code: str) -> OutboundEmail:
    return building.build(
        "signin",
        to=to,
        dedupe_key=f"signin:{sign_in.pk}",
        context={
            "link": signin_url(token),
            "code": code,
            "minutes": settings.SIGNIN_MINUTES,
            "attempts": CODE_ATTEMPTS,
        },
    )


def _refusal(sign_in: SignIn, now: datetime) -> SignInRefused | None:
    """Why ``sign_in`` signs nobody in now, or None."""
    if sign_in.used_at is not None:
        return SignInRefused(USED)
    if sign_in.attempts >= CODE_ATTEMPTS:
        return SignInRefused(VOID)
    if sign_in.expires_at <= now:
        return SignInRefused(EXPIRED)
    return None


def _by_token(token: str) -> QuerySet[SignIn]:
    if not token or len(token) > 100:
        return SignIn.objects.none()
    return SignIn.objects.filter(token_hash=links.digest(token))


def pending(token: str, *, now: datetime) -> SignIn:
    """The sign-in the link ``token`` would complete; SignInRefused if it would not.
    Changes nothing: what the link's page shows on GET."""
    sign_in = _by_token(token).first()
    if sign_in is None:
        raise SignInRefused(UNKNOWN)
    refused = _refusal(sign_in, now)
    if refused is not None:
        raise refused
    return sign_in


def by_link(token: str, *, now: datetime) -> tuple[Player, SignIn]:
    """Complete the sign-in of the link ``token``: it is used now, and the address's Player
    (made if need be) is who signs in. SignInRefused for a link unknown, used, void or
    expired, and nothing changes."""
    with transaction.atomic():
        sign_in = _by_token(token).select_for_update().first()
        if sign_in is None:
            raise SignInRefused(UNKNOWN)
        refused = _refusal(sign_in, now)
        if refused is not None:
            raise refused
        sign_in.used_at = now
        sign_in.save(update_fields=["used_at"])
        return player_for(sign_in.email, now=now), sign_in


def clean_code(typed: str) -> str:
    """The digits of a typed code ("123 456", "123-456"), or "" if it is no code."""
    digits = "".join(char for char in typed if char not in " -\u00a0\t")
    return digits if len(digits) == CODE_DIGITS and digits.isascii() and digits.isdigit() else ""


def by_code(email: str, code: str, *, browser: str, now: datetime) -> tuple[Player, SignIn]:
    """Complete a sign-in of ``email`` by its code, typed in the browser ``browser`` (its
    id; "" for a browser that asked for none): any of the sign-ins of the address this
    browser asked for, still valid, whose code it is. A wrong code counts one attempt on
    each of them (and stays counted: SignInRefused(WRONG_CODE) is raised once that is
    written); the ``CODE_ATTEMPTS``-th voids them. Sign-ins another browser asked for are
    neither tried nor counted. SignInRefused when none of this browser is waiting, saying
    why its latest one is not (NONE_WAITING when it asked for none)."""
    address = email_choices.normalise(email)
    refused: SignInRefused | None = None
    if not browser:
        raise SignInRefused(NONE_WAITING)
    asked_here = SignIn.objects.filter(email=address, browser_hash=links.digest(browser))
    with transaction.atomic():
        waiting = list(
            asked_here.select_for_update()
            .filter(used_at=None, expires_at__gt=now, attempts__lt=CODE_ATTEMPTS)
            .order_by("-created_at", "-id")
        )
        if not waiting:
            latest = asked_here.order_by("-created_at", "-id").first()
            reason = _refusal(latest, now) if latest is not None else None
            raise reason or SignInRefused(NONE_WAITING)
        digits = clean_code(code)
        matched = next(
            (
                sign_in
                for sign_in in waiting
                if digits
                and hmac.compare_digest(sign_in.code_hash, code_digest(sign_in.token_hash, digits))
            ),
            None,
        )
        if matched is None:
            SignIn.objects.filter(pk__in=[s.pk for s in waiting]).update(attempts=F("attempts") + 1)
            left = CODE_ATTEMPTS - 1 - min(sign_in.attempts for sign_in in waiting)
            refused = SignInRefused(WRONG_CODE if left > 0 else VOID, attempts_left=left)
        else:
            matched.used_at = now
            matched.save(update_fields=["used_at"])
            return player_for(address, now=now), matched
    raise refused


def username_for(address: str) -> str:
    name = f"{USERNAME_PREFIX}{address}"
    if len(name) <= USERNAME_LENGTH:
        return name
    return f"{USERNAME_PREFIX}{hashlib.sha256(address.encode()).hexdigest()}"


def player_for(email: str, *, now: datetime) -> Player:
    """The Player of ``email``, made with its user on the address's first sign-in: a user
    of its own, never a GM's (a GM with the same address logs in to the GM panel with their
    password, and plays as this player), without a password."""
    address = email_choices.normalise(email)
    player = Player.objects.select_related("user").filter(email=address).first()
    if player is not None:
        return player
    try:
        with transaction.atomic():
            user, _ = get_user_model().objects.get_or_create(
                username=username_for(address),
                defaults={"email": address, "password": make_password(None)},
            )
            return Player.objects.create(user=user, email=address, created_at=now)
    except IntegrityError:  # made meanwhile by a sign-in of the same address
        return Player.objects.select_related("user").get(email=address)


def expired_sign_ins(now: datetime) -> QuerySet[SignIn]:
    """The sign-ins expired a day before ``now`` (a day after, a link still says it
    expired rather than that it is unknown): what the daily prune removes."""
    return SignIn.objects.filter(expires_at__lte=now - timedelta(days=1))


def prune_sign_ins(*, now: datetime) -> int:
    """Delete ``expired_sign_ins``; how many."""
    count, _ = expired_sign_ins(now).delete()
    return count


# --- a player's games --------------------------------------------------------------------


OWED, RUNNING, WAITING, FINISHED = "owed", "running", "waiting", "finished"
GROUPS = (
    (OWED, gettext_lazy("Waiting for your order")),
    (RUNNING, gettext_lazy("Running")),
    (WAITING, gettext_lazy("Not started yet")),
    (FINISHED, gettext_lazy("Finished")),
)


@dataclass
class SeatLine:
    """One seat as "My games" lists it: only what the seat's own page shows too."""

    seat: Seat
    game: Game
    profile: str
    step: Step | None = None
    deadline: str = ""
    owes: bool = False
    place: int | None = None
    places: int = 0
    note: str = ""


@dataclass
class MyGames:
    groups: list[tuple[str, StrOrPromise, list[SeatLine]]] = field(default_factory=list)

    @property
    def count(self) -> int:
        return sum(len(lines) for _, _, lines in self.groups)


def my_games(player: Player) -> MyGames:
    """Every seat of the player's address, grouped as ``games_of_seats`` does, deadlines in
    the player's time zone (each seat's own if they chose none). Four queries whatever the
    number of seats: the seats with their games, then ``games_of_seats``'s."""
    seats = list(
        seats_of(player.email)
        .select_related("game")
        .defer("game__state", "game__seed")
        .order_by("-game__created_at", "-game_id", "position")
    )
    return games_of_seats(seats, time_zone=player.time_zone)


def games_of_seats(seats: list[Seat], *, time_zone: str = "") -> MyGames:
    """``seats`` (with their games) grouped: waiting for the player's order first (the open
    step prompts the seat, and it sent no order in it yet) with its deadline, then running
    games, games not started, and finished ones with the seat's place. Deadlines are in
    ``time_zone``, or each seat's own zone. At most three queries whatever the number of
    seats: the open steps, the orders in them, and the final states of the finished
    games."""
    live = {
        seat.game_id
        for seat in seats
        if seat.game.status in (Game.Status.RUNNING, Game.Status.PAUSED)
    }
    steps: dict[int, Step] = {}
    if live:
        for open_step in Step.objects.filter(game_id__in=live, status=Step.Status.OPEN).defer(
            "state_before", "state_after"
        ):
            steps[open_step.game_id] = open_step
    answered: set[tuple[int, int]] = set()
    if steps:
        answered = set(
            Order.objects.filter(
                step_id__in=[step.pk for step in steps.values()],
                seat_id__in=[seat.pk for seat in seats],
            )
            .exclude(source=Order.Source.DEFAULT)
            .values_list("step_id", "seat_id")
        )
    finished = {seat.game_id for seat in seats if seat.game.status == Game.Status.FINISHED}
    states = (
        dict(Game.objects.filter(pk__in=finished).values_list("pk", "state")) if finished else {}
    )
    grouped: dict[str, list[SeatLine]] = defaultdict(list)
    for seat in seats:
        game = seat.game
        line = SeatLine(seat=seat, game=game, profile=registry.title(game.engine, game.options))
        zone = time_zone or seat.zone
        if game.status in (Game.Status.DRAFT, Game.Status.RECRUITING):
            grouped[WAITING].append(line)
            continue
        if game.status in (Game.Status.FINISHED, Game.Status.ABANDONED):
            if game.status == Game.Status.ABANDONED:
                line.note = gettext("abandoned")
            elif states.get(game.pk) is not None:
                engine = game.rules
                standings = engine.standings(engine.state_from_json(states[game.pk])) or []
                line.places = len(standings)
                line.place = next((s.place for s in standings if s.seat == seat.position), None)
            grouped[FINISHED].append(line)
            continue
        step = steps.get(game.pk)
        if step is not None and step.number == game.step_number:
            line.step = step
            line.deadline = schedule.local_time(step.deadline, zone)
            line.owes = (
                game.status == Game.Status.RUNNING
                and seat.position in step.prompted_seats
                and (step.pk, seat.pk) not in answered
            )
        if game.status == Game.Status.PAUSED:
            line.note = gettext("paused by the GM")
        elif seat.status == Seat.Status.OUT:
            line.note = gettext("you are out")
        grouped[OWED if line.owes else RUNNING].append(line)
    for key in (OWED, RUNNING):
        grouped[key].sort(
            key=lambda line: (line.step is None, line.step.deadline.timestamp() if line.step else 0)
        )
    grouped[FINISHED].sort(
        key=lambda line: -line.game.finished_at.timestamp() if line.game.finished_at else 0
    )
    return MyGames([(key, title, grouped[key]) for key, title in GROUPS if grouped[key]])


# --- a player's settings -------------------------------------------------------------------


@dataclass(frozen=True)
class Chosen:
    """What a player's settings form asks: ``reports`` "" and ``reminders`` "" change
    nothing of their own."""

    name: str
    time_zone: str
    reports: str
    reminders: str
    hour: int | None
    language: str = ""


def save_settings(player: Player, chosen: Chosen) -> list[str]:
    """Save the player's settings; what changed, in words (in order).

    The name is the player's own (a sign-up's default): the seats keep the names their GMs
    gave them. A time zone is the player's, the zone of the address's digests and
    reminders' hour (``EmailPreference``), and the zone of each of its seats in a game not
    over, so their reports and reminders write deadlines in it. A language is the
    player's pages' and, "" too (each game's own), every seat's of theirs in a game not
    over (docs/languages.md). ``reports`` (one of
    ``Reports``) is how often every seat of the address gets its reports, and the default
    of its later seats (``postal.choose_reports``, as a seat page's "all my seats");
    ``reminders`` is the address's reminders (``games.notify.reminders``)."""
    said: list[str] = []
    with transaction.atomic():
        player = Player.objects.select_for_update().get(pk=player.pk)
        if chosen.name != player.name:
            player.name = chosen.name
            said.append(
                gettext("your name is %(name)s") % {"name": chosen.name}
                if chosen.name
                else gettext("your name is cleared")
            )
        zone_changed = chosen.time_zone != player.time_zone
        player.time_zone = chosen.time_zone
        if chosen.language != player.language:
            player.language = chosen.language
            player_actions.choose_language(player.email, chosen.language)
            said.append(
                gettext("your language is %(language)s, in all your games")
                % {"language": languages.NAMES[chosen.language]}
                if chosen.language
                else gettext("your language is each game's own")
            )
        player.save(update_fields=["name", "time_zone", "language"])
        if chosen.time_zone:
            EmailPreference.objects.get_or_create(
                email=player.email, defaults={"time_zone": chosen.time_zone}
            )
            EmailPreference.objects.filter(email=player.email).update(time_zone=chosen.time_zone)
            reminders.remind_again(emails=[player.email])  # a night is of its zone
            player_actions.choose_time_zone(player.email, chosen.time_zone)
            if zone_changed:
                said.append(
                    gettext("your time zone is %(zone)s, in all your games")
                    % {"zone": chosen.time_zone}
                )
        elif zone_changed:
            said.append(gettext("your time zone is each game's own"))
        zone = chosen.time_zone or "UTC"
        if chosen.reports:
            seat = seats_of(player.email).order_by("pk").first()
            if seat is None:
                email_choices.set_default(player.email, chosen.reports, time_zone=zone)
            else:
                postal.choose_reports(
                    seat.game_id, position=seat.position, choice=chosen.reports, everywhere=True
                )
            said.append(
                gettext("your reports come %(you_get)s")
                % {"you_get": email_choices.you_get(chosen.reports, email_choices.ACROSS_GAMES)}
            )
        if chosen.reminders:
            preference = EmailPreference.objects.filter(email=player.email).first()
            reminders.choose_for_address(
                player.email,
                way=chosen.reminders,
                hour=chosen.hour,
                time_zone=preference.time_zone if preference else zone,
            )
            said.append(str(REMINDERS_SAID[chosen.reminders]))
    return said


REMINDERS_SAID = {
    reminders.EACH: gettext_lazy("reminders come one email at a time"),
    reminders.DIGEST: gettext_lazy("reminders come in one daily digest"),
    reminders.NONE: gettext_lazy("no reminders come before your deadlines"),
}
