"""The dice: uniform, independent between games, always a face of the die; and the
commitment to the seed is published before the first order and cannot change afterwards.

The chi-square statistics are printed at the end of the run (``pytest -s``) for docs.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterator
from datetime import datetime

import pytest
from django.contrib.admin.sites import site
from django.test import Client
from django.urls import reverse
from hypothesis import given, settings
from hypothesis import strategies as st
from time_machine import TimeMachineFixture

from games.admin import GameAdmin
from games.engines.base import DiceError
from games.engines.dice import VerifiableDice, commitment, face
from games.models import Game, Order, Seat
from games.postal import access
from games.web.gm.actions import ACTIONS
from moderator.mail.models import OutboundEmail
from tests.factories import SEED, GMFactory, seat_page, started_game

GAME_ID = 1
DRAWS = 100_000
# Upper-tail critical values of the chi-square distribution at significance 0.001, for
# (sides - 1) degrees of freedom: NIST/SEMATECH e-Handbook of Statistical Methods, section
# 1.3.6.7.4, "Critical Values of the Chi-Square Distribution" (the 0.999 column).
CRITICAL_0_001 = {6: 20.515, 8: 24.322, 9: 26.124, 12: 31.264, 20: 43.820}
STATISTICS: dict[int, float] = {}


@pytest.fixture(scope="session", autouse=True)
def report_statistics(request: pytest.FixtureRequest) -> Iterator[None]:
    yield
    capture = request.config.pluginmanager.getplugin("capturemanager")
    with capture.global_and_fixture_disabled():
        print()
        for sides, statistic in sorted(STATISTICS.items()):
            print(
                f"d{sides}: {DRAWS} draws, chi-square {statistic:.3f} "
                f"(df {sides - 1}, critical value at 0.001: {CRITICAL_0_001[sides]})"
            )


def chi_square(counts: Counter[int], sides: int, draws: int) -> float:
    expected = draws / sides
    return sum((counts[value] - expected) ** 2 / expected for value in range(1, sides + 1))


@pytest.mark.parametrize("sides", sorted(CRITICAL_0_001), ids=lambda sides: f"d{sides}")
def test_every_die_is_uniform_by_a_chi_square_test(sides: int) -> None:
    counts = Counter(face(SEED, GAME_ID, index, sides) for index in range(DRAWS))
    assert sorted(counts) == list(range(1, sides + 1))
    assert sum(counts.values()) == DRAWS
    statistic = chi_square(counts, sides, DRAWS)
    STATISTICS[sides] = statistic
    assert statistic < CRITICAL_0_001[sides]


def test_the_dice_source_draws_the_faces_of_the_seed_in_order() -> None:
    dice = VerifiableDice(SEED, GAME_ID, start=5)
    values = [dice.draw(sides) for sides in (6, 8, 9, 12, 20)]
    assert values == [face(SEED, GAME_ID, 5 + n, s) for n, s in enumerate((6, 8, 9, 12, 20))]
    assert [draw.index for draw in dice.draws] == [5, 6, 7, 8, 9]


def test_two_games_with_the_same_seed_draw_different_sequences() -> None:
    first = [face(SEED, 1, index, 6) for index in range(100)]
    second = [face(SEED, 2, index, 6) for index in range(100)]
    assert first != second
    # Not merely shifted: no offset of one sequence lines up with the other.
    assert all(first[shift:] != second[: 100 - shift] for shift in range(1, 10))


def test_a_die_needs_two_sides() -> None:
    for sides in (1, 0, -6):
        with pytest.raises(DiceError) as refused:
            face(SEED, GAME_ID, 0, sides)
        assert refused.value.message == f"a die needs at least 2 sides, not {sides}"


@settings(max_examples=300, deadline=None)
@given(
    seed=st.binary(min_size=32, max_size=32),
    game_id=st.integers(1, 2**63 - 1),
    index=st.integers(0, 10**9),
    sides=st.integers(2, 10**6),
)
def test_a_face_is_always_one_of_the_die(seed: bytes, game_id: int, index: int, sides: int) -> None:
    assert 1 <= face(seed, game_id, index, sides) <= sides


# --- the commitment ---------------------------------------------------------------------


@pytest.fixture
def frozen(time_machine: TimeMachineFixture, now: datetime) -> None:
    time_machine.move_to(now, tick=False)


def browser_of(seat: Seat, now: datetime) -> Client:
    client = Client(REMOTE_ADDR=f"10.9.{seat.game_id % 256}.{seat.position}")
    token = access.mint([seat], now=now)[seat.position]
    assert client.post(f"/p/{token}/").status_code == 302
    return client


@pytest.mark.django_db
@pytest.mark.usefixtures("frozen")
def test_the_commitment_is_in_every_first_report_and_on_the_player_page_before_any_order(
    now: datetime,
) -> None:
    game = started_game(now=now, players=3)
    assert game.commitment == commitment(SEED)
    assert not Order.objects.filter(step__game=game).exists()
    reports = OutboundEmail.objects.filter(game=game, kind="report").order_by("to")
    assert [email.to for email in reports] == [
        "ann@example.org",
        "bob@example.org",
        "cy@example.org",
    ]
    for email in reports:
        assert f"  {game.commitment}" in email.text.splitlines()
        assert f">{game.commitment}</p>" in email.html
    for seat in game.seats.order_by("position"):
        page = browser_of(seat, now).get(seat_page(game, seat.position))
        assert page.status_code == 200
        assert f"<code>{game.commitment}</code>" in page.content.decode()


@pytest.mark.django_db
def test_the_admin_cannot_change_the_commitment(now: datetime) -> None:
    gm = GMFactory.create(is_staff=True)
    game = started_game(now=now, players=2, gm=gm)
    assert Game._meta.get_field("commitment").editable is False
    assert Game._meta.get_field("seed").editable is False
    model_admin = GameAdmin(Game, site)
    assert {"commitment", "revealed_seed"} <= set(model_admin.readonly_fields)
    client = Client()
    client.force_login(gm)
    url = reverse("admin:games_game_change", args=[game.pk])
    response = client.post(url, {"commitment": "0" * 64, "seed": "00" * 32, "_save": "Save"})
    assert response.status_code == 302
    game_after = Game.objects.get(pk=game.pk)
    assert (game_after.commitment, bytes(game_after.seed or b"")) == (commitment(SEED), SEED)


FIELD_NAMES = re.compile(r'<(?:input|select|textarea)[^>]*\bname="([^"]+)"')


@pytest.mark.django_db
@pytest.mark.usefixtures("frozen")
def test_the_gm_panel_offers_no_way_to_change_the_commitment(now: datetime) -> None:
    gm = GMFactory.create(is_staff=True)
    game = started_game(now=now, players=3, gm=gm)
    client = Client()
    client.force_login(gm)
    page = client.get(f"/gm/{game.pk}/")
    assert page.status_code == 200
    names = set(FIELD_NAMES.findall(page.content.decode()))
    assert names and not {name for name in names if "commit" in name or "seed" in name}
    forged = {"commitment": "0" * 64, "seed": "00" * 32, "seat": "1", "text": "x"}
    for action in ACTIONS:
        client.post(f"/gm/{game.pk}/{action}/", forged)
        game_after = Game.objects.get(pk=game.pk)
        assert (game_after.commitment, bytes(game_after.seed or b"")) == (
            commitment(SEED),
            SEED,
        ), action
