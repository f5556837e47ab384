"""What each seat is told, rendered through the one email builder (moderator.mail.building).

Every email function returns unsaved ``OutboundEmail`` rows; the postal layer writes them
in the same transaction as the change they report. ``seat_context`` is also what the
player's web page shows, so a page and an email never disagree.

Engine-specific parts (the board, the seat's private information, the order syntax) are
template includes from the game's own folder, each with a generic fallback:
``games/<engine key>/<part>.txt|html``, else ``games/default/<part>.txt|html``. A new game
adds templates, not code.
"""

from __future__ import annotations

import copy
import hashlib
import re
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from functools import partial
from typing import TYPE_CHECKING, Any, Literal

from django.conf import settings
from django.db import connection
from django.db.models import Count, Q, TextField, Window
from django.db.models.functions import Cast
from django.db.models.lookups import Regex
from django.urls import reverse
from django.utils import translation
from django.utils.translation import gettext_lazy, pgettext_lazy

from games.engines import registry
from games.engines import text as engine_text
from games.engines.base import Engine, Event, to_json
from games.lib import schedule, words
from games.lib.schedule import local_time
from games.models import Event as EventRow
from games.models import Game, GMAction, Order, Seat, Step
from games.notify import calendar, email_choices, languages
from games.postal import access
from moderator.mail import building
from moderator.mail.models import OutboundEmail

if TYPE_CHECKING:
    from django_stubs_ext import StrOrPromise

# The parts of a seat's view that templates include per engine, each with a default:
# context name -> template name in the game's folder.
ENGINE_PARTS = {"boards": "board", "private": "private", "syntax": "syntax"}


def engine_templates(engine_key: str, part: str, extension: str) -> list[str]:
    """Template names for ``{% include %}``: the game's own first, then the default."""
    name = ENGINE_PARTS[part]
    return [f"games/{engine_key}/{name}.{extension}", f"games/default/{name}.{extension}"]


def verify_url(game: Game) -> str:
    return f"{settings.SITE_URL}{reverse('games:verify', args=[game.public_id])}"


# How a rated game says so among its rules in words (``Game.rated``: games.community.ratings).
RATED = (
    pgettext_lazy("a game's rules in words", "Rated"),
    gettext_lazy("yes: the result counts in the game's ranking"),
)


def players_in(game: Game) -> int:
    """How many play ``game``: the seats it wants while recruiting (when its GM said), else
    its seats (read once for a started game's object, with the seats' names)."""
    if game.status == Game.Status.RECRUITING:
        return game.seats_wanted or game.seats.count()
    if game.seat_names is None:
        game.seat_names = dict(game.seats.values_list("position", "name"))
    return len(game.seat_names)


class Applies:
    """Which of a game's options come into play with its number of players, by key, for a
    template (``applies.finals_add_pp``: Dice Survivor's Finals are played); the players
    are counted only when a template asks (``players_in``)."""

    def __init__(self, game: Game) -> None:
        self.game = game

    def __getitem__(self, key: str) -> bool:
        return registry.settings(self.game.engine).applies(key, players_in(self.game))


def rules_in_words(game: Game) -> tuple[str, list[tuple[str, str]]]:
    """The title of the game's profile and each option in words (``registry.describe``),
    leaving out an option whose rule does not come into play with the game's number of
    players (Dice Survivor's Finals), and, for a rated game, that it is rated."""
    title, described = registry.describe(game.engine, game.options, players_in(game))
    # Said in the language of the page or email they are shown in (games.lib.words).
    said = [(words.Said(label), words.Said(value)) for label, value in described]
    rated = [(str(RATED[0]), str(RATED[1]))] if game.rated else []
    return words.Said(title), [*said, *rated]


def options_in_play(game: Game, engine: Engine[Any, Any, Any]) -> Any:
    """The game's options with every default filled in, as plain data: what the help of a
    game shows depends on them (a profile, a variant, the cards or anomalies in play)."""
    return to_json(engine.options(game.options))


def game_seat_name(game: Game, position: int) -> str:
    if game.seat_names is None:
        game.seat_names = dict(game.seats.values_list("position", "name"))
    return game.seat_names[position]


def bot_names(game: Game) -> list[str]:
    """The names of the game's seats played by a bot (``Seat.bot``), in seat order; read
    once per game instance."""
    if game.bot_names is None:
        game.bot_names = list(
            game.seats.filter(bot=True).order_by("position").values_list("name", flat=True)
        )
    return game.bot_names


# Who reads a seat's private block: the seat's own player ("seat"), the only reader told
# "Only you see this"; the game's GM ("gm"), told whose it is and who else sees it; or
# anybody ("public": a finished game's replay and zine), told what the seat saw, never "you".
Reader = Literal["seat", "gm", "public"]


def seat_context(
    game: Game,
    seat: Seat,
    engine: Engine[Any, Any, Any],
    state: Any,
    step: Step | None,
    *,
    reader: Reader,
) -> dict[str, Any]:
    """What ``seat`` may be shown of the game now: its view with the board, its private
    block, what it owes and until when, and, once the game is over, standings and seed.

    ``step`` is the open step (None once the game is finished). ``reader``: who reads it;
    the private block speaks to the seat's player as "you" only when it is "seat"."""
    context: dict[str, Any] = {
        "game": game,
        "seat": seat,
        "reader": reader,
        # Anybody but the seat's player: the private block in the third person.
        "onlooker": reader != "seat",
        "engine": engine,
        "view": words.shown(engine.view(state, seat.position)),
        "step": step,
        "verify_url": verify_url(game),
        "finished": step is None,
        # The profile and options in words, worked out only where a template shows them.
        "rules": partial(rules_in_words, game),
        "applies": Applies(game),
        "title": registry.title(game.engine, game.options),
        "options": options_in_play(game, engine),
        "bots": bot_names(game),
    }
    for part in ENGINE_PARTS:
        context[f"{part}_txt"] = engine_templates(game.engine, part, "txt")
        context[f"{part}_html"] = engine_templates(game.engine, part, "html")
    # Web pages may draw the board richer than an email can (SVG): <key>/board.page.html.
    context["board_page_html"] = [f"games/{game.engine}/board.page.html", *context["boards_html"]]
    if step is None:
        context["standings"] = [
            {
                "name": game_seat_name(game, s.seat),
                "seat": s.seat,
                "place": s.place,
                "score": s.score,
            }
            for s in engine.standings(state) or []
        ]
        if game.seed_revealed:
            context["seed"] = bytes(game.seed or b"").hex()
    else:
        context["owed"] = words.owed(step.prompts, seat.position)
        context["deadline"] = local_time(step.deadline, seat.zone)
    return context


def _context(game: Game, seat: Seat, token: str, **extra: Any) -> dict[str, Any]:
    return {
        "game": game,
        "seat": seat,
        "engine": registry.get(game.engine),
        "link": access.url(token),
        "verify_url": verify_url(game),
        "rules": partial(rules_in_words, game),
        "applies": Applies(game),
        **extra,
    }


def _report(
    game: Game,
    seat: Seat,
    engine: Engine[Any, Any, Any],
    state: Any,
    events: list[str],
    step: Step | None,
    token: str,
    key: str | None = None,
    shared: dict[str, Rendered] | None = None,
    rendered_events: dict[tuple[str, ...], dict[str, Rendered]] | None = None,
    since: list[dict[str, Any]] | None = None,
    gm_did: list[GMAction] | None = None,
    welcome: dict[str, Any] | None = None,
    conditional: list[tuple[str, str]] | None = None,
) -> OutboundEmail:
    with translation.override(seat.speaks):
        return _report_in_language(
            game,
            seat,
            engine,
            state,
            events,
            step,
            token,
            key,
            shared,
            rendered_events,
            since,
            gm_did,
            welcome,
            conditional,
        )


def _report_in_language(
    game: Game,
    seat: Seat,
    engine: Engine[Any, Any, Any],
    state: Any,
    events: list[str],
    step: Step | None,
    token: str,
    key: str | None,
    shared: dict[str, Rendered] | None,
    rendered_events: dict[tuple[str, ...], dict[str, Rendered]] | None,
    since: list[dict[str, Any]] | None,
    gm_did: list[GMAction] | None,
    welcome: dict[str, Any] | None = None,
    conditional: list[tuple[str, str]] | None = None,
) -> OutboundEmail:
    context = seat_context(game, seat, engine, state, step, reader="seat")
    context.update(link=access.url(token), events=events, **(shared or {}))
    context.update(
        events_parts(events, {} if rendered_events is None else rendered_events, engine.step_word)
    )
    did = [gm_said(in_zone(action, seat.zone)) for action in gm_did or []]
    context.update(email_choice(seat, engine), since=since, gm_did=did)
    context["conditional_played"] = conditional or []
    context["welcome"] = welcome
    attachments = []
    headers = None
    if step is None:
        kind, dedupe = "final", f"final:{game.pk}:{seat.position}"
    else:
        kind = "report" if welcome is None else "welcome"
        dedupe = f"report:{game.pk}:{step.number}:{seat.position}"
        attachments.append(calendar.step_attachment(game, seat, step, now=step.opened_at))
        # A step report is the mail a player may stop in one click (the seat's page keeps
        # every report); the final standings are not.
        headers = access.stop_headers(seat, "reports")
        context["stop_url"] = access.stop_url(seat, "reports")
    context["calendar_url"] = access.calendar_url(seat)
    return _build(kind, game, seat, key or dedupe, context, attachments, headers)


def email_choice(seat: Seat, engine: Engine[Any, Any, Any]) -> dict[str, Any]:
    """How often the seat gets its reports, for an email's footer."""
    choice = email_choices.effective(seat, engine)
    return {"you_get": email_choices.you_get(choice, engine.step_word)}


def _build(
    kind: str,
    game: Game,
    seat: Seat,
    dedupe_key: str,
    context: dict[str, Any],
    attachments: list[dict[str, str]] | None = None,
    headers: dict[str, str] | None = None,
) -> OutboundEmail:
    """One email to ``seat`` through the one builder: every email of a seat in a game is
    one thread, and a reply becomes an order (INBOUND_ADDRESS set) or reaches the GM."""
    reply_to = access.reply_address(seat)
    context = {**context, "reply_orders": reply_to is not None}
    return building.build(
        kind,
        to=seat.email,
        dedupe_key=dedupe_key,
        context=context,
        game=game,
        thread=f"game-{game.pk}-seat-{seat.position}",
        reply_to=reply_to or game.gm.email or None,
        attachments=attachments,
        headers=headers,
    )


class Rendered:
    """A part rendered once and included as it is: ``{% include %}`` calls ``render``."""

    def __init__(self, text: str) -> None:
        self.text = text

    def render(self, context: Any = None) -> str:
        return self.text


def events_parts(
    events: list[str], rendered: dict[tuple[str, ...], dict[str, Rendered]], step_word: str
) -> dict[str, Rendered]:
    """The "what happened" part of a report, text and HTML, from ``rendered`` when seats
    before saw the same events (most events are public), else rendered and kept there;
    ``step_word``: the game's (``Engine.step_word``), for "Nothing new this postal turn"."""
    key = tuple(events)
    if key not in rendered:
        rendered[key] = {
            f"events_{extension}": Rendered(
                building.render(
                    f"emails/parts/events.{extension}",
                    {"events": events, "step_word": step_word},
                    autoescape=extension == "html",
                )
            )
            for extension in ("txt", "html")
        }
    return rendered[key]


# The parts of a report that show only public information: the same for every seat, so a
# step's emails render them once (board templates read the public part of the view; what
# is private is in the private part).
SHARED_PARTS = ("boards", "syntax")


def shared_parts(
    game: Game, engine: Engine[Any, Any, Any], state: Any, step: Step | None
) -> dict[str, Rendered]:
    context = {
        "game": game,
        "engine": engine,
        "view": words.shown(engine.view(state, None)),
        "step": step,
        "finished": step is None,
        "options": options_in_play(game, engine),
        "applies": Applies(game),
    }
    parts = {}
    for part in SHARED_PARTS:
        for extension in ("txt", "html"):
            names = engine_templates(game.engine, part, extension)
            parts[f"{part}_{extension}"] = Rendered(
                building.render(names, context, autoescape=extension == "html")
            )
    return parts


def step_emails(
    game: Game,
    seats: list[Seat],
    engine: Engine[Any, Any, Any],
    state: Any,
    events: list[Event],
    step: Step | None,
    tokens: dict[int, str],
    since: dict[int, list[dict[str, Any]]] | None = None,
    gm_did: list[GMAction] | None = None,
    conditional: list[tuple[str, str]] | None = None,
) -> list[OutboundEmail]:
    """The report of a newly opened step, or the game-over email, to each seat that has a
    token (``games.notify.email_choices.sends_report``); ``seats``: all of the game's. The public
    parts are rendered once for all of them.

    ``since``: position -> what happened since the seat's last email (``events_since``),
    for the seats that do not get every step's report; they are told that instead of the
    step's events. ``gm_did``: what the GM did during the step that closed
    (``gm_actions_of``), said to each seat in its zone. ``conditional``: (name, order) of
    a conditional order that closed the step (games.postal.conditionals)."""
    game.seat_names = {seat.position: seat.name for seat in seats}
    game.bot_names = [seat.name for seat in seats if seat.bot]
    # The public parts once per language the seats read (docs/languages.md).
    shared: dict[str, dict[str, Rendered]] = {}
    rendered_events: dict[str, dict[tuple[str, ...], dict[str, Rendered]]] = {}
    since = since or {}
    emails = []
    for seat in seats:
        if seat.position not in tokens:
            continue
        language = seat.speaks
        if language not in shared:
            with translation.override(language):
                shared[language] = shared_parts(game, engine, state, step)
        emails.append(
            _report(
                game,
                seat,
                engine,
                state,
                [words.Said(event.text) for event in events if event.visible_to(seat.position)],
                step,
                tokens[seat.position],
                shared=shared[language],
                rendered_events=rendered_events.setdefault(language, {}),
                since=since.get(seat.position),
                gm_did=gm_did,
                conditional=conditional,
            )
        )
    return emails


def gm_said(action: GMAction) -> str:
    """A GM action as players read it, in the language active where it is shown: its
    words, and the GM's reason if there is one."""
    if not action.reason:
        return action.said
    done = engine_text.load(action.message) if action.message else action.words
    return words.Said(engine_text._("%(done)s (%(reason)s)", done=done, reason=action.reason))


def gm_actions_of(game: Game, step: Step) -> list[GMAction]:
    """What the GM did while ``step`` was open, oldest first, for its report (each seat's
    says it in its own zone: ``in_zone``); no query when the GM did nothing then
    (``Step.gm_acted``)."""
    if not step.gm_acted:
        return []
    actions = GMAction.objects.filter(game=game, step_number=step.number).order_by("id")
    return list(actions.only("words", "message", "reason"))


def in_zone(action: GMAction, time_zone: str) -> GMAction:
    """``action`` as a reader in ``time_zone`` reads it: the instant its words name (a
    new deadline) in that zone (``schedule.in_zone``). The row is not changed."""
    said = schedule.in_zone(action.message, time_zone)
    if said is None:
        return action
    zoned = copy.copy(action)
    zoned.words, zoned.message = str(said), said.data()
    return zoned


# The seat page and the GM's page list this many of the game's latest GM actions.
GM_LOG_ROWS = 20


@dataclass(frozen=True)
class GMLog:
    """The latest GM actions of a game, newest first, and how many there are in all."""

    actions: Sequence[GMAction]
    total: int

    @property
    def older(self) -> int:
        return self.total - len(self.actions)


def gm_log(game: Game, time_zone: str) -> GMLog:
    """The game's GM log for its pages, its instants in the reader's ``time_zone``, in one
    query (the count is a window over the game's rows, taken before the limit)."""
    rows = list(
        GMAction.objects.filter(game=game)
        .only("step_number", "words", "message", "reason", "at")
        .annotate(total=Window(Count("id")))
        .order_by("-id")[:GM_LOG_ROWS]
    )
    return GMLog([in_zone(row, time_zone) for row in rows], rows[0].total if rows else 0)


def events_since(game: Game, seats: list[Seat]) -> tuple[dict[int, list[dict[str, Any]]], int]:
    """What happened since each seat's last email (``Seat.reported_through``): position ->
    the events it may see, by step, oldest first; and the latest event of the game (0 when
    none is newer than every seat's mark). One query, whatever the seats."""
    if not seats:
        return {}, 0
    rows = list(
        EventRow.objects.filter(game=game, pk__gt=min(seat.reported_through for seat in seats))
        .order_by("id")
        .values_list("id", "step__number", "text", "audience", "message")
    )
    told: dict[int, list[dict[str, Any]]] = {}
    for seat in seats:
        groups: list[dict[str, Any]] = []
        for pk, number, text, audience, stored in rows:
            if pk <= seat.reported_through:
                continue
            if audience is not None and seat.position not in audience:
                continue
            if not groups or groups[-1]["step"] != number:
                groups.append({"step": number, "events": []})
            groups[-1]["events"].append(words.Said(text, stored))
        told[seat.position] = groups
    return told, max((row[0] for row in rows), default=0)


def report_events(game: Game, position: int, history: History | None = None) -> list[str]:
    """The events of the seat's latest report: those that led to the current step (or, for
    step 1 and a finished game, those recorded with the current/last step). Taken from
    ``history`` (a page of the seat's history) when that page holds the step."""
    number = game.step_number
    if game.status != Game.Status.FINISHED and number > 1:
        number -= 1
    if history is not None and history.first <= number <= history.last:
        return next(
            (group["events"] for group in history.groups if group["step"].number == number), []
        )
    # The step found by its game and number (their unique index), then its events: not
    # the game's events (every one of them) joined to their steps.
    rows = EventRow.objects.filter(seen_by(position), step__game=game, step__number=number)
    return [
        words.Said(text, stored)
        for text, stored in rows.order_by("id").values_list("text", "message")
    ]


# A latest report of more events than this is folded on the seat's page: the lines that
# concern the seat and the last one (how it ended) stay in view, every line a tap away.
REPORT_SHOWN = 5
# The lines that concern the seat kept in view of a folded report, besides its last line.
REPORT_KEPT = 3
# How an event's stored English text speaks to the seat it is addressed to.
ADDRESSED = re.compile(r"\b(you|your|yours)\b", re.IGNORECASE)


@dataclass(frozen=True)
class LatestReport:
    """The seat's latest report as its page shows it: every event of step ``number``, and,
    when there are more than REPORT_SHOWN, the few ``kept`` in view above the fold."""

    number: int
    events: list[str]
    kept: list[str] | None = None


def latest_report(game: Game, seat_name: str, events: list[str]) -> LatestReport:
    """``events`` (``report_events``) of the seat named ``seat_name`` as its page shows
    them: a long report keeps in view the last REPORT_KEPT events that name the seat or
    speak to it (its own dice, its losses), and the report's last event."""
    number = game.step_number
    if game.status != Game.Status.FINISHED and number > 1:
        number -= 1
    if len(events) <= REPORT_SHOWN:
        return LatestReport(number, events)
    named = re.compile(rf"(?<!\w){re.escape(seat_name)}(?!\w)", re.IGNORECASE)
    concerning = [
        index
        for index, text in enumerate(events[:-1])
        if named.search(text) or ADDRESSED.search(text)
    ]
    kept = [*concerning[-REPORT_KEPT:], len(events) - 1]
    return LatestReport(number, events, [events[index] for index in kept])


def seen_by(position: int | None) -> Q:
    """The events seat ``position`` may see (``Event.visible_to``), as a filter: the
    public ones and those whose audience holds it (None, a spectator: the public ones).
    A step's events include every seat's private ones (each order's receipt, each cup),
    so the others are not read."""
    if position is None:
        return Q(audience__isnull=True)
    if connection.features.supports_json_field_contains:
        return Q(audience__isnull=True) | Q(audience__contains=[position])
    # SQLite (the embedded default) has no JSON containment: the audience's JSON text (a
    # list of positions) names the position.
    named = Regex(Cast("audience", TextField()), rf"[\[,]\s*{int(position)}\s*[,\]]")
    return Q(audience__isnull=True) | Q(named)


# The seat page shows this many steps of history at a time, newest first: a long game's
# page costs what a short one's does, and older steps are a link away.
HISTORY_STEPS = 20


@dataclass(frozen=True)
class HistoryStep:
    """A step as the history shows it: its number, and when it was resolved (None: open)."""

    number: int
    closed_at: datetime | None


@dataclass(frozen=True)
class History:
    """One page of a seat's history: ``groups`` (a step, a HistoryStep, and the texts of
    its events this seat may see, newest step first), the step number to read older steps
    before (None when the page reaches step 1), and whether this page is an older one."""

    groups: list[dict[str, Any]]
    older: int | None
    paged: bool = False
    # The steps the page covers, first to last: a step without a group in that range has
    # no event this seat may see.
    first: int = 0
    last: int = -1


def history(game: Game, position: int | None, before: int | None = None) -> History:
    """The events ``position`` (None: a spectator) may see of up to HISTORY_STEPS steps
    before step ``before`` (None: up to the current step), newest step first. The steps'
    states are not read."""
    last = game.step_number if before is None else min(before - 1, game.step_number)
    first = max(1, last - HISTORY_STEPS + 1)
    rows = (
        # By the steps' game: the page's steps through their (game, number) index, then
        # their events, whatever the length of the game. Plain values: a page may show
        # hundreds of events, and nothing of them is changed.
        EventRow.objects.filter(step__game=game, step__number__gte=first, step__number__lte=last)
        .filter(seen_by(position))
        .order_by("-step__number", "id")
        .values_list("step__number", "step__closed_at", "text", "message")
    )
    groups: list[dict[str, Any]] = []
    for number, closed_at, text, stored in rows:
        if not groups or groups[-1]["step"].number != number:
            groups.append({"step": HistoryStep(number, closed_at), "events": []})
        groups[-1]["events"].append(words.Said(text, stored))
    return History(
        groups, first if first > 1 else None, paged=before is not None, first=first, last=last
    )


def current_report_email(game: Game, seat: Seat, token: str, now: datetime) -> OutboundEmail:
    """The seat's latest report again (the GM's re-send), built from the record."""
    engine = registry.get(game.engine)
    state = engine.state_from_json(game.state)
    step = None
    if game.status != Game.Status.FINISHED:
        step = game.steps.filter(number=game.step_number).first()
    events = report_events(game, seat.position)
    key = f"resend:{game.pk}:{seat.position}:{now.timestamp():.0f}"
    return _report(game, seat, engine, state, events, step, token, key=key)


def welcome_email(
    game: Game,
    seat: Seat,
    token: str,
    *,
    left: str,
    reason: str,
    now: datetime,
    reserve: bool = False,
) -> OutboundEmail:
    """The newcomer to a seat of a game under way (postal.replace_player), who took it
    over from ``left``: welcomed with the game's rules, the seat's current report (what
    happened last, the board, their private information, what they owe and until when)
    and their link. ``reason``: the GM's, if they gave one; ``reserve``: the first reserve
    of a first-come game took the seat, not the GM's handover."""
    engine = registry.get(game.engine)
    state = engine.state_from_json(game.state)
    step = game.steps.filter(number=game.step_number).first()
    events = report_events(game, seat.position)
    key = f"welcome:{game.pk}:{seat.position}:{seat.tenure}:{now.timestamp():.0f}"
    welcome = {"left": left, "reason": reason, "reserve": reserve}
    return _report(game, seat, engine, state, events, step, token, key=key, welcome=welcome)


def replaced_email(
    game: Game, seat: Seat, new: str, reason: str, now: datetime, *, reserve: bool = False
) -> OutboundEmail:
    """The player who leaves ``seat`` (postal.replace_player, before the seat changes):
    told that the GM gave it to ``new`` (or, ``reserve``, that the seat fell into civil
    disorder and the first reserve took it), why if the GM said, and that their links no
    longer work; in their language, with no link. A reply reaches the GM."""
    with translation.override(seat.speaks):
        return building.build(
            "replaced",
            to=seat.email,
            dedupe_key=f"replaced:{game.pk}:{seat.position}:{seat.tenure}:{now.timestamp():.0f}",
            context={"game": game, "seat": seat, "new": new, "reason": reason, "reserve": reserve},
            game=game,
            reply_to=game.gm.email or None,
        )


def invite_email(game: Game, seat: Seat, token: str, now: datetime) -> OutboundEmail:
    engine = registry.get(game.engine)
    context = _context(game, seat, token, options=options_in_play(game, engine))
    context["syntax_txt"] = engine_templates(engine.key, "syntax", "txt")
    context["syntax_html"] = engine_templates(engine.key, "syntax", "html")
    with translation.override(seat.speaks):
        return _build(
            "invite", game, seat, f"invite:{game.pk}:{seat.position}:{now.timestamp():.0f}", context
        )


def link_email(game: Game, seat: Seat, token: str) -> OutboundEmail:
    with translation.override(seat.speaks):
        return _build(
            "link",
            game,
            seat,
            f"link:{game.pk}:{seat.position}:{seat.link_version}",
            _context(game, seat, token),
        )


def lost_links_email(seats: list[Seat], tokens: list[str], now: datetime) -> OutboundEmail:
    """One email to the address of ``seats`` (with their games) with a link to each, for a
    player who asked for their links on the home page. A second request in the same
    instant (a double click) is the same email."""
    address = seats[0].email
    items = [
        {"game": seat.game, "seat": seat, "link": access.url(token)}
        for seat, token in zip(seats, tokens, strict=True)
    ]
    key = hashlib.sha256(address.lower().encode()).hexdigest()[:32]
    with translation.override(languages.of_seats(seats)):
        return building.build(
            "lost-links",
            to=address,
            dedupe_key=f"lost-links:{key}:{now.isoformat()}",
            context={"seats": items, "count": len(items), "days": settings.LINK_DAYS},
        )


def deadline_email(
    game: Game, seat: Seat, step: Step, token: str, reason: StrOrPromise = ""
) -> OutboundEmail:
    """The open step's deadline moved: by the GM, or for ``reason`` (an absence, an
    automatic extension), in the seat's language."""
    owed = words.owed(step.prompts, seat.position)
    with translation.override(seat.speaks):
        deadline = local_time(step.deadline, seat.zone)
        return _build(
            "deadline",
            game,
            seat,
            f"deadline:{game.pk}:{step.number}:{seat.position}:{step.deadline:%s}",
            _context(
                game, seat, token, step=step, deadline=deadline, owed=owed, reason=str(reason)
            ),
        )


def civil_disorder_email(game: Game, seats: list[Seat], now: datetime) -> OutboundEmail:
    """Tell the GM that ``seats`` fell into civil disorder (missed too many turns): in
    English, the GM panel's language, whoever's order moved the game on."""
    with translation.override(settings.LANGUAGE_CODE):
        return building.build(
            "civil-disorder",
            to=game.gm.email,
            dedupe_key=f"civil-disorder:{game.pk}:{game.step_number}:"
            + ",".join(str(seat.position) for seat in seats),
            context={
                "game": game,
                "seats": seats,
                "limit": game.civil_disorder_after,
                "gm_url": f"{settings.SITE_URL}{reverse('gm:game', args=[game.pk])}",
            },
            game=game,
        )


def receipt_email(
    game: Game, seat: Seat, order: Order, token: str, results: list[str] | None = None
) -> OutboundEmail:
    """The order echoed in canonical form. ``results``: what an order that took effect at
    once did, as this seat may see it (a roll's dice); a sealed order has none.

    Written after the order's transaction: when its step has resolved since (the order was
    the last one owed) or the game is over, the receipt says so and quotes no deadline."""
    over = game.status in (Game.Status.FINISHED, Game.Status.ABANDONED)
    resolved = over or order.step.status != Step.Status.OPEN
    with translation.override(seat.speaks):
        return _build(
            "receipt",
            game,
            seat,
            f"receipt:{order.pk}",
            _context(
                game,
                seat,
                token,
                order=order,
                step=order.step,
                received=local_time(order.received_at, seat.zone),
                deadline=None if resolved else local_time(order.step.deadline, seat.zone),
                over=over,
                results=results or [],
            ),
        )
