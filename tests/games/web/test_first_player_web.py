"""The First Player's web pages: a game night of three players played through the seat pages.
The menu offers exactly the legal one-line orders at each stage (ready, roll, set-aside
rerolls, high to low); an arrangement of the player's own choosing goes through the quick box
(the tapping fills it); the board is a waiting view that names who is still deciding, then
shows the reveal, the ranking and the actual order. Until the reveal no seat reads another
seat's dice or arrangement anywhere; afterwards everybody reads every arrangement."""

from __future__ import annotations

import json
import re
from datetime import datetime
from html import escape, unescape
from typing import Any

import pytest
from django.test import Client
from time_machine import TimeMachineFixture

from games import postal
from games.engines.first_player.rules import FirstPlayerEngine, FirstPlayerState
from games.models import Game, Order, Seat
from games.postal import access
from moderator.mail.models import OutboundEmail
from tests.factories import seat_page, started_game
from tests.games.web.test_hidden import assert_secrets_stay_private, readable_by
from tests.games.web.test_views import fresh_ip

pytestmark = pytest.mark.django_db

ENGINE = FirstPlayerEngine()
NAMES = ("ann", "bob", "cy")
FOUR = (*NAMES, "dee")
# A night of one round, free order mode: the gift window is open at step 1.
FREE_ORDER = {"order_mode": "free"}


@pytest.fixture(autouse=True)
def frozen(time_machine: TimeMachineFixture, now: datetime) -> None:
    time_machine.move_to(now, tick=False)


def state_of(game: Game) -> FirstPlayerState:
    state: FirstPlayerState = ENGINE.state_from_json(Game.objects.get(pk=game.pk).state)
    return state


class SeatBrowser(Client):
    """A browser that opened one seat's link: the pages it reads and posts are that
    seat's."""

    def __init__(self, position: int, **defaults: Any) -> None:
        super().__init__(**defaults)
        self.position = position


def browser_of(game: Game, position: int, now: datetime) -> SeatBrowser:
    seat = Seat.objects.get(game=game, position=position)
    client = SeatBrowser(position, REMOTE_ADDR=fresh_ip())
    token = access.mint([seat], now=now)[position]
    response = client.post(f"/p/{token}/")
    assert (response.status_code, response["Location"]) == (302, seat_page(game, position))
    return client


def page(client: SeatBrowser, game: Game) -> str:
    response = client.get(seat_page(game, client.position))
    assert response.status_code == 200
    return response.content.decode()


def send(client: SeatBrowser, game: Game, **fields: str) -> Any:
    """Post the seat's form for the step open now, as the page would."""
    step = Game.objects.get(pk=game.pk).step_number
    data = {"step": str(step), "seat": str(client.position), **fields}
    return client.post(seat_page(game, client.position), data)


def tap(client: SeatBrowser, game: Game, order: str) -> Any:
    return send(client, game, entry="menu", pick="", pick_button=order)


def typed(client: SeatBrowser, game: Game, text: str) -> Any:
    return send(client, game, entry="text", text=text)


def buttons_of(html: str) -> list[str]:
    return re.findall(r'<button type="submit" name="pick_button" value="([^"]*)"', html)


def hand_on(html: str) -> list[int]:
    """The dice the form shows as tappable faces."""
    hand = re.search(r'<div class="fp-dice" id="fp-hand">(.*?)</div>', html, re.S)
    return [] if hand is None else [int(v) for v in re.findall(r'data-value="(\d)"', hand[1])]


def waiting(html: str) -> tuple[str, list[str]]:
    """The board's waiting line: its words and the names it lists."""
    line = re.search(r'<p id="fp-waiting"[^>]*>([^<]*)(.*?)</p>', html, re.S)
    assert line is not None
    return line[1].strip(), re.findall(r"<strong[^>]*>([^<]+)</strong>", line[2])


def statuses(html: str) -> list[str]:
    return re.findall(r'<td class="fp-status"[^>]*>(.*?)</td>', html, re.S)


def drawn(html: str, block: str) -> str:
    """The dice drawn in the paragraph ``block`` of the private part: each die's name."""
    found = re.search(rf'<p id="{block}"[^>]*>(.*?)</p>', html, re.S)
    assert found is not None
    assert "<svg" in found[1]
    return " ".join(re.findall(r'<svg class="die" [^>]*aria-label="(\d)"', found[1]))


def labels(markup: str) -> str:
    """The values of the dice drawn in ``markup``, by their names."""
    return " ".join(re.findall(r'<svg class="die" [^>]*aria-label="(\d)"', markup))


def numbers(values: Any) -> str:
    return " ".join(str(value) for value in values)


def row_of(state: FirstPlayerState, seat: int) -> str:
    return numbers(die.value for die in state.cups[seat].row)


def test_a_night_on_the_web_offers_the_legal_buttons_and_ends_with_the_reveal(
    now: datetime,
) -> None:
    game = started_game("first-player", now=now, options=FREE_ORDER)
    ann, bob, cy = (browser_of(game, position, now) for position in range(3))
    for client in (ann, bob, cy):
        assert buttons_of(page(client, game)) == ["give", "ready"]
    assert waiting(page(ann, game)) == ("Not ready yet:", ["ann", "bob", "cy"])
    for client in (ann, bob, cy):
        assert tap(client, game, "ready").status_code == 302
    assert state_of(game).phase == "commit"

    # Rolling: any number of the three dice, or all.
    html = page(ann, game)
    assert buttons_of(html) == ["roll 1", "roll 2", "roll 3", "roll all"]
    assert hand_on(html) == []
    assert waiting(html) == ("Still deciding:", ["ann", "bob", "cy"])
    assert tap(ann, game, "roll 3").status_code == 302
    hand = state_of(game).cups[0].hand
    html = page(ann, game)
    assert hand_on(html) == list(hand)
    assert drawn(html, "your-hand") == numbers(hand)
    assert buttons_of(html) == [
        "arrange",
        *(f"reroll set-aside {value}" for value in sorted(set(hand), reverse=True)),
        "arrange desc",
    ]

    # A set-aside reroll: two dice left in hand, the set-aside one shown apart.
    assert tap(ann, game, f"reroll set-aside {hand[0]}").status_code == 302
    cup = state_of(game).cups[0]
    assert (cup.set_aside, len(cup.hand)) == ((hand[0],), 2)
    html = page(ann, game)
    assert hand_on(html) == list(cup.hand)
    assert drawn(html, "your-set-aside") == str(hand[0])
    assert buttons_of(html) == [
        "arrange",
        *(f"reroll set-aside {value}" for value in sorted(set(cup.hand), reverse=True)),
        "arrange desc",
    ]

    # ann arranges low to high in the quick box (what tapping the dice fills in).
    low_first = sorted(cup.hand)
    assert typed(ann, game, f"arrange {numbers(low_first)}").status_code == 302
    assert [die.value for die in state_of(game).cups[0].row] == low_first
    html = page(ann, game)
    assert 'id="menu-form"' not in html
    assert "You owe no order now." in html
    assert drawn(html, "your-row") == numbers(low_first)
    assert waiting(html) == ("Still deciding:", ["bob", "cy"])
    assert statuses(html) == ["arranged ✓", "still deciding", "still deciding"]

    # bob rolls all and takes high to low from the menu; cy rolls two of three dice.
    assert tap(bob, game, "roll all").status_code == 302
    assert statuses(page(cy, game)) == ["arranged ✓", "rolled", "still deciding"]
    assert tap(bob, game, "arrange desc").status_code == 302
    assert tap(cy, game, "roll 2").status_code == 302
    cy_hand = state_of(game).cups[2].hand
    assert len(cy_hand) == 2
    html = page(bob, game)
    assert waiting(html) == ("Still deciding:", ["cy"])
    assert statuses(html) == ["arranged ✓", "arranged ✓", "rolled"]
    assert drawn(page(cy, game), "your-hand") == numbers(cy_hand)

    # The last arrangement reveals every row, ranks them and ends the one-round night.
    assert typed(cy, game, f"arrange {numbers(reversed(cy_hand))}").status_code == 302
    state = state_of(game)
    assert state.finished
    rows = {seat: tuple(die.value for die in state.cups[seat].row) for seat in range(3)}
    ranking = sorted(range(3), key=lambda seat: rows[seat], reverse=True)
    assert list(state.ranking) == ranking
    assert list(state.history[-1].order) == ranking
    first, last = NAMES[ranking[0]], NAMES[ranking[-1]]
    for client in (ann, bob, cy):
        html = page(client, game)
        assert buttons_of(html) == []
        assert 'id="fp-waiting"' not in html
        # Each row drawn as dice in its seat's colour.
        assert [labels(status) for status in statuses(html)] == [
            row_of(state, seat) for seat in range(3)
        ]
        assert [
            re.findall(r'<rect [^>]*fill="(#[0-9A-F]{6})"', status)[0] for status in statuses(html)
        ] == ["#0072B2", "#E69F00", "#009E73"]
        ranked = re.search(r'<ol id="fp-ranking"[^>]*>(.*?)</ol>', html, re.S)
        assert ranked is not None
        items = re.findall(r"<li>(\w+): (.*?)</li>", ranked[1])
        assert [(name, labels(dice)) for name, dice in items] == [
            (NAMES[seat], row_of(state, seat)) for seat in ranking
        ]
        order = ", ".join(NAMES[seat] for seat in ranking)
        assert f"<strong>Actual order: {order}</strong> ({first} starts the real game)" in html
        assert f"<li>{first} → {last}: 1 die (winner to last)</li>" in html
    final = OutboundEmail.objects.get(to="ann@example.org", kind="final")
    assert f"  Actual order: {order} ({first} starts the real game)\n" in final.text
    for place, seat in enumerate(ranking, start=1):
        assert f"    {place}. {NAMES[seat]}: {row_of(state, seat)}\n" in final.text


def test_an_illegal_pick_or_arrangement_is_refused_and_changes_nothing(now: datetime) -> None:
    game = started_game("first-player", now=now, options=FREE_ORDER)
    postal.resolve_now(game.pk, now=now)
    ann = browser_of(game, 0, now)
    assert tap(ann, game, "roll 3").status_code == 302
    hand = state_of(game).cups[0].hand
    before = Game.objects.get(pk=game.pk)
    orders, emails = Order.objects.count(), OutboundEmail.objects.count()

    for pick in ("roll 2", "reroll set-aside 7", "arrange 6 6 6"):
        response = send(ann, game, entry="menu", pick="", pick_button=pick)
        assert response.status_code == 200
        html = response.content.decode()
        assert "That order is not one of the legal ones now: choose one from the menu." in html
        # The page stays as it was: the same hand and the same legal buttons.
        assert hand_on(html) == list(hand)
        assert buttons_of(html)[-1] == "arrange desc"
    response = typed(ann, game, "arrange 1 1 1 1")
    assert response.status_code == 200
    assert (
        f"arrange 1 1 1 1: arrange must use exactly your dice: {numbers(hand)}"
        in response.content.decode()
    )

    after = Game.objects.get(pk=game.pk)
    assert (after.state, after.step_number, after.dice_drawn) == (
        before.state,
        before.step_number,
        before.dice_drawn,
    )
    assert (Order.objects.count(), OutboundEmail.objects.count()) == (orders, emails)


def secrets_before_the_reveal(
    state: FirstPlayerState, ann_roll: tuple[int, ...]
) -> dict[int, list[str]]:
    """Each seat's rolls and arrangement as the events, the pages, the emails and the JSON
    view write them: ann rolled, rerolled and arranged; bob rolled and arranged; cy rolled."""
    ann, bob, cy = state.cups
    return {
        0: [
            f"you roll {numbers(ann_roll)}",
            f"you set a {ann.set_aside[0]} aside and reroll: {numbers(ann.hand)}",
            f"you arrange {row_of(state, 0)}",
            f"Your arrangement: {row_of(state, 0)}",
            f"Set aside this round (back next round): {ann.set_aside[0]}",
            f'"hand": {json.dumps(list(ann.hand))}',
        ],
        1: [
            f"you roll {numbers(bob.hand)}",
            f"you arrange {row_of(state, 1)}",
            f"Your arrangement: {row_of(state, 1)}",
            f'"hand": {json.dumps(list(bob.hand))}',
        ],
        2: [
            f"you roll {numbers(cy.hand)}",
            f"Your dice: {numbers(cy.hand)}",
            f'"hand": {json.dumps(list(cy.hand))}',
        ],
    }


def overlapping(secrets_of: dict[int, list[str]]) -> bool:
    """Whether a secret of one seat is written inside a secret of another (then the owner
    of the longer one would read the shorter one without any leak)."""
    return any(
        mine in theirs
        for a, own in secrets_of.items()
        for b, others in secrets_of.items()
        if a != b
        for mine in own
        for theirs in others
    )


def order(game: Game, position: int, text: str, now: datetime) -> None:
    postal.accept_order(game_id=game.pk, position=position, text=text, source="web", now=now)


def rolled_unrevealed(now: datetime) -> tuple[Game, dict[int, list[str]]]:
    """A night in which every seat has rolled and only cy has not arranged, with secrets
    that differ between seats (seeds are tried until they do)."""
    for number in range(30):
        game = started_game("first-player", now=now, seed=bytes([number]) * 32, options=FREE_ORDER)
        postal.resolve_now(game.pk, now=now)
        order(game, 0, "roll 3", now)
        ann_roll = state_of(game).cups[0].hand
        order(game, 0, f"reroll set-aside {ann_roll[0]}", now)
        order(game, 0, "arrange desc", now)
        order(game, 1, "roll 3", now)
        order(game, 1, f"arrange {numbers(sorted(state_of(game).cups[1].hand))}", now)
        order(game, 2, "roll 3", now)
        secrets_of = secrets_before_the_reveal(state_of(game), ann_roll)
        if not overlapping(secrets_of):
            return game, secrets_of
    pytest.fail("no seed gave distinct rolls")


def test_no_seat_reads_another_seats_dice_or_arrangement_before_the_reveal(now: datetime) -> None:
    game, secrets_of = rolled_unrevealed(now)
    assert state_of(game).phase == "commit"
    assert_secrets_stay_private(game, secrets_of, now)

    # cy's arrangement reveals every row: the same strings now reach everybody. (The
    # reveal comes before any tiebreak roll; the ranking shows the rows after it.)
    before = state_of(game)
    arranged = [row_of(before, 0), row_of(before, 1), numbers(sorted(before.cups[2].hand)[::-1])]
    postal.accept_order(game_id=game.pk, position=2, text="arrange desc", source="web", now=now)
    state = state_of(game)
    assert state.finished
    reveal = "round 1 reveal: " + "; ".join(
        f"{name} {row}" for name, row in zip(NAMES, arranged, strict=True)
    )
    for position in range(3):
        seen = readable_by(game, position, now)
        assert reveal in seen
        for place, seat in enumerate(state.ranking, start=1):
            assert f"    {place}. {NAMES[seat]}: {row_of(state, seat)}\n" in seen


def token_round(now: datetime) -> tuple[Game, int]:
    """A night of four with tokens in round 2: round 1 was played high to low by everyone
    and gave its second-to-last a token (section 4.7); in round 2 the token holder has
    rolled all their dice and arranged them high to low, not all 6s (seeds are tried until
    round 1 had no tie and the holder has a die that can take a token)."""
    for number in range(30):
        game = started_game(
            "first-player",
            now=now,
            seed=bytes([number]) * 32,
            players=FOUR,
            title="Token night",
            options={"order_mode": "free", "tokens": True, "rounds": 2},
        )
        postal.resolve_now(game.pk, now=now)
        for position in range(4):
            order(game, position, "roll all\narrange desc", now)
        if state_of(game).round != 2:
            continue
        holder = state_of(game).tokens.index(1)
        postal.resolve_now(game.pk, now=now)
        order(game, holder, "roll all\narrange desc", now)
        if any(die.value < 6 for die in state_of(game).cups[holder].row):
            return game, holder
    pytest.fail("no seed gave a token holder a die that can take a token")


def test_a_token_holder_is_offered_each_die_that_can_take_a_token(now: datetime) -> None:
    game, holder = token_round(now)
    client = browser_of(game, holder, now)
    row = [die.value for die in state_of(game).cups[holder].row]
    open_dice = [position for position, value in enumerate(row, start=1) if value < 6]
    # Until rolling closes a token may join the secret arrangement; "token none" is only
    # for the window after the reveal.
    html = page(client, game)
    assert buttons_of(html) == [f"token {position}" for position in open_dice]
    assert drawn(html, "your-row") == numbers(row)
    for position in range(4):
        if position != holder:
            order(game, position, "roll all\narrange desc", now)
    state = state_of(game)
    assert (state.phase, state.window) == ("tokens", (holder,))
    html = page(client, game)
    assert buttons_of(html) == ["token none", *(f"token {position}" for position in open_dice)]
    assert waiting(html) == ("Token window open for:", [FOUR[holder]])
    assert tap(client, game, f"token {open_dice[0]}").status_code == 302
    final = state_of(game)
    assert final.finished
    assert final.cups[holder].row[open_dice[0] - 1].marked
    used = [m for m in final.movements if m.reason == "token used"]
    assert [(m.round, m.giver, m.count) for m in used] == [(2, FOUR[holder], 1)]


# --- a gift moves the game on while other pages are open (issue: messages that say what
# happened) ------------------------------------------------------------------------------


def text_errors(html: str) -> list[str]:
    found = re.search(r'<ul class="errors" id="text-errors">(.*?)</ul>', html, re.S)
    return re.findall(r"<li>(.*?)</li>", found[1], re.S) if found else []


def typed_box(html: str) -> str:
    found = re.search(r'<textarea name="text"[^>]*>\n?(.*?)</textarea>', html, re.S)
    assert found is not None
    return unescape(found[1])


def flashed(html: str) -> list[str]:
    return [unescape(m) for m in re.findall(r'<li class="(?:success|error)">(.*?)</li>', html)]


def post_for_step(client: SeatBrowser, game: Game, step: int, text: str) -> Any:
    """The typed box of a page shown at ``step``, posted now."""
    data = {"step": str(step), "seat": str(client.position), "entry": "text", "text": text}
    return client.post(seat_page(game, client.position), data)


def test_a_gift_written_before_anothers_gift_still_counts_and_says_what_happened(
    now: datetime,
) -> None:
    game = started_game("first-player", now=now, options=FREE_ORDER)
    ann, bob = browser_of(game, 0, now), browser_of(game, 1, now)
    page(bob, game)  # bob's page shows step 1
    assert typed(ann, game, "give cy 1 dice").status_code == 302
    game.refresh_from_db()
    assert (game.step_number, game.steps.get(number=1).closed_by) == (2, "order")
    response = post_for_step(bob, game, 1, "give cy 1 dice")
    assert (response.status_code, response["Location"]) == (302, seat_page(game, 1))
    assert flashed(page(bob, game)) == [
        "While your page was open, postal turn 1 was resolved at Mon 23 Nov 2026 18:00 UTC when "
        "ann's order took effect at once; postal turn 2 is open now. Your order still fits it "
        "and is accepted: give cy 1 die."
    ]
    assert [(o.seat.name, o.step.number, o.canonical) for o in Order.objects.order_by("id")] == [
        ("ann", 1, "give cy 1 die"),
        ("bob", 2, "give cy 1 die"),
    ]
    assert state_of(game).counts == (2, 2, 5)


def test_a_gift_that_no_longer_fits_is_offered_again_in_the_box_with_what_happened(
    now: datetime,
) -> None:
    game = started_game("first-player", now=now, options=FREE_ORDER)
    first_tab, second_tab = browser_of(game, 0, now), browser_of(game, 0, now)
    assert typed(first_tab, game, "give bob 2 dice").status_code == 302
    before = (Game.objects.get(pk=game.pk).state, Order.objects.count())
    response = post_for_step(second_tab, game, 1, "give cy 1 dice")
    assert response.status_code == 200
    html = response.content.decode()
    assert text_errors(html) == [
        escape(
            "While your page was open, postal turn 1 was resolved at Mon 23 Nov 2026 18:00 UTC "
            "when your own order took effect at once; postal turn 2 is open now. Your order was "
            "not recorded: give cy 1 die: gift refused: you would keep 0 dice (you hold 1). It "
            "is in the box below: check it, change it if need be, and send it again."
        )
    ]
    assert typed_box(html) == "give cy 1 dice"
    assert re.findall(r'<input type="hidden" name="step" value="(\d+)">', html) == ["2", "2"]
    assert (Game.objects.get(pk=game.pk).state, Order.objects.count()) == before
    # Sent again from the box as it now stands (the page's step), it is refused as any order.
    again = send(second_tab, game, entry="text", text="give cy 1 dice")
    assert text_errors(again.content.decode()) == [
        escape("give cy 1 die: gift refused: you would keep 0 dice (you hold 1)")
    ]


def test_a_menu_pick_written_before_anothers_gift_still_counts(now: datetime) -> None:
    game = started_game("first-player", now=now, options=FREE_ORDER)
    ann, cy = browser_of(game, 0, now), browser_of(game, 2, now)
    assert typed(ann, game, "give bob 1 dice").status_code == 302
    data = {"step": "1", "seat": "2", "entry": "menu", "pick": "", "pick_button": "ready"}
    assert cy.post(seat_page(game, 2), data).status_code == 302
    assert flashed(page(cy, game)) == [
        "While your page was open, postal turn 1 was resolved at Mon 23 Nov 2026 18:00 UTC when "
        "ann's order took effect at once; postal turn 2 is open now. Your order still fits it "
        "and is accepted: ready."
    ]
    assert [(o.seat.name, o.step.number, o.canonical) for o in Order.objects.order_by("id")] == [
        ("ann", 1, "give bob 1 die"),
        ("cy", 2, "ready"),
    ]


def places_on(html: str) -> list[tuple[str, list[str], str]]:
    """Each place's select of the arrangement: its label, its choices, the one chosen."""
    block = re.search(r'<fieldset id="fp-places">(.*?)</fieldset>', html, re.S)
    assert block is not None
    return [
        (
            label,
            re.findall(r'<option value="(\d)"', options),
            re.findall(r'<option value="(\d)" selected', options)[0],
        )
        for label, options in re.findall(
            r'<label for="id_place_\d">([^<]+)</label> <select name="place_\d"[^>]*>(.*?)</select>',
            block[1],
            re.S,
        )
    ]


def test_an_arrangement_is_chosen_place_by_place_without_javascript(now: datetime) -> None:
    for number in range(30):  # a seed whose roll shows three faces: a die twice is wrong
        game = started_game("first-player", now=now, seed=bytes([number]) * 32, options=FREE_ORDER)
        postal.resolve_now(game.pk, now=now)
        order(game, 0, "roll 3", now)
        if len(set(state_of(game).cups[0].hand)) == 3:
            break
    ann = browser_of(game, 0, now)
    hand = sorted(state_of(game).cups[0].hand, reverse=True)
    faces = [str(value) for value in sorted(set(hand), reverse=True)]

    before = Game.objects.get(pk=game.pk).state

    shown = places_on(page(ann, game))
    after_typed = places_on(typed(ann, game, "arrange 9").content.decode())
    doubled = send(
        ann,
        game,
        entry="menu",
        pick="",
        pick_button="arrange",
        **{f"place_{n}": str(hand[0]) for n in (1, 2, 3)},
    )
    refused = Game.objects.get(pk=game.pk).state
    low_first = send(
        ann,
        game,
        entry="menu",
        pick="",
        pick_button="arrange",
        **{f"place_{n}": str(value) for n, value in enumerate(reversed(hand), start=1)},
    )

    assert len(set(hand)) == 3
    assert shown == [(f"Place {n}", faces, str(value)) for n, value in enumerate(hand, start=1)]
    assert after_typed == shown  # a refused typed order leaves the places as they start
    assert (doubled.status_code, refused) == (200, before)
    assert f"Use each of your dice once: you hold {numbers(hand).replace(' ', ', ')}." in (
        unescape(doubled.content.decode())
    )
    assert low_first.status_code == 302
    assert Order.objects.filter(seat__position=0).latest("id").canonical == (
        f"arrange {numbers(reversed(hand))}"
    )
    assert row_of(state_of(game), 0) == numbers(reversed(hand))
