"""Spectators and the archive (docs/players.md): who may watch a game, its public page
without a seat's hidden information, the replay of a finished game with every roll checked
and every cup revealed, and the archive searched by a player's name."""

from __future__ import annotations

import re
from datetime import datetime, timedelta
from html import escape

import pytest
from django.test import Client
from time_machine import TimeMachineFixture

from games import postal
from games.engines.dice import face
from games.models import DiceRoll, Event, Game, Publicity, Step
from games.notify.reports import ADDRESSED
from games.records import spectators
from tests.factories import EVERY_HOUR, NAMES, GameFactory, GMFactory, choice_game, started_game
from tests.games.postal.test_gm import CHOICE_FORM, GOOD
from tests.games.postal.test_liars_dice_postal import (
    cup_secrets,
    due,
    sweep_after,
    with_distinct_cups,
)
from tests.games.web.test_hidden import readable_by
from tests.games.web.test_views import section

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def frozen(time_machine: TimeMachineFixture, now: datetime) -> None:
    time_machine.move_to(now, tick=False)


def finished_match(now: datetime, time_machine: TimeMachineFixture) -> Game:
    """A Liar's Dice Death Match played out on missed deadlines to its end."""
    game = started_game(
        "liars-dice",
        now=now,
        players=["Ann", "Bob"],
        title="Match",
        options={"profile": "genius_dm", "max_dice": 5},
        schedule_spec=EVERY_HOUR,
    )
    for _ in range(20):
        game.refresh_from_db()
        if game.status == Game.Status.FINISHED:
            break
        sweep_after(due(game), time_machine)
    game.refresh_from_db()
    assert game.status == Game.Status.FINISHED
    return game


def test_who_may_watch_follows_the_gms_choice_and_the_status(now: datetime) -> None:
    game = started_game(now=now)
    cases = [
        (Publicity.AUTO, Game.Status.RUNNING, False),
        (Publicity.AUTO, Game.Status.FINISHED, True),
        (Publicity.YES, Game.Status.DRAFT, False),
        (Publicity.YES, Game.Status.RUNNING, True),
        (Publicity.YES, Game.Status.PAUSED, True),
        (Publicity.NO, Game.Status.FINISHED, False),
        (Publicity.NO, Game.Status.RUNNING, False),
    ]
    for public, status, watched in cases:
        Game.objects.filter(pk=game.pk).update(public=public, status=status)
        game.refresh_from_db()
        assert spectators.is_public(game) is watched, (public, status)
        assert list(spectators.public_games()) == ([game] if watched else []), (public, status)
        response = Client().get(f"/games/{game.public_id}/")
        assert response.status_code == (200 if watched else 404), (public, status)


def test_a_new_game_is_public_once_finished_by_default() -> None:
    assert choice_game().public == Publicity.AUTO


def test_the_gm_sets_who_may_watch_and_a_wrong_choice_changes_nothing(now: datetime) -> None:
    gm = GMFactory.create(is_staff=True)
    game = GameFactory.create(gm=gm)
    client = Client()
    client.force_login(gm)
    response = client.post(f"/gm/{game.pk}/public/", {"public": "yes"}, follow=True)
    game.refresh_from_db()
    assert game.public == Publicity.YES
    assert f"/games/{game.public_id}/" in response.content.decode()
    wrong = client.post(f"/gm/{game.pk}/public/", {"public": "everybody"}, follow=True)
    assert "Select a valid choice" in wrong.content.decode()
    game.refresh_from_db()
    assert game.public == Publicity.YES
    with pytest.raises(postal.PostalError):
        postal.set_public(game.pk, "maybe")
    client.post(f"/gm/{game.pk}/public/", {"public": "no"})
    game.refresh_from_db()
    assert game.public == Publicity.NO


def test_the_new_game_form_sets_who_may_watch() -> None:
    gm = GMFactory.create(is_staff=True)
    client = Client()
    client.force_login(gm)
    form = {**GOOD, "title": "Watched", "public": "yes"}
    response = client.post(CHOICE_FORM, form)
    assert response.status_code == 302, response.content.decode()
    assert Game.objects.get(title="Watched").public == Publicity.YES


def test_a_running_public_game_shows_no_cup_that_a_seat_sees(now: datetime) -> None:
    game = with_distinct_cups(now, {}, 3)
    Game.objects.filter(pk=game.pk).update(public=Publicity.YES)
    state = game.rules.state_from_json(game.state)
    page = Client().get(f"/games/{game.public_id}/").content.decode()
    assert "Postal turn 1; its deadline:" in page
    for position in range(3):
        seen = readable_by(game, position, now)
        for secret in cup_secrets(state, position):
            # The seat's own page shows it: a real string, absent from the public page.
            assert secret in seen or escape(secret) in seen, (position, secret)
            assert secret not in page and escape(secret) not in page, (position, secret)
    private = Event.objects.filter(game=game, audience__isnull=False).values_list("text", flat=True)
    assert private
    for text in private:
        assert escape(text) not in page


def test_the_public_page_lists_public_events_newest_first(now: datetime) -> None:
    game = with_distinct_cups(now, {}, 3)
    Game.objects.filter(pk=game.pk).update(public=Publicity.YES)
    public = list(
        Event.objects.filter(game=game, audience__isnull=True).values_list("text", flat=True)
    )
    page = Client().get(f"/games/{game.public_id}/").content.decode()
    assert public
    for text in public:
        assert f"<li>{escape(text)}</li>" in page


def test_the_replay_checks_every_roll_and_reveals_every_cup(
    now: datetime, time_machine: TimeMachineFixture
) -> None:
    game = finished_match(now, time_machine)
    client = Client()
    last = game.steps.count()
    seed = bytes(game.seed or b"")
    for step in Step.objects.filter(game=game).order_by("number"):
        page = client.get(f"/games/{game.public_id}/replay/?step={step.number}").content.decode()
        assert f"Postal turn {step.number} of {last}" in page
        # The public events as they were told (those told to a seat: below).
        for text in Event.objects.filter(step=step, audience=None).values_list("text", flat=True):
            assert escape(text) in page, (step.number, text)
        rolls = DiceRoll.objects.filter(step=step)
        assert page.count("✓ matches") == rolls.count()
        assert "✗" not in page
        for roll in rolls:
            assert (
                f'<td data-label="Rolled">{face(seed, game.pk, roll.index, roll.sides)}</td>'
                in page
            )
        assert f"Every player's hidden information during postal turn {step.number}" in page
        state = game.rules.state_from_json(step.state_before)
        for position in (0, 1):
            # Each cup held during the step, drawn as its seat saw it on its own page, but
            # in the words of an onlooker: nothing here is "yours".
            cup = re.search(rf'<p id="seat-{position}-your-cup"[^>]*>Cup: (.*?)</p>', page)
            assert cup is not None, (step.number, position)
            assert re.findall(r'aria-label="(\d)"', cup[1]) == [
                str(value) for value in state.hands[position]
            ]
        hidden = section(page, "section", "hidden")
        assert ("Only you see this" in hidden, "Your " in hidden) == (False, False)
        assert ('rel="next"' in page) is (step.number < last)
        assert ('rel="prev"' in page) is (step.number > 1)
    # Every cup was told to its seat only; the replay shows them all.
    cups = Event.objects.filter(game=game, audience__isnull=False)
    assert cups.count() >= 2


def first_cups(game: Game) -> list[str]:
    """Each seat's dice as step 1 was played, in the words of the events."""
    first = Step.objects.get(game=game, number=1)
    state = game.rules.state_from_json(first.state_before)
    return [" ".join(map(str, hand)) for hand in state.hands]


def test_the_replay_tells_each_cup_in_an_onlookers_words_never_your(
    now: datetime, time_machine: TimeMachineFixture
) -> None:
    game = finished_match(now, time_machine)
    hands = first_cups(game)

    shown = spectators.replay_step(game, 1)

    assert shown is not None
    assert [(str(text), seen) for text, seen in shown.events if seen is not None] == [
        (f"round 1: Ann's dice are {hands[0]}", ["Ann"]),
        (f"round 1: Bob's dice are {hands[1]}", ["Bob"]),
    ]
    page = Client().get(f"/games/{game.public_id}/replay/?step=1").content.decode()
    assert (
        f'<li>round 1: Ann&#x27;s dice are {hands[0]} <span class="muted">(seen by Ann)</span></li>'
    ) in section(page, "section", "events")
    for step in range(1, game.steps.count() + 1):
        page = Client().get(f"/games/{game.public_id}/replay/?step={step}").content.decode()
        assert ADDRESSED.findall(section(page, "section", "events")) == [], step


def test_a_german_reader_reads_an_onlookers_words_in_the_replay(
    now: datetime, time_machine: TimeMachineFixture
) -> None:
    game = finished_match(now, time_machine)
    hands = first_cups(game)

    page = (
        Client(HTTP_ACCEPT_LANGUAGE="de")
        .get(f"/games/{game.public_id}/replay/?step=1")
        .content.decode()
    )

    assert (
        f"<li>Durchgang 1: die Würfel von Ann sind {hands[0]}"
        ' <span class="muted">(gesehen von Ann)</span></li>'
    ) in section(page, "section", "events")


def test_a_german_reader_reads_the_replays_rolls_in_german(
    now: datetime, time_machine: TimeMachineFixture
) -> None:
    game = finished_match(now, time_machine)
    step = DiceRoll.objects.filter(game=game).order_by("index").first()
    assert step is not None
    page = (
        Client(HTTP_ACCEPT_LANGUAGE="de")
        .get(f"/games/{game.public_id}/replay/?step={step.step.number}")
        .content.decode()
    )
    names = re.findall(r'<td class="card-title">(.*?)</td>', page)
    indexes = DiceRoll.objects.filter(step=step.step).order_by("index")
    assert names == [f"Ziehung {roll.index}" for roll in indexes]
    assert page.count("✓ stimmt") == len(names)


def test_a_tampered_roll_shows_a_cross(now: datetime, time_machine: TimeMachineFixture) -> None:
    game = finished_match(now, time_machine)
    roll = DiceRoll.objects.filter(game=game).order_by("index").first()
    assert roll is not None
    DiceRoll.objects.filter(pk=roll.pk).update(value=roll.value % 6 + 1)
    page = Client().get(f"/games/{game.public_id}/replay/?step={roll.step.number}")
    assert "✗ does not match" in page.content.decode()


def test_the_replay_of_a_running_game_is_a_404(now: datetime) -> None:
    game = with_distinct_cups(now, {}, 3)
    Game.objects.filter(pk=game.pk).update(public=Publicity.YES)
    assert Client().get(f"/games/{game.public_id}/replay/").status_code == 404


def test_a_bad_step_number_shows_the_first_or_last_step(
    now: datetime, time_machine: TimeMachineFixture
) -> None:
    game = finished_match(now, time_machine)
    last = game.steps.count()
    client = Client()
    assert (
        "Postal turn 1 of" in client.get(f"/games/{game.public_id}/replay/?step=x").content.decode()
    )
    far = client.get(f"/games/{game.public_id}/replay/?step=999").content.decode()
    assert f"Postal turn {last} of {last}" in far


def finished(title: str, names: list[str], at: datetime, public: str = Publicity.AUTO) -> Game:
    """A finished Choice game whose seats, played from ann@, bob@, ... example.org, are
    called ``names``; its row only, written directly."""
    seats = [postal.Player(name, f"{NAMES[n]}@example.org") for n, name in enumerate(names)]
    return GameFactory.create(
        seats=seats, title=title, status=Game.Status.FINISHED, finished_at=at, public=public
    )


def test_the_archive_lists_finished_public_games_newest_first_by_player(now: datetime) -> None:
    old = finished("Old", ["Ann", "Bob"], now - timedelta(days=2))
    new = finished("New", ["Annette", "Cy"], now - timedelta(days=1))
    finished("Hidden", ["Ann", "Dee"], now, public=Publicity.NO)
    running = GameFactory.create(title="Running")
    assert running.status != Game.Status.FINISHED
    assert list(spectators.archive("choice")) == [new, old]
    assert list(spectators.archive("choice", "ann")) == [new, old]
    assert list(spectators.archive("choice", "BOB")) == [old]
    assert list(spectators.archive("liars-dice")) == []
    client = Client()
    page = client.get("/games/archive/choice/?player=bob").content.decode()
    assert ">Old</a>" in page and ">New</a>" not in page and "Hidden" not in page
    none = client.get("/games/archive/choice/?player=zed").content.decode()
    assert "has a player named like “zed”" in none
    long = client.get("/games/archive/choice/?player=" + "x" * 61).content.decode()
    assert "at most 60 characters" in long
    assert client.get("/games/archive/nothing/").status_code == 404
    index = client.get("/games/archive/").content.decode()
    assert '<a href="/games/archive/choice/">' in index


@pytest.mark.parametrize(
    "address",
    [
        "/games/archive/choice/?player=%00",
        "/games/archive/choice/?player=ann%00bob",
        "/games/archive/choice/?page=1&player=x&player=%00",
        "/games/archive/choice/?%00=ann",
        "/signin/?next=/me/%00",
    ],
)
def test_an_address_holding_a_nul_answers_400_with_a_page_that_says_so(
    now: datetime, address: str
) -> None:
    finished("Old", ["Ann", "Bob"], now - timedelta(days=2))
    response = Client().get(address)
    assert response.status_code == 400
    text = " ".join(response.content.decode().split())
    assert "<h1>This address is not valid</h1>" in text
    assert (
        "The address holds a NUL character (a zero byte), which no page here takes, so "
        "nothing was done. Check the link, or go back and try again." in text
    )


def test_the_archive_pages_only_by_ascii_digits(
    now: datetime, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(spectators, "ARCHIVE_ROWS", 1)
    for day in range(1, 4):
        finished(f"Game {day}", ["Ann", "Bob"], now - timedelta(days=day))
    client = Client()
    for page in ("\u0663", "\u00b2", "9" * 5000, "-1", "1.0"):
        response = client.get("/games/archive/choice/", {"page": page})
        assert response.status_code == 200
        assert response.context["page"].number == 1
    assert client.get("/games/archive/choice/", {"page": "3"}).context["page"].number == 3
