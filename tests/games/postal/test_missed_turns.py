"""What a missed deadline does: an absent player's deadline waits (capped), an automatic
extension moves it, the player's autopilot or the NMR default plays, and too many missed
turns in a row put the seat in civil disorder. Declaring absences: bad input says why and
writes nothing."""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta
from typing import Any

import pytest
from django.conf import settings
from django.test import Client
from django.utils import translation

from games import postal
from games.community import absences
from games.engines import registry
from games.engines.base import Strategy
from games.engines.choice.rules import ChoiceEngine
from games.lib import words
from games.models import Absence, AbsencePolicy, Event, Game, Order, Seat, Step
from moderator.mail.models import OutboundEmail
from tests.factories import started_game

pytestmark = pytest.mark.django_db

EVERY_DAY = {"kind": "interval", "seconds": 24 * 3600}
CHOICE = ChoiceEngine()
HOUR = timedelta(hours=1)


def open_step(game: Game) -> Step:
    return Step.objects.get(game=game, status=Step.Status.OPEN)


def seat(game: Game, position: int) -> Seat:
    return Seat.objects.get(game=game, position=position)


def order_all_but(game: Game, missing: set[int], now: datetime) -> None:
    game.refresh_from_db()
    state = CHOICE.state_from_json(game.state)
    for position in range(len(state.players)):
        if position not in missing:
            text = CHOICE.canonical(state, position, CHOICE.default(state, position))
            postal.accept_order(
                game_id=game.pk, position=position, text=text, source="web", now=now
            )


def latest_event(game: Game) -> int:
    return max(Event.objects.filter(game=game).values_list("id", flat=True), default=0)


def new_events(step: Step, after: int) -> list[str]:
    return list(
        Event.objects.filter(step=step, id__gt=after).order_by("id").values_list("text", flat=True)
    )


def new_events_in_german(step: Step, after: int) -> list[str]:
    """The events ``new_events`` lists, as a German reader sees them."""
    rows = Event.objects.filter(step=step, id__gt=after).order_by("id")
    with translation.override("de"):
        return [words.said(text, message) for text, message in rows.values_list("text", "message")]


def away(name: str, first: date, last: date, now: datetime) -> None:
    """``name``@example.org is away from ``first`` to ``last`` in all their games (UTC)."""
    absences.declare(f"{name}@example.org", first_day=first, last_day=last, zone="UTC", now=now)


def deadline_emails(game: Game) -> list[OutboundEmail]:
    return list(OutboundEmail.objects.filter(game=game, kind="deadline").order_by("id"))


# --- declaring ----------------------------------------------------------------------------


def test_an_absence_covers_its_days_in_the_players_zone(now: datetime) -> None:
    game = started_game(now=now)
    absence = absences.declare(
        "Bob@Example.org",
        first_day=date(2026, 11, 25),
        last_day=date(2026, 11, 27),
        zone="Europe/Berlin",
        now=now,
    )
    assert absence.email == "bob@example.org"
    assert absence.game is None
    assert absence.starts_at == datetime(2026, 11, 24, 23, 0, tzinfo=UTC)
    assert absence.ends_at - absence.starts_at == timedelta(days=3)
    away = absences.away(Seat.objects.filter(game=game), now=absence.starts_at)
    assert list(away) == [seat(game, 1).pk]
    assert away[seat(game, 1).pk].last_day == date(2026, 11, 27)
    assert absences.away(Seat.objects.filter(game=game), now=absence.ends_at) == {}


def test_absences_that_follow_one_another_count_as_one(now: datetime) -> None:
    game = started_game(now=now)
    for first, last in [
        (date(2026, 12, 1), date(2026, 12, 3)),
        (date(2026, 12, 4), date(2026, 12, 9)),
    ]:
        absences.declare("bob@example.org", first_day=first, last_day=last, zone="UTC", now=now)
    moment = datetime(2026, 12, 2, 12, tzinfo=now.tzinfo)
    assert absences.away([seat(game, 1)], now=moment)[seat(game, 1).pk].last_day == date(
        2026, 12, 9
    )


def test_an_absence_for_one_game_does_not_cover_the_others(now: datetime) -> None:
    one, other = started_game(now=now), started_game(now=now)
    absences.declare(
        "ann@example.org",
        first_day=date(2026, 11, 1),
        last_day=date(2026, 12, 31),
        zone="UTC",
        now=now,
        game=one,
    )
    seats = [seat(one, 0), seat(other, 0)]
    assert list(absences.away(seats, now=now)) == [seat(one, 0).pk]


@pytest.mark.parametrize(
    ("first", "last", "message"),
    [
        (
            date(2026, 12, 10),
            date(2026, 12, 9),
            "the absence ends (9 December 2026) before it starts (10 December 2026)",
        ),
        (date(2026, 11, 1), date(2026, 11, 2), "the absence ended already (2 November 2026)"),
        (
            date(2026, 12, 1),
            date(2027, 3, 31),
            "an absence is at most 92 days; for longer, ask your GMs to replace you",
        ),
        (date(2028, 1, 1), date(2028, 1, 2), "an absence may start at most 366 days ahead"),
    ],
)
def test_a_wrong_absence_says_why_and_writes_nothing(
    now: datetime, first: date, last: date, message: str
) -> None:
    started_game(now=now)
    with pytest.raises(absences.AbsenceError) as error:
        absences.declare("ann@example.org", first_day=first, last_day=last, zone="UTC", now=now)
    assert error.value.message == message
    assert Absence.objects.count() == 0


def test_an_absence_for_a_game_without_the_player_is_refused(now: datetime) -> None:
    game = started_game(now=now)
    with pytest.raises(absences.AbsenceError, match="you have no seat in this game"):
        absences.declare(
            "zed@example.org",
            first_day=date(2026, 12, 1),
            last_day=date(2026, 12, 2),
            zone="UTC",
            now=now,
            game=game,
        )
    zone_error = "'Mars/Olympus' is not a time zone; use a name such as Europe/Berlin"
    with pytest.raises(absences.AbsenceError, match=zone_error):
        absences.declare(
            "ann@example.org",
            first_day=date(2026, 12, 1),
            last_day=date(2026, 12, 2),
            zone="Mars/Olympus",
            now=now,
        )
    assert Absence.objects.count() == 0


def test_only_its_own_player_removes_an_absence(now: datetime) -> None:
    started_game(now=now)
    absence = absences.declare(
        "ann@example.org",
        first_day=date(2026, 12, 1),
        last_day=date(2026, 12, 2),
        zone="UTC",
        now=now,
    )
    with pytest.raises(absences.AbsenceError, match="there is no such absence of yours"):
        absences.withdraw("bob@example.org", absence.pk, now=now)
    assert Absence.objects.count() == 1
    absences.withdraw("ANN@example.org", absence.pk, now=now)
    assert Absence.objects.count() == 0


# --- the deadline waits for an absent player ------------------------------------------------


def test_the_deadline_waits_for_an_absent_player_until_they_are_back(now: datetime) -> None:
    game = started_game(now=now)
    step = open_step(game)
    away("bob", date(2026, 11, 25), date(2026, 11, 27), now)
    order_all_but(game, {1}, now)
    before = latest_event(game)
    assert postal.resolve_due_step(step.pk, now=step.deadline) is False
    step.refresh_from_db()
    back = datetime(2026, 11, 28, tzinfo=now.tzinfo)
    assert (step.status, step.deadline) == (Step.Status.OPEN, back)
    hours = (back - (now + 48 * HOUR)).total_seconds() / 3600
    assert seat(game, 1).away_hours_used == hours
    assert seat(game, 1).nmr_count == 0
    assert new_events(step, before) == [
        "bob is away until 27 November: the deadline of postal turn 1 waits for them"
    ]
    assert new_events_in_german(step, before) == [
        "bob ist bis zum 27. November abwesend: der Abgabetermin von Postzug 1 wartet so lange"
    ]
    emails = deadline_emails(game)
    assert [email.to for email in emails] == [
        "ann@example.org",
        "bob@example.org",
        "cy@example.org",
    ]
    assert (
        'The deadline of postal turn 1 of "Test Choice" is now\nSat 28 Nov 2026 00:00 UTC: '
        "bob is away until 27 November: the deadline of postal turn 1 waits for them."
        in emails[1].text
    )
    # At the new deadline the absence is over: the step resolves with bob's default.
    assert postal.resolve_due_step(step.pk, now=back) is True
    assert Order.objects.get(step=step, seat=seat(game, 1)).source == Order.Source.DEFAULT


def test_an_absence_holds_a_game_at_most_the_cap(now: datetime) -> None:
    game = started_game(now=now, missed=postal.MissedTurns(absence_cap_hours=30))
    step = open_step(game)
    away("bob", date(2026, 11, 25), date(2026, 12, 20), now)
    order_all_but(game, {1}, now)
    assert postal.resolve_due_step(step.pk, now=step.deadline) is False
    step.refresh_from_db()
    assert step.deadline == now + 48 * HOUR + 30 * HOUR
    assert seat(game, 1).away_hours_used == 30
    # The cap is spent: the next deadline resolves the step.
    assert postal.resolve_due_step(step.pk, now=step.deadline) is True
    assert Order.objects.get(step=step, seat=seat(game, 1)).source == Order.Source.DEFAULT


def test_where_absences_are_played_the_deadline_does_not_wait(now: datetime) -> None:
    game = started_game(
        now=now, missed=postal.MissedTurns(absence_policy=AbsencePolicy.DEFAULT, extensions=2)
    )
    step = open_step(game)
    away("bob", date(2026, 11, 25), date(2026, 12, 20), now)
    order_all_but(game, {1}, now)
    # bob is away: his turn is played; he keeps his extensions for when he is back.
    assert postal.resolve_due_step(step.pk, now=step.deadline) is True
    assert seat(game, 1).extensions_used == 0
    assert Order.objects.get(step=step, seat=seat(game, 1)).source == Order.Source.DEFAULT


# --- automatic extensions ---------------------------------------------------------------------


def test_a_missed_deadline_uses_an_extension_then_the_default_plays(now: datetime) -> None:
    game = started_game(now=now, missed=postal.MissedTurns(extensions=1, extension_hours=12))
    step = open_step(game)
    order_all_but(game, {2}, now)
    before = latest_event(game)
    first = step.deadline
    assert postal.resolve_due_step(step.pk, now=first) is False
    step.refresh_from_db()
    assert step.deadline == first + 12 * HOUR
    assert (seat(game, 2).extensions_used, seat(game, 2).nmr_count) == (1, 0)
    assert new_events(step, before) == [
        "cy missed the deadline of postal turn 1 and used an automatic extension (0 extensions "
        "left): the deadline moved by 12 hours"
    ]
    assert new_events_in_german(step, before) == [
        "cy hat den Abgabetermin von Postzug 1 verpasst und eine automatische "
        "Fristverlängerung genutzt (noch 0 Fristverlängerungen): der Abgabetermin ist um "
        "12 Stunden verschoben"
    ]
    assert len(deadline_emails(game)) == 3
    # None left: the next missed deadline plays the default.
    assert postal.resolve_due_step(step.pk, now=step.deadline) is True
    assert Order.objects.get(step=step, seat=seat(game, 2)).source == Order.Source.DEFAULT
    assert (seat(game, 2).nmr_count, seat(game, 2).missed_in_row) == (1, 1)


def test_a_late_sweep_moves_the_deadline_from_now(now: datetime) -> None:
    game = started_game(now=now, missed=postal.MissedTurns(extensions=2, extension_hours=24))
    step = open_step(game)
    late = step.deadline + 5 * HOUR
    assert postal.resolve_due_step(step.pk, now=late) is False
    step.refresh_from_db()
    assert step.deadline == late + 24 * HOUR
    assert [s.extensions_used for s in Seat.objects.filter(game=game)] == [1, 1, 1]


def test_the_gm_resolving_now_spends_no_extension(now: datetime) -> None:
    game = started_game(now=now, missed=postal.MissedTurns(extensions=2))
    assert postal.resolve_now(game.pk, now=now) is True
    assert [s.extensions_used for s in Seat.objects.filter(game=game)] == [0, 0, 0]
    assert [s.nmr_count for s in Seat.objects.filter(game=game)] == [1, 1, 1]


# --- autopilots -------------------------------------------------------------------------------


def _default_strategy(state: Any, seat: int) -> Any:
    return CHOICE.default(state, seat)


TEST_STRATEGY = Strategy("test", "the test pilot", "plays the default.", _default_strategy)


@pytest.fixture
def strategies(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(registry.STRATEGIES, "choice", (TEST_STRATEGY,))


def test_a_chosen_autopilot_plays_a_missed_turn_and_the_report_says_so(
    now: datetime, strategies: None
) -> None:
    game = started_game(now=now)
    postal.choose_autopilot(game.pk, position=1, key="test")
    step = open_step(game)
    order_all_but(game, {1}, now)
    before = latest_event(game)
    assert postal.resolve_due_step(step.pk, now=step.deadline) is True
    order = Order.objects.get(step=step, seat=seat(game, 1))
    assert order.source == Order.Source.AUTOPILOT
    state = CHOICE.state_from_json(step.state_before)
    assert order.canonical == CHOICE.canonical(state, 1, CHOICE.default(state, 1))
    events = list(
        Event.objects.filter(step=step, id__gt=before)
        .order_by("id")
        .values_list("text", "audience")
    )
    assert events[0] == ("bob sent no order: their autopilot (the test pilot) plays", None)
    assert events[1] == (f"your autopilot (the test pilot) played: {order.canonical}", [1])
    assert new_events_in_german(step, before)[:2] == [
        "bob hat keinen Zug geschickt: der Autopilot (the test pilot) spielt",
        f"dein Autopilot (the test pilot) hat gespielt: {order.canonical}",
    ]
    assert not any("sent no order: the NMR default" in text for text, _ in events)
    assert (seat(game, 1).nmr_count, seat(game, 1).missed_in_row) == (1, 1)
    report = OutboundEmail.objects.get(
        game=game, kind="report", to="bob@example.org", dedupe_key__contains=":2:"
    )
    assert "your autopilot (the test pilot) played" in report.text
    other = OutboundEmail.objects.get(
        game=game, kind="report", to="ann@example.org", dedupe_key__contains=":2:"
    )
    assert "bob sent no order: their autopilot (the test pilot) plays" in other.text
    assert "your autopilot" not in other.text


def test_a_strategy_that_fails_leaves_the_default_to_play(
    now: datetime, monkeypatch: pytest.MonkeyPatch
) -> None:
    def broken(state: Any, seat: int) -> Any:
        from games.engines.base import OrderError

        raise OrderError("no idea")

    monkeypatch.setitem(registry.STRATEGIES, "choice", (Strategy("test", "t", "s", broken),))
    game = started_game(now=now)
    postal.choose_autopilot(game.pk, position=0, key="test")
    step = open_step(game)
    assert postal.resolve_due_step(step.pk, now=step.deadline) is True
    assert Order.objects.get(step=step, seat=seat(game, 0)).source == Order.Source.DEFAULT


def test_an_absent_player_gets_the_games_autopilot_where_the_gm_chose_so(
    now: datetime, strategies: None
) -> None:
    game = started_game(now=now, missed=postal.MissedTurns(absence_policy=AbsencePolicy.AUTOPILOT))
    away("cy", date(2026, 11, 25), date(2026, 11, 30), now)
    step = open_step(game)
    assert postal.resolve_due_step(step.pk, now=step.deadline) is True
    sources = dict(Order.objects.filter(step=step).values_list("seat__position", "source"))
    assert sources == {0: "default", 1: "default", 2: "autopilot"}


def test_choosing_an_autopilot_the_game_has_not_is_refused(now: datetime, strategies: None) -> None:
    game = started_game(now=now)
    with pytest.raises(
        postal.PostalError, match="Choice has no autopilot 'nope' \\(it has: test\\)"
    ):
        postal.choose_autopilot(game.pk, position=0, key="nope")
    assert seat(game, 0).autopilot == ""
    postal.choose_autopilot(game.pk, position=0, key="test")
    postal.choose_autopilot(game.pk, position=0, key="")
    assert seat(game, 0).autopilot == ""


# --- civil disorder ---------------------------------------------------------------------------


def test_missed_turns_in_a_row_put_a_seat_in_civil_disorder_and_alert_the_gm(now: datetime) -> None:
    game = started_game(now=now, missed=postal.MissedTurns(civil_disorder_after=2))
    for number in (1, 2):
        step = open_step(game)
        order_all_but(game, {2}, now)
        assert postal.resolve_due_step(step.pk, now=step.deadline) is True
        assert (seat(game, 2).missed_in_row, seat(game, 2).civil_disorder_at is None) == (
            number,
            number < 2,
        )
    assert seat(game, 2).civil_disorder_at == step.deadline
    assert Event.objects.filter(
        step=step,
        text="cy has missed 2 turns in a row: the seat is in civil disorder; the game goes on "
        "with its defaults",
    ).exists()
    with translation.override("de"):
        said = [words.said(e.text, e.message) for e in Event.objects.filter(step=step)]
    assert (
        "cy hat 2 Züge in Folge verpasst: der Platz ist verwaist; das Spiel geht mit "
        "Standardzügen weiter" in said
    )
    alert = OutboundEmail.objects.get(kind="civil-disorder")
    assert alert.to == game.gm.email
    assert "cy (seat 3)" in alert.text and "missed 2 turns in a row" in alert.text
    # Its link opens the game's GM page (it was /gm/games/<id>/, which is no page).
    link = f"{settings.SITE_URL}/gm/{game.pk}/"
    assert f"The game in the GM panel: {link}\n" in alert.text
    assert f'<a href="{link}">The game in the GM panel</a>' in alert.html
    game.gm.is_staff = True
    game.gm.save(update_fields=["is_staff"])
    client = Client()
    client.force_login(game.gm)
    assert client.get(link.removeprefix(settings.SITE_URL)).status_code == 200
    # An order from the player ends it.
    order_all_but(game, set(), now)
    assert (seat(game, 2).missed_in_row, seat(game, 2).civil_disorder_at) == (0, None)


def test_a_seat_in_civil_disorder_spends_no_extension(now: datetime) -> None:
    game = started_game(now=now, missed=postal.MissedTurns(civil_disorder_after=1, extensions=3))
    step = open_step(game)
    order_all_but(game, {2}, now)
    assert postal.resolve_due_step(step.pk, now=step.deadline) is False  # an extension
    assert postal.resolve_due_step(step.pk, now=open_step(game).deadline) is False
    assert postal.resolve_due_step(step.pk, now=open_step(game).deadline) is False
    assert postal.resolve_due_step(step.pk, now=open_step(game).deadline) is True
    assert seat(game, 2).civil_disorder_at is not None
    step = open_step(game)
    order_all_but(game, {2}, now)
    # In civil disorder: no extension left to wait for, and none spent.
    assert postal.resolve_due_step(step.pk, now=step.deadline) is True
    assert seat(game, 2).extensions_used == 3


def test_replacing_a_player_starts_their_seat_afresh(now: datetime, strategies: None) -> None:
    game = started_game(now=now, missed=postal.MissedTurns(civil_disorder_after=1, extensions=1))
    postal.choose_autopilot(game.pk, position=2, key="test")
    step = open_step(game)
    postal.resolve_due_step(step.pk, now=step.deadline)
    postal.resolve_due_step(step.pk, now=open_step(game).deadline)
    before = seat(game, 2)
    assert (before.extensions_used, before.missed_in_row, before.autopilot) == (1, 1, "test")
    assert before.civil_disorder_at is not None
    postal.replace_player(game.pk, position=2, name="dan", email="dan@example.org", now=now)
    after = seat(game, 2)
    assert (
        after.extensions_used,
        after.missed_in_row,
        after.autopilot,
        after.civil_disorder_at,
    ) == (0, 0, "", None)


# --- the games' own autopilots, played by post and replayed ---------------------------------


def test_a_liars_dice_autopilot_bids_at_the_deadline_and_the_record_replays(
    now: datetime,
) -> None:
    from games import records
    from games.records import archive

    game = started_game("liars-dice", now=now, schedule_spec=EVERY_DAY)
    engine = registry.get("liars-dice")
    for position in range(3):
        postal.choose_autopilot(game.pk, position=position, key="expected-count")
    strategy = registry.strategy("liars-dice", "expected-count")
    assert strategy is not None
    played: list[str] = []
    moment = now
    # Every seat misses every deadline: the autopilots play the game to its end.
    for _ in range(200):
        game.refresh_from_db()
        if game.status == Game.Status.FINISHED:
            break
        step = open_step(game)
        state = engine.state_from_json(game.state)
        (seat_position,) = step.prompted_seats
        expected = engine.canonical(state, seat_position, strategy.play(state, seat_position))
        moment = step.deadline
        assert postal.resolve_due_step(step.pk, now=moment) is True
        step.refresh_from_db()
        order = Order.objects.get(step=step)
        assert (order.source, order.canonical, step.closed_by) == (
            Order.Source.AUTOPILOT,
            expected,
            Step.Closed.DEADLINE,
        )
        played.append(order.canonical)
    game.refresh_from_db()
    assert game.status == Game.Status.FINISHED
    assert "liar" in played
    assert not Order.objects.filter(step__game=game, source=Order.Source.DEFAULT).exists()
    replayed = records.run(archive.export(game))
    assert engine.state_to_json(replayed.state) == game.state
    assert archive.verify(game).problems == []


def test_a_choice_autopilot_plays_a_sealed_turn_the_engine_then_resolves(now: datetime) -> None:
    from games import records
    from games.records import archive

    game = started_game(now=now)
    postal.choose_autopilot(game.pk, position=2, key="best-score")
    step = open_step(game)
    order_all_but(game, {2}, now)
    state = CHOICE.state_from_json(open_step(game).state_before)
    strategy = registry.strategy("choice", "best-score")
    assert strategy is not None
    expected = CHOICE.canonical(state, 2, strategy.play(state, 2))
    assert postal.resolve_due_step(step.pk, now=step.deadline) is True
    order = Order.objects.get(step=step, seat=seat(game, 2))
    assert (order.source, order.canonical) == (Order.Source.AUTOPILOT, expected)
    game.refresh_from_db()
    assert CHOICE.state_to_json(records.run(archive.export(game)).state) == game.state


# --- an extension asked for before the deadline ---------------------------------------------


def test_a_player_spends_an_extension_before_the_deadline(now: datetime) -> None:
    game = started_game(now=now, missed=postal.MissedTurns(extensions=1, extension_hours=6))
    step = open_step(game)
    deadline = step.deadline
    before = latest_event(game)
    moved = postal.use_extension(game.pk, position=0, now=now)
    assert moved.deadline == deadline + 6 * HOUR
    assert open_step(game).deadline == deadline + 6 * HOUR
    assert seat(game, 0).extensions_used == 1
    assert new_events(step, before) == [
        "ann used an extension (0 extensions left): the deadline of postal turn 1 moved by 6 hours"
    ]
    assert len(deadline_emails(game)) == 3
    with pytest.raises(postal.PostalError, match=r"^you have used all 1 extension of this game$"):
        postal.use_extension(game.pk, position=0, now=now)
    assert open_step(game).deadline == deadline + 6 * HOUR
    assert len(deadline_emails(game)) == 3


def test_an_extension_asked_from_a_page_whose_deadline_has_moved_spends_nothing(
    now: datetime,
) -> None:
    game = started_game(now=now, missed=postal.MissedTurns(extensions=2, extension_hours=6))
    shown = int(open_step(game).deadline.timestamp())
    moved = postal.use_extension(game.pk, position=0, now=now, shown_deadline=shown)
    before = latest_event(game)
    # The same page posted again (a double click): the deadline it showed has moved on.
    with pytest.raises(
        postal.PostalError,
        match=r"^the deadline moved since your page showed it \(an extension already used, "
        r"or the GM's change\): see the new one$",
    ):
        postal.use_extension(game.pk, position=0, now=now, shown_deadline=shown)
    assert open_step(game).deadline == moved.deadline
    assert seat(game, 0).extensions_used == 1
    assert new_events(open_step(game), before) == []
    assert len(deadline_emails(game)) == 3
    # From the page that shows the new deadline, the second extension is spent.
    again = postal.use_extension(
        game.pk, position=0, now=now, shown_deadline=int(moved.deadline.timestamp())
    )
    assert again.deadline == moved.deadline + 6 * HOUR
    assert seat(game, 0).extensions_used == 2


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({"extensions": 0}, "this game gives no extensions"),
        (
            {"extensions": 2, "status": Game.Status.PAUSED},
            "the game is paused; deadlines move only in a running game",
        ),
    ],
)
def test_an_extension_that_cannot_be_had_changes_nothing(
    now: datetime, fields: dict[str, Any], message: str
) -> None:
    game = started_game(now=now)
    Game.objects.filter(pk=game.pk).update(**fields)
    deadline = open_step(game).deadline
    with pytest.raises(postal.PostalError) as error:
        postal.use_extension(game.pk, position=0, now=now)
    assert error.value.message == message
    assert (open_step(game).deadline, seat(game, 0).extensions_used) == (deadline, 0)


def test_no_extension_without_an_order_owed_or_after_the_deadline(now: datetime) -> None:
    game = started_game("liars-dice", now=now, schedule_spec=EVERY_DAY)
    Game.objects.filter(pk=game.pk).update(extensions=2)
    step = open_step(game)
    (owing,) = step.prompted_seats
    other = (owing + 1) % 3
    with pytest.raises(
        postal.PostalError, match=r"^you owe no order this postal turn, so its deadline stays$"
    ):
        postal.use_extension(game.pk, position=other, now=now)
    with pytest.raises(postal.PostalError, match=r"^the deadline has passed$"):
        postal.use_extension(game.pk, position=owing, now=step.deadline)
    assert open_step(game).deadline == step.deadline
