from __future__ import annotations

import re
from datetime import datetime, timedelta
from typing import Any

import pytest
from django.test import Client

from games import postal, tasks
from games.engines.choice.rules import ChoiceEngine, ChoiceState
from games.engines.colours import seat_colour
from games.models import Game, Seat
from games.notify import reports
from games.postal import access
from games.templatetags.dice import boxed_die, swatch
from moderator.mail.models import OutboundEmail
from tests.factories import (
    SEED,
    GameFactory,
    GMFactory,
    new_game,
    seat_page,
    started_game,
)

pytestmark = pytest.mark.django_db

CHOICE = ChoiceEngine()
SITE = "http://127.0.0.1:8000"


def state_of(game: Game) -> ChoiceState:
    game.refresh_from_db()
    state: ChoiceState = CHOICE.state_from_json(game.state)
    return state


def nmr_text(game: Game, position: int) -> str:
    state = state_of(game)
    return CHOICE.canonical(state, position, CHOICE.default(state, position))


def second_step(now: datetime) -> Game:
    """A 2-seat game in Europe/Berlin, bob in Asia/Tokyo, after step 1 resolved."""
    bob = postal.Player("bob", "bob@example.org", time_zone="Asia/Tokyo")
    game = started_game(now=now, players=["ann", bob], time_zone="Europe/Berlin")
    for position in (0, 1):
        postal.accept_order(
            game_id=game.pk,
            position=position,
            text=nmr_text(game, position),
            source="email",
            now=now,
        )
    assert tasks.write_receipts() == 2  # the workers' run that writes the receipts
    game.refresh_from_db()
    assert game.step_number == 2
    return game


def report(game: Game, step: int, position: int) -> OutboundEmail:
    return OutboundEmail.objects.get(dedupe_key=f"report:{game.pk}:{step}:{position}")


def table(html: str, element_id: str) -> list[list[str]]:
    """The text of every cell of the table with ``id``, row by row."""
    match = re.search(rf'<table id="{element_id}"[^>]*>(.*?)</table>', html, re.S)
    assert match is not None, element_id
    rows = re.findall(r"<tr>(.*?)</tr>", match.group(1), re.S)
    return [re.findall(r"<t[hd][^>]*>(.*?)</t[hd]>", row, re.S) for row in rows]


def faces(roll: Any) -> str:
    return " ".join("⚀⚁⚂⚃⚄⚅"[value - 1] for value in roll)


def test_a_step_report_shows_every_players_board_exactly_in_text_and_html(now: datetime) -> None:
    game = second_step(now)
    state = state_of(game)
    email = report(game, 2, 0)
    lines = email.text.splitlines()
    header = "  Sum         " + "".join(f"{total:>3}" for total in range(2, 13))
    assert lines[lines.index("Sum tracks (how often each sum is recorded):") + 1] == header
    for position, sheet in enumerate(state.sheets):
        name = state.players[position]
        track = f"  {name:<12}" + "".join(f"{count:>3}" for count in sheet.counts)
        assert track in lines
        stored = ", ".join(
            f"{value}\N{MULTIPLICATION SIGN}{count}" for value, count in sheet.stored
        )
        running = CHOICE.view(state, None)["players"][position]["running_score"]
        assert f"  {name}: Wurfels {stored}; score so far {running}" in lines
    for round_ in state.rounds:
        dice = " ".join(map(str, round_.roll))
        assert f"  Round {round_.number}: {dice}   {faces(round_.roll)}" in lines
    cells = table(email.html, "board")
    assert cells[0] == ["Player", *map(str, range(2, 13)), "Wurfels", "Score"]
    view = CHOICE.view(state, None)
    for position, sheet in enumerate(state.sheets):
        assert cells[position + 1] == [
            f"{swatch(position)}{state.players[position]}",
            *map(str, sheet.counts),
            # Each Wurfel a boxed die in the seat's colour, with how many are stored.
            " ".join(
                f"\n{boxed_die(value, seat_colour(position))}\N{MULTIPLICATION SIGN}{count}"
                for value, count in sheet.stored
            ),
            str(view["players"][position]["running_score"]),
        ]
    # Each roll as boxed numbers, which every mail client shows; no die glyphs, no SVG.
    assert table(email.html, "rolls") == [
        [
            f"Round {r.number}",
            '<span class="dice" style="white-space:nowrap">'
            + " ".join(f"\n{boxed_die(value)}" for value in r.roll)
            + "</span>",
        ]
        for r in state.rounds
    ]
    assert re.search("[\u2680-\u2685]|<svg", email.html) is None


def test_a_step_report_says_what_happened_what_is_owed_until_when_and_where(now: datetime) -> None:
    game = second_step(now)
    state = state_of(game)
    ann, bob = report(game, 2, 0), report(game, 2, 1)
    assert ann.subject == (
        "Test Choice: postal turn 2, your order is due Wed 25 Nov 2026 19:00 CET (18:00 UTC)"
    )
    assert "  Deadline: Wed 25 Nov 2026 19:00 CET (18:00 UTC)" in ann.text.splitlines()
    assert "  Deadline: Thu 26 Nov 2026 03:00 JST (18:00 UTC)" in bob.text.splitlines()
    assert "<strong>Deadline: Thu 26 Nov 2026 03:00 JST (18:00 UTC)</strong>" in bob.html
    assert "  Postal turn: rounds 3-4: one line per round, e.g. W5 1+3 3+4" in ann.text
    # What happened: both players' plays of step 1, then the new rolls.
    for play in state.history:
        line = f"  {state.players[play.seat]}, round {play.round}: {play.line} (sums "
        assert any(text.startswith(line) for text in ann.text.splitlines())
    assert "  postal turn 2, rounds 3-4: round 3 rolls " in ann.text
    # The order syntax with an example, the form link, the dice commitment.
    assert "  One line per round: W<v> <a>+<b> <c>+<d>, e.g. W5 1+3 3+4" in ann.text
    free_ride = "  F<v> for a free ride: when you store three values and the roll shows none"
    assert f"{free_ride} of them,\n" in ann.text
    link = re.search(rf"^  Your order form: ({SITE}/p/([\w-]+)/)$", ann.text, re.M)
    assert link is not None
    assert access.seat_for(link.group(2), now=now) == Seat.objects.get(game=game, position=0)
    assert f'<a href="{link.group(1)}"' in ann.html
    assert f"  {game.commitment}" in ann.text.splitlines()
    assert game.commitment in ann.html
    assert f"  {SITE}/games/{game.public_id}/verify/" in ann.text.splitlines()
    # The private block: no order yet for the new turn.
    assert "  You have sent no order this postal turn yet." in ann.text.splitlines()


def test_the_private_block_shows_the_seats_own_sealed_order(now: datetime) -> None:
    game = started_game(now=now, players=1)
    state = state_of(game)
    text = nmr_text(game, 0)
    order = CHOICE.parse(state, 0, text)
    state, _ = CHOICE.submit(state, 0, order, dice=None)  # type: ignore[arg-type]  # submit draws no die
    seat = Seat.objects.get(game=game)
    email = reports._report(
        game, seat, CHOICE, state, [], game.steps.get(), "tok", key="private-test"
    )
    block = email.text.split("YOUR PRIVATE INFORMATION\n")[1].split("\nWHAT YOU OWE")[0]
    assert block == (
        "  Only you see this block.\n"
        "  Your sealed order, the one that counts now:\n"
        + "".join(f"    {line}\n" for line in text.splitlines())
        + "  You may replace it until the deadline; the latest valid order counts.\n"
    )


def test_the_start_report_greets_and_explains(now: datetime) -> None:
    game = started_game(now=now, players=2)
    email = report(game, 1, 0)
    assert email.subject == "Test Choice has started, your order is due Wed 25 Nov 2026 18:00 UTC"
    assert email.text.startswith(
        "Test Choice (Choice by post), postal turn 1\n\nHello ann,\n\n"
        "Welcome: the game has started and this is your first turn report."
    )
    assert "Welcome: the game has started" in email.html


def test_html_emails_load_nothing_from_outside(now: datetime) -> None:
    game = second_step(now)
    postal.extend_deadline(game.pk, deadline=now + timedelta(days=5), now=now)
    postal.rotate_link(game.pk, position=0, now=now)
    kinds = set(OutboundEmail.objects.values_list("kind", flat=True))
    assert kinds == {"report", "receipt", "deadline", "link"}
    for email in OutboundEmail.objects.all():
        for marker in ("<img", "<script", "<link", "src=", "url(", "<style"):
            assert marker not in email.html, (email.kind, marker)


def test_the_final_email_has_the_standings_and_the_revealed_seed(now: datetime) -> None:
    game = started_game(now=now, players=2)
    while game.status != Game.Status.FINISHED:
        postal.resolve_now(game.pk, now=now)
        game.refresh_from_db()
    state = state_of(game)
    standings = CHOICE.standings(state)
    assert standings is not None
    for position in (0, 1):
        email = OutboundEmail.objects.get(dedupe_key=f"final:{game.pk}:{position}")
        assert email.subject == "Test Choice: the game is over"
        block = email.text.split("FINAL STANDINGS\n")[1].split("\n\n")[0]
        assert block == "\n".join(
            f"  {s.place}. {state.players[s.seat]}: {s.score}" for s in standings
        )
        lines = email.text.splitlines()
        assert lines[lines.index("  The server seed is now revealed:") + 1] == f"  {SEED.hex()}"
        assert f"  {game.commitment}" in lines
        assert f"  {SITE}/games/{game.public_id}/verify/" in lines
        assert table(email.html, "standings") == [
            ["Place", "Player", "Score"],
            *[[str(s.place), state.players[s.seat], str(s.score)] for s in standings],
        ]
        assert f">{SEED.hex()}</p>" in email.html


def test_no_email_before_the_end_carries_the_seed(now: datetime) -> None:
    second_step(now)
    for email in OutboundEmail.objects.all():
        assert SEED.hex() not in email.text + email.html


def test_the_receipt_echoes_the_canonical_order_and_its_time(now: datetime) -> None:
    # Resolved only at its deadline: the receipt finds the step still open.
    game = started_game(now=now, players=1, time_zone="Europe/Berlin", early_processing=False)
    canonical = nmr_text(game, 0)
    later = now + timedelta(minutes=1)
    postal.accept_order(
        game_id=game.pk, position=0, text=canonical.upper(), source="email", now=later
    )
    assert tasks.write_receipts() == 1
    email = OutboundEmail.objects.get(kind="receipt")
    assert email.subject == "Test Choice: order received for postal turn 1"
    assert (
        'Your order for postal turn 1 of "Test Choice" was received Mon 23 Nov 2026 19:01 CET '
        "(18:01 UTC)\nand is accepted. It reads:\n\n"
        + "".join(f"  {line}\n" for line in canonical.splitlines())
        + "\nThis is now the order that counts."
    ) in email.text
    pre = '<pre style="margin:0 0 12px;font-size:15px;white-space:pre-wrap">'
    assert f"{pre}{canonical}</pre>" in email.html
    assert "the deadline,\nWed 25 Nov 2026 19:00 CET (18:00 UTC); the latest" in email.text


def test_invite_link_and_deadline_emails_carry_the_link_and_the_seats_time(now: datetime) -> None:
    game = GameFactory.create(seats=2, time_zone="Europe/Berlin")
    Seat.objects.filter(game=game, position=1).update(time_zone="Asia/Tokyo")
    postal.invite(game.pk, now=now)
    invite = OutboundEmail.objects.get(kind="invite", to="bob@example.org")
    link = re.search(rf"^({SITE}/p/([\w-]+)/)$", invite.text, re.M)
    assert link is not None
    assert access.seat_for(link.group(2), now=now) == Seat.objects.get(game=game, position=1)
    assert "  One line per round: W<v> <a>+<b> <c>+<d>, e.g. W5 1+3 3+4" in invite.text
    assert "your time zone (Asia/Tokyo) and in UTC" in invite.text
    postal.start_game(game.pk, now=now, seed=SEED)
    postal.extend_deadline(game.pk, deadline=now + timedelta(days=3), now=now)
    moved = OutboundEmail.objects.get(kind="deadline", to="bob@example.org")
    assert moved.subject == (
        "Test Choice: the deadline of postal turn 1 is now Fri 27 Nov 2026 03:00 JST (18:00 UTC)"
    )
    assert "You owe: postal turn (rounds 1-2: one line per round, e.g. W5 1+3 3+4)" in moved.text
    token = postal.rotate_link(game.pk, position=1, now=now)
    fresh = OutboundEmail.objects.get(kind="link")
    assert f"\n{SITE}/p/{token}/\n" in fresh.text
    assert f'<a href="{SITE}/p/{token}/">' in fresh.html


def test_the_invitation_and_the_seat_page_say_the_rules_in_words(now: datetime) -> None:
    game = new_game(
        "liars-dice",
        players=2,
        gm=GMFactory.create(username="gwen"),
        title="Duel",
        options={"profile": "genius_dm", "oracle": True, "max_dice": 6},
    )
    postal.invite(game.pk, now=now)
    invite = OutboundEmail.objects.get(kind="invite", to="bob@example.org")
    assert (
        'gwen invites you to play Liar\'s Dice: Death Match by post in "Duel".\n\n'
        "The rules in play:\n"
        "  Dice per player: 4\n"
        "  Most dice: 6\n"
        "  Round reserve: yes\n"
        "  Anomaly: Cheat: no\n"
        "  Anomaly: Double-Face: no\n"
        "  Anomaly: Fresh Start: no\n"
        "  Anomaly: Mulligan: no\n"
        "  Anomaly: Oracle: yes\n"
        "  Anomaly: Revelation: no\n"
        "  Anomaly: Summation: no\n"
    ) in invite.text
    assert "<li>Anomaly: Oracle: yes</li>" in invite.html
    postal.start_game(game.pk, now=now, seed=SEED)
    seat = Seat.objects.get(game=game, position=0)
    browser = Client()
    assert browser.post(f"/p/{access.mint([seat], now=now)[0]}/").status_code == 302
    page = browser.get(seat_page(game, 0)).content.decode()
    assert (
        '<details class="rules" id="rules"><summary>Rules in play: Liar&#x27;s Dice: Death Match'
        "</summary>\n<dl><dt>Dice per player</dt><dd>4</dd><dt>Most dice</dt><dd>6</dd>"
    ) in page


def test_every_email_of_a_seat_is_one_thread_and_replies_reach_the_gm(now: datetime) -> None:
    game = second_step(now)
    postal.rotate_link(game.pk, position=1, now=now)
    emails = OutboundEmail.objects.filter(to="bob@example.org")
    assert {email.kind for email in emails} == {"report", "receipt", "link"}
    for email in emails:
        assert (email.thread, email.reply_to, email.game_id) == (
            f"game-{game.pk}-seat-1",
            game.gm.email,
            game.pk,
        )
