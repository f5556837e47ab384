"""Django's SMTP backend, with the envelope's addresses written without parsing them again
for every message, and a connection that tells a message the server may have kept from
one it cannot have.

Django's backend runs both envelope addresses of every message through
``sanitize_address``, which parses them with the email package's header parser: a tenth of
what a mail worker spent on a report. The sender is the same address for every message
(parsed once per process here); a recipient that is a plain ``local@domain`` of ASCII
letters, digits and the characters an address allows unquoted is what ``sanitize_address``
would write for it, so it is written as it is (a test holds the two to the same output).
Every other address goes through ``sanitize_address``.

A connection lost once the server has answered DATA with 354 and the message is on its
way (or sent, its 250 not yet read) raises ``OutcomeUnknown``: the server may have queued
the message, so sending it again may deliver it twice. Lost before that (connecting,
EHLO, MAIL FROM, RCPT TO, the DATA command itself), the server has accepted nothing, and
smtplib's own error is raised.

Self-hosters set ``EMAIL_BACKEND=moderator.mail.smtp.EmailBackend`` (Django's own works
too, a little slower, and cannot tell a connection lost after the message from one lost
before it).
"""

from __future__ import annotations

import re
import smtplib
import threading
from collections.abc import Sequence
from functools import lru_cache
from typing import Any

from django.conf import settings
from django.core.mail import EmailMessage
from django.core.mail.backends import smtp
from django.core.mail.message import sanitize_address

# A local part of atext and dots, at a domain of labels of 1 to 63 letters, digits and
# hyphens: sanitize_address writes such an address as it is.
_PLAIN = re.compile(
    r"[A-Za-z0-9!#$%&'*+/=?^_`{|}~.-]+@(?:[A-Za-z0-9-]{1,63}\.)*[A-Za-z0-9-]{1,63}\Z"
)
# The server's "start mail input": from here on the message is the server's to keep.
_GO_AHEAD = 354


@lru_cache(maxsize=64)
def _sanitized(address: str, encoding: str) -> str:
    return sanitize_address(address, encoding)


def envelope_address(address: str, encoding: str) -> str:
    """``sanitize_address(address, encoding)``, without the parser for a plain address."""
    if _PLAIN.match(address):
        return address
    return _sanitized(address, encoding)


class OutcomeUnknown(smtplib.SMTPServerDisconnected):
    """The connection was lost after the server took the message's DATA and before it
    confirmed it: the message may have been queued. Still an SMTPServerDisconnected, so
    that code which knows only smtplib's errors sees what it always saw."""


class _NotesTheGoAhead:
    """Mixed into smtplib's clients: ``data()`` raises OutcomeUnknown for a connection
    lost (or a reply unreadable) after the server's 354. smtplib's ``data()`` reads two
    replies, to the DATA command and to the message; ``getreply()`` notes them while
    ``data()`` runs."""

    _data_replies: list[int] | None = None

    def data(self, msg: Any) -> tuple[int, bytes]:
        self._data_replies = []
        try:
            code, reply = super().data(msg)  # type: ignore[misc]
        except (OSError, smtplib.SMTPException) as error:
            if self._data_replies[:1] != [_GO_AHEAD]:
                raise  # refused or lost before the message went out: nothing was taken
            raise OutcomeUnknown(
                "the connection to the mail server was lost after the message was sent, "
                f"before the server confirmed it ({error})"
            ) from error
        finally:
            self._data_replies = None
        if code < 200:  # smtplib's -1: no reply code could be read
            raise OutcomeUnknown(
                "the mail server's reply to the message could not be read "
                f"({reply.decode(errors='replace')})"
            )
        return code, reply

    def getreply(self) -> tuple[int, bytes]:
        code, reply = super().getreply()  # type: ignore[misc]
        if self._data_replies is not None:
            self._data_replies.append(code)
        return code, reply


class SMTP(_NotesTheGoAhead, smtplib.SMTP):
    pass


class SMTP_SSL(_NotesTheGoAhead, smtplib.SMTP_SSL):
    pass


class EmailBackend(smtp.EmailBackend):
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.sending = threading.RLock()

    @property
    def connection_class(self) -> type[smtplib.SMTP]:
        return SMTP_SSL if self.use_ssl else SMTP

    def send_messages(self, email_messages: Sequence[EmailMessage]) -> int:
        """Django's ``send_messages``, each message sent by ``send_one``: Django's sends
        through its private ``_send`` and holds its private lock, so this one is written
        with the backend's public parts (open, close, connection) and a lock of its own."""
        if not email_messages:
            return 0
        with self.sending:
            new_connection = self.open()
            if not self.connection or new_connection is None:
                return 0  # open() failed silently: sending would be pointless
            try:
                return sum(self.send_one(message) for message in email_messages)
            finally:
                if new_connection:
                    self.close()

    def send_one(self, email_message: EmailMessage) -> bool:
        """Send one message over the open connection, the addresses written by
        envelope_address; whether it was sent."""
        if not email_message.recipients():
            return False
        encoding = email_message.encoding or settings.DEFAULT_CHARSET
        from_email = envelope_address(email_message.from_email, encoding)
        recipients = [envelope_address(addr, encoding) for addr in email_message.recipients()]
        message = email_message.message()
        try:
            # Django's MIME classes take linesep.
            self.connection.sendmail(  # type: ignore[union-attr]
                from_email,
                recipients,
                message.as_bytes(linesep="\r\n"),  # type: ignore[call-arg]
            )
        except smtplib.SMTPException:
            if not self.fail_silently:
                raise
            return False
        return True
