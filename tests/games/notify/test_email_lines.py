"""No line of a report is longer than email allows (RFC 5322: 998 characters). Django's
mail falls back to quoted-printable for a part with a longer line, which is correct but
costs the mail workers most of their time per message: the board templates put table
cells and list items on lines of their own."""

from __future__ import annotations

import pytest
from django.utils import timezone

from games.engines import registry
from moderator.mail.models import OutboundEmail
from tests.factories import started_game

pytestmark = pytest.mark.django_db

LIMIT = 998


@pytest.mark.parametrize("seed", [bytes([n]) * 32 for n in range(3)])
@pytest.mark.parametrize("key", sorted(registry.ENGINES))
def test_every_line_of_every_report_of_a_started_game_fits_an_email_line(
    key: str, seed: bytes
) -> None:
    engine = registry.get(key)
    seats = max(engine.min_players, min(8, engine.max_players))
    game = started_game(
        key, now=timezone.now(), seed=seed, players=seats, title=f"Long lines {key}"
    )
    reports = OutboundEmail.objects.filter(game=game, kind="report")
    assert reports.count() == seats
    longest = {
        (email.to, part): max(len(line) for line in getattr(email, part).splitlines())
        for email in reports
        for part in ("text", "html")
    }
    assert {where: n for where, n in longest.items() if n > LIMIT} == {}
