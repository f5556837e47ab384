"""The one email builder: every email is rendered from three templates,
``emails/<kind>/subject.txt``, ``body.txt`` and ``body.html``, into an unsaved
``OutboundEmail`` row, which holds everything needed to send it again; ``email_message``
turns a row into Django's message, with the headers set in one place (threading, List-Id,
Reply-To, Auto-Submitted).

Every header value is checked twice: when the row is built (at input), and when its message
is made (a row written some other way, or edited in the database, carries nothing into a
message either).
"""

from __future__ import annotations

import re
import secrets
from collections.abc import Mapping
from email.utils import getaddresses, make_msgid
from functools import lru_cache
from typing import TYPE_CHECKING, Any

from anymail.message import AnymailMessage
from django.conf import settings
from django.core.exceptions import ValidationError
from django.core.mail.message import SafeMIMEMultipart, SafeMIMEText
from django.core.validators import validate_email
from django.template import Context
from django.template.loader import select_template
from django.urls import reverse
from django.utils import translation

from moderator.mail.models import OutboundEmail

if TYPE_CHECKING:
    from games.models import Game

THREAD_KEY = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,99}")


class HeaderInjection(ValueError):
    """A header value (subject, address, thread key) holding a line break or a control
    character: refused before it can reach a message."""


# Every character str.splitlines() breaks at: some mail libraries and ESP APIs fold or
# split header values on these too, not only on CR and LF.
LINE_BREAKS = frozenset("\n\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029")
_LINE_BREAK_CHAR = re.compile(f"[{re.escape(''.join(sorted(LINE_BREAKS)))}]")
_CONTROL_CHAR = re.compile("[\x00-\x1f\x7f]")


def clean_header(value: str, what: str) -> str:
    if _LINE_BREAK_CHAR.search(value):
        raise HeaderInjection(f"{what} must be a single line")
    if _CONTROL_CHAR.search(value):
        raise HeaderInjection(f"{what} must not hold control characters")
    return value


def clean_address(value: str, what: str) -> str:
    """``value`` if it is exactly one valid address (``a@b`` or ``Name <a@b>``)."""
    clean_header(value, what)
    addresses = getaddresses([value])
    if len(addresses) != 1:
        raise HeaderInjection(f"{what} must be one address")
    try:
        validate_email(addresses[0][1])
    except ValidationError:
        raise HeaderInjection(f"{what} must be one address") from None
    return value


def clean_thread(value: str) -> str:
    if value and not THREAD_KEY.fullmatch(value):
        raise HeaderInjection("the thread key must be letters, digits, '.', '_' or '-'")
    return value


def build(
    kind: str,
    *,
    to: str,
    dedupe_key: str,
    context: Mapping[str, Any],
    headers: Mapping[str, str] | None = None,
    game: Game | None = None,
    thread: str | None = None,
    reply_to: str | None = None,
    attachments: list[dict[str, str]] | None = None,
) -> OutboundEmail:
    """An unsaved outbox row for email ``kind`` rendered with ``context``.

    Every header value is checked here, at input, and again when the message is built."""
    email = OutboundEmail(
        dedupe_key=dedupe_key,
        kind=kind,
        game=game,
        message_id=make_msgid(domain=settings.MAIL_DOMAIN),
        to=clean_address(to, "the address"),
        reply_to=clean_address(reply_to, "the reply address") if reply_to else "",
        thread=clean_thread(thread or ""),
        headers={
            clean_header(name, "a header name"): clean_header(value, name)
            for name, value in (headers or {}).items()
        },
        attachments=[
            {
                "filename": clean_header(item["filename"], "an attachment's name"),
                "content": item["content"],
                "mimetype": clean_header(item["mimetype"], "an attachment's type"),
            }
            for item in attachments or []
        ],
    )
    subject = " ".join(render(f"emails/{kind}/subject.txt", context).split())
    email.subject = clean_header(subject, "the subject")
    text = render(f"emails/{kind}/body.txt", context)
    html = render(f"emails/{kind}/body.html", context)
    footer_text, footer_html = _footer(translation.get_language(), settings.SITE_URL)
    email.text = f"{text.rstrip()}\n\n{footer_text}"
    end = html.rfind("</body>")
    email.html = html[:end] + footer_html + html[end:] if end != -1 else html + footer_html
    return email


@lru_cache(maxsize=32)
def _footer(language: str, site_url: str) -> tuple[str, str]:
    """Every email's footer, text and HTML: the link to the privacy page (games:privacy),
    in ``language``; the same for every email, so rendered once."""
    context = {"privacy_url": site_url + reverse("games:privacy")}
    return (
        render("emails/parts/privacy.txt", context, autoescape=False),
        render("emails/parts/privacy.html", context),
    )


def render(names: str | list[str], context: Mapping[str, Any], *, autoescape: bool = True) -> str:
    """The first of the templates ``names`` that exists, rendered with ``context`` as
    render_to_string would, in the active language (an email is built in its recipient's:
    docs/languages.md), but in English numbers written as they are: Django's per-number
    localization (a language lookup and three format lookups for every ``{{ number }}``)
    would be most of the work of rendering a board, and changes nothing in English.
    ``autoescape`` off for a part of a plain-text email rendered on its own. An HTML part is
    rendered with ``html_email`` set: what a page draws in SVG (a die), an email draws with
    what every mail client shows."""
    template = select_template([names] if isinstance(names, str) else names)
    localized = translation.get_language() != settings.LANGUAGE_CODE
    # The backend's template (``.template``) is untyped in the stubs; it renders a string.
    rendered: str = template.template.render(
        Context({**context, "html_email": autoescape}, autoescape=autoescape, use_l10n=localized)
    )
    return rendered


# Every email the service sends is written by it, not by a person: RFC 3834's header (and
# the one Microsoft's servers read) asks vacation and out-of-office responders not to
# answer it, so a player's "I am away" never lands on the reply address as an order.
AUTOMATIC = {"Auto-Submitted": "auto-generated", "X-Auto-Response-Suppress": "All"}


class Message(AnymailMessage):  # type: ignore[misc]  # anymail ships no types
    """Anymail's message, whose MIME parts get their boundaries when the message is made.

    Python's generator, finding a multipart without a boundary, draws one and compiles a
    regular expression to search the whole message for it, for each part and each
    message: about a third of the CPU of turning a report into bytes (bench/step_costs.py).
    A boundary of 128 random bits (``secrets``) is unique without that search, as a
    Message-ID is."""

    def message(self, *args: Any, **kwargs: Any) -> SafeMIMEText | SafeMIMEMultipart:
        message: SafeMIMEText | SafeMIMEMultipart = super().message(*args, **kwargs)
        for part in message.walk():
            if part.is_multipart() and part.get_boundary() is None:
                part.set_boundary(f"=_{secrets.token_hex(16)}")
        return message


def email_message(row: OutboundEmail) -> Message:
    """The message for ``row``: the one place headers are set. Whatever was stored is
    checked again; a line break anywhere raises HeaderInjection. Anymail's message is
    Django's ``EmailMultiAlternatives`` with the metadata ESPs echo in their tracking
    events; every other backend sends it as Django's."""
    domain = settings.MAIL_DOMAIN
    ours = {"Message-ID": clean_header(row.message_id, "the Message-ID")} | AUTOMATIC
    if row.thread:
        root = f"<{clean_thread(row.thread)}@{domain}>"
        ours |= {"In-Reply-To": root, "References": root}
    if row.game_id is not None:
        ours["List-Id"] = f"<game-{row.game_id}.{domain}>"
    taken = {name.lower() for name in ours} | {"reply-to", "to", "from", "subject"}
    headers = {
        clean_header(name, "a header name"): clean_header(value, name)
        for name, value in row.headers.items()
        if name.lower() not in taken
    } | ours
    message = Message(
        subject=clean_header(row.subject, "the subject"),
        body=row.text,
        from_email=settings.DEFAULT_FROM_EMAIL,
        to=[clean_address(row.to, "the address")],
        reply_to=[clean_address(row.reply_to, "the reply address")] if row.reply_to else None,
        headers=headers,
        # ESPs echo metadata in their tracking events: a row whose send was never confirmed
        # ("unknown") is still found when the ESP reports it (other backends ignore it).
        metadata={"outbox": str(row.pk)},
    )
    if row.html:
        message.attach_alternative(row.html, "text/html")
    for item in row.attachments:
        message.attach(
            clean_header(item["filename"], "an attachment's name"),
            item["content"],
            clean_header(item["mimetype"], "an attachment's type"),
        )
    return message
