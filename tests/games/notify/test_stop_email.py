"""Stopping email in one click (RFC 8058): step reports, reminders and the digests carry
List-Unsubscribe (the site's address and a mailto: of the inbound address) and
List-Unsubscribe-Post; a mail provider's POST, with no cookie and no form token, stops
that email; a GET asks first; a mail to the mailto: does the same and gets no answer.
Nothing else changes: orders, the record and the seat's page stay as they were."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta
from email import message_from_bytes, policy
from email.message import EmailMessage
from html import escape

import pytest
from django.test import Client
from pytest_django.fixtures import Settings
from time_machine import TimeMachineFixture

from games import postal, tasks
from games.engines.choice.rules import ChoiceEngine
from games.models import EmailPreference, Game, Order, Seat
from games.notify import digests, reminders, reports
from games.postal import access
from moderator.mail import building
from moderator.mail.models import InboundMessage, OutboundEmail
from tests.factories import seat_page, settings_page, started_game
from tests.games.notify.test_replies import SECRET, auth, post_postmark, postmark_payload
from tests.games.playing import play_choice_step

pytestmark = pytest.mark.django_db

CHOICE = ChoiceEngine()
ONE_CLICK = "List-Unsubscribe=One-Click"


@pytest.fixture(autouse=True)
def site(settings: Settings, time_machine: TimeMachineFixture, now: datetime) -> None:
    time_machine.move_to(now, tick=False)
    settings.SITE_URL = "https://games.example.org"
    settings.INBOUND_ADDRESS = "orders@in.example.org"


def seat(game: Game, position: int) -> Seat:
    return Seat.objects.get(game=game, position=position)


def sent(row: OutboundEmail) -> EmailMessage:
    """The email as the recipient's mail program reads it."""
    message = message_from_bytes(
        building.email_message(row).message().as_bytes(), policy=policy.default
    )
    assert isinstance(message, EmailMessage)
    return message


def stop_links(row: OutboundEmail) -> tuple[str, str, str]:
    """(the https address, the mailto: address, List-Unsubscribe-Post) of ``row``."""
    message = sent(row)
    links = re.findall(r"<([^>]+)>", str(message["List-Unsubscribe"]))
    assert len(links) == 2 and links[1].endswith("?subject=stop")
    return (
        links[0],
        links[1].removeprefix("mailto:").removesuffix("?subject=stop"),
        str(message["List-Unsubscribe-Post"]),
    )


def one_click(url: str) -> int:
    """The mail provider's POST: no cookie, no CSRF token, the RFC's one body."""
    client = Client(enforce_csrf_checks=True)
    path = url.removeprefix("https://games.example.org")
    response = client.post(path, ONE_CLICK, content_type="application/x-www-form-urlencoded")
    return response.status_code


def test_a_step_report_carries_the_one_click_headers_and_a_receipt_none(now: datetime) -> None:
    game = started_game(now=now, early_processing=False)
    report = OutboundEmail.objects.get(kind="report", to="bob@example.org")
    url, address, post = stop_links(report)
    token = access.stop_token(seat(game, 1), "reports")
    assert url == f"https://games.example.org/email/stop/reports/{token}/"
    assert address == f"orders+stop-reports-{token}@in.example.org"
    assert post == ONE_CLICK
    assert sent(report)["Auto-Submitted"] == "auto-generated"
    play_choice_step(game, now)
    assert tasks.write_receipts() == 3
    receipt = OutboundEmail.objects.filter(kind="receipt", to="bob@example.org").get()
    assert (sent(receipt)["List-Unsubscribe"], sent(receipt)["Auto-Submitted"]) == (
        None,
        "auto-generated",
    )


def test_one_click_stops_the_seats_reports_and_nothing_else(now: datetime) -> None:
    game = started_game(now=now, early_processing=False)
    url, _, _ = stop_links(OutboundEmail.objects.get(kind="report", to="bob@example.org"))
    before = (Game.objects.get(pk=game.pk).state, Order.objects.count())
    assert one_click(url) == 200
    assert seat(game, 1).reports == "none"
    assert (seat(game, 0).reports, seat(game, 2).reports) == ("", "")
    assert (Game.objects.get(pk=game.pk).state, Order.objects.count()) == before
    play_choice_step(game, now + timedelta(hours=1))
    step_two = OutboundEmail.objects.filter(
        kind="report", dedupe_key__startswith=f"report:{game.pk}:2:"
    )
    assert sorted(step_two.values_list("to", flat=True)) == ["ann@example.org", "cy@example.org"]
    # Clicked again (a provider retries): the same answer, nothing more changes.
    assert one_click(url) == 200
    assert seat(game, 1).reports == "none"


def test_the_seat_page_still_shows_every_report_after_the_stop(now: datetime) -> None:
    game = started_game(now=now, early_processing=False)
    url, _, _ = stop_links(OutboundEmail.objects.get(kind="report", to="bob@example.org"))
    assert one_click(url) == 200
    play_choice_step(game, now + timedelta(hours=1))
    client = Client()
    token = access.mint([seat(game, 1)], now=now)[1]
    assert client.post(f"/p/{token}/").status_code == 302
    html = client.get(seat_page(game, 1)).content.decode()
    # Step 1's report, which bob got by email no more, is on the page.
    history = html.split('id="history"')[1].split("</section>")[0]
    assert re.findall(r"<h3>(.*?)</h3>", history) == ["Postal turn 1, resolved"]
    told = reports.report_events(Game.objects.get(pk=game.pk), 1)
    latest = html.split('id="report-all"')[1].split("</details>")[0]
    assert told and re.findall(r"<li>(.*?)</li>", latest, re.S) == [escape(t) for t in told]
    settings = client.get(settings_page(game, 1)).content.decode()
    assert re.search(r'<input type="radio" name="reports" value="none"[^>]* checked', settings)


def test_a_get_asks_first_and_changes_nothing(now: datetime) -> None:
    game = started_game(now=now, early_processing=False)
    url, _, _ = stop_links(OutboundEmail.objects.get(kind="report", to="bob@example.org"))
    response = Client().get(url.removeprefix("https://games.example.org"))
    assert response.status_code == 200
    html = response.content.decode()
    assert "This stops the reports of this seat by email." in html
    assert '<button type="submit">Stop them</button>' in html
    assert seat(game, 1).reports == ""


@pytest.mark.parametrize(
    "path",
    [
        "/email/stop/reports/1-1-aaaaaaaaaaaaaaaaaaaaaaaaaa/",
        "/email/stop/everything/1-1-aaaaaaaaaaaaaaaaaaaaaaaaaa/",
    ],
)
def test_a_forged_token_or_stop_is_not_found_and_changes_nothing(now: datetime, path: str) -> None:
    game = started_game(now=now, early_processing=False)
    response = Client(enforce_csrf_checks=True).post(
        path, ONE_CLICK, content_type="application/x-www-form-urlencoded"
    )
    assert response.status_code == 404
    assert list(Seat.objects.filter(game=game).values_list("reports", flat=True)) == ["", "", ""]


def test_a_token_of_one_stop_does_not_do_another(now: datetime) -> None:
    game = started_game(now=now, early_processing=False)
    token = access.stop_token(seat(game, 1), "reports")
    assert one_click(f"https://games.example.org/email/stop/reminders/{token}/") == 404
    assert not EmailPreference.objects.exists()


def test_a_replaced_players_old_emails_stop_nothing(now: datetime) -> None:
    game = started_game(now=now, early_processing=False)
    url, _, _ = stop_links(OutboundEmail.objects.get(kind="report", to="bob@example.org"))
    Seat.objects.filter(pk=seat(game, 1).pk).update(link_version=2)
    assert one_click(url) == 404
    assert seat(game, 1).reports == ""


def test_a_reminder_stops_every_reminder_of_the_address(now: datetime) -> None:
    game = started_game(now=now, early_processing=False)
    assert reminders.send_reminders(now + timedelta(hours=24)) == 3
    reminder = OutboundEmail.objects.get(kind="reminder", to="bob@example.org")
    url, address, _ = stop_links(reminder)
    token = access.stop_token(seat(game, 1), "reminders")
    assert url == f"https://games.example.org/email/stop/reminders/{token}/"
    assert address == f"orders+stop-reminders-{token}@in.example.org"
    assert one_click(url) == 200
    preference = EmailPreference.objects.get(email="bob@example.org")
    assert (preference.no_reminders, preference.digest) == (True, False)
    assert reminders.send_reminders(now + timedelta(hours=46)) == 2
    reminded = OutboundEmail.objects.filter(kind="reminder").values_list("to", flat=True)
    assert sorted(reminded) == [
        "ann@example.org",
        "ann@example.org",
        "bob@example.org",
        "cy@example.org",
        "cy@example.org",
    ]
    # Nor a digest of them, were the address to have chosen one before.
    EmailPreference.objects.filter(pk=preference.pk).update(digest=True)
    eight = datetime(2026, 11, 25, 8, 0, tzinfo=UTC)  # bob's digest hour, in his zone
    assert reminders.send_digests(eight) == 0
    EmailPreference.objects.filter(pk=preference.pk).update(no_reminders=False)
    assert reminders.send_digests(eight) == 1
    assert seat(game, 1).reports == ""


def test_the_daily_digest_stops_the_reports_of_every_seat_of_the_address(now: datetime) -> None:
    first, second = (
        started_game(now=now, early_processing=False),
        started_game(now=now, early_processing=False),
    )
    postal.choose_reports(first.pk, position=1, choice="digest", everywhere=True)
    play_choice_step(first, now + timedelta(hours=1))
    assert digests.send_daily_digests(now + timedelta(days=1)) == 1
    daily = OutboundEmail.objects.get(kind="daily")
    url, _, _ = stop_links(daily)
    assert "/email/stop/all-reports/" in url
    assert one_click(url) == 200
    assert list(
        Seat.objects.filter(email="bob@example.org")
        .order_by("game")
        .values_list("reports", flat=True)
    ) == ["none", "none"]
    assert EmailPreference.objects.get(email="bob@example.org").reports == "none"
    assert second.pk != first.pk


def test_a_mail_to_the_mailto_stops_the_email_and_gets_no_answer(
    now: datetime, settings: Settings
) -> None:
    settings.ANYMAIL = {"WEBHOOK_SECRET": SECRET}
    game = started_game(now=now, early_processing=False)
    _, address, _ = stop_links(OutboundEmail.objects.get(kind="report", to="bob@example.org"))
    outbox = OutboundEmail.objects.count()
    payload = postmark_payload(address, "This message was automatically generated by Gmail.")
    assert post_postmark(payload, **auth(SECRET)).status_code == 200
    row = InboundMessage.objects.get()
    assert (row.state, row.order_id) == ("stopped", None)
    assert row.note == "bob gets no reports of Test Choice by email"
    assert seat(game, 1).reports == "none"
    assert OutboundEmail.objects.count() == outbox
    assert not Order.objects.exists()
