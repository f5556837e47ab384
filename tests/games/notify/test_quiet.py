"""Quiet hours (games.notify.quiet): a player's night, in their zone, when no reminder
comes. A reminder due in the night waits for the morning, unless the deadline falls in it:
then it comes before the night starts. Nights follow the local clock across a change of
daylight-saving time; the GM sees whose night a deadline falls in, and a game may move a
deadline out of every player's night."""

from __future__ import annotations

import secrets
from datetime import UTC, datetime, time, timedelta

import pytest
from django.test import Client

from games import postal
from games.engines.choice.rules import ChoiceEngine
from games.models import EmailPreference, Game, Seat, Step
from games.notify import quiet, reminders
from games.postal import access
from moderator.mail.models import OutboundEmail
from tests.factories import GMFactory, started_game
from tests.games.playing import play_choice_step

pytestmark = pytest.mark.django_db

CHOICE = ChoiceEngine()
BERLIN = quiet.Night(time(22), time(7), "Europe/Berlin")


def utc(year: int, month: int, day: int, hour: int = 0, minute: int = 0) -> datetime:
    return datetime(year, month, day, hour, minute, tzinfo=UTC)


# --- when a reminder goes ----------------------------------------------------------------------


def test_a_reminder_due_in_the_night_waits_for_the_morning() -> None:
    # 23:30 in Berlin (CET, UTC+1) on 24 November; the deadline is the next afternoon.
    meant, deadline = utc(2026, 11, 24, 22, 30), utc(2026, 11, 25, 14, 0)
    assert quiet.send_time(meant, deadline, BERLIN) == utc(2026, 11, 25, 6, 0)  # 07:00 CET


def test_a_reminder_before_a_deadline_in_the_night_comes_before_the_night_starts() -> None:
    # Due at 01:00 in Berlin for a deadline at 03:00: it comes at 22:00 the evening before.
    meant, deadline = utc(2026, 11, 25, 0, 0), utc(2026, 11, 25, 2, 0)
    assert quiet.send_time(meant, deadline, BERLIN) == utc(2026, 11, 24, 21, 0)


def test_a_reminder_by_day_goes_when_it_is_due() -> None:
    meant = utc(2026, 11, 25, 11, 0)
    assert quiet.send_time(meant, utc(2026, 11, 26), BERLIN) == meant
    assert quiet.send_time(meant, utc(2026, 11, 26), None) == meant


def test_a_night_across_the_change_to_winter_time_ends_at_seven_local() -> None:
    # 25 October 2026: at 03:00 CEST the clocks go back to 02:00 CET. The night from 22:00
    # CEST (20:00 UTC) to 07:00 CET (06:00 UTC) is ten hours long.
    assert quiet.night_around(BERLIN, utc(2026, 10, 25, 1, 30)) == (
        utc(2026, 10, 24, 20, 0),
        utc(2026, 10, 25, 6, 0),
    )
    meant, deadline = utc(2026, 10, 25, 1, 30), utc(2026, 10, 25, 12, 0)
    assert quiet.send_time(meant, deadline, BERLIN) == utc(2026, 10, 25, 6, 0)
    # 06:30 UTC is 07:30 CET: morning, sent when due.
    assert quiet.night_around(BERLIN, utc(2026, 10, 25, 6, 30)) is None


def test_a_night_across_the_change_to_summer_time_ends_at_seven_local() -> None:
    # 29 March 2026: at 02:00 CET the clocks go on to 03:00 CEST. The night from 22:00 CET
    # (21:00 UTC) to 07:00 CEST (05:00 UTC) is eight hours long.
    assert quiet.night_around(BERLIN, utc(2026, 3, 29, 0, 30)) == (
        utc(2026, 3, 28, 21, 0),
        utc(2026, 3, 29, 5, 0),
    )
    meant, deadline = utc(2026, 3, 29, 4, 0), utc(2026, 3, 29, 4, 30)
    assert quiet.send_time(meant, deadline, BERLIN) == utc(2026, 3, 28, 21, 0)


def test_a_night_within_one_day_and_one_across_midnight() -> None:
    late = quiet.Night(time(1), time(6), "UTC")
    assert quiet.night_around(late, utc(2026, 11, 24, 0, 30)) is None
    assert quiet.night_around(late, utc(2026, 11, 24, 3)) == (
        utc(2026, 11, 24, 1),
        utc(2026, 11, 24, 6),
    )


# --- the sweep ---------------------------------------------------------------------------------


def quiet_bob(game: Game, start: time = time(22), end: time = time(7)) -> Seat:
    bob = Seat.objects.get(game=game, position=1)
    reminders.choose_quiet(bob, start=start, end=end)
    return bob


def reminded(to: str) -> list[str]:
    return list(
        OutboundEmail.objects.filter(kind="reminder", to=to)
        .order_by("id")
        .values_list("dedupe_key", flat=True)
    )


def test_the_sweep_holds_a_reminder_for_the_morning_and_sends_one_before_the_night(
    now: datetime,
) -> None:
    game = started_game(now=now, early_processing=False)  # reminders 24 and 2 hours before
    quiet_bob(game)  # 22:00 to 07:00 UTC
    deadline = utc(2026, 11, 25, 2, 0)
    Step.objects.filter(game=game).update(deadline=deadline)
    key = f"reminder:{game.pk}:1:1:%s:{int(deadline.timestamp())}"

    reminders.send_reminders(utc(2026, 11, 24, 2, 0))  # 24 hours before: bob is asleep
    assert (reminded("ann@example.org"), reminded("bob@example.org")) == (
        [f"reminder:{game.pk}:1:0:24:{int(deadline.timestamp())}"],
        [],
    )
    reminders.send_reminders(utc(2026, 11, 24, 6, 59))
    assert reminded("bob@example.org") == []
    reminders.send_reminders(utc(2026, 11, 24, 7, 0))  # his morning
    reminders.send_reminders(utc(2026, 11, 24, 7, 5))
    assert reminded("bob@example.org") == [key % 24]
    # 2 hours before is in his night, as the deadline is: it comes before the night.
    reminders.send_reminders(utc(2026, 11, 24, 21, 59))
    assert reminded("bob@example.org") == [key % 24]
    reminders.send_reminders(utc(2026, 11, 24, 22, 0))
    assert reminded("bob@example.org") == [key % 24, key % 2]
    assert len(reminded("ann@example.org")) == 1
    reminders.send_reminders(utc(2026, 11, 25, 0, 0))
    assert len(reminded("ann@example.org")) == 2
    assert reminded("bob@example.org") == [key % 24, key % 2]


def test_a_reminder_held_for_a_night_that_begins_before_the_step_opens_is_not_sent(
    now: datetime,
) -> None:
    game = started_game(now=now, early_processing=False)
    quiet_bob(game, start=time(17), end=time(7))  # the night began before the step opened
    deadline = utc(2026, 11, 24, 1, 0)  # 7 hours after 18:00, in that night
    Step.objects.filter(game=game).update(deadline=deadline)
    reminders.send_reminders(utc(2026, 11, 23, 23, 0))
    assert (len(reminded("ann@example.org")), reminded("bob@example.org")) == (1, [])


# --- the player's form ---------------------------------------------------------------------


def browser_of(game: Game, position: int, now: datetime) -> tuple[Client, Seat]:
    client = Client(REMOTE_ADDR=f"10.{secrets.randbelow(256)}.{secrets.randbelow(256)}.8")
    seat = Seat.objects.get(game=game, position=position)
    token = access.mint([seat], now=now)[position]
    assert client.post(f"/p/{token}/").status_code == 302
    return client, seat


def test_a_player_declares_their_night_and_takes_it_back(now: datetime) -> None:
    game = started_game(now=now, time_zone="Europe/Berlin")
    client, bob = browser_of(game, 1, now)
    page = client.post(
        "/play/quiet/",
        {"seat": bob.pk, "quiet": "on", "start": "23:00", "end": "06:00"},
        follow=True,
    ).content.decode()
    assert (
        "No reminder comes to bob@example.org from 23:00 to 06:00 (Europe/Berlin), in any "
        "game: one due in your night waits for the morning, or comes before the night starts "
        "when the deadline falls in it."
    ) in page
    saved = EmailPreference.objects.get(email="bob@example.org")
    assert (saved.quiet_from, saved.quiet_until, saved.time_zone) == (
        time(23),
        time(6),
        "Europe/Berlin",
    )
    assert '<option value="23:00" selected>23:00</option>' in page
    assert 'name="quiet" id="id_quiet" checked' in page

    same = client.post(
        "/play/quiet/",
        {"seat": bob.pk, "quiet": "on", "start": "05:00", "end": "05:00"},
        follow=True,
    ).content.decode()
    assert "The night must end at another hour than it starts." in same
    assert EmailPreference.objects.get(email="bob@example.org").quiet_from == time(23)

    off = client.post(
        "/play/quiet/", {"seat": bob.pk, "start": "23:00", "end": "06:00"}, follow=True
    )
    assert "bob@example.org has no quiet hours: reminders come when they are due." in (
        off.content.decode()
    )
    saved.refresh_from_db()
    assert (saved.quiet_from, saved.quiet_until) == (None, None)


def test_a_seat_the_browser_does_not_hold_changes_no_night(now: datetime) -> None:
    game = started_game(now=now)
    client, _ = browser_of(game, 1, now)
    ann = Seat.objects.get(game=game, position=0)
    answer = client.post(
        "/play/quiet/", {"seat": ann.pk, "quiet": "on", "start": "22:00", "end": "07:00"}
    )
    assert answer.status_code == 404
    assert not EmailPreference.objects.filter(email="ann@example.org").exists()


# --- the GM ---------------------------------------------------------------------------------


def test_the_gm_sees_whose_night_a_deadline_falls_in(now: datetime) -> None:
    gm = GMFactory.create(is_staff=True)
    game = started_game(now=now, gm=gm, early_processing=False)
    quiet_bob(game)
    client = Client()
    client.force_login(gm)
    page = client.get(f"/gm/{game.pk}/").content.decode()
    assert "Players' quiet hours (no reminder then): bob (22:00 to 07:00 UTC)." in page
    answer = client.post(
        f"/gm/{game.pk}/extend/",
        {"step": "1", "deadline": "2026-11-26T23:30", "reason": ""},
        follow=True,
    ).content.decode()
    assert (
        "The deadline of step 1 is now Thu 26 Nov 2026 23:30 UTC; the players who owe an "
        "order, and those who get every report, are emailed. It falls in the night of bob "
        "(22:00 to 07:00 UTC): their reminders come before the night starts."
    ) in answer
    assert "The deadline now falls in the night of bob (22:00 to 07:00 UTC)." in answer


@pytest.mark.parametrize(
    ("avoid", "cy_sleeps", "deadline"),
    [
        (True, True, utc(2026, 11, 24, 6, 0)),  # ann wakes first, at 06:00
        (True, False, utc(2026, 11, 23, 23, 0)),  # cy is awake: nothing moves
        (False, True, utc(2026, 11, 23, 23, 0)),  # the game keeps its deadlines
    ],
)
def test_a_deadline_in_every_players_night_moves_to_the_first_morning(
    now: datetime, avoid: bool, cy_sleeps: bool, deadline: datetime
) -> None:
    game = started_game(
        now=now,
        schedule_spec={"kind": "daily", "time": "23:00"},
        missed=postal.MissedTurns(avoid_nights=avoid),
        early_processing=False,
    )
    seats = {seat.position: seat for seat in Seat.objects.filter(game=game)}
    reminders.choose_quiet(seats[0], start=time(22), end=time(6))
    reminders.choose_quiet(seats[1], start=time(21), end=time(8))
    if cy_sleeps:
        reminders.choose_quiet(seats[2], start=time(22, 0), end=time(7))
    assert play_choice_step(game, now + timedelta(minutes=1)).deadline == deadline
