"""Message bodies are bulk-inserted in one statement with every character kept, and
rendered with numbers as they are."""

from __future__ import annotations

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
