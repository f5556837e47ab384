"""Deadlines in calendars: the seat's private feed, the GM's feed and the .ics of each
report, correct on both sides of a daylight-saving change; and the daily digest of
reminders that a player may choose instead of one email per game."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta

import pytest
from django.contrib.auth.models import User
from django.test import Client
from pytest_django.fixtures import Settings
from time_machine import TimeMachineFixture

from games import postal
from games.engines.choice.rules import ChoiceEngine
from games.models import Game, Seat
from games.notify import calendar, email_choices, reminders
from games.postal import access
from moderator.mail.models import OutboundEmail
from tests.factories import GMFactory, settings_page, started_game

pytestmark = pytest.mark.django_db

CHOICE = ChoiceEngine()
# Europe/Berlin leaves summer time at 03:00 on Sunday 25 October 2026.
SATURDAY = datetime(2026, 10, 24, 12, 0, tzinfo=UTC)
DAILY_18 = {"kind": "daily", "time": "18:00"}


@pytest.fixture(autouse=True)
def fresh_feeds(settings: Settings) -> None:
    """These tests follow a feed as its game moves on: every request builds it afresh (the
    feeds' cache is tested in tests/moderator/test_rate_limits.py)."""
    settings.CALENDAR_CACHE_SECONDS = 0


def berlin_game(gm: User | None = None, title: str = "Berlin nights") -> Game:
    return started_game(
        now=SATURDAY,
        players=3,
        gm=gm,
        title=title,
        time_zone="Europe/Berlin",
        schedule_spec=DAILY_18,
    )


def events(ics: str) -> list[dict[str, str]]:
    """The VEVENTs of a calendar, each as {property: value} (unfolded)."""
    lines = ics.replace("\r\n ", "").split("\r\n")
    found: list[dict[str, str]] = []
    current: dict[str, str] | None = None
    for line in lines:
        if line == "BEGIN:VEVENT":
            current = {}
        elif line == "END:VEVENT":
            assert current is not None
            found.append(current)
            current = None
        elif current is not None and ":" in line and not line.startswith(("BEGIN:", "END:")):
            name, value = line.split(":", 1)
            current.setdefault(name, value)
    return found


def feed(client: Client, seat: Seat) -> str:
    response = client.get(access.calendar_url(seat).removeprefix("http://127.0.0.1:8000"))
    assert response.status_code == 200
    assert response["Content-Type"] == "text/calendar; charset=utf-8"
    return response.content.decode()


def test_the_seats_feed_holds_its_deadline_before_and_after_the_change(
    client: Client, time_machine: TimeMachineFixture
) -> None:
    time_machine.move_to(SATURDAY, tick=False)
    game = berlin_game()
    ann = Seat.objects.get(game=game, position=0)
    (saturday,) = events(feed(client, ann))
    # 18:00 CEST (UTC+2) on Saturday is 16:00 UTC.
    assert (saturday["DTSTART"], saturday["DTEND"]) == ("20261024T154500Z", "20261024T160000Z")
    assert saturday["SUMMARY"] == "Berlin nights: postal turn 1\\, your order is due"
    assert "Sat 24 Oct 2026 18:00 CEST (16:00 UTC)" in saturday["DESCRIPTION"]

    # The step resolves; the next deadline, Sunday 18:00, is in winter time (UTC+1).
    time_machine.move_to(datetime(2026, 10, 24, 16, 0, 1, tzinfo=UTC), tick=False)
    postal.resolve_now(game.pk, now=datetime(2026, 10, 24, 16, 0, 1, tzinfo=UTC))
    (sunday,) = events(feed(client, ann))
    assert (sunday["DTSTART"], sunday["DTEND"]) == ("20261025T164500Z", "20261025T170000Z")
    assert "Sun 25 Oct 2026 18:00 CET (17:00 UTC)" in sunday["DESCRIPTION"]
    assert sunday["UID"] != saturday["UID"]


def test_each_report_carries_its_deadline_as_an_ics_file(time_machine: TimeMachineFixture) -> None:
    time_machine.move_to(SATURDAY, tick=False)
    game = berlin_game()
    report = OutboundEmail.objects.get(kind="report", to="bob@example.org", game=game)
    (attachment,) = report.attachments
    assert (attachment["filename"], attachment["mimetype"]) == (
        "deadline-postal-turn-1.ics",
        "text/calendar",
    )
    (event,) = events(attachment["content"])
    assert event["DTEND"] == "20261024T160000Z"
    bob = Seat.objects.get(game=game, position=1)
    assert f"your calendar feed of this game:\n  {access.calendar_url(bob)}\n" in report.text


def test_a_finished_or_rotated_seat_has_no_feed_to_show(
    client: Client, time_machine: TimeMachineFixture
) -> None:
    time_machine.move_to(SATURDAY, tick=False)
    game = berlin_game()
    ann = Seat.objects.get(game=game, position=0)
    url = access.calendar_url(ann).removeprefix("http://127.0.0.1:8000")
    postal.rotate_link(game.pk, position=0, now=SATURDAY)
    assert client.get(url).status_code == 404
    assert client.get("/calendar/1-0-aaaaaaaaaaaaaaaaaaaaaaaaaa.ics").status_code == 404
    assert client.get("/calendar/nonsense.ics").status_code == 404


def test_the_gms_feed_lists_the_open_deadline_of_each_of_their_games(
    client: Client, time_machine: TimeMachineFixture
) -> None:
    time_machine.move_to(SATURDAY, tick=False)
    gm = GMFactory.create()
    first = berlin_game(gm, "First")
    second = berlin_game(gm, "Second")
    berlin_game(title="Someone else's")
    url = access.gm_calendar_url(gm).removeprefix("http://127.0.0.1:8000")
    listed = events(client.get(url).content.decode())
    assert [event["SUMMARY"] for event in listed] == [
        "First: step 1 resolves",
        "Second: step 1 resolves",
    ]
    assert [event["URL"] for event in listed] == [
        f"http://127.0.0.1:8000/gm/{first.pk}/",
        f"http://127.0.0.1:8000/gm/{second.pk}/",
    ]
    gm.set_password("a new one")
    gm.save()
    assert client.get(url).status_code == 404


def test_long_lines_are_folded_at_75_octets_without_splitting_a_character() -> None:
    text = calendar.render(
        "ü" * 60,
        [
            calendar.Deadline(
                uid="u@x", when=SATURDAY, summary="é" * 50, description="d", url="http://x/"
            )
        ],
        now=SATURDAY,
    )
    for line in text.split("\r\n"):
        assert len(line.encode()) <= 75
    assert f"X-WR-CALNAME:{'ü' * 60}" in text.replace("\r\n ", "")


# --- the digest -------------------------------------------------------------------------


def owing_games(now: datetime) -> tuple[Game, Game]:
    first = started_game(now=now, players=2, title="First")
    second = started_game(now=now, players=3, title="Second")
    return first, second


def test_a_player_chooses_the_digest_on_their_seats_settings_page(
    client: Client, now: datetime, time_machine: TimeMachineFixture
) -> None:
    time_machine.move_to(now, tick=False)
    first, _ = owing_games(now)
    ann = Seat.objects.get(game=first, position=0)
    client.post(f"/p/{access.mint([ann], now=now)[0]}/")
    page = client.get(settings_page(first, 0)).content.decode()
    assert access.calendar_url(ann) in page
    response = client.post("/play/reminders/", {"seat": ann.pk, "digest": "1", "hour": "7"})
    assert (response.status_code, response["Location"]) == (302, settings_page(first, 0))
    assert reminders.choice_of(email_choices.saved_preference(ann)) == {"digest": "1", "hour": "7"}
    # Another seat's id, or no seat in the session, changes nothing.
    bob = Seat.objects.get(game=first, position=1)
    assert (
        client.post("/play/reminders/", {"seat": bob.pk, "digest": "0", "hour": "8"}).status_code
        == 404
    )
    assert (
        Client().post("/play/reminders/", {"seat": ann.pk, "digest": "0", "hour": "8"}).status_code
        == 404
    )
    bad = client.post("/play/reminders/", {"seat": ann.pk, "digest": "1", "hour": "25"})
    assert (bad.status_code, bad["Location"]) == (302, settings_page(first, 0))
    assert reminders.choice_of(email_choices.saved_preference(ann)) == {"digest": "1", "hour": "7"}
    # None at all: the page says what that means, and shows the choice.
    off = client.post(
        "/play/reminders/", {"seat": ann.pk, "digest": "off", "hour": "7"}, follow=True
    )
    html = off.content.decode()
    assert (
        "ann@example.org gets no reminders now, in any game: deadlines pass without warning. "
        "This page and your reports still show every deadline." in html
    )
    assert re.search(r'<input type="radio" name="digest" value="off"[^>]* checked', html)
    assert reminders.choice_of(email_choices.saved_preference(ann)) == {
        "digest": "off",
        "hour": "7",
    }
    late = first.steps.get().deadline - timedelta(hours=2)
    reminders.send_reminders(late)
    reminded = set(OutboundEmail.objects.filter(kind="reminder").values_list("to", flat=True))
    assert reminded == {"bob@example.org", "cy@example.org"}


def test_the_digest_replaces_the_reminders_and_comes_once_a_day(now: datetime) -> None:
    first, _ = owing_games(now)
    ann = Seat.objects.get(game=first, position=0)
    reminders.choose(ann, way=reminders.DIGEST, hour=8)
    late = first.steps.get().deadline - timedelta(hours=2)
    reminders.send_reminders(late)
    reminded = set(OutboundEmail.objects.filter(kind="reminder").values_list("to", flat=True))
    assert reminded == {"bob@example.org", "cy@example.org"}
    # 07:00 UTC: not yet the hour; 08:00: the digest, once, however often the sweep runs.
    day = datetime(2026, 11, 24, 7, 0, tzinfo=UTC)
    assert reminders.send_digests(day) == 0
    assert reminders.send_digests(day + timedelta(hours=1)) == 1
    assert reminders.send_digests(day + timedelta(hours=2)) == 0
    (digest,) = OutboundEmail.objects.filter(kind="digest")
    assert (digest.to, digest.subject) == ("ann@example.org", "Your orders due: 2 games")
    assert digest.text.index("First (you play ann)") < digest.text.index("Second (you play ann)")
    assert digest.text.count("Deadline: Wed 25 Nov 2026 18:00 UTC") == 2
    assert digest.text.count("/p/") == 2


def test_a_digest_lists_only_what_is_still_owed(now: datetime) -> None:
    first, second = owing_games(now)
    ann = Seat.objects.get(game=first, position=0)
    reminders.choose(ann, way=reminders.DIGEST, hour=8)
    for game in (first, second):
        game.refresh_from_db()
        state = CHOICE.state_from_json(game.state)
        text = CHOICE.canonical(state, 0, CHOICE.default(state, 0))
        postal.accept_order(game_id=game.pk, position=0, text=text, source="web", now=now)
    assert reminders.send_digests(datetime(2026, 11, 24, 9, 0, tzinfo=UTC)) == 0
    assert not OutboundEmail.objects.filter(kind="digest").exists()
