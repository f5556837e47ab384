"""The daily digest of reports: one email a day per address, at its hour in its zone,
listing for each of its digest seats' games what happened since the seat's last email and
what it owes now; written once however often (or however many at once) the task runs."""

from __future__ import annotations

import re
import threading
from datetime import UTC, datetime, timedelta

import pytest
from django.db import connection
from time_machine import TimeMachineFixture

from games import postal, tasks
from games.engines.dice import VerifiableDice
from games.models import EmailPreference, Game, Seat
from games.notify import digests
from games.postal import steps
from moderator.mail.models import OutboundEmail
from tests.factories import new_game, without_footer

pytestmark = pytest.mark.django_db

SEED = bytes(range(32))
# The day after the games start (NOW, 23 November 18:00 UTC): ann's digest hour is 08:00.
BEFORE = datetime(2026, 11, 24, 7, 59, tzinfo=UTC)
AT_EIGHT = datetime(2026, 11, 24, 8, 0, tzinfo=UTC)


@pytest.fixture(autouse=True)
def same_dice_whatever_the_game_id(monkeypatch: pytest.MonkeyPatch) -> None:
    """A game's dice depend on its id, which the database gives: drawn as game 1's, the
    games are the same in every run."""

    def dice(seed: bytes, game_id: int, start: int = 0) -> VerifiableDice:
        return VerifiableDice(seed, 1, start=start)

    monkeypatch.setattr(steps, "VerifiableDice", dice)


def ann_on_digest(now: datetime) -> tuple[Game, Game]:
    """Two Liar's Dice games where ann chose the digest for all her seats; in the first
    ann bid and bob outbid her (cy owes), in the second ann owes the first bid."""
    first = new_game("liars-dice", title="First", options={"dice_per_player": 2})
    second = new_game("liars-dice", title="Second", options={"dice_per_player": 2})
    postal.choose_reports(first.pk, position=0, choice="digest", everywhere=True)
    for game in (first, second):
        postal.start_game(game.pk, now=now, seed=SEED)
    postal.accept_order(game_id=first.pk, position=0, text="bid 1 2", source="web", now=now)
    postal.accept_order(game_id=first.pk, position=1, text="bid 1 3", source="web", now=now)
    return first, second


def digest_text(email: OutboundEmail) -> str:
    text = re.sub(r"/p/[^/\s]+/", "/p/TOKEN/", without_footer(email.text))
    return re.sub(r"/email/stop/([a-z-]+)/[^/\s]+/", r"/email/stop/\1/TOKEN/", text)


def test_the_digest_comes_at_the_hour_once_however_often_the_task_runs(now: datetime) -> None:
    ann_on_digest(now)
    assert digests.send_daily_digests(BEFORE) == 0
    assert digests.send_daily_digests(AT_EIGHT) == 1
    assert digests.send_daily_digests(AT_EIGHT) == 0
    assert digests.send_daily_digests(AT_EIGHT + timedelta(hours=3)) == 0
    (digest,) = OutboundEmail.objects.filter(kind="daily")
    assert (digest.to, digest.subject, digest.dedupe_key) == (
        "ann@example.org",
        "Your daily digest: 2 games",
        "daily:ann@example.org:2026-11-24",
    )
    assert EmailPreference.objects.get().digest_day == AT_EIGHT.date()


def test_the_digest_lists_each_game_with_what_happened_since_and_what_is_owed(
    now: datetime,
) -> None:
    ann_on_digest(now)
    assert digests.send_daily_digests(AT_EIGHT) == 1
    (digest,) = OutboundEmail.objects.filter(kind="daily")
    assert digest_text(digest) == (
        "Hello,\n"
        "\n"
        "This is your daily digest of Tuesday 24 November 2026: what happened in your games since\n"
        "your last email, and what you owe now, soonest deadline first.\n"
        "\n"
        "== First (Liar's Dice): you play ann ==\n"
        "\n"
        "WHAT HAPPENED SINCE YOUR LAST EMAIL\n"
        "  Postal turn 1:\n"
        "    round 1: ann bids 1 x 2\n"
        "  Postal turn 2:\n"
        "    round 1: bob bids 1 x 3\n"
        "\n"
        "WHAT YOU OWE\n"
        "  You owe no order this postal turn. Deadline: Wed 25 Nov 2026 18:00 UTC\n"
        "\n"
        "  Your page and order form: http://127.0.0.1:8000/p/TOKEN/\n"
        "\n"
        "== Second (Liar's Dice): you play ann ==\n"
        "\n"
        "WHAT HAPPENED SINCE YOUR LAST EMAIL\n"
        "  Nothing new since your last email.\n"
        "\n"
        "WHAT YOU OWE\n"
        "  Bid: round 1, move 1: open with a bid\n"
        "  Deadline: Wed 25 Nov 2026 18:00 UTC\n"
        "\n"
        "  Your page and order form: http://127.0.0.1:8000/p/TOKEN/\n"
        "\n"
        "HOW OFTEN YOU GET EMAIL\n"
        "  You chose one daily digest for these games, at 08:00 (UTC).\n"
        "  Each game's page lets you change that, and always shows every report. Whatever\n"
        "  you choose, the first report, the final standings, receipts of orders sent by email\n"
        "  and reminders before a deadline you owe (unless you stopped them) still come by\n"
        "  email. If nothing arrives by a deadline, the game's default order is played for you.\n"
        "  To get no more reports by email, in any game: "
        "http://127.0.0.1:8000/email/stop/all-reports/TOKEN/\n"
    )
    assert digest.html.count('class="game"') == 2


def test_the_next_digest_tells_only_what_happened_since_and_none_comes_without_news(
    now: datetime,
) -> None:
    first, second = ann_on_digest(now)
    assert digests.send_daily_digests(AT_EIGHT) == 1
    ann = Seat.objects.get(game=first, position=0)
    assert ann.reported_through == first.events.order_by("-id").values_list("id", flat=True)[0]
    # The second game's bid is ann's own; nothing else happens: the next day ann still owes
    # nothing in the first game, and her second game has news only from her own bid.
    postal.accept_order(game_id=second.pk, position=0, text="bid 1 4", source="web", now=AT_EIGHT)
    assert digests.send_daily_digests(AT_EIGHT + timedelta(days=1)) == 1
    latest = OutboundEmail.objects.filter(kind="daily").order_by("-id")[0]
    text = digest_text(latest)
    assert text.count("== ") == 1
    assert "== Second (Liar's Dice): you play ann ==" in text.splitlines()
    assert text.splitlines()[text.splitlines().index("WHAT HAPPENED SINCE YOUR LAST EMAIL") + 1 :][
        :2
    ] == ["  Postal turn 1:", "    round 1: ann bids 1 x 4"]
    # A day with nothing new and nothing owed sends nothing (and claims the day).
    assert digests.send_daily_digests(AT_EIGHT + timedelta(days=2)) == 0
    assert OutboundEmail.objects.filter(kind="daily").count() == 2


def test_a_seat_on_the_digest_gets_no_step_report_and_the_sweep_writes_the_digest(
    now: datetime, time_machine: TimeMachineFixture
) -> None:
    first, _ = ann_on_digest(now)
    to_ann = OutboundEmail.objects.filter(game=first, to="ann@example.org", kind="report")
    assert list(to_ann.values_list("dedupe_key", flat=True)) == [f"report:{first.pk}:1:0"]
    time_machine.move_to(AT_EIGHT, tick=False)
    assert tasks.sweep()["daily"] == 1
    assert tasks.sweep()["daily"] == 0


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_two_tasks_at_once_write_the_digest_once(now: datetime) -> None:
    ann_on_digest(now)
    barrier = threading.Barrier(2)
    results: list[int] = []

    def run() -> None:
        try:
            barrier.wait()
            results.append(digests.send_daily_digests(AT_EIGHT))
        finally:
            connection.close()

    threads = [threading.Thread(target=run) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(results) == [0, 1]
    assert OutboundEmail.objects.filter(kind="daily").count() == 1
