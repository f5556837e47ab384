"""Django's SMTP backend, with the envelope's addresses written without parsing them again
for every message.

Django's backend runs both envelope addresses of every message through
``sanitize_address``, which parses them with the email package's header parser: a tenth of
what a mail worker spent on a report. The sender is the same address for every message
(parsed once per process here); a recipient that is a plain ``local@domain`` of ASCII
letters, digits and the characters an address allows unquoted is what ``sanitize_address``
would write for it, so it is written as it is (a test holds the two to the same output).
Every other address goes through ``sanitize_address``.

Self-hosters set ``EMAIL_BACKEND=moderator.mail.smtp.EmailBackend`` (Django's own works
too, a little slower).
"""

from __future__ import annotations

import re
import smtplib
from functools import lru_cache

from django.conf import settings
from django.core.mail import EmailMessage
from django.core.mail.backends import smtp
from django.core.mail.message import sanitize_address

# A local part of atext and dots, at a domain of labels of 1 to 63 letters, digits and
# hyphens: sanitize_address writes such an address as it is.
_PLAIN = re.compile(
    r"[A-Za-z0-9!#$%&'*+/=?^_`{|}~.-]+@(?:[A-Za-z0-9-]{1,63}\.)*[A-Za-z0-9-]{1,63}\Z"
)


@lru_cache(maxsize=64)
def _sanitized(address: str, encoding: str) -> str:
    return sanitize_address(address, encoding)


def envelope_address(address: str, encoding: str) -> str:
    """``sanitize_address(address, encoding)``, without the parser for a plain address."""
    if _PLAIN.match(address):
        return address
    return _sanitized(address, encoding)


class EmailBackend(smtp.EmailBackend):
    def _send(self, email_message: EmailMessage) -> bool:
        """Django's ``_send``, the addresses written by envelope_address."""
        if not email_message.recipients():
            return False
        encoding = email_message.encoding or settings.DEFAULT_CHARSET
        from_email = envelope_address(email_message.from_email, encoding)
        recipients = [envelope_address(addr, encoding) for addr in email_message.recipients()]
        message = email_message.message()
        try:
            # send_messages() opened the connection; Django's MIME classes take linesep.
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
