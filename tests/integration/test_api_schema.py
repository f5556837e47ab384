"""Schemathesis against the API's published document, on a live server, as a program
would call it (docs/api.md): every operation with generated parameters and bodies, for a
real seat and a real game, with a token that plays; no server error, and every answer as
the document says (status, content type, body)."""

from __future__ import annotations

from typing import Any

import pytest
import schemathesis
from django.utils import timezone
from hypothesis import HealthCheck, given, settings
from schemathesis import checks

from games.community import tokens
from games.models import Game
from tests.factories import GMFactory, started_game

pytestmark = [pytest.mark.integration, pytest.mark.postgres]


@pytest.fixture
def world(transactional_db: Any, settings: Any) -> dict[str, Any]:
    settings.RATES = {**settings.RATES, "api-token": "100000/m"}
    gm = GMFactory.create()
    game = started_game("liars-dice", now=timezone.now(), players=2, gm=gm)
    Game.objects.filter(pk=game.pk).update(bots_allowed=True)
    seat = game.seats.get(position=0)
    now = timezone.now()
    return {
        "game": game,
        "seat": tokens.mint(name="fuzz", scope="seats", access="play", email=seat.email, now=now)[
            1
        ],
        "gm": tokens.mint(name="fuzz", scope="gm", access="play", gm=gm, now=now)[1],
    }


def test_every_operation_answers_as_documented(module_server: str, world: dict[str, Any]) -> None:
    document = schemathesis.openapi.from_url(f"{module_server}/api/v1/openapi.json")
    operations = [result.ok() for result in document.get_all_operations()]  # type: ignore[union-attr]
    # The stream lasts minutes by design: test_api_stream reads it.
    operations = [operation for operation in operations if not operation.path.endswith("/stream")]
    assert len(operations) == 16
    for operation in operations:
        _fuzz(operation, module_server, world)


def _fuzz(operation: Any, server: str, world: dict[str, Any]) -> None:
    token = world["gm"] if operation.path.startswith("/api/v1/gm/") else world["seat"]

    @given(case=operation.as_strategy())
    @settings(
        max_examples=25, deadline=None, database=None, suppress_health_check=list(HealthCheck)
    )
    def answers_as_documented(case: Any) -> None:
        parameters = case.path_parameters or {}
        # A real seat and game, so that the calls reach what is behind the 404s.
        if "game_id" in parameters:
            parameters["game_id"] = world["game"].pk
        if "position" in parameters:
            parameters["position"] = 0
        case.call_and_validate(
            base_url=server,
            headers={"Authorization": f"Bearer {token}"},
            # An order the rules refuse is a schema-valid body answered 422, as documented:
            # the rules, not the document, say which orders a game takes.
            excluded_checks=[checks.positive_data_acceptance],
        )

    answers_as_documented()
