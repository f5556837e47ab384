"""A game continued from paper (docs/records.md, "A game from paper"): the GM enters its
history so far; the record is replayed first, and a record that does not replay creates
nothing and says which line and why. An imported game has its steps, orders, dice and
events, invites its players, plays on by post to its end, and replays and verifies with its
entered dice named as such. Each seat sees only its own part of the imported history."""

from __future__ import annotations

import html
import io
import json
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import call_command
from django.test import Client
from django.urls import reverse
from django.utils import translation
from time_machine import TimeMachineFixture

from games import postal, records, tasks
from games.engines.choice.rules import ChoiceEngine
from games.engines.dice import ScriptedDice, face
from games.engines.liars_dice.rules import LiarsDiceEngine
from games.lib import words
from games.models import DiceRoll, Event, Game, GMAction, Order, Seat, Step
from games.records import archive, paper
from moderator.mail.models import OutboundEmail
from tests.factories import GMFactory
from tests.games.postal.test_liars_dice_postal import cup_secrets
from tests.games.records.test_zine import zine_of
from tests.games.web.test_hidden import assert_secrets_stay_private

pytestmark = pytest.mark.django_db

ROOT = Path(__file__).resolve().parents[3]
SAMPLE = (ROOT / "docs" / "examples" / "choice-from-paper.txt").read_text()
SEED = bytes(range(32))
CHOICE = ChoiceEngine()
LIARS = LiarsDiceEngine()
PLAYERS = [postal.Player(name, f"{name.lower()}@example.org") for name in ("Ann", "Bob", "Cy")]
# The sample without its last line: turn 3's dice, which the moderator then rolls.
WITHOUT_TURN_3 = SAMPLE[: SAMPLE.index("# Turn 3's dice")]
HOURLY = {"kind": "interval", "seconds": 3600}
TURN_1, TURN_2, TURN_3 = (
    [3, 2, 4, 6, 1, 1, 5, 1, 3, 5],
    [1, 5, 2, 1, 1, 4, 4, 1, 2, 1],
    [5, 4, 1, 5, 1, 2, 6, 6, 5, 1],
)


def gm() -> User:
    return GMFactory.create(is_staff=True)


def continued(
    text: str, now: datetime, players: list[postal.Player] = PLAYERS, **kwargs: Any
) -> Game:
    return postal.import_game(
        gm=kwargs.pop("gm", None) or gm(),
        title=kwargs.pop("title", "Choice Club"),
        history=paper.read(text, [p.name for p in players]),
        players=players,
        now=now,
        seed=SEED,
        schedule_spec=kwargs.pop("schedule_spec", HOURLY),
        **kwargs,
    )


def nothing_created() -> None:
    assert (
        Game.objects.count(),
        Step.objects.count(),
        Order.objects.count(),
        DiceRoll.objects.count(),
        Event.objects.count(),
        GMAction.objects.count(),
        OutboundEmail.objects.count(),
    ) == (0, 0, 0, 0, 0, 0, 0)


# --- the line format ---------------------------------------------------------------------


def test_the_line_format_reads_as_a_record_naming_each_move_by_its_line() -> None:
    read = paper.read(SAMPLE)
    assert read.record == {
        "game": "choice",
        "options": {"rolls_per_turn": 2, "round_cap": 10},
        "players": ["Ann", "Bob", "Cy"],
        "dice": [*TURN_1, *TURN_2, *TURN_3],
        "moves": [
            {"player": "Ann", "order": "W1 2+3 4+6\nW1 1+5 3+5"},
            {"player": "Bob", "order": "W1 2+4 3+6\nW1 1+5 3+5"},
            {"player": "Cy", "order": "W3 1+4 2+6\nW1 1+5 3+5"},
            {"player": "Ann", "order": "W1 1+1 2+5\nW2 1+1 4+4"},
            {"player": "Bob", "order": "W2 1+5 1+1\nW1 1+2 4+4"},
            {"deadline": True},
        ],
    }
    assert read.where == ["line 10", "line 12", "line 14", "line 19", "line 21", "line 23"]
    assert read.sources[4:] == ["Bob: W2 1+5 1+1\n     W1 1+2 4+4", "deadline"]


def test_the_players_default_to_the_seats_and_a_game_may_be_named_by_its_title() -> None:
    read = paper.read("game: Liar's Dice\ndice_per_player: 3\ncards: flip, half", ["Ann", "Bo"])
    assert read.record == {
        "game": "liars-dice",
        "options": {"dice_per_player": 3, "cards": ["flip", "half"]},
        "players": ["Ann", "Bo"],
        "dice": [],
        "moves": [],
    }


def test_a_json_record_is_read_as_it_is() -> None:
    record = {"game": "choice", "dice": [1, 2], "moves": [{"deadline": True}]}
    read = paper.read(json.dumps(record), ["Ann"])
    assert read == paper.Paper({**record, "players": ["Ann"]}, [])


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("players: Ann", "name the game first, e.g. game: choice"),
        ("game: chess", "line 1: there is no game 'chess'; the games are choice (Choice), "),
        (
            "game: choice\nplayers: Ann\nAnn: W1 1+1 2+2\nBob: W1 1+1 2+2",
            "line 4: 'Bob' is not a player of this game; the players are Ann",
        ),
        ("game: choice\n  W1 1+1 2+2", "line 2: an indented line continues the order above"),
        ("game: choice\ndice: 3 five", "line 2: dice are whole numbers, e.g. dice: 3 5 2 6 5;"),
        ("game: choice\nresolve now", "line 2: 'resolve now' is none of NAME: ORDER, dice:"),
        ('{"game": "choice",}', "the record starts like JSON but is not JSON: line 1, column"),
    ],
)
def test_a_text_that_is_not_a_record_says_which_line_and_why(text: str, message: str) -> None:
    with pytest.raises(paper.PaperError) as raised:
        paper.read(text, [])
    assert raised.value.message.startswith(message)


def test_a_long_unreadable_line_is_quoted_cut_short() -> None:
    with pytest.raises(paper.PaperError) as raised:
        paper.read("game: choice\n" + "[" * 6000, [])
    assert raised.value.message == (
        f"line 2: '{'[' * 60}'... is none of NAME: ORDER, dice: VALUES, deadline or a setting "
        "(game:, players:, or an option)"
    )


# --- importing -------------------------------------------------------------------------------


def test_the_sample_continues_running_with_its_history(now: datetime) -> None:
    game = continued(SAMPLE, now)
    assert (game.status, game.step_number, game.paper_steps, game.paper_dice) == (
        Game.Status.RUNNING,
        3,
        2,
        30,
    )
    assert (game.dice_drawn, game.started_at, game.rated) == (30, now, False)
    expected = records.run(paper.read(SAMPLE).record)
    assert game.state == CHOICE.state_to_json(expected.state)
    steps = list(Step.objects.filter(game=game).order_by("number"))
    assert [(s.number, s.status, s.closed_by) for s in steps] == [
        (1, Step.Status.DONE, Step.Closed.EARLY),
        (2, Step.Status.DONE, Step.Closed.DEADLINE),
        (3, Step.Status.OPEN, ""),
    ]
    assert steps[2].deadline == now + timedelta(hours=1)
    assert steps[1].state_before == steps[0].state_after
    assert steps[2].state_before == steps[1].state_after == game.state
    orders = Order.objects.filter(step__game=game).order_by("step__number", "id")
    assert [(o.step.number, o.seat.name, o.source) for o in orders] == [
        (1, "Ann", Order.Source.PAPER),
        (1, "Bob", Order.Source.PAPER),
        (1, "Cy", Order.Source.PAPER),
        (2, "Ann", Order.Source.PAPER),
        (2, "Bob", Order.Source.PAPER),
        (2, "Cy", Order.Source.DEFAULT),
    ]
    assert orders[0].canonical == "1: W1 2+3 4+6\n2: W1 1+5 3+5"
    assert Seat.objects.get(game=game, name="Cy").nmr_count == 1
    rolls = DiceRoll.objects.filter(game=game).order_by("index")
    assert [r.value for r in rolls] == paper.read(SAMPLE).record["dice"]
    assert [(r.step.number, r.label) for r in rolls][::10] == [
        (1, "step 1 (paper)"),
        (1, "step 1 (paper)"),
        (2, "step 2 (paper)"),
    ]
    (logged,) = GMAction.objects.filter(game=game)
    assert (logged.kind, logged.words, logged.step_number) == (
        GMAction.Kind.IMPORT,
        "The game was continued from a paper record (2 steps)",
        3,
    )
    emails = OutboundEmail.objects.filter(game=game).order_by("id")
    assert sorted((e.kind, e.to) for e in emails) == sorted(
        [(kind, p.email) for kind in ("invite", "report") for p in PLAYERS]
    )
    report = emails.filter(kind="report", to="ann@example.org").get()
    assert "postal turn 3, rounds 5-6: round 5 rolls 5 4 1 5 1; round 6 rolls 2 6 6 5 1" in (
        report.text
    )
    assert "Cy sent no order: the NMR default is played" in report.text
    # The paper steps cannot be rolled back.
    assert postal.rollback_offered(game) is None
    with pytest.raises(postal.PostalError) as refused:
        postal.rollback(game.pk, reason="oops", now=now)
    assert refused.value.message == (
        "step 2 was played on paper and entered from its record: it cannot be rolled back"
    )


def test_the_moderator_rolls_what_paper_had_not_rolled_yet(now: datetime) -> None:
    game = continued(WITHOUT_TURN_3, now)
    assert (game.paper_dice, game.dice_drawn) == (20, 30)
    rolled = DiceRoll.objects.filter(game=game, index__gte=20).order_by("index")
    assert [(r.label, r.value) for r in rolled] == [
        ("step 2", face(SEED, game.pk, r.index, 6)) for r in rolled
    ]


def test_the_import_page_continues_a_game_and_says_what_it_did(now: datetime) -> None:
    user = gm()
    client = Client()
    client.force_login(user)
    page = client.get(reverse("gm:create_from_paper"))
    assert page.status_code == 200
    assert reverse("gm:create_from_paper") in client.get(reverse("gm:create")).content.decode()
    response = client.post(
        reverse("gm:create_from_paper"),
        {
            "title": "Choice Club",
            "record": WITHOUT_TURN_3,
            "players": "Ann <ann@example.org>\nBob, bob@example.org\nCy <cy@example.org>",
            "schedule": "every 48 hours",
            "time_zone": "Europe/Berlin",
            "early_processing": "on",
        },
    )
    game = Game.objects.get()
    assert (game.gm, game.title, game.time_zone) == (user, "Choice Club", "Europe/Berlin")
    assert response.status_code == 302
    assert response["Location"] == reverse("gm:game", args=[game.pk])
    shown = html.unescape(client.get(response["Location"]).content.decode())
    assert (
        "Choice Club continues from paper: 2 steps and 20 dice entered; the players are invited"
        " and sent the report of step 3. The moderator rolled the 10 dice the record did not"
        " hold (the opening of step 3), and rolls every die from now on."
    ) in shown
    assert "The game was continued from a paper record (2 steps)" in shown


def test_an_uploaded_record_file_is_read_like_a_pasted_one(now: datetime) -> None:
    client = Client()
    client.force_login(gm())
    response = client.post(
        reverse("gm:create_from_paper"),
        {
            "title": "Choice Club",
            "record_file": SimpleUploadedFile("club.txt", SAMPLE.encode(), "text/plain"),
            "players": "Ann <ann@example.org>\nBob <bob@example.org>\nCy <cy@example.org>",
            "schedule": "every 48 hours",
            "time_zone": "UTC",
        },
    )
    assert response.status_code == 302
    assert Game.objects.get().paper_steps == 2


# --- refused records -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (
            SAMPLE.replace("Bob: W2 1+5 1+1", "Bob: W2 1+5 1+2"),
            "line 21 (Bob): round 3: the roll is 1 1 1 2 5 but your line uses 1 1 2 2 5",
        ),
        (
            SAMPLE.replace("dice: 1 5 2 1 1   4 4 1 2 1\n", ""),
            "line 18 (Ann): round 3: the roll is 1 1 4 5 5 but your line uses 1 1 1 2 5",
        ),
        (
            SAMPLE.replace("dice: 5 4 1 5 1   2 6 6 5 1", "dice: 5 4 1 5 1   2 6 6 5 1 3"),
            "the record has 1 die more than its moves roll (from die 31 on): remove them, or"
            " add the moves that rolled them",
        ),
        (
            WITHOUT_TURN_3.replace("deadline\n", "deadline\ndeadline\n"),
            "line 23 (deadline): the record has too few dice: die 21 (a d6) is needed but only"
            " 20 are given",
        ),
        (
            SAMPLE.replace("Cy", "Dee"),
            "the record's players are Ann, Bob, Dee but the seats are Ann, Bob, Cy: name the"
            " same players in the same order",
        ),
        (
            SAMPLE.replace("round_cap: 10", "round_cap: 4"),
            "options: option round_cap must be 10-500, not 4",
        ),
    ],
)
def test_a_record_that_does_not_replay_creates_nothing(
    now: datetime, text: str, message: str
) -> None:
    with pytest.raises(postal.PostalError) as refused:
        continued(text, now)
    assert refused.value.message == message
    nothing_created()


def test_a_record_that_ends_the_game_is_refused(now: datetime) -> None:
    record = {
        "game": "liars-dice",
        "options": {"dice_per_player": 1},
        "players": ["Ann", "Bob"],
        "dice": [2, 3],
        "moves": [{"player": "Ann", "order": "bid 1 2"}, {"player": "Bob", "order": "liar"}],
    }
    with pytest.raises(postal.PostalError) as refused:
        continued(json.dumps(record), now, players=PLAYERS[:2])
    assert refused.value.message == (
        "the record plays the game to its end (move 2): there is nothing left to play by post"
    )
    nothing_created()


def test_a_record_with_an_order_the_host_set_is_refused(now: datetime) -> None:
    record = {
        "game": "first-player",
        "options": {"order_mode": "free", "rounds": 2},
        "players": ["Ann", "Bob", "Cy"],
        "dice": [],
        "moves": [{"host_order": ["Cy", "Ann", "Bob"]}],
    }
    with pytest.raises(postal.PostalError) as refused:
        continued(json.dumps(record), now)
    assert refused.value.message == (
        "move 1: a paper record has no order set by the host; enter the round's rolls, or set "
        "the order once the game is here"
    )
    nothing_created()


def test_the_import_page_says_why_a_record_is_refused_and_creates_nothing(
    now: datetime,
) -> None:
    client = Client()
    client.force_login(gm())
    form = {
        "title": "Choice Club",
        "record": SAMPLE.replace("Bob: W2 1+5 1+1", "Bob: W2 1+5 1+2"),
        "players": "Ann <ann@example.org>\nBob <bob@example.org>\nCy <cy@example.org>",
        "schedule": "every 48 hours",
        "time_zone": "UTC",
    }
    response = client.post(reverse("gm:create_from_paper"), form)
    assert response.status_code == 200
    content = html.unescape(response.content.decode())
    assert (
        "Nothing was created: line 21 (Bob): round 3: the roll is 1 1 1 2 5 but your line uses"
        " 1 1 2 2 5." in content
    )
    assert (
        '<pre class="wrap-anywhere" id="import-move">Bob: W2 1+5 1+2\n     W1 1+2 4+4</pre>'
        in response.content.decode()
    )
    nothing_created()
    unreadable = client.post(reverse("gm:create_from_paper"), {**form, "record": "Ann W1"})
    assert "line 1: 'Ann W1' is none of NAME: ORDER" in html.unescape(unreadable.content.decode())
    empty = client.post(reverse("gm:create_from_paper"), {**form, "record": ""})
    assert "paste the game so far, or upload its record" in empty.content.decode()
    nothing_created()


NESTED = "[" * 100_000 + "]" * 100_000
HUGE = "7" * 5_000


@pytest.mark.parametrize(
    ("record", "message"),
    [
        (
            '{"game": "choice", "x": ' + NESTED + "}",
            "the record nests lists or objects deeper than 32 levels",
        ),
        (
            '{"game": "choice", "x": ' + "[" * 33 + "1" + "]" * 33 + "}",
            "the record nests lists or objects deeper than 32 levels",
        ),
        (
            '{"game": "choice", "seed": ' + HUGE + "}",
            "a number has at most 18 digits; one here has 5000",
        ),
        (
            "game: choice\nrounds: " + HUGE,
            "line 2: a number has at most 18 digits; one here has 5000",
        ),
        (
            "game: choice\nrounds: " + NESTED,
            "line 2: the value nests lists or objects deeper than 32 levels",
        ),
        (
            "game: choice\ndice: 3 " + HUGE,
            "line 2: a number has at most 18 digits; one here has 5000",
        ),
        # Digits of other scripts are no dice, not even ٣ (3).
        (
            "game: choice\ndice: 3 \u0663",
            "line 2: dice are whole numbers, e.g. dice: 3 5 2 6 5; not '\u0663'",
        ),
        (
            "game: choice\ndice: 3 \u00b2",
            "line 2: dice are whole numbers, e.g. dice: 3 5 2 6 5; not '\u00b2'",
        ),
    ],
    ids=[
        "nested",
        "nested-33",
        "huge-json",
        "huge-option",
        "nested-option",
        "huge-die",
        "arabic-die",
        "superscript-die",
    ],
)
def test_the_import_page_says_a_record_is_too_deep_or_too_big_and_creates_nothing(
    record: str, message: str
) -> None:
    client = Client()
    client.force_login(gm())
    form = {
        "title": "Choice Club",
        "record": record,
        "players": "Ann <ann@example.org>\nBob <bob@example.org>\nCy <cy@example.org>",
        "schedule": "every 48 hours",
        "time_zone": "UTC",
    }
    response = client.post(reverse("gm:create_from_paper"), form)
    assert response.status_code == 200
    assert response.context["form"].errors["record"] == [message]
    nothing_created()


# --- playing on, replay and verify -----------------------------------------------------------


def test_an_imported_game_plays_on_by_post_to_the_end_and_verifies(
    now: datetime, time_machine: TimeMachineFixture, tmp_path: Path
) -> None:
    game = continued(WITHOUT_TURN_3, now)
    for _ in range(5):
        game.refresh_from_db()
        if game.status == Game.Status.FINISHED:
            break
        step = Step.objects.get(game=game, number=game.step_number)
        state = CHOICE.state_from_json(game.state)
        # Ann plays her own turns; Bob and Cy miss theirs.
        ann = CHOICE.canonical(state, 0, CHOICE.default(state, 0))
        postal.accept_order(
            game_id=game.pk, position=0, text=ann, source=Order.Source.WEB, now=step.opened_at
        )
        time_machine.move_to(step.deadline + timedelta(seconds=1), tick=False)
        assert tasks.hand_out_steps() == 1
    game.refresh_from_db()
    assert (game.status, game.step_number) == (Game.Status.FINISHED, 5)
    exported = io.StringIO()
    call_command("export", str(game.pk), stdout=exported)
    record = json.loads(exported.getvalue())
    assert record["entered_dice"] == [*TURN_1, *TURN_2]
    assert (record["seed"], record["game_id"]) == (SEED.hex(), game.pk)
    path = tmp_path / "club.json"
    path.write_text(exported.getvalue())
    out = io.StringIO()
    call_command("replay", str(path), stdout=out)
    replayed = json.loads(out.getvalue())
    assert replayed["status"] == "finished"
    standings = CHOICE.standings(CHOICE.state_from_json(game.state)) or []
    assert replayed["standings"] == [
        {"player": ["Ann", "Bob", "Cy"][s.seat], "place": s.place, "score": s.score}
        for s in standings
    ]
    verdict = archive.verify(game)
    assert (verdict.problems, verdict.entered, verdict.rolls) == ([], 20, 30)
    out = io.StringIO()
    call_command("verify", str(game.pk), stdout=out)
    assert out.getvalue().splitlines() == [
        f"game {game.pk} verified: 30 rolls match the seed, the seed matches the commitment "
        f"{game.commitment}, and the orders replay to the stored result",
        "its first 20 rolls were entered by the GM from the paper record the game continued "
        "from: rolled by hand, they cannot be checked",
    ]
    page = Client().get(reverse("games:verify", args=[game.public_id])).content.decode()
    assert "All 30 rolls match the seed" in page
    assert (
        "its first 20 rolls were rolled by hand and entered by the GM, so nobody can check"
        " them." in page
    )
    replay_page = Client().get(f"/games/{game.public_id}/replay/", {"step": "1"})
    assert replay_page.status_code == 200
    assert "rolled on paper, entered by the GM" in replay_page.content.decode()
    assert "does not match" not in replay_page.content.decode()


def test_a_record_with_a_changed_entered_die_does_not_replay_to_the_game(
    now: datetime, time_machine: TimeMachineFixture
) -> None:
    """The entered dice are the game's: ``verify`` replays with them."""
    game = continued(WITHOUT_TURN_3, now)
    while game.status != Game.Status.FINISHED:
        step = Step.objects.get(game=game, number=game.step_number)
        time_machine.move_to(step.deadline + timedelta(seconds=1), tick=False)
        assert tasks.hand_out_steps() == 1
        game.refresh_from_db()
    assert archive.verify(game).ok
    DiceRoll.objects.filter(game=game, index=0).update(value=4)
    problems = archive.verify(game).problems
    assert problems[0].startswith("the game's record does not replay: move 1 (Ann): round 1:")


# --- hidden information ----------------------------------------------------------------------


def test_each_seat_sees_only_its_own_sealed_order_of_the_imported_history(
    now: datetime,
) -> None:
    ann_order = "W1 4+5 1+5\nW6 2+6 1+5"
    text = SAMPLE + f"Ann: {ann_order.splitlines()[0]}\n     {ann_order.splitlines()[1]}\n"
    game = continued(text, now)
    step = Step.objects.get(game=game, number=3)
    assert (step.status, [o.seat.name for o in step.orders.all()]) == (Step.Status.OPEN, ["Ann"])
    receipt = Event.objects.get(step=step)
    assert (receipt.audience, receipt.text) == (
        [0],
        "order received for rounds 5-6:\n5: W1 4+5 1+5\n6: W6 2+6 1+5",
    )
    # Cy's and Bob's orders of turn 1 were sealed too, each seat's receipt its own; Ann's
    # order of turn 3 is sealed still.
    assert_secrets_stay_private(game, {0: ["W1 4+5 1+5"], 1: [], 2: []}, now)


def test_an_imported_liars_dice_game_shows_each_seat_its_own_cup_only(now: datetime) -> None:
    cups = ScriptedDice([1, 2, 3, 4, 4, 5, 6, 6, 2])
    state, _ = LIARS.start(LIARS.options({"dice_per_player": 3}), ["Ann", "Bob", "Cy"], cups)
    opener = state.turn
    record = {
        "game": "liars-dice",
        "options": {"dice_per_player": 3},
        "dice": cups.values,
        "moves": [{"player": ["Ann", "Bob", "Cy"][opener], "order": "bid 1 2"}],
    }
    game = continued(json.dumps(record), now)
    state = LIARS.state_from_json(game.state)
    assert [list(hand) for hand in state.hands] == [[1, 2, 3], [4, 4, 5], [6, 6, 2]]
    assert_secrets_stay_private(game, {seat: cup_secrets(state, seat) for seat in range(3)}, now)
    assert DiceRoll.objects.filter(game=game).count() == 9
    # The zine of the imported step, published to everybody, holds no cup.
    zine = zine_of(game, step="1")
    for seat in range(3):
        for secret in cup_secrets(state, seat):
            assert secret not in zine, (seat, secret)
    assert "Your cup" not in zine


def test_the_imported_history_is_read_in_each_seats_language(now: datetime) -> None:
    game = continued(SAMPLE, now)
    rows = Event.objects.filter(game=game, step__number__lte=game.paper_steps)
    assert rows.exists() and not rows.filter(message__isnull=True).exists()
    first = rows.order_by("id").first()
    assert first is not None
    with translation.override("de"):
        german = str(words.Said(first.text, first.message))
    assert german != first.text
