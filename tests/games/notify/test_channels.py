"""Channels that are known to work (games.notify.channels): a reminder's rung goes by a
channel that works (a push rung by email when the browser's pushes fail, an email rung by
push when the address bounces), the seat's settings page says how it is reached and sends a
test, and the GM sees the seats that nothing reaches."""

from __future__ import annotations

from datetime import datetime, timedelta

import pytest
from django.test import Client, override_settings

from games import postal
from games.models import PushDelivery, PushSubscription, Seat, Step
from games.notify import push, reminders
from games.notify.ladder import PUSH, Rung
from moderator.mail.models import OutboundEmail
from tests.factories import GMFactory, started_game
from tests.games.notify.test_push import PushService, browser_of, turn_on

pytestmark = pytest.mark.django_db


def seat(game_id: int, position: int) -> Seat:
    return Seat.objects.select_related("game").get(game_id=game_id, position=position)


def bounce(game_id: int, position: int, now: datetime) -> None:
    Seat.objects.filter(game_id=game_id, position=position).update(
        email_failing="bounced: mailbox full", email_failing_at=now
    )


def kinds_to_bob() -> list[str]:
    mails = OutboundEmail.objects.filter(kind="reminder", to="bob@example.org")
    pushes = PushDelivery.objects.filter(dedupe_key__startswith="push:reminder:")
    return [*(f"email {m.dedupe_key}" for m in mails), *(f"push {p.dedupe_key}" for p in pushes)]


def test_a_push_rung_goes_by_email_while_the_browsers_pushes_fail(
    service: PushService, now: datetime
) -> None:
    game = started_game(now=now, early_processing=False)
    turn_on(browser_of(game, 1, now), game, 1, service.browser("/push/bob"))
    PushSubscription.objects.update(
        last_sent_at=now - timedelta(hours=2), last_failed_at=now - timedelta(hours=1)
    )
    postal.choose_ladder(seat(game.pk, 1), [Rung(8, PUSH)], everywhere=False)
    deadline = Step.objects.get(game=game).deadline
    reminders.send_reminders(deadline - timedelta(hours=8))
    assert kinds_to_bob() == [f"email reminder:{game.pk}:1:1:8:{int(deadline.timestamp())}"]


def test_an_email_rung_goes_by_push_while_the_address_bounces(
    service: PushService, now: datetime
) -> None:
    game = started_game(now=now, early_processing=False)
    turn_on(browser_of(game, 1, now), game, 1, service.browser("/push/bob"))
    [subscription] = PushSubscription.objects.all()
    PushDelivery.objects.all().delete()
    bounce(game.pk, 1, now)
    deadline = Step.objects.get(game=game).deadline
    reminders.send_reminders(deadline - timedelta(hours=2))
    key = f"push:reminder:{game.pk}:1:1:2:{int(deadline.timestamp())}"
    assert kinds_to_bob() == [f"push {key}:{push.endpoint_key(subscription)}"]
    # Ann's address works: her reminder is an email.
    assert OutboundEmail.objects.filter(kind="reminder", to="ann@example.org").count() == 1


def test_an_address_that_bounces_with_no_browser_is_still_emailed(now: datetime) -> None:
    game = started_game(now=now, early_processing=False)
    bounce(game.pk, 1, now)
    deadline = Step.objects.get(game=game).deadline
    reminders.send_reminders(deadline - timedelta(hours=2))
    assert kinds_to_bob() == [f"email reminder:{game.pk}:1:1:2:{int(deadline.timestamp())}"]


def test_the_settings_page_says_how_the_seat_is_reached_and_tests_email(
    service: PushService, now: datetime
) -> None:
    game = started_game(now=now, early_processing=False)
    bob = browser_of(game, 1, now)
    OutboundEmail.objects.filter(to="bob@example.org").update(state="sent", sent_at=now)
    page = bob.get(f"/play/{game.pk}/1/settings/").content.decode()
    assert (
        "<strong>Email</strong> to bob@example.org: the last email of this game went out "
        "23 Nov 18:00 UTC."
    ) in page
    assert "<strong>Push</strong>: off: turn it on below." in page

    turn_on(bob, game, 1, service.browser("/push/bob"))
    bounce(game.pk, 1, now)
    page = bob.get(f"/play/{game.pk}/1/settings/").content.decode()
    assert (
        '<span class="bad">not arriving since 23 Nov 18:00 UTC: bounced: mailbox full</span> '
        "Reminders come by push meanwhile."
    ) in page
    assert "<strong>Push</strong>: 1 browser, below." in page

    answer = bob.post(f"/play/{game.pk}/1/email/test/", follow=True).content.decode()
    assert "The latest report is on its way to bob@example.org." in answer
    test = OutboundEmail.objects.get(dedupe_key__startswith="test:")
    assert (test.kind, test.to, test.subject) == (
        "report",
        "bob@example.org",
        f"{game.title} has started, your order is due Wed 25 Nov 2026 18:00 UTC",
    )
    with override_settings(RATES={"email-test": "1/h"}):
        limited = bob.post(f"/play/{game.pk}/1/email/test/", follow=True).content.decode()
    assert "Too many tests for now: try again in an hour." in limited


def test_the_gm_sees_the_seats_nothing_reaches(service: PushService, now: datetime) -> None:
    gm = GMFactory.create(is_staff=True)
    game = started_game(now=now, gm=gm, early_processing=False)
    turn_on(browser_of(game, 2, now), game, 2, service.browser("/push/cy"))
    bounce(game.pk, 1, now)
    bounce(game.pk, 2, now)
    client = Client()
    client.force_login(gm)
    page = client.get(f"/gm/{game.pk}/").content.decode()
    assert page.count("cannot be reached: no browser of theirs takes pushes either") == 1
    assert page.count("reached by push meanwhile") == 1
    assert "cannot be reached: 1 seat</span>" in page
