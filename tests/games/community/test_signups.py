"""Open games and sign-up (games.community.signups): people sign up on the list of open games,
confirm their address by the emailed link, take a seat first come first seated or wait for
the GM, withdraw, and the game starts when its last seat is taken or when the GM starts it;
seats in civil disorder are offered to a new player, whom the GM approves."""

from __future__ import annotations

import re
import uuid
from datetime import datetime, timedelta
from html import escape, unescape
from typing import Any

import pytest
from celery import current_app
from django.contrib.auth.models import User
from django.test import Client
from pytest_django.fixtures import DjangoCaptureOnCommitCallbacks, Settings

from games import postal
from games.community import openings, signups
from games.models import Game, Player, Seat, SignUp
from moderator import links
from moderator.mail.models import OutboundEmail
from tests.factories import GameFactory, GMFactory, new_game, started_game, without_footer
from tests.games.web.test_hidden import distinct_orders

pytestmark = pytest.mark.django_db

State = SignUp.State


@pytest.fixture(autouse=True)
def site(settings: Settings, now: datetime) -> None:
    """Links in emails on the test server; rate-limit counters of this test alone."""
    settings.SITE_URL = "http://testserver"
    settings.CACHES = {
        "default": {**settings.CACHES["default"], "KEY_PREFIX": f"test-{uuid.uuid4().hex}"}
    }


def gm_user(**kwargs: Any) -> User:
    return GMFactory.create(is_staff=True, first_name="Greta", last_name="Moss", **kwargs)


def open_game(
    seats: int = 3,
    mode: str = "first",
    invited: tuple[str, ...] = (),
    engine: str = "choice",
    gm: User | None = None,
    title: str = "Open Choice",
) -> Game:
    return new_game(
        engine,
        players=invited,
        gm=gm or gm_user(),
        title=title,
        signup=mode,
        seats_wanted=seats,
    )


def signed(game: Game, name: str, now: datetime, position: int | None = None) -> str:
    """``name`` signs up (as name@example.org); the token of the link emailed to them."""
    return signups.sign_up(
        game.pk, name=name, email=f"{name}@example.org", now=now, position=position
    ).token


def confirmed(game: Game, name: str, now: datetime, position: int | None = None) -> str:
    token = signed(game, name, now, position)
    signups.confirm(token, now=now)
    return token


def states(game: Game) -> list[tuple[str, str]]:
    return list(SignUp.objects.filter(game=game).order_by("id").values_list("name", "state"))


def seated(game: Game) -> list[tuple[int, str, str]]:
    return list(Seat.objects.filter(game=game).values_list("position", "name", "email"))


def told(name: str) -> list[tuple[str, str]]:
    """Every email to name@example.org, in order: (kind, subject)."""
    return list(
        OutboundEmail.objects.filter(to=f"{name}@example.org")
        .order_by("id")
        .values_list("kind", "subject")
    )


def first_report(title: str, at: datetime) -> tuple[str, str]:
    """The first report of a Choice game started at ``at`` (every seat owes an order)."""
    due = at + timedelta(hours=48)
    return ("report", f"{title} has started, your order is due {due:%a %d %b %Y %H:%M} UTC")


def status(game: Game) -> str:
    game.refresh_from_db()
    return str(game.status)


def refuse_to_start(monkeypatch: pytest.MonkeyPatch) -> None:
    """The game's rules refuse to start it (as an engine refuses options it cannot play)."""

    def refused(game_id: int, **kwargs: Any) -> Game:
        raise postal.PostalError("the rules refuse these players")

    monkeypatch.setattr(postal, "start_game", refused)


def main_text(response: Any) -> str:
    text = " ".join(response.content.decode().split())
    return text[text.index("<main>") + len("<main>") : text.index("</main>")]


def errors(response: Any) -> list[str]:
    """The messages of the page's form errors."""
    return re.findall(r'<ul class="errors"[^>]*><li>(.*?)</li>', main_text(response))


# --- creating an open game ----------------------------------------------------------------------


def test_an_open_game_is_created_recruiting_with_its_invited_players_in_the_first_seats() -> None:
    game = open_game(seats=4, invited=("ann",))
    assert (game.status, game.signup, game.seats_wanted) == ("recruiting", "first", 4)
    assert seated(game) == [(0, "ann", "ann@example.org")]
    empty = open_game(seats=2, mode="approve", title="Nobody invited")
    assert (empty.signup, empty.seats_wanted, seated(empty)) == ("approve", 2, [])


@pytest.mark.parametrize(
    ("seats", "invited", "message"),
    [
        (
            None,
            (),
            "Liar's Dice: classic takes 2 to 6 players: choose the number of seats between them",
        ),
        (
            7,
            (),
            "Liar's Dice: classic takes 2 to 6 players: choose the number of seats between them",
        ),
        (
            1,
            (),
            "Liar's Dice: classic takes 2 to 6 players: choose the number of seats between them",
        ),
        (
            2,
            ("ann", "bob"),
            "the 2 players you invite fill all 2 seats: leave a seat to sign up for, or let "
            "only the players you invite join",
        ),
    ],
)
def test_an_open_game_needs_seats_within_the_rules_and_one_left_to_sign_up_for(
    seats: int | None, invited: tuple[str, ...], message: str
) -> None:
    with pytest.raises(postal.PostalError) as refused:
        postal.create_game(
            gm=gm_user(),
            engine_key="liars-dice",
            title="Bad",
            players=[postal.Player(name, f"{name}@example.org") for name in invited],
            signup="first",
            seats_wanted=seats,
        )
    assert refused.value.message == message
    assert Game.objects.count() == 0


def test_an_invitation_only_game_still_needs_its_players() -> None:
    with pytest.raises(postal.PostalError) as refused:
        postal.create_game(gm=gm_user(), engine_key="liars-dice", title="Bad", players=[])
    assert refused.value.message == "Liar's Dice: classic takes 2 to 6 players, not 0"


# --- first come, first seated ------------------------------------------------------------------


def test_first_come_takes_the_seats_in_the_order_confirmed_and_the_last_seat_starts_the_game(
    now: datetime,
) -> None:
    game = open_game(seats=3, invited=("ann",))
    bob, cy = signed(game, "bob", now), signed(game, "cy", now)
    assert states(game) == [("bob", "unconfirmed"), ("cy", "unconfirmed")]
    signups.confirm(cy, now=now + timedelta(minutes=1))
    assert (status(game), states(game)) == (
        "recruiting",
        [("bob", "unconfirmed"), ("cy", "accepted")],
    )
    signups.confirm(bob, now=now + timedelta(minutes=2))

    assert status(game) == "running"
    assert seated(game) == [
        (0, "ann", "ann@example.org"),
        (1, "cy", "cy@example.org"),
        (2, "bob", "bob@example.org"),
    ]
    assert states(game) == [("bob", "accepted"), ("cy", "accepted")]
    assert told("cy") == [
        ("signup-confirm", "Open Choice: confirm your sign-up"),
        ("signup", "Open Choice: you have a seat"),
        first_report("Open Choice", now + timedelta(minutes=2)),
    ]
    assert told("ann") == [first_report("Open Choice", now + timedelta(minutes=2))]
    # Confirming again (a second tap) changes nothing.
    signups.confirm(bob, now=now + timedelta(minutes=3))
    assert len(told("bob")) == 3


def test_the_confirmation_email_is_urgent_and_its_link_is_stored_hashed(
    now: datetime,
    monkeypatch: pytest.MonkeyPatch,
    django_capture_on_commit_callbacks: DjangoCaptureOnCommitCallbacks,
) -> None:
    sent: dict[str, list[list[int]]] = {"mail.send_emails": [], "mail.send_urgent_emails": []}
    for name, batches in sent.items():
        monkeypatch.setattr(
            current_app.tasks[name],
            "delay",
            lambda batches=batches, **kw: batches.append(kw["outbound_ids"]),
        )
    game = open_game()
    with django_capture_on_commit_callbacks(execute=True):
        token = signed(game, "bob", now)
    (email,) = OutboundEmail.objects.all()
    assert sent == {"mail.send_emails": [], "mail.send_urgent_emails": [[email.pk]]}
    signup = SignUp.objects.get()
    assert signup.token_hash == links.digest(token) and token not in signup.token_hash
    assert (email.kind, email.to, email.game_id) == ("signup-confirm", "bob@example.org", game.pk)
    assert without_footer(email.text) == (
        "Hello bob,\n\n"
        'Someone, probably you, signed this address up to play Choice by post: "Open\n'
        'Choice". The GM is Greta Moss; deadlines every 48 hours (UTC).\n\n'
        "Confirm your sign-up with this link within 48 hours:\n"
        f"http://testserver/open/confirm/{token}/\n\n"
        "Confirming takes a seat while one is left; if the last one goes first, you join the\n"
        "waiting list.\n\n"
        "Keep this email: its link also shows your sign-up and lets you withdraw before\n"
        "the game starts. If you did not sign up, ignore this email: without the\n"
        "confirmation nothing happens.\n\n"
        f"The game: http://testserver/open/{game.public_id}/\n"
    )
    assert f'href="http://testserver/open/confirm/{token}/"' in email.html


# --- the waiting list, withdrawing, promotion --------------------------------------------------


def test_a_full_game_puts_the_next_on_the_waiting_list_and_a_freed_seat_goes_to_the_first(
    now: datetime, monkeypatch: pytest.MonkeyPatch
) -> None:
    game = open_game(seats=2)
    refuse_to_start(monkeypatch)
    dee = confirmed(game, "dee", now)
    confirmed(game, "eve", now + timedelta(minutes=1))
    game.refresh_from_db()
    assert (game.status, game.needs_gm) == (
        "recruiting",
        "every seat is taken, but the game could not start: the rules refuse these players",
    )
    assert openings.would_wait(game)
    confirmed(game, "fay", now + timedelta(minutes=2))
    confirmed(game, "gus", now + timedelta(minutes=3))
    assert states(game)[2:] == [("fay", "waiting"), ("gus", "waiting")]
    assert told("gus")[-1] == ("signup", "Open Choice: you are on the waiting list")
    gus_words = OutboundEmail.objects.filter(to="gus@example.org").order_by("id").last()
    assert gus_words is not None and "you are number 2 on the" in gus_words.text

    monkeypatch.undo()
    signups.withdraw(dee, now=now + timedelta(hours=1))

    assert states(game) == [
        ("dee", "withdrawn"),
        ("eve", "accepted"),
        ("fay", "accepted"),
        ("gus", "waiting"),
    ]
    assert status(game) == "running"
    assert seated(game) == [(0, "eve", "eve@example.org"), (1, "fay", "fay@example.org")]
    assert told("dee")[-1] == ("signup", "Open Choice: you withdrew")
    assert told("fay")[-2:] == [
        ("signup", "Open Choice: a seat came free: you have it"),
        first_report("Open Choice", now + timedelta(hours=1)),
    ]
    # The waiting list of a first-come game stays, as its reserves.
    assert told("gus")[-1] == ("signup", "Open Choice: the game started: you are a reserve")


def test_sign_ups_not_yet_confirmed_hear_that_the_game_started_lapsed_ones_do_not(
    now: datetime,
) -> None:
    game = open_game(seats=2)
    signed(game, "old", now - timedelta(hours=49))  # its link lapsed after 48 hours
    late = signed(game, "late", now)
    confirmed(game, "ann", now)
    confirmed(game, "bob", now + timedelta(minutes=1))

    assert status(game) == "running"
    assert told("late") == [
        ("signup-confirm", "Open Choice: confirm your sign-up"),
        ("signup", "Open Choice: the game started before you confirmed"),
    ]
    words = OutboundEmail.objects.filter(to="late@example.org").latest("id")
    assert " ".join(words.text.split("\n\n")[1].split()) == (
        "Open Choice has started: every seat was taken before you confirmed your sign-up. "
        "Confirming it with its link still makes you a reserve. If a seat falls into civil "
        "disorder (its player missed too many turns in a row), the first reserve takes it and is "
        "emailed a link to it; until then nothing is needed from you, and the link of your sign-up "
        "lets you withdraw."
    )
    assert told("old") == [("signup-confirm", "Open Choice: confirm your sign-up")]
    assert states(game)[:2] == [("old", "unconfirmed"), ("late", "unconfirmed")]
    # Confirming still makes a reserve, and the start is not told again.
    signups.confirm(late, now=now + timedelta(minutes=2))
    assert states(game)[1] == ("late", "waiting")
    assert told("late")[1:] == [
        ("signup", "Open Choice: the game started before you confirmed"),
        ("signup", "Open Choice: you are a reserve"),
    ]


def test_sign_ups_not_yet_confirmed_of_an_approved_game_hear_it_started_without_them(
    now: datetime,
) -> None:
    game = open_game(seats=2, mode="approve")
    late = signed(game, "late", now)
    confirmed(game, "ann", now)
    signups.approve(game.pk, SignUp.objects.get(name="ann").pk, now=now)
    signups.start(game.pk, now=now + timedelta(minutes=1))
    assert told("late") == [
        ("signup-confirm", "Open Choice: confirm your sign-up"),
        ("signup", "Open Choice: the game started before you confirmed"),
    ]
    words = OutboundEmail.objects.filter(to="late@example.org").latest("id")
    assert " ".join(words.text.split("\n\n")[1].split()) == (
        "Open Choice has started without you: the GM started it before you confirmed your "
        "sign-up, so it no longer counts and its link signs you up for nothing. Thank you for "
        "signing up; other open games are on the list."
    )
    with pytest.raises(postal.PostalError) as refused:
        signups.confirm(late, now=now + timedelta(minutes=2))
    assert refused.value.message == "Open Choice has started: it takes no more sign-ups"
    assert len(told("late")) == 2


def test_only_a_confirmed_sign_up_of_a_game_not_started_can_be_withdrawn(now: datetime) -> None:
    game = open_game(seats=2)
    ann = signed(game, "ann", now)
    with pytest.raises(postal.PostalError) as refused:
        signups.withdraw(ann, now=now)
    assert refused.value.message == (
        "there is no confirmed sign-up to withdraw: it is waiting for the email confirmation"
    )
    signups.confirm(ann, now=now)
    confirmed(game, "bob", now)
    assert status(game) == "running"
    with pytest.raises(postal.PostalError) as refused:
        signups.withdraw(ann, now=now)
    assert (
        refused.value.message == "Open Choice has started: ask its GM (Greta Moss) to replace you"
    )
    assert states(game) == [("ann", "accepted"), ("bob", "accepted")]


# --- the GM approves ------------------------------------------------------------------------


def test_in_an_approved_game_the_gm_gives_the_seats_and_starts_it(now: datetime) -> None:
    game = open_game(seats=3, mode="approve", invited=("ann",))
    for name in ("bob", "cy", "dee"):
        confirmed(game, name, now)
    assert states(game) == [("bob", "waiting"), ("cy", "waiting"), ("dee", "waiting")]
    assert told("bob")[-1] == ("signup", "Open Choice: your sign-up waits for the GM")
    ids = dict(SignUp.objects.values_list("name", "id"))

    signups.approve(game.pk, ids["dee"], now=now)
    signups.approve(game.pk, ids["bob"], now=now)
    # Every seat is taken: the game waits for its GM, who may still change their mind.
    assert status(game) == "recruiting"
    with pytest.raises(postal.PostalError) as refused:
        signups.approve(game.pk, ids["cy"], now=now)
    assert refused.value.message == "every seat is taken: decline a player first, or start the game"
    assert told("dee")[-1] == ("signup", "Open Choice: the GM gave you a seat")

    signups.decline(game.pk, ids["dee"], now=now)
    assert states(game) == [("bob", "accepted"), ("cy", "waiting"), ("dee", "declined")]
    assert told("dee")[-1] == ("signup", "Open Choice: the GM declined your sign-up")

    signups.start(game.pk, now=now + timedelta(hours=1))
    assert status(game) == "running"
    assert seated(game) == [(0, "ann", "ann@example.org"), (1, "bob", "bob@example.org")]
    assert told("cy")[-1] == ("signup", "Open Choice: the game started without you")
    assert told("bob")[-1] == first_report("Open Choice", now + timedelta(hours=1))


def test_the_gm_starts_with_at_least_the_fewest_players_the_rules_allow(now: datetime) -> None:
    game = open_game(seats=5, engine="liars-dice", title="Open Liar's Dice")
    confirmed(game, "ann", now)
    with pytest.raises(postal.PostalError) as refused:
        signups.start(game.pk, now=now)
    assert refused.value.message == "Liar's Dice: classic needs at least 2 players; 1 has a seat"
    assert (status(game), seated(game)) == ("recruiting", [])
    confirmed(game, "bob", now + timedelta(minutes=5))
    signups.start(game.pk, now=now + timedelta(hours=1))
    assert status(game) == "running"
    assert seated(game) == [(0, "ann", "ann@example.org"), (1, "bob", "bob@example.org")]


def test_closing_sign_ups_tells_the_waiting_list_and_keeps_the_seats(
    now: datetime, monkeypatch: pytest.MonkeyPatch
) -> None:
    game = open_game(seats=2, mode="approve")
    bob, _ = confirmed(game, "bob", now), confirmed(game, "cy", now)
    signups.approve(game.pk, SignUp.objects.get(name="bob").pk, now=now)
    assert signups.close(game.pk, now=now) == 1
    game.refresh_from_db()
    assert (game.status, game.signup) == ("recruiting", "")
    assert states(game) == [("bob", "accepted"), ("cy", "declined")]
    assert told("cy")[-1] == ("signup", "Open Choice: sign-ups are closed")
    assert list(openings.open_games()) == []
    with pytest.raises(postal.PostalError) as refused:
        signed(game, "dee", now)
    assert refused.value.message == "Open Choice is not open for sign-up"
    assert signups.withdraw(bob, now=now).state == "withdrawn"


# --- refusals ----------------------------------------------------------------------------------


def test_one_address_holds_one_live_sign_up_per_game_and_a_lapsed_one_frees_it(
    now: datetime, settings: Settings
) -> None:
    game = open_game(seats=3, invited=("ann",))
    signed(game, "bob", now)
    cases = [
        (
            "Bobby",
            "BOB@example.org",
            "BOB@example.org has already signed up for Open Choice: the link emailed to it "
            "confirms the sign-up or shows it (a link not used to confirm within 48 hours "
            "lapses; then the address may sign up again)",
        ),
        ("Annie", "ann@example.org", "ann@example.org already plays in Open Choice"),
        (
            "ANN",
            "other@example.org",
            "another player of Open Choice is already called 'ANN': choose another name",
        ),
        (
            "bob",
            "other@example.org",
            "another player of Open Choice is already called 'bob': choose another name",
        ),
        ("zed", "zed at example", "'zed at example' is not one email address"),
        ("z\ned", "zed@example.org", "the name must be a single line of text"),
        ("  ", "zed@example.org", "write the name you want to play under"),
    ]
    for name, email, message in cases:
        with pytest.raises(postal.PostalError) as refused:
            signups.sign_up(game.pk, name=name, email=email, now=now)
        assert refused.value.message == message
    assert states(game) == [("bob", "unconfirmed")]
    # Once its link lapsed, the address may sign up again.
    later = now + timedelta(hours=settings.SIGNUP_CONFIRM_HOURS)
    signups.sign_up(game.pk, name="bob", email="bob@example.org", now=later)
    assert states(game) == [("bob", "unconfirmed"), ("bob", "unconfirmed")]


def test_a_lapsed_link_confirms_nothing(now: datetime, settings: Settings) -> None:
    game = open_game()
    token = signed(game, "bob", now)
    later = now + timedelta(hours=settings.SIGNUP_CONFIRM_HOURS, seconds=1)
    with pytest.raises(signups.LinkExpired) as refused:
        signups.confirm(token, now=later)
    assert refused.value.message == (
        "this confirmation link expired 48 hours after the sign-up: sign up again"
    )
    assert states(game) == [("bob", "unconfirmed")]
    with pytest.raises(signups.SignUpNotFound):
        signups.confirm("no-such-token", now=now)


def test_a_started_game_takes_no_sign_up_nor_confirmation(now: datetime) -> None:
    """A game whose GM approves each player (a first-come one takes reserves)."""
    game = open_game(seats=2, mode="approve")
    late = signed(game, "zed", now)
    confirmed(game, "ann", now)
    confirmed(game, "bob", now)
    for name in ("ann", "bob"):
        signups.approve(game.pk, SignUp.objects.get(name=name).pk, now=now)
    signups.start(game.pk, now=now)
    assert status(game) == "running"
    with pytest.raises(postal.PostalError) as refused:
        signed(game, "cy", now)
    assert refused.value.message == "Open Choice has started: it takes no more sign-ups"
    with pytest.raises(postal.PostalError) as refused:
        signups.confirm(late, now=now)
    assert refused.value.message == "Open Choice has started: it takes no more sign-ups"
    assert states(game) == [("zed", "unconfirmed"), ("ann", "accepted"), ("bob", "accepted")]


# --- seats in civil disorder -----------------------------------------------------------------


def offering(now: datetime, disorder: tuple[int, ...] = (1,)) -> Game:
    """A running Choice game of ann, bob and cy offering the seats ``disorder``."""
    game = started_game(
        now=now,
        gm=gm_user(),
        early_processing=False,
        missed=postal.MissedTurns(offer_seats=True),
    )
    Seat.objects.filter(game=game, position__in=disorder).update(
        civil_disorder_at=now, missed_in_row=3
    )
    game.refresh_from_db()
    return game


def test_a_sign_up_for_a_seat_in_civil_disorder_approved_replaces_its_player(
    now: datetime,
) -> None:
    game = offering(now)
    zed = signed(game, "zed", now, position=1)
    signups.confirm(zed, now=now)
    confirmed(game, "yan", now, position=1)
    assert states(game) == [("zed", "waiting"), ("yan", "waiting")]
    assert told("zed")[-1] == ("signup", "Test Choice: your sign-up for seat 2 waits for the GM")
    before = Seat.objects.get(game=game, position=1)

    signups.approve(game.pk, SignUp.objects.get(name="zed").pk, now=now)

    seat = Seat.objects.get(game=game, position=1)
    assert (seat.name, seat.email, seat.civil_disorder_at, seat.missed_in_row) == (
        "zed",
        "zed@example.org",
        None,
        0,
    )
    assert seat.link_version == before.link_version + 1
    assert states(game) == [("zed", "accepted"), ("yan", "declined")]
    assert told("zed")[-2:] == [
        (
            "welcome",
            "Test Choice: welcome, seat 2 is yours, your order is due Wed 25 Nov 2026 18:00 UTC",
        ),
        ("signup", "Test Choice: you take over seat 2"),
    ]
    assert told("yan")[-1] == ("signup", "Test Choice: seat 2 went to another player")
    assert list(openings.offered_seats()) == []
    with pytest.raises(postal.PostalError) as refused:
        signed(game, "xia", now, position=1)
    assert refused.value.message == "seat 2 of Test Choice no longer looks for a new player"


def test_a_seat_no_longer_in_civil_disorder_is_not_given_away(now: datetime) -> None:
    game = offering(now)
    confirmed(game, "zed", now, position=1)
    Seat.objects.filter(game=game, position=1).update(civil_disorder_at=None)
    with pytest.raises(postal.PostalError) as refused:
        signups.approve(game.pk, SignUp.objects.get().pk, now=now)
    assert refused.value.message == (
        "seat 2 of Test Choice no longer looks for a new player: decline zed's sign-up"
    )
    assert seated(game)[1] == (1, "bob", "bob@example.org")
    assert states(game) == [("zed", "waiting")]


# --- the public pages ------------------------------------------------------------------------


def visitor(address: str = "198.51.100.7") -> Client:
    return Client(REMOTE_ADDR=address)


def post_signup(
    game: Game, name: str, email: str, client: Client | None = None, **extra: str
) -> Any:
    data = {"name": name, "email": email, "website": "", **extra}
    return (client or visitor()).post(f"/open/{game.public_id}/", data)


def words(html: str) -> str:
    """``html`` as text: tags dropped, white space collapsed."""
    text = " ".join(re.sub(r"<[^>]+>", " ", html).split())
    return unescape(text.replace(" ,", ",").replace(" .", "."))


def cards(response: Any) -> list[str]:
    """Each card of the list of open games, as text, without its rules in play."""
    page = main_text(response)
    page = re.sub(r"<details.*?</details>", "", page)
    return [
        words(card)
        for card in re.findall(r'<li class="way"[^>]*>(.*?)</li> ?(?=<li class="way"|</ul>)', page)
    ]


def test_the_list_shows_each_open_game_and_each_seat_offered_in_words(now: datetime) -> None:
    gm = gm_user()
    winter = postal.create_game(
        gm=gm,
        engine_key="liars-dice",
        title="Winter dice",
        players=[postal.Player("ann", "ann@example.org")],
        schedule_spec={"kind": "daily", "time": "18:00"},
        time_zone="Europe/Berlin",
        signup="first",
        seats_wanted=4,
    )
    confirmed(winter, "bob", now)
    signed(winter, "cy", now)  # not confirmed: holds no seat
    approved = open_game(seats=3, mode="approve", gm=gm, title="Approved Choice")
    Game.objects.filter(pk=approved.pk).update(bots_allowed=True)
    GameFactory.create(seats=2, gm=gm, title="Invitation only")
    started_open = open_game(seats=1, gm=gm, title="Quick one")
    confirmed(started_open, "dee", now)
    offering(now)

    response = visitor().get("/open/")

    assert response.status_code == 200
    assert cards(response) == [
        "Winter dice Liar's Dice: classic by post, run by Greta Moss "
        "Deadlines daily at 18:00 (Europe/Berlin); a step is resolved early once every order "
        "is in Seats left: 2 of 4 How players join: first come, first seated No bots: every "
        "seat is played by a person",
        "Approved Choice Choice by post, run by Greta Moss Deadlines every 48 hours (UTC); a "
        "step is resolved early once every order is in Seats left: 3 of 3 How players join: "
        "the GM approves each player Bots welcome: a seat may be played by a program, and says so",
        "Quick one Full, running: join as a reserve. No reserve waits yet. Choice by post, run "
        "by Greta Moss Deadlines every 48 hours (UTC); a step is resolved early once every "
        "order is in How players join: first come, first seated No bots: every seat is played "
        "by a person",
        "Test Choice, seat 2 Played by bob until now; step 1 of the game is under way. Choice "
        "by post, run by Greta Moss Deadlines every 48 hours (UTC) No bots: every seat is "
        "played by a person",
    ]
    assert re.findall(r"<dt>(.*?)</dt><dd>(.*?)</dd>", main_text(response))[:4] == [
        ("Dice per player", "5"),
        ("Wild ones", "yes"),
        ("Palifico", "yes"),
        ("Spot call (calza)", "no"),
    ]
    assert "cy@example.org" not in response.content.decode()


def test_the_list_costs_the_same_queries_whatever_the_number_of_games(now: datetime) -> None:
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    gm = gm_user()
    open_game(gm=gm, title="One")
    offering(now)
    with CaptureQueriesContext(connection) as few:
        visitor().get("/open/")
    for number in range(4):
        confirmed(open_game(gm=gm, title=f"More {number}"), f"p{number}", now)
    offering(now, disorder=(0, 2))
    with CaptureQueriesContext(connection) as many:
        assert len(cards(visitor().get("/open/"))) == 8
    assert len(many) == len(few)


def test_a_signed_in_player_finds_the_form_filled_in(now: datetime) -> None:
    game = open_game()
    user = User.objects.create_user("pat@example.org")
    Player.objects.create(user=user, email="pat@example.org", name="Pat", created_at=now)
    client = visitor()
    client.force_login(user)
    page = main_text(client.get(f"/open/{game.public_id}/"))
    assert re.findall(
        r'<input type="(?:text|email)" name="(name|email)" value="([^"]*)"', page
    ) == [
        ("name", "Pat"),
        ("email", "pat@example.org"),
    ]
    empty = main_text(visitor().get(f"/open/{game.public_id}/"))
    assert re.findall(r'<input type="(?:text|email)" name="(name|email)" value=', empty) == []


def test_signing_up_emails_a_confirmation_link_and_says_to_check_the_email(now: datetime) -> None:
    game = open_game()
    response = post_signup(game, "bob", " bob@example.org ")
    assert response.status_code == 200
    assert words(main_text(response)).startswith(
        "Check your email We emailed a confirmation link to bob@example.org. Open it within 48 "
        "hours and press “Confirm my sign-up”: nothing counts until you do. Confirming takes a "
        "seat in “Open Choice” while one is left."
    )
    assert states(game) == [("bob", "unconfirmed")]
    assert told("bob") == [("signup-confirm", "Open Choice: confirm your sign-up")]
    assert "/open/confirm/" not in response.content.decode()


def test_a_full_game_says_before_the_confirmation_that_it_puts_you_on_the_waiting_list(
    now: datetime, monkeypatch: pytest.MonkeyPatch
) -> None:
    game = open_game(seats=1)
    refuse_to_start(monkeypatch)
    confirmed(game, "ann", now)
    page = words(main_text(visitor().get(f"/open/{game.public_id}/")))
    assert (
        "Every seat is taken. Signing up puts you on the waiting list: if a seat comes free "
        "before the game starts, the first on the list takes it."
    ) in page
    sent = words(main_text(post_signup(game, "bob", "bob@example.org")))
    assert "Every seat is taken now: confirming puts you on the waiting list." in sent
    (email,) = OutboundEmail.objects.filter(kind="signup-confirm", to="bob@example.org")
    assert "Every seat is taken now: confirming puts you on the waiting list." in email.text
    token = re.findall(r"/open/confirm/([^/\s]+)/", email.text)[0]
    confirm_page = words(main_text(visitor().get(f"/open/confirm/{token}/")))
    assert "Every seat is taken now: confirming puts you on the waiting list." in confirm_page


@pytest.mark.parametrize(
    ("name", "email", "status", "message"),
    [
        (
            "bob",
            "bob at example",
            400,
            "That is not an email address: write it as name@example.org.",
        ),
        ("", "bob@example.org", 400, "Write the name you want to play under."),
        (
            "ann",
            "zed@example.org",
            409,
            "Another player of Open Choice is already called 'ann': choose another name.",
        ),
        ("zed", "ANN@example.org", 409, "ANN@example.org already plays in Open Choice."),
    ],
)
def test_bad_input_gets_a_clear_message_and_writes_nothing(
    now: datetime, name: str, email: str, status: int, message: str
) -> None:
    game = open_game(invited=("ann",))
    response = post_signup(game, name, email)
    assert response.status_code == status
    assert errors(response) == [escape(message)]
    assert (SignUp.objects.count(), OutboundEmail.objects.count()) == (0, 0)


def test_a_second_sign_up_of_an_address_is_refused_and_changes_nothing(now: datetime) -> None:
    game = open_game()
    post_signup(game, "bob", "bob@example.org")
    response = post_signup(game, "bobby", "Bob@Example.org")
    assert response.status_code == 409
    assert errors(response) == [
        "Bob@Example.org has already signed up for Open Choice: the link emailed to it "
        "confirms the sign-up or shows it (a link not used to confirm within 48 hours lapses; "
        "then the address may sign up again)."
    ]
    assert states(game) == [("bob", "unconfirmed")]
    assert OutboundEmail.objects.count() == 1


def test_a_started_game_refuses_sign_ups_and_writes_nothing(now: datetime) -> None:
    game = open_game(seats=1, mode="approve")
    confirmed(game, "ann", now)
    signups.approve(game.pk, SignUp.objects.get(name="ann").pk, now=now)
    signups.start(game.pk, now=now)
    before = (SignUp.objects.count(), OutboundEmail.objects.count())
    page = visitor().get(f"/open/{game.public_id}/")
    assert page.status_code == 200
    assert "<form" not in main_text(page)
    response = post_signup(game, "bob", "bob@example.org")
    assert response.status_code == 409
    assert re.findall(
        r'<div role="alert" class="alert" id="refusal"> <p><strong>(.*?)</strong>',
        main_text(response),
    ) == ["Open Choice has started: it takes no more sign-ups."]
    assert (SignUp.objects.count(), OutboundEmail.objects.count()) == before
    assert visitor().get("/open/no-such-game/").status_code == 404


def test_a_robot_filling_the_hidden_field_is_answered_and_nothing_is_written(now: datetime) -> None:
    game = open_game()
    response = post_signup(game, "bot", "bot@example.org", website="http://spam.example")
    assert response.status_code == 200
    assert "Check your email" in main_text(response)
    assert (SignUp.objects.count(), OutboundEmail.objects.count()) == (0, 0)


def test_sign_ups_are_limited_per_address_and_per_client(now: datetime, settings: Settings) -> None:
    settings.RATES = {**settings.RATES, "signup-email": "2/h", "signup-address": "3/h"}
    games = [open_game(title=f"Game {number}") for number in range(4)]
    assert [
        post_signup(g, "bob", "bob@example.org", visitor(f"198.51.100.{n}")).status_code
        for n, g in enumerate(games[:3])
    ] == [200, 200, 429]
    assert [
        post_signup(g, f"p{n}", f"p{n}@example.org").status_code for n, g in enumerate(games)
    ] == [200, 200, 200, 429]
    limited = post_signup(games[3], "cy", "cy@example.org")
    assert errors(limited) == [
        "Too many sign-ups came for this address, or from your connection, in the last hour. "
        "Nothing was written; try again in an hour."
    ]
    assert SignUp.objects.count() == 5


# --- the sign-up's own page ------------------------------------------------------------------


def state_line(response: Any) -> str:
    return words(re.findall(r'<p class="lead" id="state">(.*?)</p>', main_text(response))[0])


def test_the_link_shows_a_button_and_only_its_post_confirms(now: datetime) -> None:
    game = open_game()
    token = signed(game, "bob", now)
    client = visitor()
    page = client.get(f"/open/confirm/{token}/")
    assert page.status_code == 200
    assert re.findall(r"<h1>(.*?)</h1>", main_text(page)) == ["Confirm your sign-up"]
    assert 'name="action" value="confirm"' in main_text(page)
    assert states(game) == [("bob", "unconfirmed")] and len(told("bob")) == 1

    confirmed_page = client.post(f"/open/confirm/{token}/", {"action": "confirm"}, follow=True)
    assert confirmed_page.redirect_chain == [(f"/open/confirm/{token}/", 302)]
    assert state_line(confirmed_page) == (
        "You have a seat. The game starts when every seat is taken, or when the GM starts it; "
        "your first turn report comes by email then."
    )
    assert states(game) == [("bob", "accepted")]

    withdrawn = client.post(f"/open/confirm/{token}/", {"action": "withdraw"}, follow=True)
    assert state_line(withdrawn) == "You withdrew this sign-up."
    assert states(game) == [("bob", "withdrawn")]
    assert told("bob")[-1] == ("signup", "Open Choice: you withdrew")


def test_an_unknown_or_lapsed_link_says_so_and_changes_nothing(
    now: datetime, settings: Settings, time_machine: Any
) -> None:
    game = open_game()
    token = signed(game, "bob", now)
    for method in ("get", "post"):
        unknown = getattr(visitor(), method)("/open/confirm/not-a-token/", {"action": "confirm"})
        assert unknown.status_code == 404
        assert re.findall(r"<h1>(.*?)</h1>", main_text(unknown)) == [
            "This sign-up link is not valid"
        ]
    time_machine.move_to(
        now + timedelta(hours=settings.SIGNUP_CONFIRM_HOURS, minutes=1), tick=False
    )
    lapsed = visitor().get(f"/open/confirm/{token}/")
    assert lapsed.status_code == 410
    assert re.findall(r"<h1>(.*?)</h1>", main_text(lapsed)) == [
        "This confirmation link has expired"
    ]
    refused = visitor().post(f"/open/confirm/{token}/", {"action": "confirm"})
    assert refused.status_code == 409
    assert re.findall(r'id="refusal"> ?<p><strong>(.*?)</strong>', main_text(refused)) == [
        "This confirmation link expired 48 hours after the sign-up: sign up again."
    ]
    assert states(game) == [("bob", "unconfirmed")] and len(told("bob")) == 1


def test_confirming_for_a_game_that_started_meanwhile_is_refused(now: datetime) -> None:
    game = open_game(seats=1, mode="approve")
    late = signed(game, "bob", now)
    confirmed(game, "ann", now)
    signups.approve(game.pk, SignUp.objects.get(name="ann").pk, now=now)
    signups.start(game.pk, now=now)
    page = visitor().get(f"/open/confirm/{late}/")
    assert "Open Choice has started: it takes no more sign-ups." in main_text(page)
    assert 'value="confirm"' not in main_text(page)
    refused = visitor().post(f"/open/confirm/{late}/", {"action": "confirm"})
    assert refused.status_code == 409
    assert states(game) == [("bob", "unconfirmed"), ("ann", "accepted")]
    assert visitor().post(f"/open/confirm/{late}/", {"action": "dance"}).status_code == 409


def test_the_link_of_a_sign_up_left_waiting_says_the_game_started_without_them(
    now: datetime,
) -> None:
    game = open_game(seats=2, mode="approve")
    ann, bob = confirmed(game, "ann", now), confirmed(game, "bob", now)
    signups.approve(game.pk, SignUp.objects.get(name="ann").pk, now=now)
    signups.start(game.pk, now=now)
    assert state_line(visitor().get(f"/open/confirm/{bob}/")) == (
        "The game started without you: no seat came free on the waiting list."
    )
    assert state_line(visitor().get(f"/open/confirm/{ann}/")) == (
        "You play in this game: it has started, and your first turn report, with the link to "
        "your seat, came by email."
    )


# --- the GM panel ----------------------------------------------------------------------------

NEW_CHOICE = "/gm/new/choice/standard/"
NEW_GAME = {
    "title": "Open Autumn Choice",
    "option_rolls_per_turn": "1",
    "option_end_threshold": "8",
    "option_tiebreak": "shared",
    "option_round_cap": "200",
    "time_zone": "UTC",
    "schedule": "every 48 hours",
    "signup": "first",
    "seats_wanted": "3",
    "players": "",
}


@pytest.fixture
def gm() -> User:
    return gm_user()


@pytest.fixture
def gm_client(gm: User) -> Client:
    client = Client()
    client.force_login(gm)
    return client


def flashed(response: Any) -> list[str]:
    return [str(message) for message in response.context["messages"]]


def test_the_gm_opens_a_game_with_no_player_invited(gm_client: Client, gm: User) -> None:
    response = gm_client.post(NEW_CHOICE, NEW_GAME, follow=True)
    game = Game.objects.get()
    assert (game.gm, game.status, game.signup, game.seats_wanted) == (gm, "recruiting", "first", 3)
    assert seated(game) == []
    assert flashed(response) == [
        f"Open Autumn Choice is created and open for sign-up at "
        f"http://testserver/open/{game.public_id}/."
    ]
    assert "Start the game" not in main_text(response)
    assert "Invite the players" not in main_text(response)


@pytest.mark.parametrize(
    ("change", "field", "message"),
    [
        (
            {"seats_wanted": ""},
            "seats_wanted",
            "say how many seats the game has: Choice takes 1 to 20 players",
        ),
        ({"seats_wanted": "21"}, "seats_wanted", "Choice takes 1 to 20 players, not 21"),
        (
            {"seats_wanted": "2", "players": "ann <ann@example.org>\nbob <bob@example.org>"},
            "players",
            "the 2 players you invite fill all 2 seats: leave a seat to sign up for, or let "
            "only the players you invite join",
        ),
        (
            {"signup": "", "seats_wanted": "3"},
            "players",
            "name the players: Choice takes 1 to 20 players; or open the game for sign-up",
        ),
        (
            {"signup": "later"},
            "signup",
            "Select a valid choice. later is not one of the available choices.",
        ),
    ],
)
def test_the_new_game_form_says_what_an_open_game_lacks(
    gm_client: Client, change: dict[str, str], field: str, message: str
) -> None:
    response = gm_client.post(NEW_CHOICE, NEW_GAME | change)
    assert response.status_code == 200
    assert response.context["form"].errors == {field: [message]}
    assert Game.objects.count() == 0


def test_invited_players_of_an_open_game_take_the_first_seats(gm_client: Client) -> None:
    gm_client.post(NEW_CHOICE, NEW_GAME | {"players": "ann <ann@example.org>"})
    game = Game.objects.get()
    assert seated(game) == [(0, "ann", "ann@example.org")]
    assert openings.seats(game) == openings.Seats(wanted=3, invited=1, accepted=0)


def test_the_gm_page_shows_the_sign_ups_and_the_gm_approves_declines_and_starts(
    gm_client: Client, gm: User, now: datetime
) -> None:
    game = open_game(seats=3, mode="approve", invited=("ann",), gm=gm)
    for name in ("bob", "cy", "dee"):
        confirmed(game, name, now)
    signed(game, "eve", now)
    ids = dict(SignUp.objects.values_list("name", "id"))
    page = main_text(gm_client.get(f"/gm/{game.pk}/"))
    section = page[page.index('<section id="signups">') : page.index('<section id="seats">')]
    assert words(re.findall(r'<p class="lead" id="seats-taken">(.*?)</p>', section)[0]) == (
        "Seats taken: 1 of 3 (1 invited, 0 signed up). The game is open for sign-up: open: I "
        "approve each player."
    )
    rows = re.findall(r'<tr id="signup-(\d+)">(.*?)</tr>', section)
    assert [(int(pk), words(row)) for pk, row in rows] == [
        (
            ids["bob"],
            "bob No games played here yet. bob@example.org on the waiting list "
            "Mon 23 Nov 2026 18:00 UTC Approve Decline",
        ),
        (
            ids["cy"],
            "cy No games played here yet. cy@example.org on the waiting list "
            "Mon 23 Nov 2026 18:00 UTC Approve Decline",
        ),
        (
            ids["dee"],
            "dee No games played here yet. dee@example.org on the waiting list "
            "Mon 23 Nov 2026 18:00 UTC Approve Decline",
        ),
        (
            ids["eve"],
            "eve No games played here yet. eve@example.org waiting for the email confirmation "
            "not yet",
        ),
    ]
    assert re.findall(r'<ol id="waiting-list">(.*?)</ol>', section) == [
        "<li>bob</li><li>cy</li><li>dee</li>"
    ]
    assert "Start now with 1 player" in section

    approved = gm_client.post(f"/gm/{game.pk}/approve/", {"signup": ids["cy"]}, follow=True)
    assert flashed(approved) == ["cy has a seat; they are told by email."]
    declined = gm_client.post(f"/gm/{game.pk}/decline/", {"signup": ids["bob"]}, follow=True)
    assert flashed(declined) == ["bob's sign-up is declined; they are told by email."]
    assert states(game) == [
        ("bob", "declined"),
        ("cy", "accepted"),
        ("dee", "waiting"),
        ("eve", "unconfirmed"),
    ]
    other = open_game(title="Another", gm=gm)
    stranger = SignUp.objects.get(
        pk=signups.sign_up(other.pk, name="zed", email="zed@example.org", now=now).signup.pk
    )
    wrong = gm_client.post(f"/gm/{game.pk}/approve/", {"signup": stranger.pk}, follow=True)
    assert flashed(wrong) == ["Sign-up: that is not a sign-up of this game"]
    started_page = gm_client.post(f"/gm/{game.pk}/start/", follow=True)
    assert flashed(started_page) == ["The game has started; the first reports are on their way."]
    assert seated(game) == [(0, "ann", "ann@example.org"), (1, "cy", "cy@example.org")]
    assert told("dee")[-1] == ("signup", "Open Choice: the game started without you")


def test_a_gm_closes_sign_ups_from_the_game_page(
    gm_client: Client, gm: User, now: datetime
) -> None:
    game = open_game(gm=gm)
    closed = gm_client.post(f"/gm/{game.pk}/close-signups/", follow=True)
    assert flashed(closed) == ["Sign-ups are closed: the game left the list of open games."]
    again = gm_client.post(f"/gm/{game.pk}/close-signups/", follow=True)
    assert flashed(again) == ["Open Choice is not open for sign-up"]
    game.refresh_from_db()
    assert game.signup == ""


def test_another_gms_game_answers_404(gm_client: Client, now: datetime) -> None:
    game = open_game(seats=2, mode="approve")
    confirmed(game, "bob", now)
    response = gm_client.post(f"/gm/{game.pk}/approve/", {"signup": SignUp.objects.get().pk})
    assert response.status_code == 404
    assert states(game) == [("bob", "waiting")]


def test_the_gm_approves_a_replacement_from_the_game_page(
    gm_client: Client, gm: User, now: datetime
) -> None:
    game = offering(now)
    Game.objects.filter(pk=game.pk).update(gm=gm)
    confirmed(game, "zed", now, position=1)
    page = main_text(gm_client.get(f"/gm/{game.pk}/"))
    assert "Offered to a new player on the" in page and "seat 2 (bob)" in page
    response = gm_client.post(
        f"/gm/{game.pk}/approve/", {"signup": SignUp.objects.get().pk}, follow=True
    )
    assert flashed(response) == [
        "zed takes over seat 2; their link is on its way, and the other sign-ups for the seat "
        "are told."
    ]
    assert seated(game)[1] == (1, "zed", "zed@example.org")


# --- hidden information ---------------------------------------------------------------------


def test_the_sign_up_page_of_a_running_game_shows_no_seats_private_data(now: datetime) -> None:
    """The page offering a seat shows the board as everybody sees it: no seat's sealed order
    (the offered seat's own neither), as test_hidden checks each seat's pages."""
    for seed in range(8):
        game = started_game(now=now, seed=bytes([seed]) * 32, gm=gm_user(), early_processing=False)
        found = distinct_orders(game)
        if found is not None:
            break
    assert found is not None, "none of the seeds gives each seat a choice of its own"
    secrets: list[str] = []
    for position, picked in found.items():
        text = "\n".join(f"{number}: {choice.text()}" for number, choice in picked)
        postal.accept_order(game_id=game.pk, position=position, text=text, source="web", now=now)
        secrets += [text, *text.splitlines(), *(choice.text() for _, choice in picked)]
    Game.objects.filter(pk=game.pk).update(offer_seats=True)
    Seat.objects.filter(game=game, position=1).update(civil_disorder_at=now)

    pages = [visitor().get(f"/open/{game.public_id}/"), visitor().get("/open/")]
    token = signed(game, "zed", now, position=1)
    pages.append(visitor().get(f"/open/confirm/{token}/"))
    assert [page.status_code for page in pages] == [200, 200, 200]
    seen = "\n".join(page.content.decode() for page in pages)
    seen += "".join(
        email.text + email.html for email in OutboundEmail.objects.filter(to="zed@example.org")
    )
    # The public board is there (every seat's name and score), the sealed orders are not.
    assert "The game as everybody sees it" in seen and ">cy<" in seen
    for secret in secrets:
        assert secret not in seen and escape(secret) not in seen, secret
    for seat in Seat.objects.filter(game=game):
        assert seat.email not in seen


def test_a_sign_up_left_waiting_by_the_start_is_not_declined_after_it(now: datetime) -> None:
    game = open_game(seats=2, mode="approve")
    confirmed(game, "ann", now)
    confirmed(game, "bob", now)
    signups.approve(game.pk, SignUp.objects.get(name="ann").pk, now=now)
    signups.start(game.pk, now=now)
    with pytest.raises(postal.PostalError) as refused:
        signups.decline(game.pk, SignUp.objects.get(name="bob").pk, now=now)
    assert refused.value.message == (
        "Open Choice has started: bob was told it started without them"
    )
    assert told("bob")[-1] == ("signup", "Open Choice: the game started without you")
    game.refresh_from_db()
    rows = openings.gm_view(game, list(game.seats.all()), now).rows
    assert [(row.signup.name, row.approvable, row.declinable) for row in rows] == [
        ("ann", False, False),
        ("bob", False, False),
    ]


def test_a_gm_choosing_among_sign_ups_sees_how_reliably_each_has_played(
    gm_client: Client, gm: User, now: datetime
) -> None:
    earlier = started_game(now=now, players=2)
    step = earlier.steps.get(number=1)
    postal.resolve_due_step(step.pk, now=step.deadline)  # ann and bob miss a turn
    game = open_game(seats=3, mode="approve", gm=gm)
    confirmed(game, "bob", now)
    page = main_text(gm_client.get(f"/gm/{game.pk}/"))
    row = re.findall(r'<tr id="signup-\d+">(.*?)</tr>', page)[0]
    assert words(row).startswith(
        "bob 1 game played · 0 finished · 1 running · 0 abandoned · missed 1 of 1 turn (100%) "
        "bob@example.org"
    )


def test_the_gms_decision_is_emailed_in_words_with_the_games_links(now: datetime) -> None:
    game = open_game(seats=2, mode="approve")
    confirmed(game, "bob", now)
    signups.approve(game.pk, SignUp.objects.get().pk, now=now)
    email = OutboundEmail.objects.filter(to="bob@example.org").order_by("id").last()
    assert email is not None
    assert (email.kind, email.subject, email.reply_to) == (
        "signup",
        "Open Choice: the GM gave you a seat",
        game.gm.email,
    )
    assert without_footer(email.text) == (
        "Hello bob,\n\n"
        "Greta Moss, the GM, gave you a seat. The game starts when every seat is taken,\n"
        "or when the GM starts it; your first turn report, with the link to your seat,\n"
        "comes by email then.\n\n"
        'The game: "Open Choice", Choice by post, run by Greta Moss; deadlines every 48\n'
        "hours (UTC).\n"
        f"  http://testserver/open/{game.public_id}/\n"
        "Your sign-up: the link in the email that asked you to confirm it.\n"
        "Every open game: http://testserver/open/\n"
    )


def test_a_full_approved_game_says_a_seat_must_come_free_first(now: datetime) -> None:
    game = open_game(seats=2, mode="approve", invited=("ann",))
    confirmed(game, "bob", now)
    signups.approve(game.pk, SignUp.objects.get().pk, now=now)
    full = (
        "Every seat is taken now: the GM can give you one only if a seat comes free before the "
        "game starts."
    )
    assert full in words(main_text(visitor().get(f"/open/{game.public_id}/")))
    assert full in words(main_text(post_signup(game, "cy", "cy@example.org")))
    (email,) = OutboundEmail.objects.filter(kind="signup-confirm", to="cy@example.org")
    assert " ".join(full.split()) in " ".join(email.text.split())
    roomy = open_game(seats=2, mode="approve", title="Not full")
    assert full not in words(main_text(visitor().get(f"/open/{roomy.public_id}/")))
