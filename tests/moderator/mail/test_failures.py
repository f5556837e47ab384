"""Which failures are retried (transient), which fail at once (permanent), which may have
been delivered (unknown: never retried by themselves), and when."""

from __future__ import annotations

import smtplib
import socket
from datetime import timedelta

import pytest
import requests
from anymail.exceptions import (
    AnymailAPIError,
    AnymailInvalidAddress,
    AnymailRecipientsRefused,
    AnymailRequestsAPIError,
)
from django.core.mail import BadHeaderError
from pytest_django.fixtures import Settings
from urllib3 import HTTPConnectionPool
from urllib3.exceptions import MaxRetryError, ProtocolError

from moderator.mail import building, sending
from moderator.mail.sending import Failure
from moderator.mail.smtp import OutcomeUnknown

TRANSIENT, PERMANENT, UNKNOWN = Failure.TRANSIENT, Failure.PERMANENT, Failure.UNKNOWN


def esp_error(status: int) -> AnymailRequestsAPIError:
    response = requests.Response()
    response.status_code, response.reason, response._content = status, "reason", b"{}"
    return AnymailRequestsAPIError("the ESP said no", response=response)


def esp_unreachable() -> AnymailRequestsAPIError:
    try:
        try:
            raise requests.ConnectionError("connection refused")
        except requests.ConnectionError as cause:
            raise AnymailRequestsAPIError("Error posting to the ESP") from cause
    except AnymailRequestsAPIError as error:
        return error


# What requests raises when nothing listens at the ESP's address.
POOL, REFUSED = HTTPConnectionPool("127.0.0.1", 9), ConnectionRefusedError(111, "refused")


def esp_lost(cause: requests.RequestException) -> AnymailRequestsAPIError:
    """What anymail raises when requests raised ``cause``: no response, no status."""
    try:
        try:
            raise cause
        except requests.RequestException as lost:
            raise AnymailRequestsAPIError("Error posting to the ESP") from lost
    except AnymailRequestsAPIError as error:
        return error


def recipients(*codes: int) -> smtplib.SMTPRecipientsRefused:
    return smtplib.SMTPRecipientsRefused(
        {f"p{n}@example.org": (code, b"text") for n, code in enumerate(codes)}
    )


@pytest.mark.parametrize(
    ("error", "failure"),
    [
        (ConnectionRefusedError(111, "Connection refused"), TRANSIENT),
        (TimeoutError("timed out"), TRANSIENT),
        (socket.gaierror(-3, "Temporary failure in name resolution"), TRANSIENT),
        (smtplib.SMTPServerDisconnected("Connection unexpectedly closed"), TRANSIENT),
        (smtplib.SMTPConnectError(421, b"4.7.0 too busy"), TRANSIENT),
        (smtplib.SMTPResponseException(421, b"4.4.2 timeout"), TRANSIENT),
        (smtplib.SMTPDataError(451, b"4.3.0 try again later"), TRANSIENT),
        (smtplib.SMTPSenderRefused(452, b"4.3.1 out of storage", "m@example.org"), TRANSIENT),
        (recipients(450), TRANSIENT),
        (recipients(450, 451), TRANSIENT),
        (recipients(550), PERMANENT),
        (recipients(450, 550), PERMANENT),
        (smtplib.SMTPDataError(554, b"5.7.1 rejected as spam"), PERMANENT),
        (smtplib.SMTPSenderRefused(553, b"5.7.1 sender not allowed", "m@example.org"), PERMANENT),
        (smtplib.SMTPAuthenticationError(535, b"5.7.8 bad credentials"), PERMANENT),
        (smtplib.SMTPNotSupportedError("SMTPUTF8 not supported"), PERMANENT),
        (esp_error(500), TRANSIENT),
        (esp_error(503), TRANSIENT),
        (esp_error(429), TRANSIENT),
        (esp_unreachable(), TRANSIENT),
        (esp_lost(requests.ConnectionError(MaxRetryError(POOL, "/email", REFUSED))), TRANSIENT),
        (esp_lost(requests.ConnectTimeout("connect timed out")), TRANSIENT),
        (esp_lost(requests.ReadTimeout("read timed out")), UNKNOWN),
        (esp_lost(requests.ConnectionError(ProtocolError("Connection aborted."))), UNKNOWN),
        (esp_lost(requests.exceptions.ChunkedEncodingError("cut off")), UNKNOWN),
        (OutcomeUnknown("lost after the message was sent"), UNKNOWN),
        (AnymailAPIError("no status"), TRANSIENT),
        (esp_error(400), PERMANENT),
        (esp_error(401), PERMANENT),
        (esp_error(422), PERMANENT),
        (AnymailRecipientsRefused(), PERMANENT),
        (AnymailInvalidAddress("not an address"), PERMANENT),
        (building.HeaderInjection("the subject must be a single line"), PERMANENT),
        (BadHeaderError("Header values can't contain newlines"), PERMANENT),
        (ValueError("a bug"), PERMANENT),
    ],
    ids=lambda value: type(value).__name__ if isinstance(value, Exception) else value.value,
)
def test_each_failure_is_classified(error: BaseException, failure: Failure) -> None:
    assert sending.classify(error) is failure


def test_an_esp_error_that_cannot_describe_itself_is_still_described() -> None:
    # anymail's str() needs a response when there is a status code.
    error = AnymailAPIError("the ESP said no", status_code=503)
    assert sending.describe(error) == "AnymailAPIError: ('the ESP said no',)"


@pytest.mark.parametrize(
    ("attempts", "seconds"),
    [(1, 30), (2, 60), (3, 120), (4, 240), (7, 1920), (8, 3600), (20, 3600)],
)
def test_the_backoff_doubles_up_to_the_cap(attempts: int, seconds: int) -> None:
    assert sending.retry_delay(attempts, jitter=1.0) == timedelta(seconds=seconds)
    assert sending.retry_delay(attempts, jitter=0.5) == timedelta(seconds=seconds / 2)


def test_the_backoff_follows_the_settings(settings: Settings) -> None:
    settings.MAIL_RETRY_BASE_SECONDS, settings.MAIL_RETRY_CAP_SECONDS = 1, 5
    delays = [sending.retry_delay(n, jitter=1.0).total_seconds() for n in range(1, 6)]
    assert delays == [1, 2, 4, 5, 5]


def test_the_jitter_is_drawn_between_half_and_all_of_the_delay(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    drawn = []

    def uniform(low: float, high: float) -> float:
        drawn.append((low, high))
        return 0.75

    monkeypatch.setattr("moderator.mail.sending.random.uniform", uniform)
    assert sending.retry_delay(2) == timedelta(seconds=45)
    assert drawn == [(0.5, 1.0)]
