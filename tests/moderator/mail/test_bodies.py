"""Message bodies are bulk-inserted in one statement with every character kept, rendered
with numbers as they are, and made into MIME with boundaries of their own."""

from __future__ import annotations

import re
from email import message_from_bytes, policy
from email.message import EmailMessage

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from pytest_django.fixtures import Settings

from moderator.mail import building, queueing
from moderator.mail.models import OutboundEmail

pytestmark = pytest.mark.django_db

# What an array literal would have to escape, and what HTML and plain text hold.
AWKWARD = "He said \"no\" \\ {a,b} 'quoted' ⚂ ⚀\nline two\t<b>&amp;</b>"


def test_a_batch_of_emails_is_one_insert_and_keeps_every_character() -> None:
    rows = [
        OutboundEmail(
            dedupe_key=f"body:{n}",
            kind="report",
            to=f"p{n}@example.org",
            subject=f"Step {n}",
            text=f"{AWKWARD} {n}",
            html=f"<p>{AWKWARD} {n}</p>",
        )
        for n in range(3)
    ]
    with CaptureQueriesContext(connection) as queries:
        queueing.queue(rows)
    inserts = [q["sql"] for q in queries if q["sql"].startswith('INSERT INTO "mail_outboundemail"')]
    assert len(inserts) == 1
    stored = list(OutboundEmail.objects.order_by("dedupe_key").values_list("text", "html"))
    assert stored == [(f"{AWKWARD} {n}", f"<p>{AWKWARD} {n}</p>") for n in range(3)]


def test_emails_write_numbers_as_they_are_whatever_the_locale_formats_say(
    settings: Settings,
) -> None:
    from django.template.loader import render_to_string

    settings.TEMPLATES = [
        {
            "BACKEND": "django.template.backends.django.DjangoTemplates",
            "OPTIONS": {
                "loaders": [
                    ("django.template.loaders.locmem.Loader", {"n.txt": "{{ n }} <{{ s }}>"})
                ]
            },
        }
    ]
    settings.USE_THOUSAND_SEPARATOR = True
    context = {"n": 12345, "s": "a&b"}
    assert render_to_string("n.txt", context) == "12,345 <a&amp;b>"
    assert building.render("n.txt", context) == "12345 <a&amp;b>"
    assert building.render(["missing.txt", "n.txt"], context) == "12345 <a&amp;b>"


def test_a_message_made_twice_has_fresh_random_boundaries_and_reads_back_whole() -> None:
    # The boundaries are set when the message is made (building.Message), so Python's
    # generator does not draw its own and search the message for it.
    row = OutboundEmail(
        pk=7,
        kind="report",
        to="p@example.org",
        subject="Step 2",
        message_id="<m7@example.org>",
        text=AWKWARD,
        html=f"<p>{AWKWARD}</p>",
        attachments=[
            {"filename": "step.ics", "content": "BEGIN:VCALENDAR", "mimetype": "text/calendar"}
        ],
    )
    made = [building.email_message(row).message() for _ in range(2)]
    boundaries = [
        part.get_boundary() for message in made for part in message.walk() if part.is_multipart()
    ]
    assert len(boundaries) == 4  # mixed (text and HTML, the attachment) and alternative, twice
    assert all(re.fullmatch(r"=_[0-9a-f]{32}", str(boundary)) for boundary in boundaries)
    assert len(set(boundaries)) == 4
    read = message_from_bytes(made[0].as_bytes(), policy=policy.default)
    assert isinstance(read, EmailMessage)
    assert [part.get_content_type() for part in read.walk()] == [
        "multipart/mixed",
        "multipart/alternative",
        "text/plain",
        "text/html",
        "text/calendar",
    ]
    text, html, calendar = (part.get_content() for part in read.walk() if not part.is_multipart())
    assert (text, html, calendar) == (AWKWARD, f"<p>{AWKWARD}</p>", "BEGIN:VCALENDAR")
