"""The ledger (games.notify.ledger): every decision taken for a player without them is a
row, said on their seat's page and the GM's: what was decided, by which rule or setting,
and what the player can do about it."""

from __future__ import annotations

from datetime import date, datetime, time, timedelta

import pytest
from django.test import Client
from django.utils import translation

from games import postal
from games.community import absences
from games.engines import registry
from games.models import AbsencePolicy, Decision, Order, Seat, Step
from games.notify import ledger, reminders
from games.notify.ladder import PUSH, Rung
from tests.factories import GMFactory, started_game
from tests.games.notify.test_push import browser_of
from tests.games.postal.test_missed_turns import TEST_STRATEGY, order_all_but

pytestmark = pytest.mark.django_db

HOUR = timedelta(hours=1)


@pytest.fixture
def pilot(monkeypatch: pytest.MonkeyPatch) -> None:
    """The test autopilot (it plays the default) is Choice's only one."""
    monkeypatch.setitem(registry.STRATEGIES, "choice", (TEST_STRATEGY,))


def open_step(game_id: int) -> Step:
    return Step.objects.get(game_id=game_id, status=Step.Status.OPEN)


def said(position: int, game_id: int) -> list[tuple[str, str, str]]:
    seat = Seat.objects.get(game_id=game_id, position=position)
    return [(row.what, row.why, row.then) for row in ledger.of_seat(seat)]


MISSED = (
    "Send your order before the deadline; what plays a missed turn is yours to choose under "
    "“If you miss a deadline” in your settings."
)


def test_a_missed_turn_played_by_the_default_and_civil_disorder(now: datetime) -> None:
    game = started_game(now=now, missed=postal.MissedTurns(civil_disorder_after=1))
    step = open_step(game.pk)
    order_all_but(game, {2}, now)
    assert postal.resolve_due_step(step.pk, now=step.deadline) is True
    order = Order.objects.get(step=step, seat__position=2).canonical
    assert said(2, game.pk) == [
        (
            "postal turn 1: your seat fell into civil disorder after 1 missed turn",
            "This game's rule: a seat that misses a turn is in civil disorder.",
            "An order from you ends it, unless the seat was given to another player.",
        ),
        (
            f"postal turn 1: the game's no-moves-received default played for you: {order}",
            "No order from you had come by the deadline.",
            MISSED,
        ),
    ]
    assert said(0, game.pk) == []


def test_an_autopilot_and_an_extension(now: datetime, pilot: None) -> None:
    game = started_game(now=now, missed=postal.MissedTurns(extensions=1, extension_hours=12))
    postal.choose_autopilot(game.pk, position=1, key="test")
    step = open_step(game.pk)
    order_all_but(game, {1}, now)
    assert postal.resolve_due_step(step.pk, now=step.deadline) is False  # an extension
    assert postal.resolve_due_step(step.pk, now=step.deadline + 12 * HOUR) is True
    order = Order.objects.get(step=step, seat__position=1).canonical
    assert said(1, game.pk) == [
        (
            f"postal turn 1: your autopilot (the test pilot) played for you: {order}",
            "Your setting: this autopilot plays your missed turns.",
            MISSED,
        ),
        (
            "postal turn 1: one of your automatic extensions moved the deadline by 12 hours; "
            "0 left",
            "This game gives each seat 1 automatic extension: a missed deadline spends it.",
            "Send your order before the new deadline.",
        ),
    ]


def test_a_deadline_held_for_an_absence(now: datetime) -> None:
    game = started_game(
        now=now,
        missed=postal.MissedTurns(absence_policy=AbsencePolicy.EXTEND, absence_cap_hours=72),
    )
    absences.declare(
        "cy@example.org",
        first_day=date(2026, 11, 25),
        last_day=date(2026, 11, 25),
        zone="UTC",
        now=now,
    )
    step = open_step(game.pk)
    order_all_but(game, {2}, now)
    assert postal.resolve_due_step(step.pk, now=step.deadline) is False
    assert said(2, game.pk) == [
        (
            "postal turn 1: the deadline waited for you until Thu 26 Nov 2026 00:00 UTC",
            "You declared an absence, and this game waits for absent players (72 hours at most "
            "per seat).",
            "Change or end your absence on the Away page.",
        )
    ]


def test_a_reminder_held_for_the_night_and_one_moved_to_email(now: datetime) -> None:
    game = started_game(now=now, early_processing=False)
    bob = Seat.objects.select_related("game").get(game=game, position=1)
    reminders.choose_quiet(bob, start=time(22), end=time(7))
    postal.choose_ladder(bob, [Rung(8, PUSH)], everywhere=False)
    step = open_step(game.pk)
    # 8 hours before the deadline (noon) is 04:00, in bob's night: it waits for 07:00. No
    # browser of his takes pushes: it is an email.
    Step.objects.filter(pk=step.pk).update(
        deadline=datetime.fromisoformat("2026-11-25T12:00+00:00")
    )
    reminders.send_reminders(datetime.fromisoformat("2026-11-25T04:00+00:00"))
    assert said(1, game.pk) == []
    reminders.send_reminders(datetime.fromisoformat("2026-11-25T07:00+00:00"))
    reminders.send_reminders(datetime.fromisoformat("2026-11-25T07:05+00:00"))
    assert said(1, game.pk) == [
        (
            "postal turn 1: the reminder 8 hours before came as an email",
            "No browser took pushes for this seat.",
            "Turn push on, or send yourself a test, under “Notifications on this device”.",
        ),
        (
            "postal turn 1: the reminder 8 hours before came at Wed 25 Nov 2026 07:00 UTC",
            "Your quiet hours: 22:00 to 07:00 UTC.",
            "Change your quiet hours under “Deadlines and reminders” in your settings.",
        ),
    ]
    assert Decision.objects.filter(seat=bob).count() == 2


def test_the_seat_page_and_the_gm_page_show_the_rows(now: datetime) -> None:
    gm = GMFactory.create(is_staff=True)
    game = started_game(now=now, gm=gm)
    step = open_step(game.pk)
    order_all_but(game, {2}, now)
    postal.resolve_due_step(step.pk, now=step.deadline)
    cy = browser_of(game, 2, now)
    page = cy.get(f"/play/{game.pk}/2/").content.decode()
    assert "<h2>Decided for you</h2>" in page
    assert "the game&#x27;s no-moves-received default played for you" in page
    with translation.override("de"):
        german = said(2, game.pk)[0][0]
    assert german.startswith("Postzug 1: ")
    client = Client()
    client.force_login(gm)
    gm_page = client.get(f"/gm/{game.pk}/").content.decode()
    assert '<td data-label="Seat">cy</td>' in gm_page
    assert "No order from you had come by the deadline." in gm_page
