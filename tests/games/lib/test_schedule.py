from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest

from games.lib import schedule


@pytest.mark.parametrize(
    ("text", "spec"),
    [
        ("every 48 hours", {"kind": "interval", "seconds": 172800}),
        ("Every 90 minutes", {"kind": "interval", "seconds": 5400}),
        ("every 2 days", {"kind": "interval", "seconds": 172800}),
        ("daily at 18:00", {"kind": "daily", "time": "18:00"}),
        ("daily at 7:05", {"kind": "daily", "time": "07:05"}),
        (
            "Mondays and Thursdays at 20:00",
            {"kind": "weekly", "days": ["mon", "thu"], "time": "20:00"},
        ),
        ("sunday, friday at 09:30", {"kind": "weekly", "days": ["fri", "sun"], "time": "09:30"}),
    ],
)
def test_the_gms_words_become_a_schedule(text: str, spec: dict[str, Any]) -> None:
    assert schedule.parse(text) == spec


@pytest.mark.parametrize(
    ("spec", "words"),
    [
        ({"kind": "interval", "seconds": 172800}, "every 48 hours"),
        ({"kind": "interval", "seconds": 3600}, "every 1 hour"),
        ({"kind": "interval", "seconds": 5400}, "every 90 minutes"),
        ({"kind": "interval", "seconds": 7 * 86400}, "every 7 days"),
        ({"kind": "interval", "seconds": 30}, "every 30 seconds"),
        ({"kind": "daily", "time": "07:05"}, "daily at 07:05"),
        ({"kind": "weekly", "days": ["mon"], "time": "20:00"}, "Mondays at 20:00"),
        (
            {"kind": "weekly", "days": ["mon", "thu", "sun"], "time": "20:00"},
            "Mondays, Thursdays and Sundays at 20:00",
        ),
    ],
)
def test_a_schedule_in_words_reads_back_as_the_same_schedule(
    spec: dict[str, Any], words: str
) -> None:
    assert schedule.describe(spec) == words
    assert schedule.parse(words) == spec


def test_short_day_names_are_read() -> None:
    assert schedule.parse("mon, wed and fri at 8:00") == {
        "kind": "weekly",
        "days": ["mon", "wed", "fri"],
        "time": "08:00",
    }


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("whenever", "'whenever' is not a schedule; write e.g. 'every 48 hours'"),
        ("daily at 25:00", "'25:00' is not a time of day; write it as HH:MM"),
        ("caturdays at 10:00", "'caturdays' is not a day of the week"),
        ("every 0 hours", "an interval must be a whole number of seconds, at least 1"),
    ],
)
def test_a_schedule_that_is_not_one_says_what_would_be(text: str, message: str) -> None:
    with pytest.raises(schedule.ScheduleError) as caught:
        schedule.parse(text)
    assert str(caught.value).startswith(message)


def utc(year: int, month: int, day: int, hour: int = 0, minute: int = 0) -> datetime:
    return datetime(year, month, day, hour, minute, tzinfo=UTC)


def test_an_interval_counts_from_the_moment_the_step_opens() -> None:
    spec = schedule.parse("every 48 hours")
    assert schedule.next_deadline(spec, "UTC", utc(2026, 11, 23, 18, 5)) == utc(2026, 11, 25, 18, 5)


def test_daily_deadlines_follow_the_games_clock_across_daylight_saving() -> None:
    spec = schedule.parse("daily at 18:00")
    # Berlin: CET (UTC+1) before 29 March 2026, CEST (UTC+2) after.
    assert schedule.next_deadline(spec, "Europe/Berlin", utc(2026, 3, 28, 12)) == utc(
        2026, 3, 28, 17
    )
    assert schedule.next_deadline(spec, "Europe/Berlin", utc(2026, 3, 28, 17)) == utc(
        2026, 3, 29, 16
    )


def test_a_deadline_in_the_skipped_hour_falls_just_after_the_gap() -> None:
    spec = schedule.parse("daily at 02:30")
    # 02:30 does not exist in Berlin on 29 March 2026; 03:30 CEST is 01:30 UTC.
    assert schedule.next_deadline(spec, "Europe/Berlin", utc(2026, 3, 28, 12)) == utc(
        2026, 3, 29, 1, 30
    )


def test_a_deadline_in_the_repeated_hour_takes_its_first_instance() -> None:
    spec = schedule.parse("daily at 02:30")
    # 02:30 happens twice in Berlin on 25 October 2026; the first is CEST, 00:30 UTC.
    assert schedule.next_deadline(spec, "Europe/Berlin", utc(2026, 10, 24, 12)) == utc(
        2026, 10, 25, 0, 30
    )


def test_weekly_deadlines_take_the_next_named_day() -> None:
    spec = schedule.parse("mondays and thursdays at 20:00")
    # Sunday 22 November 2026, noon UTC, is 07:00 in New York: next is Monday 20:00 EST.
    assert schedule.next_deadline(spec, "America/New_York", utc(2026, 11, 22, 12)) == utc(
        2026, 11, 24, 1
    )
    # Exactly at a deadline, the next one is the following named day.
    assert schedule.next_deadline(spec, "America/New_York", utc(2026, 11, 24, 1)) == utc(
        2026, 11, 27, 1
    )


def test_an_unknown_time_zone_is_refused() -> None:
    with pytest.raises(schedule.ScheduleError, match="'Europe/Atlantis' is not a time zone"):
        schedule.next_deadline(schedule.parse("daily at 18:00"), "Europe/Atlantis", utc(2026, 1, 1))
