"""The privacy page says what is kept, why and for how long from the settings as they are,
with the operator's own contact and text; every page's footer links to it (every email's
footer: tests/moderator/mail/test_every_kind.py)."""

from __future__ import annotations

import re
from datetime import datetime

import pytest
from django.test import Client
from pytest_django.fixtures import Settings

from games.postal import access
from tests.factories import GMFactory, seat_page, started_game

pytestmark = pytest.mark.django_db


def words(html: str) -> str:
    """The page's text, its tags dropped and its spaces made one."""
    return " ".join(re.sub(r"<[^>]+>", " ", html).split())


def test_the_page_says_each_retention_from_the_settings(settings: Settings) -> None:
    settings.MAIL_RETENTION_DAYS = 14
    settings.LINK_DAYS = 1
    settings.SIGNIN_MINUTES = 10
    settings.SIGNUP_CONFIRM_HOURS = 48
    settings.SESSION_COOKIE_AGE = 7 * 86400
    settings.PUSH_FAILING_DAYS = 9
    page = Client().get("/privacy/")
    assert page.status_code == 200
    text = words(page.content.decode())
    assert "Their text is removed 14 days after it was written" in text
    assert "A link to your seat works for 1 day and is then removed." in text
    assert "A sign-in link or code works for 10 minutes and is removed a day later." in text
    assert "A session ends when you sign out, or 7 days after it began." in text
    assert (
        "The link that confirms a sign-up works for 48 hours; a sign-up never confirmed is "
        "removed a day later." in text
    )
    assert "or once none could be delivered for 9 days." in text
    for heading in ("Who runs this service", "What is kept, why, and for how long",
                    "Who sees what", "What you can ask"):  # fmt: skip
        assert f">{heading}</h2>" in page.content.decode()


def test_the_operator_names_a_contact_and_adds_their_own_text(settings: Settings) -> None:
    unset = Client().get("/privacy/").content.decode()
    assert "have not written their contact here yet" in unset
    assert 'id="operator-text"' not in unset
    settings.PRIVACY_CONTACT = "privacy@club.example"
    settings.PRIVACY_TEXT = "Run by the Club <b>e.V.</b>\n\nSupervisory authority: the state's."
    page = Client().get("/privacy/").content.decode()
    assert (
        'Write about your data to: <a href="mailto:privacy@club.example">'
        "privacy@club.example</a>" in page
    )
    assert (
        '<div class="operator-text" id="operator-text"><p>Run by the Club &lt;b&gt;e.V.&lt;/b&gt;'
        "</p>\n\n<p>Supervisory authority: the state&#x27;s.</p></div>" in page
    )
    settings.PRIVACY_CONTACT = "The Club, 1 Main Street, Springfield"
    page = Client().get("/privacy/").content.decode()
    assert "Write about your data to: The Club, 1 Main Street, Springfield</p>" in page
    assert "mailto:" not in page


def test_the_page_speaks_german() -> None:
    page = Client(headers={"accept-language": "de"}).get("/privacy/").content.decode()
    assert "<h1>Deine Daten</h1>" in page
    assert ">Wer sieht was</h2>" in page


FOOTER = (
    '<p id="privacy-link"><a href="/privacy/">Your data: what this service keeps, and why</a></p>'
)


def test_every_kind_of_page_links_to_it_in_its_footer(now: datetime) -> None:
    game = started_game(now=now, players=2, gm=GMFactory.create(is_staff=True))
    player = Client()
    token = access.mint([game.seats.get(position=0)], now=now)[0]
    player.post(f"/p/{token}/")
    gm = Client()
    gm.force_login(game.gm)
    pages = [
        (Client(), "/"),
        (Client(), "/open/"),
        (Client(), "/privacy/"),
        (Client(), "/p/not-a-link/"),  # a refusal page, without the language switcher
        (player, seat_page(game, 0)),
        (gm, f"/gm/{game.pk}/"),  # the GM panel, without the language switcher
    ]
    for client, url in pages:
        page = client.get(url)
        assert page.status_code in (200, 404), url
        assert page.content.decode().count(FOOTER) == 1, url
