"""A reminder ladder (games.notify.ladder): each player sets which channel reminds them and
when before a deadline, for all their seats or one; each rung goes once, the most urgent
when several are due, none once the order is in, and a push rung with no browser to push
to goes by email. The default is the game's: an email 24 and 2 hours before."""

from __future__ import annotations

import secrets
from datetime import datetime, timedelta

import pytest
from django.test import Client

from games import postal
from games.engines.choice.rules import ChoiceEngine
from games.models import EmailPreference, Game, PushDelivery, Seat, Step
from games.notify import ladder, push, reminders
from games.notify.ladder import EMAIL, PUSH, Rung
from games.postal import access
from moderator.mail.models import OutboundEmail
from tests.factories import started_game
from tests.games.notify.test_push import PushService, turn_on

pytestmark = pytest.mark.django_db

CHOICE = ChoiceEngine()


def browser_of(game: Game, position: int, now: datetime) -> Client:
    client = Client(REMOTE_ADDR=f"10.{secrets.randbelow(256)}.{secrets.randbelow(256)}.6")
    seat = Seat.objects.get(game=game, position=position)
    token = access.mint([seat], now=now)[position]
    assert client.post(f"/p/{token}/").status_code == 302
    return client


def seat(game: Game, position: int) -> Seat:
    return Seat.objects.select_related("game").get(game=game, position=position)


def reminded(to: str) -> list[str]:
    return list(
        OutboundEmail.objects.filter(kind="reminder", to=to)
        .order_by("id")
        .values_list("dedupe_key", flat=True)
    )


def pushed() -> list[str]:
    return list(PushDelivery.objects.order_by("id").values_list("dedupe_key", flat=True))


def test_a_ladder_of_push_then_email_sends_each_rung_once_by_its_channel(
    service: PushService, now: datetime
) -> None:
    game = started_game(now=now, early_processing=False)
    bob = browser_of(game, 1, now)
    turn_on(bob, game, 1, service.browser("/push/bob"))
    PushDelivery.objects.all().delete()
    postal.choose_ladder(seat(game, 1), [Rung(8, PUSH), Rung(2, EMAIL)], everywhere=True)
    step = Step.objects.get(game=game)
    deadline = step.deadline
    stamp = int(deadline.timestamp())
    key = push.endpoint_key(push.of_seat(seat(game, 1))[0])

    reminders.send_reminders(deadline - timedelta(hours=24))  # ann and cy: the game's 24 h
    assert reminded("bob@example.org") == [] and pushed() == []
    reminders.send_reminders(deadline - timedelta(hours=8))
    reminders.send_reminders(deadline - timedelta(hours=7))
    assert pushed() == [f"push:reminder:{game.pk}:1:1:8:{stamp}:{key}"]
    assert reminded("bob@example.org") == []
    reminders.send_reminders(deadline - timedelta(hours=2))
    reminders.send_reminders(deadline - timedelta(hours=1))
    assert reminded("bob@example.org") == [f"reminder:{game.pk}:1:1:2:{stamp}"]
    assert len(pushed()) == 1
    assert reminded("ann@example.org") == [
        f"reminder:{game.pk}:1:0:24:{stamp}",
        f"reminder:{game.pk}:1:0:2:{stamp}",
    ]

    push.send_batch(list(PushDelivery.objects.values_list("id", flat=True)), now=now)
    [got] = service.received
    assert got["payload"] == {
        "title": f"{game.title}: postal turn 1, your order is due Wed 25 Nov 2026 18:00 UTC",
        "body": "Postal turn: rounds 1-2: one line per round, e.g. W5 1+3 3+4",
        "url": f"/play/{game.pk}/1/",
        "tag": f"game-{game.pk}-seat-1",
    }


def test_a_push_rung_with_no_browser_goes_by_email(service: PushService, now: datetime) -> None:
    game = started_game(now=now, early_processing=False)
    postal.choose_ladder(seat(game, 1), [Rung(8, PUSH)], everywhere=False)
    deadline = Step.objects.get(game=game).deadline
    reminders.send_reminders(deadline - timedelta(hours=8))
    assert reminded("bob@example.org") == [f"reminder:{game.pk}:1:1:8:{int(deadline.timestamp())}"]
    assert pushed() == []


def test_no_rung_comes_once_the_order_is_in(now: datetime) -> None:
    game = started_game(now=now, early_processing=False)
    postal.choose_ladder(seat(game, 1), [Rung(12, EMAIL), Rung(1, EMAIL)], everywhere=False)
    deadline = Step.objects.get(game=game).deadline
    reminders.send_reminders(deadline - timedelta(hours=12))
    state = CHOICE.state_from_json(Game.objects.get(pk=game.pk).state)
    text = CHOICE.canonical(state, 1, CHOICE.default(state, 1))
    postal.accept_order(game_id=game.pk, position=1, text=text, source="email", now=now)
    reminders.send_reminders(deadline - timedelta(hours=1))
    assert reminded("bob@example.org") == [f"reminder:{game.pk}:1:1:12:{int(deadline.timestamp())}"]


def test_a_seats_own_ladder_wins_over_its_addresss_and_the_default_over_none(
    now: datetime,
) -> None:
    game = started_game(now=now)
    other = started_game(now=now)
    postal.choose_ladder(seat(game, 1), [Rung(48, EMAIL)], everywhere=True)
    postal.choose_ladder(seat(other, 1), [Rung(4, PUSH)], everywhere=False)
    preference = EmailPreference.objects.get(email="bob@example.org")
    assert ladder.of_seat(seat(game, 1), preference) == ([Rung(48, EMAIL)], "address")
    assert ladder.of_seat(seat(other, 1), preference) == ([Rung(4, PUSH)], "seat")
    assert ladder.of_seat(seat(game, 0), None) == ([Rung(24, EMAIL), Rung(2, EMAIL)], "game")
    # Chosen for all the seats again, it is every seat's: the seat's own is gone.
    postal.choose_ladder(seat(game, 1), [Rung(6, EMAIL)], everywhere=True)
    preference.refresh_from_db()
    assert ladder.of_seat(seat(other, 1), preference) == ([Rung(6, EMAIL)], "address")
    postal.choose_ladder(seat(game, 1), None, everywhere=True)
    preference.refresh_from_db()
    assert ladder.of_seat(seat(other, 1), preference) == ([Rung(24, EMAIL), Rung(2, EMAIL)], "game")


def test_a_ladder_is_at_most_four_rungs_of_the_offered_times() -> None:
    with pytest.raises(ladder.BadLadder, match=r"A ladder has at most 4 rungs\."):
        ladder.check([Rung(hours, EMAIL) for hours in (48, 24, 12, 6, 2)])
    with pytest.raises(ladder.BadLadder, match="Choose each rung's channel and time"):
        ladder.check([Rung(5, EMAIL)])
    assert ladder.parse([{"channel": "fax", "hours": 2}, {"channel": "email", "hours": -1}]) == []


def test_the_settings_page_sets_the_ladder_in_words(now: datetime) -> None:
    game = started_game(now=now)
    bob = browser_of(game, 1, now)
    page = bob.get(f"/play/{game.pk}/1/settings/").content.decode()
    assert (
        "The game's: <strong>an email 24 hours before, then an email 2 hours before</strong>."
    ) in page
    answer = bob.post(
        f"/play/{game.pk}/1/ladder/",
        {"scope": "all", "channel_0": "push", "hours_0": "8", "channel_1": "email", "hours_1": "2"},
        follow=True,
    ).content.decode()
    assert (
        "Reminders for all your seats: a push to my browsers 8 hours before, then an email 2 "
        "hours before."
    ) in answer
    assert "Yours, for all your seats: <strong>a push to my browsers 8 hours before" in answer
    assert '<option value="push" selected>' in answer

    seat_only = bob.post(
        f"/play/{game.pk}/1/ladder/",
        {"scope": "seat", "channel_0": "email", "hours_0": "0.5"},
        follow=True,
    ).content.decode()
    assert "Reminders for this seat: an email 30 minutes before." in seat_only
    assert "This seat's own: <strong>an email 30 minutes before</strong>." in seat_only

    bad = bob.post(
        f"/play/{game.pk}/1/ladder/",
        {"scope": "seat", "channel_0": "fax", "hours_0": "2"},
        follow=True,
    ).content.decode()
    assert "Select a valid choice. fax is not one of the available choices." in bad
    assert seat(game, 1).ladder == [{"channel": "email", "hours": 0.5}]

    back = bob.post(
        f"/play/{game.pk}/1/ladder/", {"scope": "seat", "default": "1"}, follow=True
    ).content.decode()
    assert "Reminders for this seat: a push to my browsers 8 hours before, then an email" in back
    assert seat(game, 1).ladder is None
