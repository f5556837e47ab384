"""A handover, not a swap (docs/players.md, "When a player is replaced"): from the moment
the GM hands a seat to a new player, the game names them everywhere (the board, what a
seat owes, what happens next, the digest, the zine), while what was said before keeps the
name it was said under. The new player is welcomed with the game's rules, the seat's
current report and their link; the one who leaves is told, without a link; the GM's log
says who handed the seat to whom. A new person starts with a clean record; the same
person renamed keeps theirs."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta
from html import unescape

import pytest
from django.test import Client
from django.urls import reverse

from games import postal
from games.engines import registry
from games.models import Event, Game, GMAction, Seat
from games.notify import digests
from games.postal import access
from moderator.mail.models import OutboundEmail
from tests.factories import GMFactory, new_game, seat_page, started_game, without_footer

pytestmark = pytest.mark.django_db

ANN, BOB, CY = 0, 1, 2
AT_EIGHT = datetime(2026, 11, 24, 8, 0, tzinfo=UTC)
TOKEN = re.compile(r"/p/[^/\s\"]+/")


@pytest.fixture
def game(now: datetime) -> Game:
    """Liar's Dice of ann, bob and cy with two dice each: ann opens round 1. bob takes
    the daily digest."""
    gm = GMFactory.create(is_staff=True, email="gm@example.org")
    game = started_game("liars-dice", now=now, gm=gm, options={"dice_per_player": 2})
    postal.choose_reports(game.pk, position=BOB, choice="digest", everywhere=False)
    return game


def hand_over(game: Game, now: datetime) -> Seat:
    """The GM gives ann's seat to Dee."""
    return postal.replace_player(
        game.pk,
        position=ANN,
        name="Dee",
        email="dee@example.org",
        now=now,
        reason="ann moved away",
    )


def opened(game: Game, position: int, now: datetime, link: str | None = None) -> Client:
    """A browser that opened the seat with ``link`` (a fresh one if None)."""
    client = Client()
    if link is None:
        seat = Seat.objects.get(game=game, position=position)
        link = f"/p/{access.mint([seat], now=now)[position]}/"
    assert client.post(link)["Location"] == seat_page(game, position)
    return client


def board_rows(page: str) -> list[str]:
    """The names the Liar's Dice board lists, in seat order."""
    table = re.search(r'<table id="board".*?</table>', page, re.S)
    assert table is not None
    cells = re.findall(r"<tr[^>]*><th[^>]*>((?:(?!</th>|<tr).)*)</th>\s*<td", table.group(0), re.S)
    return [unescape(re.sub(r"<[^>]+>", "", cell)).strip() for cell in cells]


def section(text: str, heading: str, end: str) -> list[str]:
    lines = text.splitlines()
    return lines[lines.index(heading) + 1 : lines.index(end)]


def test_the_game_names_the_new_player_from_the_handover_and_history_keeps_the_old(
    game: Game, now: datetime
) -> None:
    hand_over(game, now)
    game.refresh_from_db()
    engine = registry.get(game.engine)
    step = game.steps.get(number=1)
    assert engine.state_from_json(game.state).players == ("Dee", "bob", "cy")
    assert engine.state_from_json(step.state_before).players == ("Dee", "bob", "cy")
    bob = opened(game, BOB, now)
    assert board_rows(bob.get(seat_page(game, BOB)).content.decode()) == ["Dee", "bob", "cy"]

    postal.accept_order(game_id=game.pk, position=ANN, text="bid 1 2", source="web", now=now)

    assert list(
        game.events.filter(audience__isnull=True).order_by("id").values_list("text", flat=True)
    ) == [
        "round 1: dice in play: ann 2, bob 2, cy 2; ann opens",
        "round 1: Dee bids 1 x 2",
    ]
    owed = game.steps.get(number=2).prompts
    assert [(p["seat"], p["kind"], p["hint"]) for p in owed] == [
        (BOB, "bid or challenge", "round 1, move 2: raise 1 x 2 (Dee) or call liar")
    ]
    # bob's digest and the GM's zine say what happened since under the new name.
    assert digests.send_daily_digests(AT_EIGHT) == 1
    (digest,) = OutboundEmail.objects.filter(kind="daily")
    assert section(digest.text, "WHAT HAPPENED SINCE YOUR LAST EMAIL", "WHAT YOU OWE") == [
        "  Postal turn 1:",
        "    round 1: Dee bids 1 x 2",
        "",
    ]
    gm = Client()
    gm.force_login(game.gm)
    zine = gm.get(reverse("gm:zine", args=[game.pk]), {"step": "1", "format": "text"})
    text = zine.content.decode()
    assert section(text, "WHAT HAPPENED", "THE DICE") == [
        "  round 1: dice in play: ann 2, bob 2, cy 2; ann opens",
        "  round 1: Dee bids 1 x 2",
        "",
    ]
    assert section(text, "THE BOARD", "THE PLAYERS") == [
        "  Round 1",
        "  Dice in play:",
        "    Dee          2 dice",
        "    bob          2 dice  <- on turn",
        "    cy           2 dice",
        "  Bids this round:",
        "    Dee: 1 x 2",
        "",
        "",
    ]
    assert section(text, "THE PLAYERS", "STANDINGS")[:3] == ["  Dee", "  bob", "  cy"]


def test_the_new_player_is_welcomed_with_the_rules_the_current_report_and_their_link(
    game: Game, now: datetime
) -> None:
    hand_over(game, now)
    (welcome,) = OutboundEmail.objects.filter(to="dee@example.org")
    assert (welcome.kind, welcome.subject) == (
        "welcome",
        "Test Liar's Dice: welcome, seat 1 is yours, your order is due Wed 25 Nov 2026 18:00 UTC",
    )
    text = TOKEN.sub("/p/TOKEN/", welcome.text)
    cup = " ".join(map(str, registry.get(game.engine).state_from_json(game.state).hands[ANN]))
    assert section(
        text, "Test Liar's Dice (Liar's Dice: classic by post), postal turn 1", "THE BOARD"
    ) == [
        "",
        "Hello Dee,",
        "",
        "Welcome to Test Liar's Dice: the GM has given you seat 1, which ann played until now.",
        "The seat keeps everything it had in the game, and it is yours from now on. Below are the",
        "rules in play and the seat's current report: what happened last, the board, your private",
        "information and what you owe. You get a report like this one only when you owe an order,",
        "with what happened since. If you send no order in time, the rules' no-moves-received",
        "default plays for you.",
        "",
        "The GM's reason: ann moved away",
        "",
        "The rules in play:",
        "  Dice per player: 2",
        "  Wild ones: yes",
        "  Palifico: yes",
        "  Spot call (calza): no",
        "",
        "WHAT HAPPENED",
        "  round 1: dice in play: ann 2, bob 2, cy 2; ann opens",
        f"  round 1: your dice are {cup}",
        "",
    ]
    assert section(text, "THE BOARD", "HOW TO ORDER") == [
        "  Round 1",
        "  Dice in play:",
        "    Dee          2 dice  <- on turn",
        "    bob          2 dice",
        "    cy           2 dice",
        "  Bids this round: none yet",
        "",
        "",
        "YOUR PRIVATE INFORMATION",
        "  Only you see this block.",
        f"  Your cup: {cup}",
        "",
        "",
        "WHAT YOU OWE",
        "  Bid: round 1, move 1: open with a bid",
        "  Deadline: Wed 25 Nov 2026 18:00 UTC",
        "",
    ]
    assert "  Your order form: http://127.0.0.1:8000/p/TOKEN/" in text.splitlines()
    assert (
        '<p style="margin:0 0 12px">Welcome to Test Liar&#x27;s Dice: the GM has given you '
        "seat 1, which ann played until now." in welcome.html
    )
    # The link of the welcome opens the seat, under the new name.
    (link,) = set(re.findall(r"http://127\.0\.0\.1:8000/p/[^/\s]+/", welcome.text))
    dee = opened(game, ANN, now, link.removeprefix("http://127.0.0.1:8000"))
    page = dee.get(seat_page(game, ANN)).content.decode()
    assert re.findall(r'<p id="seat-name">.*?<strong>(.*?)</strong>', page) == ["Dee"]
    assert board_rows(page) == ["Dee", "bob", "cy"]


def test_the_player_who_leaves_is_told_without_a_link(game: Game, now: datetime) -> None:
    hand_over(game, now)
    (told,) = OutboundEmail.objects.filter(to="ann@example.org", kind="replaced")
    assert (told.subject, told.reply_to) == (
        "Test Liar's Dice: seat 1 has a new player",
        "gm@example.org",
    )
    assert without_footer(told.text) == (
        "Hello ann,\n"
        "\n"
        "The GM of Test Liar's Dice has given your seat, seat 1, to Dee, who plays it from now\n"
        "on. Your links to the game no longer work, and you get no more emails about it.\n"
        "\n"
        "The GM's reason: ann moved away\n"
        "\n"
        "Thank you for playing. To ask the GM about it, reply to this email.\n"
    )
    assert "/p/" not in told.html
    assert OutboundEmail.objects.filter(to="ann@example.org").exclude(kind="report").count() == 1


def test_the_player_who_leaves_is_told_in_their_language(game: Game, now: datetime) -> None:
    Seat.objects.filter(game=game, position=ANN).update(language="de")
    hand_over(game, now)
    (told,) = OutboundEmail.objects.filter(to="ann@example.org", kind="replaced")
    assert told.subject == "Test Liar's Dice: Platz 1 hat einen neuen Spieler"
    assert told.text.splitlines()[2:4] == [
        "Der Spielleiter von Test Liar's Dice hat deinen Platz, Platz 1, an Dee gegeben, der ihn",
        "ab jetzt spielt. Deine Links zum Spiel funktionieren nicht mehr, und du bekommst keine",
    ]


def test_the_gms_log_says_who_handed_the_seat_to_whom(game: Game, now: datetime) -> None:
    hand_over(game, now)
    assert list(GMAction.objects.values_list("kind", "step_number", "words", "reason")) == [
        ("replace", 1, "The GM handed seat 1 from ann to Dee", "ann moved away")
    ]


def test_a_new_player_starts_with_a_clean_record(game: Game, now: datetime) -> None:
    Seat.objects.filter(game=game, position=ANN).update(
        nmr_count=3, missed_in_row=2, extensions_used=1, away_hours_used=5, civil_disorder_at=now
    )
    hand_over(game, now)
    dee = Seat.objects.get(game=game, position=ANN)
    assert (
        dee.nmr_count,
        dee.missed_in_row,
        dee.extensions_used,
        dee.away_hours_used,
        dee.civil_disorder_at,
    ) == (0, 0, 0, 0, None)


def test_a_renamed_player_keeps_their_record_and_gets_only_a_new_link(
    game: Game, now: datetime
) -> None:
    Seat.objects.filter(game=game, position=ANN).update(
        nmr_count=3, missed_in_row=2, extensions_used=1, away_hours_used=5, civil_disorder_at=now
    )
    before = set(OutboundEmail.objects.values_list("id", flat=True))
    postal.replace_player(game.pk, position=ANN, name="Annie", email="ANN@example.org", now=now)
    annie = Seat.objects.get(game=game, position=ANN)
    assert (
        annie.name,
        annie.nmr_count,
        annie.missed_in_row,
        annie.extensions_used,
        annie.away_hours_used,
        annie.civil_disorder_at,
        annie.tenure,
    ) == ("Annie", 3, 2, 1, 5, now, 0)
    sent = OutboundEmail.objects.exclude(id__in=before)
    assert list(sent.values_list("to", "kind", "subject")) == [
        ("ANN@example.org", "link", "Test Liar's Dice: your new link")
    ]
    game.refresh_from_db()
    assert registry.get(game.engine).state_from_json(game.state).players == ("Annie", "bob", "cy")
    assert list(GMAction.objects.values_list("words", flat=True)) == ["The GM renamed ann to Annie"]


def test_a_rollback_to_before_the_handover_keeps_the_new_name(now: datetime) -> None:
    game = started_game(now=now, early_processing=False)
    postal.resolve_now(game.pk, now=now)
    later = now + timedelta(hours=1)
    postal.replace_player(game.pk, position=ANN, name="Dee", email="dee@example.org", now=later)
    postal.rollback(game.pk, reason="a wrong resolution", now=later)
    game.refresh_from_db()
    engine = registry.get(game.engine)
    reopened = game.steps.get(number=1)
    assert (game.step_number, reopened.status) == (1, "open")
    assert engine.state_from_json(game.state).players == ("Dee", "bob", "cy")
    assert engine.state_from_json(reopened.state_before).players == ("Dee", "bob", "cy")
    # What the step said before the handover keeps ann's name.
    assert Event.objects.filter(game=game, text__contains="Dee").count() == 0


def test_the_newcomer_to_a_game_not_started_gets_the_invitation(now: datetime) -> None:
    game = new_game(players=3)
    before = set(OutboundEmail.objects.values_list("id", flat=True))
    postal.replace_player(game.pk, position=CY, name="Dee", email="dee@example.org", now=now)
    sent = OutboundEmail.objects.exclude(id__in=before).order_by("to")
    assert list(sent.values_list("to", "kind")) == [
        ("cy@example.org", "replaced"),
        ("dee@example.org", "invite"),
    ]


def test_the_final_standings_name_the_new_player(now: datetime) -> None:
    game = started_game(now=now, players=2, early_processing=False)
    postal.replace_player(game.pk, position=ANN, name="Dee", email="dee@example.org", now=now)
    for _ in range(40):
        game.refresh_from_db()
        if game.status == Game.Status.FINISHED:
            break
        postal.resolve_now(game.pk, now=now)
    engine = registry.get(game.engine)
    assert game.status == Game.Status.FINISHED
    view = engine.view(engine.state_from_json(game.state), None)
    # The dice, and so the scores, depend on the game's id: the names do not.
    assert sorted(standing["player"] for standing in view["standings"]) == ["Dee", "bob"]
    (final,) = OutboundEmail.objects.filter(to="dee@example.org", kind="final")
    standings = section(final.text, "FINAL STANDINGS", "THE FINAL BOARD")
    assert sorted(re.sub(r"^  \d+\. (\w+): -?\d+$", r"\1", line) for line in standings) == [
        "",
        "Dee",
        "bob",
    ]
    plates = section(final.text, "Wurfels stored and scores:", "THE DICE")
    assert sorted(line.split(":")[0] for line in plates) == ["", "  Dee", "  bob"]
