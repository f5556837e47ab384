"""The reserves of a first-come game (games.community.signups): once it starts it keeps taking
sign-ups as reserves until it ends; a seat that falls into civil disorder goes to the first
reserve through the handover (postal.replace_player), in the resolution's transaction; a
reserve withdraws by their link; those left when the game ends are told; those who had not
confirmed when the game started are told once."""

from __future__ import annotations

import re
from datetime import datetime, timedelta
from typing import Any

import pytest
from django.test import Client

from games import postal
from games.community import openings, signups
from games.engines import registry
from games.models import Game, GMAction, Order, Seat, SignUp
from moderator.mail.models import OutboundEmail
from tests.factories import without_footer
from tests.games.community.test_signups import (
    confirmed,
    gm_user,
    main_text,
    seated,
    signed,
    site,
    state_line,
    states,
    told,
    visitor,
    words,
)
from tests.games.playing import SHORT_CHOICE

pytestmark = pytest.mark.django_db

__all__ = ["site"]  # the sign-up tests' fixture: links in emails on the test server


def running(now: datetime, **kwargs: Any) -> Game:
    """A first-come Choice game of three that ann, bob and cy filled at ``now``; a seat
    that misses one turn falls into civil disorder."""
    settings: dict[str, Any] = {
        "early_processing": False,
        "missed": postal.MissedTurns(civil_disorder_after=1),
        **kwargs,
    }
    game = postal.create_game(
        gm=gm_user(),
        engine_key="choice",
        players=[],
        title="Open Choice",
        signup="first",
        seats_wanted=3,
        **settings,
    )
    for name in ("ann", "bob", "cy"):
        confirmed(game, name, now)
    game.refresh_from_db()
    assert game.status == "running"
    return game


def missing(game: Game, position: int) -> datetime:
    """Every seat but ``position`` sends its order for the open step, which is resolved at
    its deadline (returned)."""
    game.refresh_from_db()
    engine = registry.get(game.engine)
    step = game.steps.get(number=game.step_number)
    for owing in step.prompted_seats:
        if owing == position:
            continue
        game.refresh_from_db()
        state = engine.state_from_json(game.state)
        postal.accept_order(
            game_id=game.pk,
            position=owing,
            text=engine.canonical(state, owing, engine.default(state, owing)),
            source=Order.Source.WEB,
            now=step.opened_at,
            step_number=step.number,
        )
    assert postal.resolve_due_step(step.pk, now=step.deadline) is True
    game.refresh_from_db()
    return step.deadline


def text_of(name: str, subject_end: str) -> str:
    """The text of the latest email to name@example.org whose subject ends so, flowed."""
    row = (
        OutboundEmail.objects.filter(to=f"{name}@example.org", subject__endswith=subject_end)
        .order_by("id")
        .last()
    )
    assert row is not None
    return " ".join(without_footer(row.text).split())


# --- sign-ups of a running first-come game ------------------------------------------------------


def test_a_running_first_come_game_takes_sign_ups_as_reserves(now: datetime) -> None:
    game = running(now)
    assert signups.refusal(game, None) is None
    assert openings.takes_reserves(game)
    dan = signed(game, "dan", now)
    confirm_text = text_of("dan", "confirm your sign-up")
    assert (
        "The game has started and every seat is taken: confirming makes you a reserve. If a "
        "seat falls into civil disorder (its player missed too many turns in a row), the first "
        "reserve takes it and is emailed a link to "
        "it; until then nothing is needed from you, and the link of your sign-up lets you "
        "withdraw." in confirm_text
    )
    assert (
        "Keep this email: its link also shows your sign-up and lets you withdraw while you "
        "wait." in confirm_text
    )
    assert signups.confirm(dan, now=now).state == "waiting"
    confirmed(game, "eve", now + timedelta(minutes=1))

    assert states(game)[3:] == [("dan", "waiting"), ("eve", "waiting")]
    assert told("dan") == [
        ("signup-confirm", "Open Choice: confirm your sign-up"),
        ("signup", "Open Choice: you are a reserve"),
    ]
    assert text_of("eve", "you are a reserve").startswith(
        "Hello eve, Your sign-up is confirmed. Open Choice has started and every seat is taken: "
        "you are reserve number 2. If a seat falls into civil disorder (its player missed too many "
        "turns in a row), the first reserve takes it and is emailed a link to it; until then "
        "nothing is needed from you, and the link of your sign-up lets you withdraw."
    )
    assert seated(game) == [
        (0, "ann", "ann@example.org"),
        (1, "bob", "bob@example.org"),
        (2, "cy", "cy@example.org"),
    ]
    (listed,) = openings.open_games()
    assert (listed.pk, openings.reserve_count(listed)) == (game.pk, 2)


def test_the_waiting_list_at_the_start_stays_as_the_reserves(
    now: datetime, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A full first-come game whose start was refused keeps a waiting list; when it starts,
    the list is its reserves, told so."""
    game = postal.create_game(
        gm=gm_user(),
        engine_key="choice",
        players=[],
        title="Open Choice",
        signup="first",
        seats_wanted=2,
    )

    def refused(game_id: int, **kwargs: object) -> Game:
        raise postal.PostalError("the rules refuse these players")

    monkeypatch.setattr(postal, "start_game", refused)
    confirmed(game, "ann", now)
    confirmed(game, "bob", now)
    confirmed(game, "cy", now)
    monkeypatch.undo()
    signups.start(game.pk, now=now + timedelta(hours=1))

    assert states(game) == [("ann", "accepted"), ("bob", "accepted"), ("cy", "waiting")]
    assert told("cy")[-1] == ("signup", "Open Choice: the game started: you are a reserve")
    assert text_of("cy", "you are a reserve").startswith(
        "Hello cy, Open Choice has started with every seat taken: you stay on its list as "
        "reserve number 1. If a seat falls into civil disorder"
    )
    assert SignUp.objects.get(name="cy").decided_at is None


# --- a seat falls into civil disorder -----------------------------------------------------------


def test_the_first_reserve_takes_a_seat_that_falls_into_civil_disorder(now: datetime) -> None:
    game = running(now)
    eve = signed(game, "eve", now)  # signed up first, confirmed second
    confirmed(game, "dan", now + timedelta(minutes=1))
    signups.confirm(eve, now=now + timedelta(minutes=2))
    bob_link_version = Seat.objects.get(game=game, position=1).link_version

    at = missing(game, 1)

    seat = Seat.objects.get(game=game, position=1)
    assert (seat.name, seat.email, seat.civil_disorder_at, seat.missed_in_row) == (
        "dan",
        "dan@example.org",
        None,
        0,
    )
    assert seat.link_version == bob_link_version + 1
    assert list(
        SignUp.objects.filter(game=game).order_by("id").values_list("name", "state", "position")
    )[3:] == [("eve", "waiting", None), ("dan", "accepted", 1)]
    assert SignUp.objects.get(name="dan").decided_at == at
    deadline = game.steps.get(number=2).deadline
    assert told("dan")[-1] == (
        "welcome",
        f"Open Choice: welcome, seat 2 is yours, your order is due {deadline:%a %d %b %Y %H:%M} "
        "UTC",
    )
    welcome = OutboundEmail.objects.filter(to="dan@example.org", kind="welcome").get()
    # Their link, and the report of the step now open (``postal.replace_player``'s welcome).
    assert len(set(re.findall(r"http://testserver/p/([^/\s]+)/", welcome.text))) == 1
    assert welcome.text.startswith("Open Choice (Choice by post), postal turn 2\n\nHello dan,\n\n")
    assert (
        "Welcome to Open Choice: you were first on its list of reserves, and seat 2, which bob "
        "played until it fell into civil disorder, is yours now. The seat keeps everything it "
        "had in the game. Below are the rules"
    ) in " ".join(welcome.text.split())
    assert "reason" not in welcome.text
    assert told("bob")[-1] == ("replaced", "Open Choice: seat 2 has a new player")
    assert text_of("bob", "has a new player") == (
        "Hello bob, Your seat in Open Choice, seat 2, fell into civil disorder after missed "
        "deadlines, and dan, first on the game's list of reserves, plays it from now on. Your "
        "links to the game no longer work, and you get no more emails about it. Thank you for "
        "playing. To ask the GM about it, reply to this email."
    )
    # The step's report tells every player where the seat goes.
    report = OutboundEmail.objects.filter(to="ann@example.org", kind="report").order_by("id").last()
    assert report is not None
    assert (
        "bob has missed 1 turn in a row: the seat is in civil disorder and goes to the first "
        "reserve" in report.text
    )
    assert list(
        GMAction.objects.filter(game=game).values_list("kind", "words", "reason", "step_number")
    ) == [
        (
            "replace",
            "Reserve dan took seat 2 (civil disorder)",
            "the seat fell into civil disorder; the first reserve took it",
            2,
        )
    ]
    assert list(openings.offered_seats()) == []
    assert state_line(visitor().get(f"/open/confirm/{eve}/")) == (
        "You are reserve number 1. If a seat falls into civil disorder (its player missed too many "
        "turns in a row), the first reserve takes it and is emailed a link to it; until then "
        "nothing is needed from you, and the link of your sign-up lets you withdraw."
    )


def test_a_seat_in_civil_disorder_stays_so_without_a_reserve(now: datetime) -> None:
    game = running(now)
    missing(game, 1)
    seat = Seat.objects.get(game=game, position=1)
    assert (seat.name, seat.civil_disorder_at is not None) == ("bob", True)
    report = OutboundEmail.objects.filter(to="ann@example.org", kind="report").order_by("id").last()
    assert report is not None
    assert (
        "bob has missed 1 turn in a row: the seat is in civil disorder; the game goes on with "
        "its defaults" in report.text
    )
    assert list(GMAction.objects.filter(game=game)) == []
    # A reserve confirmed later takes the seat at once.
    confirmed(game, "dan", now + timedelta(days=3))
    seat.refresh_from_db()
    assert (seat.name, seat.email, seat.civil_disorder_at) == ("dan", "dan@example.org", None)
    assert [kind for kind, _ in told("dan")] == ["signup-confirm", "welcome"]
    assert states(game)[3:] == [("dan", "accepted")]


def test_a_seat_asked_for_by_a_sign_up_waiting_for_the_gm_is_not_given_to_a_reserve(
    now: datetime,
) -> None:
    game = running(now, missed=postal.MissedTurns(civil_disorder_after=1, offer_seats=True))
    missing(game, 1)
    confirmed(game, "zed", now, position=1)
    confirmed(game, "dan", now + timedelta(minutes=1))
    assert states(game)[3:] == [("zed", "waiting"), ("dan", "waiting")]
    assert seated(game)[1] == (1, "bob", "bob@example.org")
    assert told("dan")[-1] == ("signup", "Open Choice: you are a reserve")


def test_an_approved_game_has_no_reserves(now: datetime) -> None:
    game = postal.create_game(
        gm=gm_user(),
        engine_key="choice",
        players=[],
        title="Approved",
        signup="approve",
        seats_wanted=2,
        early_processing=False,
        missed=postal.MissedTurns(civil_disorder_after=1),
    )
    for name in ("ann", "bob", "cy"):
        confirmed(game, name, now)
    for name in ("ann", "bob"):
        signups.approve(game.pk, SignUp.objects.get(name=name).pk, now=now)
    signups.start(game.pk, now=now)
    game.refresh_from_db()
    assert not openings.takes_reserves(game)
    missing(game, 1)
    assert seated(game)[1] == (1, "bob", "bob@example.org")
    assert states(game) == [("ann", "accepted"), ("bob", "accepted"), ("cy", "waiting")]


# --- withdrawing, declining, the end ------------------------------------------------------------


def test_a_reserve_withdraws_by_their_link_and_leaves_the_list(now: datetime) -> None:
    game = running(now)
    dan = confirmed(game, "dan", now)
    confirmed(game, "eve", now + timedelta(minutes=1))
    page = visitor().get(f"/open/confirm/{dan}/")
    assert 'value="withdraw"' in main_text(page)
    response = visitor().post(f"/open/confirm/{dan}/", {"action": "withdraw"})
    assert response.status_code == 302
    assert states(game)[3:] == [("dan", "withdrawn"), ("eve", "waiting")]
    assert told("dan")[-1] == ("signup", "Open Choice: you withdrew")
    assert openings.waiting_place(SignUp.objects.get(name="eve")) == 1
    # A player of the game cannot withdraw: they ask the GM.
    ann = SignUp.objects.get(name="ann")
    with pytest.raises(postal.PostalError) as refused:
        signups.withdraw(postal_token(ann), now=now)
    assert refused.value.message == (
        "Open Choice has started: ask its GM (Greta Moss) to replace you"
    )


def postal_token(signup: SignUp) -> str:
    """A fresh link for ``signup`` (its emailed one is not kept in the clear)."""
    from moderator import links

    token = links.new_token()
    SignUp.objects.filter(pk=signup.pk).update(token_hash=links.digest(token))
    return token


def test_the_gm_declines_a_reserve(now: datetime) -> None:
    game = running(now)
    confirmed(game, "dan", now)
    dan = SignUp.objects.get(name="dan")
    rows = openings.gm_view(game, list(game.seats.all()), now).rows
    assert [(row.signup.name, row.approvable, row.declinable) for row in rows][3:] == [
        ("dan", False, True)
    ]
    signups.decline(game.pk, dan.pk, now=now)
    assert states(game)[3:] == [("dan", "declined")]
    assert told("dan")[-1] == ("signup", "Open Choice: the GM declined your sign-up")


def test_reserves_left_when_the_game_ends_are_told_once(now: datetime) -> None:
    game = running(now, options=SHORT_CHOICE)
    dan = confirmed(game, "dan", now)
    while game.status != "finished":
        step = game.steps.get(number=game.step_number)
        for position in step.prompted_seats:
            engine = registry.get(game.engine)
            game.refresh_from_db()
            state = engine.state_from_json(game.state)
            postal.accept_order(
                game_id=game.pk,
                position=position,
                text=engine.canonical(state, position, engine.default(state, position)),
                source=Order.Source.WEB,
                now=step.opened_at,
                step_number=step.number,
            )
        postal.resolve_due_step(step.pk, now=step.deadline)
        game.refresh_from_db()

    assert states(game)[3:] == [("dan", "waiting")]
    assert told("dan")[-1] == ("signup", "Open Choice: the game ended")
    assert [subject for _, subject in told("dan")].count("Open Choice: the game ended") == 1
    assert text_of("dan", "the game ended").startswith(
        "Hello dan, Open Choice has ended before a seat came to you as a reserve. Thank you "
        "for standing by; other open games are on the list."
    )
    assert state_line(visitor().get(f"/open/confirm/{dan}/")) == (
        "The game ended before a seat came to you as a reserve."
    )
    with pytest.raises(postal.PostalError) as refused:
        signups.withdraw(dan, now=now)
    assert refused.value.message == "Open Choice is over: there is nothing to withdraw"
    assert signups.refusal(game, None) == "Open Choice is over: it takes no more sign-ups"
    assert list(openings.open_games()) == []


def test_the_gms_page_lists_the_reserves_and_declines_one(now: datetime) -> None:
    game = running(now)
    confirmed(game, "dan", now)
    confirmed(game, "eve", now + timedelta(minutes=1))
    client = Client()
    client.force_login(game.gm)
    page = main_text(client.get(f"/gm/{game.pk}/"))
    section = page[page.index('<section id="signups">') : page.index('<section id="seats">')]
    assert words(re.findall(r'<p class="lead" id="reserving">(.*?)</p>', section)[0]) == (
        "Full and running: people still sign up as reserves on the game's sign-up page. A seat "
        "that falls into civil disorder goes to the first reserve at once."
    )
    assert re.findall(r'<ol id="waiting-list">(.*?)</ol>', section) == ["<li>dan</li><li>eve</li>"]
    assert 'aria-label="Decline dan"' in section
    assert 'aria-label="Decline ann"' not in section
    dan = SignUp.objects.get(name="dan")
    declined = client.post(f"/gm/{game.pk}/decline/", {"signup": dan.pk}, follow=True)
    assert [str(m) for m in declined.context["messages"]] == [
        "dan's sign-up is declined; they are told by email."
    ]
    assert states(game)[3:] == [("dan", "declined"), ("eve", "waiting")]
