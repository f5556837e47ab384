"""The zine page (docs/players.md, "The zine page"): one resolved step of a game as a GM
publishes it to every player, printed or pasted into a zine. Read only.

A zine is read by all the players, so it shows what everybody may see: the public board
(the board templates of the reports, with the public view), the public events of the
step, the dice once the seed is revealed, the standings and the next deadline. Each seat's
private part is shown only once the game is finished, when nothing is secret any more."""

from __future__ import annotations

import contextlib
import functools
import textwrap
from dataclasses import dataclass, field
from typing import Any

from django.conf import settings
from django.contrib.staticfiles import finders
from django.core.exceptions import SuspiciousFileOperation
from django.utils.safestring import SafeString, mark_safe

from games.engines import registry
from games.engines.base import Engine
from games.lib.schedule import local_time
from games.models import DiceRoll, Event, Game, Seat, Step
from games.notify import reports
from moderator.mail import building

# The plain-text version's width: what a zine's column takes.
WIDTH = 72


class NoStep(Exception):
    """The step asked for is not a resolved step of the game: its message says why."""


@dataclass(frozen=True)
class Sheet:
    """One seat's part: its name and, once the game is finished, its private block."""

    name: str
    private_txt: str = ""
    private_html: SafeString = field(default_factory=lambda: mark_safe(""))


@dataclass(frozen=True)
class Zine:
    game: Game
    title: str
    rules: list[tuple[str, str]]
    step: Step
    finished: bool
    events: list[str]
    rolls: list[DiceRoll]
    # Dice rolled in the step whose values stay sealed until the seed is revealed.
    sealed_rolls: int
    board_txt: str
    board_html: SafeString
    sheets: list[Sheet]
    # (place, name, score); final when the game is over, else what the engine has now.
    standings: list[tuple[int, str, int | None]]
    standings_label: str
    next_deadline: str


def latest_done(game: Game) -> int | None:
    """The number of the game's latest resolved step, None when no step is resolved."""
    return (
        Step.objects.filter(game=game, status=Step.Status.DONE)
        .order_by("-number")
        .values_list("number", flat=True)
        .first()
    )


def _latest(game: Game) -> str:
    latest = latest_done(game)
    return "" if latest is None else f" The latest resolved step is {latest}."


def zine(game: Game, number: int | None = None) -> Zine:
    """The zine of step ``number`` of ``game`` (None: its latest resolved step). Raises
    NoStep when there is no such resolved step."""
    if number is None:
        number = latest_done(game)
        if number is None:
            raise NoStep(f"{game.title} has no resolved step yet.")
    step = Step.objects.filter(game=game, number=number).first()
    if step is None:
        raise NoStep(f"{game.title} has no step {number}.{_latest(game)}")
    if step.status != Step.Status.DONE or step.state_after is None:
        raise NoStep(
            f"Step {number} of {game.title} is still open: a zine shows resolved steps."
            f"{_latest(game)}"
        )
    engine: Engine[Any, Any, Any] = registry.get(game.engine)
    state = engine.state_from_json(step.state_after)
    seats = list(Seat.objects.filter(game=game).order_by("position"))
    game.seat_names = {seat.position: seat.name for seat in seats}
    finished = game.status == Game.Status.FINISHED
    following = (
        Step.objects.filter(game=game, number=number + 1).defer("state_before", "state_after")
    ).first()
    title, rules = reports.rules_in_words(game)
    context = {
        "game": game,
        "engine": engine,
        "view": engine.view(state, None),
        "step": following,
        "finished": following is None,
        "options": reports.options_in_play(game, engine),
    }
    board_txt = building.render(
        reports.engine_templates(game.engine, "boards", "txt"), context, autoescape=False
    )
    board_html = mark_safe(
        building.render(reports.engine_templates(game.engine, "boards", "html"), context)
    )
    rolls = list(DiceRoll.objects.filter(step=step).order_by("index"))
    shown = game.seed_revealed
    events = list(
        Event.objects.filter(step=step, audience__isnull=True)
        .order_by("id")
        .values_list("text", flat=True)
    )
    return Zine(
        game=game,
        title=title,
        rules=rules,
        step=step,
        finished=finished,
        events=events,
        rolls=rolls if shown else [],
        sealed_rolls=0 if shown else len(rolls),
        board_txt=board_txt,
        board_html=board_html,
        sheets=[_sheet(game, seat, engine, state, finished) for seat in seats],
        **_standings(game, engine, state),
        next_deadline=_next_deadline(game, following),
    )


def _sheet(
    game: Game, seat: Seat, engine: Engine[Any, Any, Any], state: Any, finished: bool
) -> Sheet:
    if not finished:
        return Sheet(seat.name)
    context = reports.seat_context(game, seat, engine, state, None, reader="public")
    text = building.render(context["private_txt"], context, autoescape=False)
    # Indented under the seat's name.
    lines = [f"  {line}" for line in text.strip("\n").splitlines()]
    return Sheet(
        seat.name,
        "\n".join(lines) + "\n" if any(line.strip() for line in lines) else "",
        mark_safe(building.render(context["private_html"], context)),
    )


def _standings(game: Game, engine: Engine[Any, Any, Any], state: Any) -> dict[str, Any]:
    """The standings after the step when the engine has them (at the game's end); for an
    earlier step of a finished game, the final ones; none mid-game (the board shows where
    each player stands)."""
    label = "Final standings:"
    standings = engine.standings(state)
    if standings is None and game.status == Game.Status.FINISHED and game.state is not None:
        standings = engine.standings(engine.state_from_json(game.state))
        label = "Final standings, at the game's end:"
    names = game.seat_names or {}
    return {
        "standings": [(s.place, names.get(s.seat, str(s.seat)), s.score) for s in standings or []],
        "standings_label": label,
    }


def _next_deadline(game: Game, following: Step | None) -> str:
    if following is None:
        return "none: the game is over" if game.status == Game.Status.FINISHED else "none yet"
    when = local_time(following.deadline, game.time_zone)
    if following.status == Step.Status.DONE:
        return f"step {following.number}, due {when} (since resolved)"
    return f"step {following.number}, due {when}"


def wrap(text: str, width: int = WIDTH) -> str:
    """Every line of ``text`` at most ``width`` characters, a long line continued under
    its own indent and two more spaces."""
    lines = []
    for line in text.splitlines():
        if len(line) <= width:
            lines.append(line.rstrip())
            continue
        indent = line[: len(line) - len(line.lstrip())]
        lines.extend(
            textwrap.wrap(
                line.strip(),
                width,
                initial_indent=indent,
                subsequent_indent=indent + "  ",
                break_long_words=True,
                break_on_hyphens=False,
            )
        )
    return "\n".join(lines) + "\n"


def as_text(zines: list[Zine]) -> str:
    """The plain-text version of ``zines``, for pasting into a zine."""
    text = building.render("games/gm/zine.txt", {"zines": zines}, autoescape=False)
    return wrap(text)


# --- the PDF ---------------------------------------------------------------------------------

# The PDF's paper; its margins are the print style's (site.css), which a browser's print
# takes too, while a browser keeps its own paper size.
PDF_PAGE = "@page { size: A4; }"


@functools.cache
def pdf_available() -> bool:
    """Whether this server makes PDFs: WeasyPrint loads Pango (Debian's libpango and
    libpangoft2) when it is imported, and the import raises OSError without it."""
    try:
        import weasyprint  # noqa: F401
    except OSError:
        return False
    return True


def as_pdf(html: str, base_url: str) -> bytes:
    """The print page ``html`` (its address ``base_url``) as an A4 PDF, through its print
    style."""
    from weasyprint import CSS, HTML

    document = HTML(string=html, base_url=base_url, url_fetcher=static_fetcher(base_url))
    pdf: bytes = document.write_pdf(stylesheets=[CSS(string=PDF_PAGE)])
    return pdf


def static_fetcher(base_url: str) -> Any:
    """WeasyPrint's fetcher of what a page at ``base_url`` names: the site's static files
    only, read from disk (the stylesheet); any other address, another site's or a local
    file's, is refused (ValueError: WeasyPrint then leaves it out), so a PDF never makes
    the server fetch anything."""
    from weasyprint.urls import URLFetcher, URLFetcherResponse

    static = base_url.rstrip("/") + "/" + settings.STATIC_URL.lstrip("/")

    class StaticFiles(URLFetcher):  # type: ignore[misc]  # WeasyPrint is untyped
        def fetch(self, url: str, headers: Any = None) -> URLFetcherResponse:
            found = None
            if url.startswith(static):
                with contextlib.suppress(SuspiciousFileOperation):  # "../" out of them
                    found = finders.find(url.removeprefix(static))
            if not isinstance(found, str):
                raise ValueError(f"a zine's PDF loads only the site's static files, not {url}")
            with open(found, "rb") as file:
                return URLFetcherResponse(url, file.read(), {"Content-Type": _content_type(found)})

    return StaticFiles()


def _content_type(path: str) -> str:
    return "text/css" if path.endswith(".css") else "application/octet-stream"
