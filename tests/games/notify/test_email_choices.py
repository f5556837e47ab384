"""How often a seat gets its step reports: every step, only when it owes an order (with
every event since its last email), or a daily digest; sequential games default to "only
when I owe". Counted over whole scripted games of Dice Survivor and Liar's Dice."""

from __future__ import annotations

from collections import Counter
from datetime import datetime, timedelta
from typing import Any

import pytest

from games import postal
from games.engines import registry
from games.engines.dice import VerifiableDice
from games.models import EmailPreference, Event, Game, Seat, Step
from games.notify import email_choices
from games.postal import steps
from moderator.mail.models import OutboundEmail
from tests.factories import EVERY_HOUR, SEED, choice_game, new_game

pytestmark = pytest.mark.django_db

NAMES = ["ann", "bob", "cy"]
MINUTE = timedelta(minutes=1)


@pytest.fixture(autouse=True)
def same_dice_whatever_the_game_id(monkeypatch: pytest.MonkeyPatch) -> None:
    """A game's dice depend on its id, which the database gives: drawn as game 1's, the
    scripted games are the same in every run."""

    def dice(seed: bytes, game_id: int, start: int = 0) -> VerifiableDice:
        return VerifiableDice(seed, 1, start=start)

    monkeypatch.setattr(steps, "VerifiableDice", dice)


def current(game: Game) -> Step:
    game.refresh_from_db()
    return Step.objects.get(game=game, number=game.step_number)


def survivor_order(game: Game, prompt: dict[str, Any]) -> str:
    """The active player challenges the next player still in; a beaten defender accepts."""
    if prompt["kind"] == "rematch or accept":
        return "accept"
    engine = registry.get(game.engine)
    state = engine.state_from_json(game.state)
    alive = list(state.alive)
    target = alive[(alive.index(prompt["seat"]) + 1) % len(alive)]
    return f"challenge {NAMES[target]}"


def liars_order(game: Game, prompt: dict[str, Any]) -> str:
    """The first bidder of a round bids one 2; the next player calls it a lie."""
    engine = registry.get(game.engine)
    state = engine.state_from_json(game.state)
    return "liar" if state.bids else "bid 1 2"


SCRIPTS = {
    "dice-survivor": ({}, survivor_order),
    "liars-dice": ({"dice_per_player": 2}, liars_order),
}


def play(now: datetime, engine_key: str, choice: str) -> tuple[Game, datetime]:
    """The scripted game to its end, an order a minute, every seat with ``choice`` ("":
    the game's default)."""
    options, order = SCRIPTS[engine_key]
    game = new_game(engine_key, options=options, schedule_spec=EVERY_HOUR)
    if choice:
        for position in range(len(NAMES)):
            postal.choose_reports(game.pk, position=position, choice=choice, everywhere=False)
    postal.start_game(game.pk, now=now, seed=SEED)
    moment = now
    for _ in range(200):
        game.refresh_from_db()
        if game.status == Game.Status.FINISHED:
            return game, moment
        step = current(game)
        prompt = step.prompts[0]
        moment += MINUTE
        postal.accept_order(
            game_id=game.pk,
            position=prompt["seat"],
            text=order(game, prompt),
            source="web",
            now=moment,
        )
    pytest.fail("the scripted game did not end in 200 orders")


def emails_per_seat(game: Game) -> dict[str, int]:
    """The step reports and the final standings each player got."""
    counts = Counter(
        OutboundEmail.objects.filter(game=game, kind__in=["report", "final"]).values_list(
            "to", flat=True
        )
    )
    return {name: counts[f"{name}@example.org"] for name in NAMES}


# The counts of the scripted games (the note quotes them): Dice Survivor, 23 steps
# and the final standings; Liar's Dice (classic, two dice each), 10 steps and the final.
# "owed": the first report, one per step the seat owes, the final standings; "digest":
# the first report and the final standings (the game is over before the digest's hour).
COUNTS = {
    ("dice-survivor", "every"): {"ann": 24, "bob": 24, "cy": 24},
    ("dice-survivor", "owed"): {"ann": 9, "bob": 12, "cy": 7},
    ("dice-survivor", "digest"): {"ann": 2, "bob": 2, "cy": 2},
    ("liars-dice", "every"): {"ann": 11, "bob": 11, "cy": 11},
    ("liars-dice", "owed"): {"ann": 5, "bob": 4, "cy": 6},
    ("liars-dice", "digest"): {"ann": 2, "bob": 2, "cy": 2},
}


@pytest.mark.parametrize("choice", ["every", "owed", "digest"])
@pytest.mark.parametrize("engine_key", ["dice-survivor", "liars-dice"])
def test_each_seat_gets_as_many_emails_as_its_choice_says(
    now: datetime, engine_key: str, choice: str
) -> None:
    game, _ = play(now, engine_key, choice)
    assert emails_per_seat(game) == COUNTS[engine_key, choice]


@pytest.mark.parametrize("engine_key", ["dice-survivor", "liars-dice"])
def test_a_sequential_game_emails_by_default_only_when_a_seat_owes(
    now: datetime, engine_key: str
) -> None:
    game, _ = play(now, engine_key, "")
    assert emails_per_seat(game) == COUNTS[engine_key, "owed"]
    assert set(Seat.objects.filter(game=game).values_list("reports", flat=True)) == {""}


def test_every_email_of_a_seat_that_owes_tells_every_event_since_its_previous_one(
    now: datetime,
) -> None:
    game, _ = play(now, "liars-dice", "owed")
    for position, name in enumerate(NAMES):
        events = [
            line
            for row in Event.objects.filter(game=game).order_by("id")
            if row.visible_to(position)
            for line in row.text.splitlines()
        ]
        told = []
        for email in OutboundEmail.objects.filter(
            game=game, kind__in=["report", "final"], to=f"{name}@example.org"
        ).order_by("id"):
            told += since_events(email.text)
        assert told == events


def since_events(text: str) -> list[str]:
    """The events an email lists under "what happened (since your last email)"."""
    lines = text.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("WHAT HAPPENED"))
    end = next(i for i in range(start + 1, len(lines)) if lines[i] and not lines[i][0].isspace())
    found: list[str] = []
    for line in lines[start + 1 : end]:
        if line.startswith("    "):
            found.append(line[4:])
        elif line.startswith("  ") and not line.startswith("  Postal turn "):
            found.append(line[2:])
    return found


def test_each_game_says_in_its_home_whether_one_seat_at_a_time_owes() -> None:
    defaults = {key: email_choices.game_default(engine) for key, engine in registry.ENGINES.items()}
    assert defaults == {
        "choice": "every",
        "dice-survivor": "owed",
        "drop-shy": "owed",
        "liars-dice": "owed",
        "first-player": "every",
    }


def test_a_choice_for_all_my_seats_sets_every_seat_of_the_address_and_new_games(
    now: datetime,
) -> None:
    first = choice_game(3, title="First")
    second = new_game("liars-dice", schedule_spec=EVERY_HOUR)
    Seat.objects.filter(game=second, position=0).update(email="Ann@Example.org")
    chosen = postal.choose_reports(first.pk, position=0, choice="digest", everywhere=True)
    assert sorted((seat.game_id, seat.position) for seat in chosen) == [
        (first.pk, 0),
        (second.pk, 0),
    ]
    assert list(
        Seat.objects.order_by("game_id", "position").values_list("game_id", "position", "reports")
    ) == [
        (first.pk, 0, "digest"),
        (first.pk, 1, ""),
        (first.pk, 2, ""),
        (second.pk, 0, "digest"),
        (second.pk, 1, ""),
        (second.pk, 2, ""),
    ]
    assert list(EmailPreference.objects.values_list("email", "reports")) == [
        ("ann@example.org", "digest")
    ]
    # A game created later starts ann's seat with her default; the others with the game's.
    third = new_game("dice-survivor", schedule_spec=EVERY_HOUR)
    assert list(
        Seat.objects.filter(game=third).order_by("position").values_list("reports", flat=True)
    ) == ["digest", "", ""]


def test_a_choice_for_this_seat_leaves_the_players_other_seats_and_default(now: datetime) -> None:
    first = choice_game(3, title="First")
    second = choice_game(3, title="Second")
    postal.choose_reports(first.pk, position=0, choice="owed", everywhere=False)
    assert list(
        Seat.objects.filter(position=0).order_by("game_id").values_list("reports", flat=True)
    ) == ["owed", ""]
    assert EmailPreference.objects.count() == 0
    assert second.seats.get(position=0).reports == ""


def test_a_choice_that_does_not_exist_is_refused_and_changes_nothing(now: datetime) -> None:
    game = choice_game(3)
    with pytest.raises(postal.PostalError) as refused:
        postal.choose_reports(game.pk, position=0, choice="hourly", everywhere=True)
    assert refused.value.message == (
        "'hourly' is not a choice of how often to email; the choices: 'every' (every step); "
        "'owed' (only when I owe an order, with what happened since); "
        "'digest' (a daily digest of what happened); "
        "'none' (never: I read them on my seat's page)"
    )
    assert set(Seat.objects.values_list("reports", flat=True)) == {""}
    assert EmailPreference.objects.count() == 0


def test_a_seat_that_stops_getting_every_report_is_told_only_what_happens_from_then(
    now: datetime,
) -> None:
    game = new_game("liars-dice", options={"dice_per_player": 2}, schedule_spec=EVERY_HOUR)
    postal.choose_reports(game.pk, position=2, choice="every", everywhere=False)
    postal.start_game(game.pk, now=now, seed=SEED)
    postal.accept_order(game_id=game.pk, position=0, text="bid 1 2", source="web", now=now)
    # cy switches to "only when I owe" while bob is asked: the bid is old news for her.
    postal.choose_reports(game.pk, position=2, choice="owed", everywhere=False)
    postal.accept_order(game_id=game.pk, position=1, text="bid 1 3", source="web", now=now)
    (report,) = OutboundEmail.objects.filter(
        game=game, kind="report", to="cy@example.org", dedupe_key__endswith=":3:2"
    )
    assert since_events(report.text) == ["round 1: bob bids 1 x 3"]


def test_a_new_deadline_is_told_to_the_seats_that_owe_and_those_that_get_every_step(
    now: datetime,
) -> None:
    game = new_game("liars-dice", options={"dice_per_player": 2}, schedule_spec=EVERY_HOUR)
    postal.choose_reports(game.pk, position=2, choice="every", everywhere=False)
    postal.start_game(game.pk, now=now, seed=SEED)
    postal.extend_deadline(game.pk, deadline=now + timedelta(days=2), now=now)
    told = OutboundEmail.objects.filter(kind="deadline").order_by("to")
    assert list(told.values_list("to", flat=True)) == ["ann@example.org", "cy@example.org"]


def test_a_new_player_in_a_seat_gets_their_own_default(now: datetime) -> None:
    game = new_game("liars-dice", schedule_spec=EVERY_HOUR)
    other = choice_game(3, title="Elsewhere")
    Seat.objects.filter(game=other, position=0).update(email="dan@example.org")
    postal.choose_reports(other.pk, position=0, choice="every", everywhere=True)
    postal.choose_reports(game.pk, position=1, choice="digest", everywhere=False)
    postal.start_game(game.pk, now=now, seed=SEED)
    postal.replace_player(game.pk, position=1, name="dan", email="dan@example.org", now=now)
    bob = Seat.objects.get(game=game, position=1)
    assert (bob.reports, bob.reported_through) == (
        "every",
        Event.objects.filter(game=game).order_by("-id").values_list("id", flat=True)[0],
    )


def test_a_choice_for_all_of_a_players_seats_says_the_word_of_every_game() -> None:
    """A player's own settings offer "every postal turn" for all their seats, whatever the
    game: true while every game of the registry calls its steps so."""
    assert {engine.step_word for engine in registry.ENGINES.values()} == {
        email_choices.ACROSS_GAMES
    }
    assert email_choices.you_get(email_choices.EVERY, email_choices.ACROSS_GAMES) == (
        "every postal turn"
    )
