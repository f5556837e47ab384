from __future__ import annotations

import pytest
from django.core import mail
from django.core.mail import EmailMultiAlternatives

from moderator.mail import outbox
from moderator.mail.models import OutboundEmail

pytestmark = pytest.mark.django_db


def row(**kwargs) -> OutboundEmail:
    fields = {
        "dedupe_key": "test:1",
        "kind": "report",
        "to": "ann@example.org",
        "subject": "Step 1",
        "text": "Hello",
        "html": "<p>Hello</p>",
        "headers": {"X-Game": "1"},
    } | kwargs
    return OutboundEmail.objects.create(**fields)


def test_a_pending_row_is_sent_once_with_text_html_and_headers():
    email = row()
    assert outbox.send(email.pk) == "sent"
    assert outbox.send(email.pk) == "sent"
    assert len(mail.outbox) == 1
    message = mail.outbox[0]
    assert isinstance(message, EmailMultiAlternatives)
    assert (message.to, message.subject, message.body) == (["ann@example.org"], "Step 1", "Hello")
    assert message.alternatives[0][0] == "<p>Hello</p>"
    assert message.extra_headers == {"X-Game": "1"}
    email.refresh_from_db()
    assert (email.state, email.attempts) == ("sent", 1)


def test_a_failed_send_is_recorded_on_the_row(settings):
    settings.EMAIL_BACKEND = "tests.moderator.mail.test_outbox.RefusingBackend"
    email = row()
    assert outbox.send(email.pk) == "failed"
    email.refresh_from_db()
    assert (email.state, email.last_error) == ("failed", "550 no such mailbox")


def test_a_header_with_a_line_break_never_reaches_a_message():
    email = row(subject="Step 1\r\nBcc: everyone@example.org")
    assert outbox.send(email.pk) == "failed"
    assert mail.outbox == []
    email.refresh_from_db()
    assert email.last_error == "the subject must be a single line"


def test_the_builder_refuses_line_breaks_in_the_address():
    with pytest.raises(outbox.HeaderInjection):
        outbox.build("final", to="a@example.org\nBcc: b@example.org", dedupe_key="k", context={})


class RefusingBackend:
    def __init__(self, *args, **kwargs):
        pass

    def send_messages(self, messages):
        raise OSError("550 no such mailbox")
