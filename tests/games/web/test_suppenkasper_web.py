"""The Suppenkasper variant on the player's page and in the reports: plates and cards on the
board, cards and the Suppen-Kasper round through the form blocks (rules/choice.md 9.3)."""

from __future__ import annotations

import re
import secrets
from datetime import datetime
from html import escape
from typing import Any

import pytest
from django.test import Client
from time_machine import TimeMachineFixture

from games import postal
from games.engines.base import OrderError
from games.engines.choice.rules import (
    Card,
    Choice,
    ChoiceEngine,
    ChoiceState,
    RoundLine,
    Sheet,
    SkLine,
    legal_choices,
    round_outcome,
    sk_outcome,
)
from games.models import DiceRoll, Event, Game, Order, Seat, Step
from games.postal import access
from moderator.mail.models import OutboundEmail
from tests.factories import seat_page, started_game

pytestmark = pytest.mark.django_db

# Suppenkasper with two rolls a turn, or three.
TWO_ROLLS = {"variant": "suppenkasper", "rolls_per_turn": 2}
THREE_ROLLS = {"variant": "suppenkasper", "rolls_per_turn": 3}
CHOICE = ChoiceEngine()
ALL_CARDS = ["flip", "half", "double", "refuse", "swap", "sk"]


@pytest.fixture(autouse=True)
def frozen(time_machine: TimeMachineFixture, now: datetime) -> None:
    time_machine.move_to(now, tick=False)


@pytest.fixture
def client() -> Client:
    # An address of its own: the link rate limit counts per address in the shared cache.
    return Client(REMOTE_ADDR=f"10.{secrets.randbelow(256)}.{secrets.randbelow(256)}.7")


def state_of(game: Game) -> ChoiceState:
    game.refresh_from_db()
    state: ChoiceState = CHOICE.state_from_json(game.state)
    return state


def log_in(client: Client, game: Game, position: int, now: datetime) -> None:
    seat = Seat.objects.get(game=game, position=position)
    token = access.mint([seat], now=now)[position]
    assert client.post(f"/p/{token}/").status_code == 302


def plan(state: ChoiceState, position: int, cards: list[str | None]) -> list[RoundLine]:
    """A legal line per round of the open postal turn with the given card (None: none):
    the first legal choice on the dice as the card leaves them."""
    sheet = state.sheets[position]
    lines = []
    for current, card_name in zip(state.rounds, cards, strict=True):
        card = None
        dice = list(current.roll)
        if card_name == "flip":
            card = Card("flip", dice[0])
            dice[0] = 7 - dice[0]
        elif card_name is not None:
            card = Card(card_name)
        choice = legal_choices(sheet, dice)[0]
        line = RoundLine(current.number, choice, card)
        lines.append(line)
        sheet = round_outcome(sheet, current.roll, line, state.options).sheet
    return lines


def sheet_after(state: ChoiceState, position: int, lines: list[RoundLine]) -> Sheet:
    sheet = state.sheets[position]
    for current, line in zip(state.rounds, lines, strict=False):
        sheet = round_outcome(sheet, current.roll, line, state.options).sheet
    return sheet


def text_of(lines: list[RoundLine]) -> str:
    return "\n".join(f"{line.round}: {line.text()}" for line in lines)


def choice_fields(prefix: str, choice: Choice) -> dict[str, str]:
    (a, b), (c, d) = choice.first, choice.second
    return {
        f"{prefix}_kind": choice.kind,
        f"{prefix}_value": str(choice.value),
        f"{prefix}_a": str(a),
        f"{prefix}_b": str(b),
        f"{prefix}_c": str(c),
        f"{prefix}_d": str(d),
    }


def block_data(step: int, lines: list[RoundLine], sk: SkLine | None = None) -> dict[str, str]:
    """The blocks form as ann's page posts it (seat 0: the seat these tests play)."""
    data = {"step": str(step), "seat": "0", "entry": "blocks"}
    for line in lines:
        data |= choice_fields(f"r{line.round}", line.choice)
        card = line.card
        data[f"r{line.round}_card"] = card.name if card else ""
        data[f"r{line.round}_card_value"] = str(card.value) if card and card.value else ""
        data[f"r{line.round}_card_plate"] = str(card.plate) if card and card.plate else ""
    if sk is not None:
        data |= choice_fields("sk", sk.choice)
        data["sk_slot"] = f"{sk.after}.5"
        data |= {f"sk_eat{index}": str(n) for index, n in enumerate(sk.eat, start=1)}
    return data


def snapshot(game: Game) -> tuple[Any, ...]:
    game.refresh_from_db()
    return (
        game.state,
        game.step_number,
        Order.objects.count(),
        Step.objects.filter(status=Step.Status.OPEN).count(),
        DiceRoll.objects.count(),
        Event.objects.count(),
        OutboundEmail.objects.count(),
    )


def section(html: str, tag: str, element_id: str) -> str:
    match = re.search(rf'<{tag} id="{element_id}"[^>]*>(.*?)</{tag}>', html, re.S)
    assert match is not None, f"no <{tag} id={element_id}>"
    return match.group(1)


def table(html: str, element_id: str) -> list[list[str]]:
    """The cells of a table, each seat's colour swatch left out (its name says who), each
    die drawn (SVG on a page, a box in an email) read as its number."""
    rows = re.findall(r"<tr>(.*?)</tr>", section(html, "table", element_id), re.S)
    cells = [re.findall(r"<t[hd][^>]*>(.*?)</t[hd]>", row, re.S) for row in rows]
    return [[faces(SWATCH.sub("", cell)) for cell in row] for row in cells]


SWATCH = re.compile(r'<span class="swatch" [^>]*>&nbsp;</span>')
DRAWN = re.compile(
    r'<svg class="die" [^>]*aria-label="(\d+)">.*?</svg>|<span class="die" [^>]*>(\d+)</span>'
)


def faces(cell: str) -> str:
    """A cell with its drawn dice as their numbers, one space apart."""
    if 'class="dice"' not in cell:
        return cell
    numbers = DRAWN.sub(lambda m: m[1] or m[2], cell)
    return " ".join(re.sub(r"<span [^>]*>|</span>", "", numbers).split())


def errors_in(markup: str) -> list[str]:
    found = re.search(r'<ul class="errors">(.*?)</ul>', markup, re.S)
    return re.findall(r"<li>(.*?)</li>", found.group(1), re.S) if found else []


def options_of(markup: str, name: str) -> list[str]:
    select = re.search(rf'<select name="{name}".*?</select>', markup, re.S)
    assert select is not None, name
    return re.findall(r'<option value="([^"]*)"', select.group(0))


def selected_of(markup: str, name: str) -> str:
    select = re.search(rf'<select name="{name}".*?</select>', markup, re.S)
    assert select is not None, name
    (value,) = re.findall(r'<option value="([^"]*)" selected>', select.group(0))
    return str(value)


def engine_message(state: ChoiceState, position: int, text: str) -> str:
    with pytest.raises(OrderError) as caught:
        CHOICE.submit(state, position, CHOICE.parse(state, position, text), dice=None)  # type: ignore[arg-type]  # submit draws no die
    return caught.value.message


# --- the board -------------------------------------------------------------------------


def test_page_and_report_show_every_plate_cards_left_and_the_cards_played(
    client: Client, now: datetime
) -> None:
    game = started_game(now=now, players=2, options=TWO_ROLLS)
    state = state_of(game)
    ann = plan(state, 0, ["half", "double"])
    bob = plan(state, 1, ["refuse", None])
    for position, lines in ((0, ann), (1, bob)):
        postal.accept_order(
            game_id=game.pk, position=position, text=text_of(lines), source="email", now=now
        )
    assert state_of(game).turn == 2
    # Half and Double Portion put each second pair on the plate; Refusal the refused Wurfel.
    ann_plate = " ".join(map(str, sorted((*ann[0].choice.second, *ann[1].choice.second))))
    bob_plate = str(bob[0].choice.value)
    log_in(client, game, 0, now)
    html = client.get(seat_page(game, 0)).content.decode()
    assert table(html, "plates") == [
        ["Player", "Plate", "Cards left", "Cards used"],
        ["ann", ann_plate, "flip, refuse, swap, sk", "half, double"],
        ["bob", bob_plate, "flip, half, double, swap, sk", "refuse"],
    ]
    email = OutboundEmail.objects.get(dedupe_key=f"report:{game.pk}:2:1")
    assert table(email.html, "plates") == table(html, "plates")
    text_lines = email.text.splitlines()
    block = text_lines[text_lines.index("Plates and cards:") + 1 :][:2]
    assert block == [
        f"  ann: plate {ann_plate}; cards left flip, refuse, swap, sk; cards used half, double",
        f"  bob: plate {bob_plate}; cards left flip, half, double, swap, sk; cards used refuse",
    ]
    # The log names each card and what went onto the plate, on the page and in the email.
    (a1, b1), (a2, b2) = ann[0].choice.second, ann[1].choice.second
    first_sum, double_sum = sum(ann[0].choice.first), sum(ann[1].choice.first)
    expected = [
        f"ann, round 1: half {ann[0].choice.text()} (sums {first_sum}); "
        f"{a1} and {b1} onto the plate",
        f"ann, round 2: double {ann[1].choice.text()} (sums {double_sum}, {double_sum}); "
        f"{a2} and {b2} onto the plate",
    ]
    events = re.findall(r"<li[^>]*>(ann, round \d: .*?)</li>", section(html, "section", "history"))
    assert events == [escape(text) for text in expected]
    assert [line for line in text_lines if line.startswith("  ann, round ")] == [
        f"  {text}" for text in expected
    ]
    assert f"  bob, round 1: refuse {bob[0].choice.text()} (sums " in email.text
    assert f"; {bob_plate} onto the plate\n" in email.text


def test_the_sum_track_scrolls_sideways_on_a_narrow_screen(client: Client, now: datetime) -> None:
    """Each table in a box that scrolls, which the keyboard reaches and which is named."""
    game = started_game(now=now, players=1, options=TWO_ROLLS)
    log_in(client, game, 0, now)
    html = client.get(seat_page(game, 0)).content.decode()
    email = OutboundEmail.objects.get(dedupe_key=f"report:{game.pk}:1:0")
    box = '<div style="overflow-x:auto;max-width:100%" tabindex="0" role="group" aria-label="{}">'
    for markup in (html, email.html):
        assert re.search(
            re.escape(box.format("Sum tracks, Wurfels and scores")) + r'\s*<table id="board"',
            markup,
        )
        assert re.search(
            re.escape(box.format("Plates and cards")) + r'\s*<table id="plates"', markup
        )
        assert len(table(markup, "board")[0]) == 14  # Player, sums 2-12, Wurfels, Score


# --- the order form --------------------------------------------------------------------


def test_the_blocks_offer_the_unused_cards_and_no_suppen_kasper_block_without_a_plate(
    client: Client, now: datetime
) -> None:
    game = started_game(now=now, players=1, options=TWO_ROLLS)
    log_in(client, game, 0, now)
    html = client.get(seat_page(game, 0)).content.decode()
    for number in (1, 2):
        block = section(html, "fieldset", f"round-{number}")
        assert options_of(block, f"r{number}_card") == [
            "",
            "flip",
            "half",
            "double",
            "refuse",
            "swap",
        ]
        assert options_of(block, f"r{number}_card_value") == ["", "1", "2", "3", "4", "5", "6"]
        assert options_of(block, f"r{number}_card_plate") == ["", "1", "2", "3", "4", "5", "6"]
    # An empty plate gains at most 2 + 2 numbers in two rounds: Suppen-Kasper cannot be played.
    assert 'id="suppen-kasper"' not in html


def test_a_card_from_the_blocks_is_taken_in_canonical_form(client: Client, now: datetime) -> None:
    game = started_game(now=now, players=1, options=TWO_ROLLS)
    state = state_of(game)
    lines = plan(state, 0, [None, "double"])
    log_in(client, game, 0, now)
    response = client.post(seat_page(game, 0), block_data(1, lines))
    assert (response.status_code, response["Location"]) == (302, seat_page(game, 0))
    order = Order.objects.get()
    first, second = lines[0].choice, lines[1].choice
    assert order.canonical == f"1: {first.text()}\n2: double {second.text()}"
    assert order.text == f"1: {first.text()}\n2: double {second.text()}"
    assert order.source == "web"


def test_a_suppen_kasper_block_is_taken_and_played_at_its_slot(
    client: Client, now: datetime
) -> None:
    game = started_game(now=now, players=1, options=THREE_ROLLS)
    state = state_of(game)
    lines = plan(state, 0, ["half", "double", "refuse"])
    plate = sheet_after(state, 0, lines).plate
    assert len(plate) == 5  # 2 + 2 + 1: the whole plate is eaten, nothing for the dog
    sheet = sheet_after(state, 0, lines)
    sk = SkLine(3, plate, legal_choices(sheet, plate)[0])
    sums = sk_outcome(sheet, sk, state.options).sums
    log_in(client, game, 0, now)
    html = client.get(seat_page(game, 0)).content.decode()
    block = section(html, "fieldset", "suppen-kasper")
    assert options_of(block, "sk_slot") == ["", "0.5", "1.5", "2.5", "3.5"]
    assert "Your plate now: empty." in block
    response = client.post(seat_page(game, 0), block_data(1, lines, sk))
    assert response.status_code == 302
    eaten = " ".join(map(str, plate))
    assert (
        Order.objects.get().canonical
        == text_of(lines) + f"\n3.5: SK eat {eaten} {sk.choice.text()}"
    )
    # One player: the order resolved the turn at once. The extra round is in the log as 3.5.
    html = client.get(seat_page(game, 0)).content.decode()
    assert escape(
        f"ann, slot 3.5: SK eat {eaten} {sk.choice.text()} (sums {sums[0]}, {sums[1]})"
    ) in re.findall(r"<li[^>]*>(.*?)</li>", section(html, "section", "history"), re.S)
    assert table(html, "plates")[1] == ["ann", "empty", "flip, swap", "half, double, refuse, sk"]
    assert 'id="suppen-kasper"' not in html  # the card is used


def test_an_illegal_card_shows_the_engines_message_at_its_round_and_changes_nothing(
    client: Client, now: datetime
) -> None:
    game = started_game(now=now, players=1, options=TWO_ROLLS)
    state = state_of(game)
    lines = plan(state, 0, [None, None])
    absent = min(set(range(1, 7)) - set(state.rounds[1].roll))
    lines[1] = RoundLine(2, lines[1].choice, Card("flip", absent))
    message = engine_message(state, 0, text_of(lines))
    assert message == f"round 2: the roll shows no {absent} to flip"
    log_in(client, game, 0, now)
    before = snapshot(game)
    response = client.post(seat_page(game, 0), block_data(1, lines))
    assert response.status_code == 200
    html = response.content.decode()
    assert errors_in(section(html, "fieldset", "round-2")) == [escape(message)]
    assert errors_in(section(html, "fieldset", "round-1")) == []
    assert snapshot(game) == before
    # The block keeps the card chosen, so the player corrects one field.
    assert '<option value="flip" selected>' in section(html, "fieldset", "round-2")


def test_a_card_already_played_is_refused_at_its_round(client: Client, now: datetime) -> None:
    game = started_game(now=now, players=1, options=TWO_ROLLS)
    state = state_of(game)
    lines = plan(state, 0, ["double", None])
    lines[1] = RoundLine(2, lines[1].choice, Card("double"))
    message = engine_message(state, 0, text_of(lines))
    assert message == (
        "round 2: you have already played your double card; each card is played once per game"
    )
    log_in(client, game, 0, now)
    before = snapshot(game)
    html = client.post(seat_page(game, 0), block_data(1, lines)).content.decode()
    assert errors_in(section(html, "fieldset", "round-2")) == [escape(message)]
    assert errors_in(section(html, "fieldset", "round-1")) == []
    assert snapshot(game) == before


def test_a_suppen_kasper_error_shows_at_the_suppen_kasper_block(
    client: Client, now: datetime
) -> None:
    game = started_game(now=now, players=1, options=THREE_ROLLS)
    state = state_of(game)
    lines = plan(state, 0, ["half", "double", "refuse"])
    plate = sheet_after(state, 0, lines[:1]).plate
    # At slot 1.5 only Half Portion has fed the plate: two numbers, not five.
    sk = SkLine(1, (*plate, *state.rounds[1].roll[:3]), Choice("W", plate[0], (1, 1), (1, 1)))
    data = block_data(1, lines, sk)
    message = engine_message(state, 0, text_of(lines) + f"\n1.5: {sk.text()}")
    assert message == "slot 1.5: Suppen-Kasper needs 5 numbers on your plate; it will hold 2"
    log_in(client, game, 0, now)
    before = snapshot(game)
    html = client.post(seat_page(game, 0), data).content.decode()
    assert errors_in(section(html, "fieldset", "suppen-kasper")) == [escape(message)]
    for number in (1, 2, 3):
        assert errors_in(section(html, "fieldset", f"round-{number}")) == []
    assert snapshot(game) == before


def test_an_unfinished_card_or_suppen_kasper_block_is_named_and_nothing_is_sent(
    client: Client, now: datetime
) -> None:
    game = started_game(now=now, players=1, options=THREE_ROLLS)
    state = state_of(game)
    lines = plan(state, 0, [None, None, None])
    log_in(client, game, 0, now)
    before = snapshot(game)
    data = block_data(1, lines) | {"r2_card": "swap", "r2_card_value": "3"}
    html = client.post(seat_page(game, 0), data).content.decode()
    assert errors_in(section(html, "fieldset", "round-2")) == [
        "round 2: choose the die to swap and the plate number that replaces it"
    ]
    data = block_data(1, lines) | {"sk_eat1": "3"}
    html = client.post(seat_page(game, 0), data).content.decode()
    assert errors_in(section(html, "fieldset", "suppen-kasper")) == [
        "Suppen-Kasper: choose the slot of the extra round, or clear its numbers"
    ]
    assert snapshot(game) == before


def test_the_blocks_start_from_the_sealed_order_with_its_cards(
    client: Client, now: datetime
) -> None:
    game = started_game(now=now, players=2, options=THREE_ROLLS)
    state = state_of(game)
    lines = plan(state, 0, ["half", "flip", "double"])
    sheet = sheet_after(state, 0, lines)
    plate = sheet.plate
    sk = SkLine(3, plate, legal_choices(sheet, plate)[0])
    log_in(client, game, 0, now)
    assert client.post(seat_page(game, 0), block_data(1, lines, sk)).status_code == 302
    html = client.get(seat_page(game, 0)).content.decode()
    selected = {
        name: selected_of(html, name)
        for name in ("r1_card", "r2_card", "r2_card_value", "r3_card", "sk_slot")
    }
    assert selected == {
        "r1_card": "half",
        "r2_card": "flip",
        "r2_card_value": str(state.rounds[1].roll[0]),
        "r3_card": "double",
        "sk_slot": "3.5",
    }
    assert [selected_of(html, f"sk_eat{index}") for index in range(1, 6)] == list(map(str, plate))


# --- the help ---------------------------------------------------------------------------

SUPPENKASPER_HELP = [
    "  Cards, each once a game, at most one per round line, written before or after the choice:",
    "    flip 2 W5 1+3 3+4     Upside Down: first turn a die showing 2 to its opposite, 5",
    "    swap 2 6 W6 1+3 3+4   From the Plate: first replace a die showing 2 by the 6 from your"
    " plate",
    "    half W5 1+3 3+4       Half Portion: record only the first pair; the second goes on your"
    " plate",
    "    double W5 1+3 3+4     Double Portion: record the first pair twice; the second goes on"
    " your plate",
    "    refuse W3 3+4 3+6     Refusal: store no Wurfel this round; that die goes on your plate",
    "  Numbers a card leaves unused go on your plate.",
    "  Suppen-Kasper, once a game, an extra round on a line of its own:",
    "    3.5: SK eat 2 5 6 6 3 W6 2+5 6+3",
    "  3.5 is its slot: after round 3 (any half number from just before the first round of the",
    "  turn to just after its last). Eat five numbers from your plate and choose from them as",
    "  from a roll; no other card in that round, and the rest of the plate goes to the dog.",
]


def how_to_order(game: Game) -> list[str]:
    lines = OutboundEmail.objects.get(dedupe_key=f"report:{game.pk}:1:0").text.splitlines()
    start = lines.index("HOW TO ORDER") + 1
    return lines[start : lines.index("", start)]


def test_the_report_teaches_the_cards_and_the_suppen_kasper_line(now: datetime) -> None:
    help_lines = how_to_order(started_game(now=now, players=2, options=TWO_ROLLS))
    assert help_lines[5:] == SUPPENKASPER_HELP


def test_the_report_teaches_only_the_cards_in_play(now: datetime) -> None:
    options = {"variant": "suppenkasper", "cards": ["half", "sk"]}
    game = started_game(now=now, players=2, options=options)
    assert how_to_order(game)[5:] == [
        SUPPENKASPER_HELP[0],
        SUPPENKASPER_HELP[3],
        *SUPPENKASPER_HELP[6:],
    ]


def test_the_standard_game_teaches_no_card(now: datetime) -> None:
    game = started_game(now=now, players=2)
    assert how_to_order(game) == [
        "  One line per round: W<v> <a>+<b> <c>+<d>, e.g. W5 1+3 3+4",
        "  W<v> is the die you set aside as your Wurfel; <a>+<b> and <c>+<d> pair the other four"
        " dice.",
        "  F<v> for a free ride: when you store three values and the roll shows none of them,",
        "  discard <v> instead, e.g. F5 1+3 3+4.",
        "  You may start a line with its round number, e.g. 3: W5 1+3 3+4. Lines go in round"
        " order.",
    ]


def test_the_page_teaches_the_suppen_kasper_line(client: Client, now: datetime) -> None:
    game = started_game(now=now, players=1, options=TWO_ROLLS)
    log_in(client, game, 0, now)
    html = client.get(seat_page(game, 0)).content.decode()
    found = re.search(r'<form method="post" action="" id="text-form">(.*?)</form>', html, re.S)
    assert found is not None
    text_form = found[1]
    assert re.findall(r"<code[^>]*>([^<]*SK[^<]*)</code>", text_form) == [
        "3.5: SK eat 2 5 6 6 3 W6 2+5 6+3"
    ]
    cards = re.findall(r'<td style="[^"]*">((?:flip|swap|half|double|refuse)[^<]*)</td>', text_form)
    assert cards == [
        "flip 2 W5 1+3 3+4",
        "swap 2 6 W6 1+3 3+4",
        "half W5 1+3 3+4",
        "double W5 1+3 3+4",
        "refuse W3 3+4 3+6",
    ]
