"""The local mailbox of the embedded default."""

from __future__ import annotations

import os
import re
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest
from django.core.mail import EmailMultiAlternatives, get_connection
from django.test import Client
from django.urls import include, path
from pytest_django.fixtures import Settings

from moderator.mail import sending
from moderator.mail.models import OutboundEmail
from moderator.mail.views import linkify

pytestmark = [pytest.mark.django_db, pytest.mark.urls(__name__)]

# moderator.urls includes the mailbox only when DEBUG is on at import; the tests mount it.
urlpatterns = [path("mailbox/", include("moderator.mail.urls"))]

FILE_BACKEND = "django.core.mail.backends.filebased.EmailBackend"


@pytest.fixture
def mailbox(settings: Settings, tmp_path: Path) -> Path:
    settings.DEBUG = True
    settings.EMAIL_BACKEND = FILE_BACKEND
    settings.EMAIL_FILE_PATH = tmp_path
    return tmp_path


def message(subject: str, to: str, text: str, html: str = "") -> EmailMultiAlternatives:
    email = EmailMultiAlternatives(subject, text, "moderator@localhost", [to])
    if html:
        email.attach_alternative(html, "text/html")
    return email


def write(directory: Path, name: str, *messages: EmailMultiAlternatives, mtime: int) -> None:
    """Messages written by the file backend over one connection, renamed to ``name``."""
    before = set(directory.iterdir())
    get_connection(FILE_BACKEND, file_path=str(directory)).send_messages(list(messages))
    (written,) = set(directory.iterdir()) - before
    written.rename(directory / name)
    os.utime(directory / name, (mtime, mtime))


def test_the_mailbox_lists_every_message_in_the_files_newest_first(
    client: Client, mailbox: Path
) -> None:
    write(mailbox, "old.log", message("First", "ann@example.org", "one"), mtime=1_000)
    write(
        mailbox,
        "new.log",
        message("Second", "bob@example.org", "two"),
        message("Third", "cy@example.org", "three"),
        mtime=2_000,
    )
    response = client.get("/mailbox/")
    assert response.status_code == 200
    letters = response.context["letters"]
    assert [(x.subject, x.to, x.url) for x in letters] == [
        ("Third", "cy@example.org", "/mailbox/files/new.log/1/"),
        ("Second", "bob@example.org", "/mailbox/files/new.log/0/"),
        ("First", "ann@example.org", "/mailbox/files/old.log/0/"),
    ]
    assert '<a href="/mailbox/files/new.log/1/">Third</a>' in response.text


def test_a_message_page_links_its_urls_and_sandboxes_its_html(
    client: Client, mailbox: Path
) -> None:
    text = "Your order form: http://127.0.0.1:8000/p/abc/.\n<script>alert(1)</script>"
    html = '<p>Hi & "bye"</p><script>alert(2)</script>'
    write(mailbox, "a.log", message("Step 1", "ann@example.org", text, html), mtime=1_000)
    response = client.get("/mailbox/files/a.log/0/")
    assert response.status_code == 200
    letter = response.context["letter"]
    assert (letter.subject, letter.to) == ("Step 1", "ann@example.org")
    assert letter.date.endswith(("+0000", "-0000"))
    assert str(response.context["text"]) == (
        'Your order form: <a href="http://127.0.0.1:8000/p/abc/">http://127.0.0.1:8000/p/abc/</a>.'
        "\n&lt;script&gt;alert(1)&lt;/script&gt;"
    )
    srcdoc = "&lt;p&gt;Hi &amp; &quot;bye&quot;&lt;/p&gt;&lt;script&gt;alert(2)&lt;/script&gt;"
    assert f'<iframe sandbox="" srcdoc="{srcdoc}"' in response.text
    assert "<script>" not in response.text


def test_a_message_sent_through_the_outbox_shows_in_the_mailbox(
    client: Client, mailbox: Path, now: datetime
) -> None:
    email = OutboundEmail.objects.create(
        dedupe_key="k", kind="report", to="ann@example.org", subject="Step 1", text="Hello"
    )
    assert sending.send(email.pk, now=now) == "sent"
    response = client.get("/mailbox/")
    (letter,) = response.context["letters"]
    assert (letter.subject, letter.to) == ("Step 1", "ann@example.org")
    assert client.get(letter.url).context["letter"].text == "Hello"


@pytest.mark.parametrize(
    "url",
    [
        "/mailbox/files/nope.log/0/",
        "/mailbox/files/a.log/1/",
        "/mailbox/files/..%2Fa.log/0/",
        "/mailbox/files/..%2F..%2Fmoderator%2Fsettings.py/0/",
        "/mailbox/files/../0/",
        "/mailbox/outbox/999999/",
    ],
)
def test_an_unknown_message_is_not_found(client: Client, mailbox: Path, url: str) -> None:
    (mailbox / "inner").mkdir()
    write(mailbox / "inner", "a.log", message("S", "ann@example.org", "t"), mtime=1_000)
    write(mailbox, "a.log", message("S", "ann@example.org", "t"), mtime=1_000)
    assert client.get(url).status_code == 404


def test_with_another_backend_the_mailbox_lists_the_outbox(
    client: Client, settings: Settings
) -> None:
    settings.DEBUG = True
    settings.EMAIL_BACKEND = "anymail.backends.test.EmailBackend"
    first = OutboundEmail.objects.create(
        dedupe_key="a", kind="report", to="ann@example.org", subject="One", text="see https://x.org"
    )
    second = OutboundEmail.objects.create(
        dedupe_key="b", kind="report", to="bob@example.org", subject="Two", text="t", html="<b>"
    )
    response = client.get("/mailbox/")
    assert [(x.subject, x.url) for x in response.context["letters"]] == [
        ("Two", f"/mailbox/outbox/{second.pk}/"),
        ("One", f"/mailbox/outbox/{first.pk}/"),
    ]
    page = client.get(f"/mailbox/outbox/{first.pk}/")
    assert str(page.context["text"]) == 'see <a href="https://x.org">https://x.org</a>'
    assert "<iframe" not in page.text


def test_the_mailbox_is_not_there_without_debug(
    client: Client, mailbox: Path, settings: Settings
) -> None:
    settings.DEBUG = False
    assert client.get("/mailbox/").status_code == 404


def test_only_http_and_https_urls_become_links() -> None:
    text = 'javascript:alert(1) ftp://x.org (https://a.org/?q=1&r=2) http://b.org/"x'
    assert str(linkify(text)) == (
        "javascript:alert(1) ftp://x.org "
        '(<a href="https://a.org/?q=1&amp;r=2">https://a.org/?q=1&amp;r=2</a>) '
        '<a href="http://b.org/">http://b.org/</a>&quot;x'
    )


def game_message(subject: str, to: str, game: int) -> EmailMultiAlternatives:
    email = message(subject, to, "t")
    email.extra_headers["List-Id"] = f"<game-{game}.localhost>"
    return email


def listed(response: Any) -> list[tuple[str, str]]:
    return [(letter.subject, letter.to) for letter in response.context["letters"]]


def test_the_mailbox_shows_fifty_emails_a_page_newest_first(client: Client, mailbox: Path) -> None:
    for number in range(12):
        batch = [message(f"Email {number * 10 + n}", "ann@example.org", "t") for n in range(10)]
        write(mailbox, f"{number:02d}.log", *batch, mtime=1_000 + number)
    first = client.get("/mailbox/")
    last = client.get("/mailbox/?page=3")
    assert [subject for subject, _ in listed(first)] == [f"Email {n}" for n in range(119, 69, -1)]
    assert [subject for subject, _ in listed(last)] == [f"Email {n}" for n in range(19, -1, -1)]
    assert first.context["page"].paginator.num_pages == 3
    assert re.findall(r'<nav aria-label="Pages".*?</nav>', first.text, re.S) == [
        '<nav aria-label="Pages" class="row">\n\n<span>Page 1 of 3</span>\n'
        '<a href="?page=2" rel="next">Next</a> <a href="?page=3">Last</a>\n</nav>'
    ]
    assert client.get("/mailbox/?page=99").context["page"].number == 3


def test_the_mailbox_filters_by_recipient_in_any_case_and_by_game(
    client: Client, mailbox: Path
) -> None:
    write(
        mailbox,
        "a.log",
        game_message("Ann in 7", "Ann@Example.org", 7),
        game_message("Bob in 7", "bob@example.org", 7),
        game_message("Ann in 8", "ann@example.org", 8),
        message("No game", "ann@example.org", "t"),
        mtime=1_000,
    )
    assert listed(client.get("/mailbox/?to=ANN@example")) == [
        ("No game", "ann@example.org"),
        ("Ann in 8", "ann@example.org"),
        ("Ann in 7", "Ann@Example.org"),
    ]
    assert listed(client.get("/mailbox/?game=7")) == [
        ("Bob in 7", "bob@example.org"),
        ("Ann in 7", "Ann@Example.org"),
    ]
    response = client.get("/mailbox/?to=ann&game=8&page=1")
    assert listed(response) == [("Ann in 8", "ann@example.org")]
    assert response.context["games"] == [(7, ""), (8, "")]


def test_a_filter_that_is_no_game_is_said_and_lists_every_email(
    client: Client, mailbox: Path
) -> None:
    write(mailbox, "a.log", game_message("One", "ann@example.org", 7), mtime=1_000)
    response = client.get("/mailbox/?game=seven")
    assert response.status_code == 200
    assert listed(response) == [("One", "ann@example.org")]
    assert re.findall(r'<ul class="errors" id="filter-errors"><li>(.*?)</li>', response.text) == [
        "Game: Choose a game from the list. The filter was not applied."
    ]


def test_with_another_backend_the_outbox_is_paginated_and_filtered(
    client: Client, settings: Settings
) -> None:
    settings.DEBUG = True
    settings.EMAIL_BACKEND = "anymail.backends.test.EmailBackend"
    OutboundEmail.objects.bulk_create(
        OutboundEmail(
            dedupe_key=f"k{n}", kind="report", to=f"p{n % 2}@example.org", subject=f"S{n}", text="t"
        )
        for n in range(60)
    )
    response = client.get("/mailbox/?to=P1@")
    assert [subject for subject, _ in listed(response)] == [f"S{n}" for n in range(59, 0, -2)]
    assert response.context["page"].paginator.count == 30
    assert len(listed(client.get("/mailbox/"))) == 50
