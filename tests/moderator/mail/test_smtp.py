"""moderator.mail.smtp.EmailBackend: Django's SMTP backend with clients that tell an
unknown outcome (tests/moderator/mail/test_unknown_outcome.py), which must put on the wire
exactly what Django's puts there."""

from __future__ import annotations

from collections.abc import Iterator
from email.utils import parseaddr
from typing import Any

import pytest
from django.core.mail import EmailMessage, get_connection
from pytest_django.fixtures import Settings

from tests.browser import serving_smtp


class Recorder:
    def __init__(self) -> None:
        self.envelopes: list[tuple[str, list[str], bytes]] = []

    async def handle_DATA(self, server: Any, session: Any, envelope: Any) -> str:
        self.envelopes.append((envelope.mail_from, list(envelope.rcpt_tos), envelope.content))
        return "250 OK"


@pytest.fixture
def recorder(settings: Settings) -> Iterator[Recorder]:
    recorder = Recorder()
    with serving_smtp(recorder, settings):
        yield recorder


@pytest.mark.parametrize(
    ("sender", "to"),
    [
        ("Moderator <moderator@example.org>", ["ann@example.org", "Bob <bob@example.org>"]),
        ("moderator@example.org", ["Zoë Ünal <zoe@example.org>", "o'neil@example.org"]),
    ],
)
def test_the_backend_sends_what_django_s_own_sends(
    recorder: Recorder, sender: str, to: list[str]
) -> None:
    def message() -> EmailMessage:
        return EmailMessage(
            subject="Step 1 of Choice",
            body="Roll: 1 2 3 4 5\n",
            from_email=sender,
            to=to,
            headers={"Date": "Mon, 23 Nov 2026 18:00:00 -0000", "Message-ID": "<1@example.org>"},
        )

    for backend in (
        "django.core.mail.backends.smtp.EmailBackend",
        "moderator.mail.smtp.EmailBackend",
    ):
        assert get_connection(backend).send_messages([message()]) == 1
    ours, django = recorder.envelopes[1], recorder.envelopes[0]
    assert ours == django
    assert ours[:2] == (parseaddr(sender)[1], [parseaddr(address)[1] for address in to])


def test_a_message_without_recipients_is_not_sent(recorder: Recorder) -> None:
    backend = get_connection("moderator.mail.smtp.EmailBackend")
    assert backend.send_messages([EmailMessage(subject="x", body="y", to=[])]) == 0
    assert recorder.envelopes == []
