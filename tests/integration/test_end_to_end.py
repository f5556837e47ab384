"""A player's whole round trip with real parts: the report arrives over SMTP, its link
opens in Chromium, the order form is filled and sent, a real Celery worker resolves the
step at its deadline, and the next report arrives over SMTP showing the result."""

from __future__ import annotations

import re
from email.message import EmailMessage
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
from django.utils import timezone
from pytest_django.fixtures import Settings

from games import postal
from games.engines.choice.rules import ChoiceEngine
from games.models import Game, Order, Step
from tests.browser import Inbox, text_of
from tests.factories import choice_game, seat_page
from tests.integration.conftest import Services, wait_for, wait_for_sweeps

if TYPE_CHECKING:
    from playwright.sync_api import Browser

pytestmark = [pytest.mark.integration, pytest.mark.postgres, pytest.mark.redis]

CHOICE = ChoiceEngine()
DEADLINE_SECONDS = 25


def test_a_player_orders_from_the_emailed_link_and_reads_the_result_in_the_next_report(
    services: Services,
    smtp_server: Inbox,
    browser: Browser,
    web_server: str,
    settings: Settings,
    tmp_path: Path,
) -> None:
    settings.SITE_URL = web_server
    services.env.update(
        EMAIL_BACKEND="moderator.mail.smtp.EmailBackend",
        EMAIL_HOST="127.0.0.1",
        EMAIL_PORT=str(smtp_server.port),
        SITE_URL=web_server,
    )
    game = choice_game(3, schedule_spec={"kind": "interval", "seconds": DEADLINE_SECONDS})
    services.worker()
    services.beat()
    game = postal.start_game(game.pk, now=timezone.now())

    wait_for(lambda: len(smtp_server.to("ann@example.org")) == 1, 60, "ann's report", services)
    report = text_of(smtp_server.to("ann@example.org")[0])
    link = re.search(r"(http://\S+/p/[\w-]+/)", report)
    assert link is not None, report

    # ann orders what the NMR default would play, but types it into the form's blocks.
    state = CHOICE.state_from_json(game.state)
    order = CHOICE.default(state, 0)
    page = browser.new_page()
    page.goto(link[1])
    assert page.locator("h1").first.inner_text() != ""
    page.click("button[type=submit]")
    page.wait_for_url(f"{web_server}{seat_page(game, 0)}")
    for line in order.lines:
        n = line.round
        page.check(f"input[name=r{n}_kind][value={line.choice.kind}]")
        page.select_option(f"select[name=r{n}_value]", str(line.choice.value))
        dice = (*line.choice.first, *line.choice.second)
        for letter, die in zip("abcd", dice, strict=True):
            page.select_option(f"select[name=r{n}_{letter}]", str(die))
    with page.expect_navigation():
        page.click("#blocks-form button[type=submit]")
    page.wait_for_url(f"{web_server}{seat_page(game, 0)}")
    page.screenshot(path=str(tmp_path / "after-order.png"), full_page=True)
    canonical = CHOICE.canonical(state, 0, order)
    sent = Order.objects.get(seat__position=0)
    assert (sent.source, sent.canonical) == ("web", canonical)
    assert canonical.splitlines()[0] in page.content()

    # Nobody else orders: at the deadline the worker's sweep resolves the step.
    def resolved() -> bool:
        return Step.objects.filter(game=game, number=1, status="done").exists()

    wait_for(resolved, DEADLINE_SECONDS + 30, "the worker to resolve step 1", services)
    step = Step.objects.get(game=game, number=1)
    assert step.closed_by == "deadline"
    assert list(
        Order.objects.filter(source="default").values_list("seat__position", flat=True)
    ) == [
        1,
        2,
    ]

    # The next report arrives over SMTP with ann's order in what happened.
    def reports() -> list[EmailMessage]:
        return [
            m
            for m in smtp_server.to("ann@example.org")
            if "postal turn 2" in str(m["Subject"]).lower()
        ]

    wait_for(lambda: len(reports()) == 1, 60, "ann's second report", services)
    second = text_of(reports()[0])
    for written in canonical.splitlines():
        number, text = written.split(": ", 1)
        assert f"ann, round {number}: {text}" in second
    wait_for_sweeps(1, services)
    assert len(reports()) == 1
    assert Game.objects.get(pk=game.pk).step_number == 2
