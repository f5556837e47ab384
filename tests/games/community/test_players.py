"""Players signing in by email (games.community.players): a sign-in's link and code, each
single use,
valid SIGNIN_MINUTES, a code voided by CODE_ATTEMPTS wrong tries; the Player and user an
address signs in as, never a GM's; a player's games grouped; their settings saved."""

from __future__ import annotations

import hashlib
import re
from datetime import datetime, timedelta
from typing import Any

import pytest
from django.contrib.auth.models import User
from pytest_django.fixtures import Settings

from games import postal
from games.community import players
from games.models import EmailPreference, Game, Order, Player, Seat, SignIn
from games.notify import email_choices, reminders
from moderator.mail import tasks as mail_tasks
from moderator.mail.models import OutboundEmail
from tests.factories import SEED, GameFactory, GMFactory, new_game, started_game, without_footer

pytestmark = pytest.mark.django_db

CODE_ATTEMPTS = players.CODE_ATTEMPTS
BROWSER = "the-browser-that-asked"  # the id a browser's cookie holds while it signs in


def sent_to(address: str) -> OutboundEmail:
    return OutboundEmail.objects.filter(kind="signin", to=address).latest("id")


def code_of(email: OutboundEmail) -> str:
    match = re.search(r"^  (\d{6})$", email.text, re.MULTILINE)
    assert match is not None, email.text
    return match[1]


def token_of(email: OutboundEmail) -> str:
    match = re.search(r"/signin/([^/\s]+)/", email.text)
    assert match is not None, email.text
    return match[1]


# --- asking -------------------------------------------------------------------------------


def test_asking_stores_only_digests_and_emails_the_link_and_the_code(
    now: datetime,
    settings: Settings,
    published: Any,
    django_capture_on_commit_callbacks: Any,
) -> None:
    settings.SITE_URL = "https://games.example.org"
    urgent = published(mail_tasks.send_urgent_emails)
    with django_capture_on_commit_callbacks(execute=True):
        asked = players.ask(
            "  Ann@Example.ORG ", browser=BROWSER, now=now, next_path="/me/settings/"
        )
    sign_in = SignIn.objects.get()
    assert (sign_in.email, sign_in.created_at, sign_in.next) == (
        "ann@example.org",
        now,
        "/me/settings/",
    )
    assert sign_in.expires_at == now + timedelta(minutes=15)
    assert sign_in.token_hash != asked.token and asked.token not in sign_in.token_hash
    assert asked.code not in sign_in.code_hash and len(sign_in.code_hash) == 64
    assert re.fullmatch(r"\d{6}", asked.code)
    email = OutboundEmail.objects.get(kind="signin")
    assert (email.to, email.subject, email.game_id) == (
        "Ann@Example.ORG",
        "Your sign-in link and code",
        None,
    )
    link = f"https://games.example.org/signin/{asked.token}/"
    assert without_footer(email.text) == (
        "Hello,\n\n"
        "Someone, probably you, asked to sign in to the moderator with this address. To sign\n"
        'in, open this link and press "Sign in":\n\n'
        f"  {link}\n\n"
        "or type this code on the page where you asked:\n\n"
        f"  {asked.code}\n\n"
        "The link and the code work once, for 15 minutes. Keep them to yourself:\n"
        "they open your games without a password. If you did not ask for this email, you\n"
        "can ignore it: nobody is signed in until the link or the code is used.\n"
    )
    assert f'href="{link}"' in email.html and f">{asked.code}</p>" in email.html
    assert urgent == [{"outbound_ids": [email.pk]}]  # sent urgent, like lost links


def test_every_address_gets_a_sign_in_whether_it_plays_or_not(now: datetime) -> None:
    GameFactory.create(seats=2)
    players.ask("ann@example.org", browser=BROWSER, now=now)
    players.ask("nobody@example.org", browser=BROWSER, now=now)
    assert sorted(OutboundEmail.objects.values_list("to", flat=True)) == [
        "ann@example.org",
        "nobody@example.org",
    ]


def test_the_validity_is_the_setting_in_minutes(now: datetime, settings: Settings) -> None:
    settings.SIGNIN_MINUTES = 3
    asked = players.ask("ann@example.org", browser=BROWSER, now=now)
    assert asked.sign_in.expires_at == now + timedelta(minutes=3)
    assert "for 3 minutes" in OutboundEmail.objects.get().text


def test_a_next_path_too_long_to_keep_is_dropped(now: datetime) -> None:
    asked = players.ask("ann@example.org", browser=BROWSER, now=now, next_path="/" + "a" * 300)
    assert asked.sign_in.next == ""


# --- the link ---------------------------------------------------------------------------------


def test_the_link_signs_in_once_and_its_page_changes_nothing(now: datetime) -> None:
    asked = players.ask("ann@example.org", browser=BROWSER, now=now)
    assert players.pending(asked.token, now=now).pk == asked.sign_in.pk
    assert SignIn.objects.get().used_at is None
    player, sign_in = players.by_link(asked.token, now=now + timedelta(minutes=1))
    assert (player.email, sign_in.pk) == ("ann@example.org", asked.sign_in.pk)
    assert SignIn.objects.get().used_at == now + timedelta(minutes=1)
    for check in (players.pending, players.by_link):
        with pytest.raises(players.SignInRefused) as refused:
            check(asked.token, now=now + timedelta(minutes=2))
        assert refused.value.reason == players.USED
    # The code of a used sign-in signs in nobody either.
    with pytest.raises(players.SignInRefused) as refused:
        players.by_code(
            "ann@example.org", asked.code, browser=BROWSER, now=now + timedelta(minutes=2)
        )
    assert refused.value.reason == players.USED


def test_the_link_works_until_it_expires_and_not_at_that_instant(now: datetime) -> None:
    asked = players.ask("ann@example.org", browser=BROWSER, now=now)
    end = now + timedelta(minutes=15)
    assert players.pending(asked.token, now=end - timedelta(seconds=1))
    for check in (players.pending, players.by_link):
        with pytest.raises(players.SignInRefused) as refused:
            check(asked.token, now=end)
        assert refused.value.reason == players.EXPIRED
    assert SignIn.objects.get().used_at is None
    assert not Player.objects.exists()


@pytest.mark.parametrize("token", ["", "x", "a" * 43, "a" * 500])
def test_an_unknown_link_signs_in_nobody(now: datetime, token: str) -> None:
    players.ask("ann@example.org", browser=BROWSER, now=now)
    for check in (players.pending, players.by_link):
        with pytest.raises(players.SignInRefused) as refused:
            check(token, now=now)
        assert refused.value.reason == players.UNKNOWN
    assert not Player.objects.exists()


# --- the code ---------------------------------------------------------------------------------


def wrong(code: str) -> str:
    return f"{(int(code) + 1) % 10**6:06d}"


def test_the_code_signs_in_once_typed_with_the_address_in_any_case(now: datetime) -> None:
    asked = players.ask("ann@example.org", browser=BROWSER, now=now)
    spaced = f"{asked.code[:3]} {asked.code[3:]}"
    player, sign_in = players.by_code(" ANN@example.org", spaced, browser=BROWSER, now=now)
    assert (player.email, sign_in.pk, sign_in.used_at) == ("ann@example.org", asked.sign_in.pk, now)
    with pytest.raises(players.SignInRefused) as refused:
        players.by_code("ann@example.org", asked.code, browser=BROWSER, now=now)
    assert refused.value.reason == players.USED
    with pytest.raises(players.SignInRefused) as refused:
        players.by_link(asked.token, now=now)
    assert refused.value.reason == players.USED


def test_wrong_codes_count_and_the_fifth_voids_the_sign_in_link_and_all(now: datetime) -> None:
    asked = players.ask("ann@example.org", browser=BROWSER, now=now)
    left = []
    for _ in range(4):
        with pytest.raises(players.SignInRefused) as refused:
            players.by_code("ann@example.org", wrong(asked.code), browser=BROWSER, now=now)
        assert refused.value.reason == players.WRONG_CODE
        left.append(refused.value.attempts_left)
    assert left == [4, 3, 2, 1]
    assert SignIn.objects.get().attempts == 4
    with pytest.raises(players.SignInRefused) as refused:
        players.by_code("ann@example.org", wrong(asked.code), browser=BROWSER, now=now)
    assert (refused.value.reason, refused.value.attempts_left) == (players.VOID, 0)
    assert SignIn.objects.get().attempts == 5
    # The right code now, and the link: void too; nothing signed in, nothing counted more.
    with pytest.raises(players.SignInRefused) as refused:
        players.by_code("ann@example.org", asked.code, browser=BROWSER, now=now)
    assert refused.value.reason == players.VOID
    with pytest.raises(players.SignInRefused) as refused:
        players.by_link(asked.token, now=now)
    assert refused.value.reason == players.VOID
    assert (SignIn.objects.get().attempts, SignIn.objects.get().used_at) == (5, None)
    assert not Player.objects.exists()


def test_the_right_code_after_four_wrong_ones_signs_in(now: datetime) -> None:
    asked = players.ask("ann@example.org", browser=BROWSER, now=now)
    for _ in range(4):
        with pytest.raises(players.SignInRefused):
            players.by_code("ann@example.org", wrong(asked.code), browser=BROWSER, now=now)
    player, _ = players.by_code("ann@example.org", asked.code, browser=BROWSER, now=now)
    assert player.email == "ann@example.org"


def test_a_code_that_is_no_code_counts_as_a_wrong_one(now: datetime) -> None:
    players.ask("ann@example.org", browser=BROWSER, now=now)
    with pytest.raises(players.SignInRefused) as refused:
        players.by_code("ann@example.org", "12345", browser=BROWSER, now=now)
    assert refused.value.reason == players.WRONG_CODE
    assert SignIn.objects.get().attempts == 1


def test_the_code_of_an_earlier_email_still_signs_in(now: datetime) -> None:
    first = players.ask("ann@example.org", browser=BROWSER, now=now)
    second = players.ask("ann@example.org", browser=BROWSER, now=now + timedelta(minutes=1))
    assert first.code != second.code or first.token != second.token
    _, sign_in = players.by_code(
        "ann@example.org", first.code, browser=BROWSER, now=now + timedelta(minutes=2)
    )
    assert sign_in.pk == first.sign_in.pk
    # The later one is still there, for its link or its code.
    assert players.pending(second.token, now=now + timedelta(minutes=2))


def test_a_wrong_code_counts_on_every_waiting_sign_in_of_the_address(now: datetime) -> None:
    first = players.ask("ann@example.org", browser=BROWSER, now=now)
    second = players.ask("ann@example.org", browser=BROWSER, now=now)
    players.ask("bob@example.org", browser=BROWSER, now=now)
    guess = next(f"{n:06d}" for n in range(3) if f"{n:06d}" not in {first.code, second.code})
    with pytest.raises(players.SignInRefused):
        players.by_code("ann@example.org", guess, browser=BROWSER, now=now)
    assert dict(SignIn.objects.values_list("email", "attempts").order_by("email", "id")[:3]) == {
        "ann@example.org": 1,
        "bob@example.org": 0,
    }


@pytest.mark.parametrize("elsewhere", ["a-strangers-browser", ""])
def test_codes_typed_in_another_browser_count_nothing_and_sign_in_nobody(
    now: datetime, elsewhere: str
) -> None:
    asked = players.ask("ann@example.org", browser=BROWSER, now=now)
    for typed in [*(wrong(asked.code) for _ in range(CODE_ATTEMPTS + 2)), asked.code]:
        with pytest.raises(players.SignInRefused) as refused:
            players.by_code("ann@example.org", typed, browser=elsewhere, now=now)
        assert refused.value.reason == players.NONE_WAITING
    assert (SignIn.objects.get().attempts, Player.objects.count()) == (0, 0)
    player, sign_in = players.by_code("ann@example.org", asked.code, browser=BROWSER, now=now)
    assert (player.email, sign_in.pk) == ("ann@example.org", asked.sign_in.pk)


def test_a_browser_voids_only_the_sign_ins_it_asked_for(now: datetime) -> None:
    players_own = players.ask("ann@example.org", browser=BROWSER, now=now)
    strangers = players.ask("ann@example.org", browser="a-strangers-browser", now=now)
    for _ in range(CODE_ATTEMPTS):
        with pytest.raises(players.SignInRefused):
            players.by_code(
                "ann@example.org",
                wrong(strangers.code),
                browser="a-strangers-browser",
                now=now,
            )
    assert dict(SignIn.objects.values_list("pk", "attempts")) == {
        players_own.sign_in.pk: 0,
        strangers.sign_in.pk: CODE_ATTEMPTS,
    }
    assert players.pending(players_own.token, now=now)
    _, sign_in = players.by_code("ann@example.org", players_own.code, browser=BROWSER, now=now)
    assert sign_in.pk == players_own.sign_in.pk


def test_a_sign_in_stores_a_digest_of_its_browser_never_the_id(now: datetime) -> None:
    asked = players.ask("ann@example.org", browser=BROWSER, now=now)
    assert SignIn.objects.get().browser_hash == hashlib.sha256(BROWSER.encode()).hexdigest()
    assert asked.sign_in.browser_hash != BROWSER


def test_a_code_for_an_address_without_a_waiting_sign_in_says_why(now: datetime) -> None:
    with pytest.raises(players.SignInRefused) as refused:
        players.by_code("ann@example.org", "123456", browser=BROWSER, now=now)
    assert refused.value.reason == players.NONE_WAITING
    asked = players.ask("ann@example.org", browser=BROWSER, now=now)
    with pytest.raises(players.SignInRefused) as refused:
        players.by_code(
            "ann@example.org", asked.code, browser=BROWSER, now=now + timedelta(minutes=15)
        )
    assert refused.value.reason == players.EXPIRED
    assert SignIn.objects.get().attempts == 0


# --- the player and their user ---------------------------------------------------------------


def test_an_address_signs_in_as_one_player_with_a_user_without_a_password(now: datetime) -> None:
    player = players.player_for("Ann@Example.org", now=now)
    again = players.player_for("ann@example.org ", now=now + timedelta(days=1))
    assert again.pk == player.pk and Player.objects.count() == 1
    user = User.objects.get(pk=player.user_id)
    assert (user.username, user.email, player.email, player.created_at) == (
        "player:ann@example.org",
        "ann@example.org",
        "ann@example.org",
        now,
    )
    assert not user.has_usable_password() and not user.is_staff and not user.is_superuser


def test_a_gm_with_the_same_address_keeps_their_own_user(now: datetime) -> None:
    gm = GMFactory.create(username="ann@example.org", email="ann@example.org", is_staff=True)
    gm.set_password("gm-password")
    gm.save()
    player = players.player_for("ann@example.org", now=now)
    assert player.user_id != gm.pk
    gm.refresh_from_db()
    assert gm.check_password("gm-password") and gm.is_staff
    assert players.player_of(gm) is None
    assert players.player_of(player.user) == player


def test_an_address_too_long_for_a_username_gets_its_digest(now: datetime) -> None:
    address = f"{'a' * 64}@{'b' * 60}.{'c' * 60}.example.org"
    player = players.player_for(address, now=now)
    assert len(address) > 150
    assert re.fullmatch(r"player:[0-9a-f]{64}", player.user.username)
    assert player.email == address


def test_sign_ins_are_pruned_a_day_after_they_expire(now: datetime) -> None:
    players.ask("ann@example.org", browser=BROWSER, now=now)
    end = now + timedelta(minutes=15)
    assert players.prune_sign_ins(now=end + timedelta(days=1) - timedelta(seconds=1)) == 0
    assert players.prune_sign_ins(now=end + timedelta(days=1)) == 1
    assert not SignIn.objects.exists()


# --- a player's games -------------------------------------------------------------------------


def ann_game(title: str) -> Game:
    players = [postal.Player("Ann", "ANN@example.org"), postal.Player("Bob", "bob@example.org")]
    return new_game(players=players, title=title)


def play_out(game: Game, now: datetime) -> None:
    for _ in range(100):
        if Game.objects.get(pk=game.pk).status == Game.Status.FINISHED:
            return
        postal.resolve_now(game.pk, now=now)
    pytest.fail("the game did not end")


def nmr(game: Game, position: int) -> str:
    game.refresh_from_db()
    engine = game.rules
    state = engine.state_from_json(game.state)
    return str(engine.canonical(state, position, engine.default(state, position)))


def test_my_games_are_grouped_owed_first_with_deadlines_in_the_players_zone(
    now: datetime,
) -> None:
    answered = postal.start_game(ann_game("Answered").pk, now=now - timedelta(hours=2), seed=SEED)
    owed = postal.start_game(ann_game("Owed").pk, now=now - timedelta(hours=1), seed=SEED)
    waiting = ann_game("Waiting")
    over = postal.start_game(ann_game("Over").pk, now=now, seed=SEED)
    play_out(over, now)
    paused = postal.start_game(ann_game("Paused").pk, now=now, seed=SEED)
    postal.pause(paused.pk, now=now)
    cy_and_dee = [postal.Player("Cy", "cy@example.org"), postal.Player("Dee", "dee@example.org")]
    others = started_game(now=now, players=cy_and_dee, title="Not Ann's")
    postal.accept_order(
        game_id=answered.pk, position=0, text=nmr(answered, 0), source=Order.Source.WEB, now=now
    )
    player = players.player_for("ann@example.org", now=now)
    player.time_zone = "Asia/Tokyo"

    found = players.my_games(player)

    titles = {key: [line.game.title for line in lines] for key, _, lines in found.groups}
    assert titles == {
        "owed": ["Owed"],
        "running": ["Answered", "Paused"],
        "waiting": ["Waiting"],
        "finished": ["Over"],
    }
    assert [title for _, title, _ in found.groups] == [
        "Waiting for your order",
        "Running",
        "Not started yet",
        "Finished",
    ]
    assert found.count == 5 and others.pk not in {
        line.game.pk for _, _, lines in found.groups for line in lines
    }
    (owed_line,) = found.groups[0][2]
    step = owed.steps.get(number=1)
    assert owed_line.owes and owed_line.step is not None and owed_line.step.pk == step.pk
    assert owed_line.deadline.endswith("JST (17:00 UTC)")
    assert owed_line.profile == "Choice"
    assert owed_line.seat.name == "Ann"
    assert [line.note for line in found.groups[1][2]] == ["", "paused by the GM"]
    (over_line,) = found.groups[3][2]
    over.refresh_from_db()
    standings = over.rules.standings(over.rules.state_from_json(over.state))
    assert over_line.place == next(s.place for s in standings if s.seat == 0)
    assert over_line.places == 2
    waiting.refresh_from_db()
    assert waiting.status in (Game.Status.DRAFT, Game.Status.RECRUITING)


def test_my_games_without_a_zone_show_each_seats_zone(now: datetime) -> None:
    game = ann_game("Tokyo")
    Game.objects.filter(pk=game.pk).update(time_zone="Europe/Paris")
    postal.start_game(game.pk, now=now, seed=SEED)
    player = players.player_for("ann@example.org", now=now)
    (line,) = players.my_games(player).groups[0][2]
    assert "CET" in line.deadline


def test_an_address_without_seats_has_no_games(now: datetime) -> None:
    GameFactory.create(seats=2)
    player = players.player_for("new@example.org", now=now)
    assert players.my_games(player).groups == []


def test_my_games_make_the_same_queries_for_two_seats_and_for_eight(
    now: datetime, django_assert_num_queries: Any
) -> None:
    """The seats with their games, the open steps, the orders in them, the finished
    games' states: four queries, whatever the number of seats."""
    player = players.player_for("ann@example.org", now=now)
    for count in (2, 8):
        while Seat.objects.filter(email__iexact="ann@example.org").count() < count:
            number = Game.objects.count()
            game = ann_game(f"Game {number}")
            if number % 4 != 3:  # one in four not started, one in two finished
                game = postal.start_game(game.pk, now=now, seed=SEED)
                if number % 2:
                    play_out(game, now)
        with django_assert_num_queries(4):
            assert players.my_games(player).count == count


# --- a player's settings ----------------------------------------------------------------------


def chosen(**changes: Any) -> players.Chosen:
    fields: dict[str, Any] = {
        "name": "",
        "time_zone": "",
        "reports": "",
        "reminders": "",
        "hour": None,
    }
    return players.Chosen(**(fields | changes))


def test_a_time_zone_is_the_players_their_addresses_and_their_seats_not_over(
    now: datetime,
) -> None:
    running = postal.start_game(ann_game("Running").pk, now=now, seed=SEED)
    over = postal.start_game(ann_game("Over").pk, now=now, seed=SEED)
    play_out(over, now)
    player = players.player_for("ann@example.org", now=now)
    said = players.save_settings(player, chosen(name="Annie", time_zone="Asia/Tokyo"))
    assert said == ["your name is Annie", "your time zone is Asia/Tokyo, in all your games"]
    player.refresh_from_db()
    assert (player.name, player.time_zone) == ("Annie", "Asia/Tokyo")
    assert EmailPreference.objects.get(email="ann@example.org").time_zone == "Asia/Tokyo"
    zones = dict(Seat.objects.filter(position=0).values_list("game__title", "time_zone"))
    assert zones == {"Running": "Asia/Tokyo", "Over": ""}
    # The seats keep the names their GMs gave them; bob's seats are untouched.
    assert set(Seat.objects.filter(position=0).values_list("name", flat=True)) == {"Ann"}
    assert set(Seat.objects.filter(position=1).values_list("time_zone", flat=True)) == {""}
    assert running.seats.get(position=0).zone == "Asia/Tokyo"


def test_saving_the_same_settings_again_says_nothing_changed(now: datetime) -> None:
    player = players.player_for("ann@example.org", now=now)
    players.save_settings(player, chosen(name="Annie", time_zone="UTC"))
    assert players.save_settings(player, chosen(name="Annie", time_zone="UTC")) == []


def test_reports_chosen_in_the_settings_go_to_every_seat_and_later_ones(now: datetime) -> None:
    first = postal.start_game(ann_game("First").pk, now=now, seed=SEED)
    second = ann_game("Second")
    player = players.player_for("ann@example.org", now=now)
    said = players.save_settings(player, chosen(reports=email_choices.NONE))
    assert said == [f"your reports come {email_choices.YOU_GET[email_choices.NONE]}"]
    assert set(Seat.objects.filter(position=0).values_list("reports", flat=True)) == {"none"}
    assert set(Seat.objects.filter(position=1).values_list("reports", flat=True)) == {""}
    assert EmailPreference.objects.get(email="ann@example.org").reports == "none"
    games = set(Seat.objects.filter(position=0).values_list("game", flat=True))
    assert games == {first.pk, second.pk}


def test_an_address_without_seats_saves_its_default_and_reminders(now: datetime) -> None:
    player = players.player_for("new@example.org", now=now)
    players.save_settings(
        player,
        chosen(
            time_zone="America/New_York",
            reports=email_choices.OWED,
            reminders=reminders.DIGEST,
            hour=7,
        ),
    )
    preference = EmailPreference.objects.get(email="new@example.org")
    assert (preference.reports, preference.digest, preference.hour, preference.time_zone) == (
        "owed",
        True,
        7,
        "America/New_York",
    )
    players.save_settings(player, chosen(time_zone="America/New_York", reminders=reminders.NONE))
    preference.refresh_from_db()
    assert (preference.digest, preference.no_reminders, preference.hour) == (False, True, 7)
