"""Django's SMTP backend, with a connection that tells a message the server may have kept
from one it cannot have.

A connection lost once the server has answered DATA with 354 and the message is on its
way (or sent, its 250 not yet read) raises ``OutcomeUnknown``: the server may have queued
the message, so sending it again may deliver it twice, and the outbox marks the row
unknown for a human to decide. Lost before that (connecting, EHLO, MAIL FROM, RCPT TO, the
DATA command itself), the server has accepted nothing, and smtplib's own error is raised,
which the outbox retries. Django's backend cannot tell the two apart; this one differs
from it only in the client class it opens, through Django's public ``connection_class``.

Self-hosters set ``EMAIL_BACKEND=moderator.mail.smtp.EmailBackend`` (Django's own works
too, and every lost connection is then retried: a message may arrive twice).
"""

from __future__ import annotations

import smtplib
from typing import Any

from django.core.mail.backends import smtp

# The server's "start mail input": from here on the message is the server's to keep.
_GO_AHEAD = 354


class OutcomeUnknown(smtplib.SMTPServerDisconnected):
    """The connection was lost after the server took the message's DATA and before it
    confirmed it: the message may have been queued. Still an SMTPServerDisconnected, so
    that code which knows only smtplib's errors sees what it always saw."""


class _NotesTheGoAhead(smtplib.SMTP):
    """Mixed into smtplib's clients: ``data()`` raises OutcomeUnknown for a connection
    lost (or a reply unreadable) after the server's 354. smtplib's ``data()`` reads two
    replies, to the DATA command and to the message; ``getreply()`` notes them while
    ``data()`` runs."""

    _data_replies: list[int] | None = None

    def data(self, msg: Any) -> tuple[int, bytes]:
        self._data_replies = []
        try:
            code, reply = super().data(msg)
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
        code, reply = super().getreply()
        if self._data_replies is not None:
            self._data_replies.append(code)
        return code, reply


class SMTP(_NotesTheGoAhead):
    """smtplib's client over plain TCP (or STARTTLS) that tells an unknown outcome."""


class SMTP_SSL(_NotesTheGoAhead, smtplib.SMTP_SSL):
    """The same over implicit TLS (EMAIL_USE_SSL)."""


class EmailBackend(smtp.EmailBackend):
    """Django's SMTP backend, its connections made by the clients above."""

    @property
    def connection_class(self) -> type[smtplib.SMTP]:
        return SMTP_SSL if self.use_ssl else SMTP
