"""The local mailbox of the embedded default (DEBUG only): every email the service wrote
with Django's file backend, or, with any other backend, the outbox rows."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from email import message_from_bytes, policy
from email.message import EmailMessage
from functools import wraps
from pathlib import Path
from typing import Any

from django.conf import settings
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, render
from django.urls import reverse
from django.utils.html import escape, format_html
from django.utils.safestring import SafeString, mark_safe

from moderator.mail.models import OutboundEmail

FILE_BACKEND = "django.core.mail.backends.filebased.EmailBackend"
# Django's file backend ends every message with a line of 79 dashes.
SEPARATOR = b"\n" + b"-" * 79 + b"\n"
URL = re.compile(r"https?://[^\s<>\"']+")
LIMIT = 500


@dataclass(frozen=True)
class Letter:
    url: str
    subject: str
    to: str
    date: str
    text: str = ""
    html: str = ""


def debug_only(view: Callable[..., HttpResponse]) -> Callable[..., HttpResponse]:
    @wraps(view)
    def wrapper(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        if not settings.DEBUG:
            raise Http404("the mailbox exists only in DEBUG")
        return view(request, *args, **kwargs)

    return wrapper


@debug_only
def mailbox(request: HttpRequest) -> HttpResponse:
    if settings.EMAIL_BACKEND == FILE_BACKEND:
        letters = [
            _letter(name, index, message)
            for name in _files()
            for index, message in reversed(list(enumerate(_messages(name))))
        ][:LIMIT]
        source = f"files in {settings.EMAIL_FILE_PATH}"
    else:
        letters = [_row_letter(row) for row in OutboundEmail.objects.all()[:LIMIT]]
        source = "the outbox"
    return render(request, "mail/mailbox.html", {"letters": letters, "source": source})


@debug_only
def file_message(request: HttpRequest, name: str, index: int) -> HttpResponse:
    if name not in _files():  # the name must be one of the directory's: no traversal
        raise Http404("no such mail file")
    messages = _messages(name)
    if not 0 <= index < len(messages):
        raise Http404("no such message")
    return _show(request, _letter(name, index, messages[index]))


@debug_only
def row_message(request: HttpRequest, pk: int) -> HttpResponse:
    return _show(request, _row_letter(get_object_or_404(OutboundEmail, pk=pk)))


def _show(request: HttpRequest, letter: Letter) -> HttpResponse:
    context = {"letter": letter, "text": linkify(letter.text)}
    return render(request, "mail/message.html", context)


def linkify(text: str) -> SafeString:
    """``text`` escaped, with every http(s) URL a link."""
    parts: list[str] = []
    last = 0
    for match in URL.finditer(text):
        url = match.group(0).rstrip(".,;:!?)")
        parts += [escape(text[last : match.start()]), format_html('<a href="{0}">{0}</a>', url)]
        last = match.start() + len(url)
    parts.append(escape(text[last:]))
    return mark_safe("".join(parts))  # every piece is escaped above


def _directory() -> Path:
    return Path(settings.EMAIL_FILE_PATH)


def _files() -> list[str]:
    """The mail files, newest first."""
    if not _directory().is_dir():
        return []
    files = [path for path in _directory().iterdir() if path.is_file()]
    files.sort(key=lambda path: (path.stat().st_mtime, path.name), reverse=True)
    return [path.name for path in files]


def _messages(name: str) -> list[EmailMessage]:
    return read_mail_file(_directory() / name)


def read_mail_file(path: Path) -> list[EmailMessage]:
    """The messages in a file of Django's file backend: one file per connection, so two
    messages sent in the same second may share a file."""
    return [
        message_from_bytes(part.lstrip(b"\n"), _class=EmailMessage, policy=policy.default)
        for part in path.read_bytes().split(SEPARATOR)
        if part.strip()
    ]


def _letter(name: str, index: int, message: EmailMessage) -> Letter:
    return Letter(
        url=reverse("mail:file", args=[name, index]),
        subject=str(message["Subject"] or ""),
        to=str(message["To"] or ""),
        date=str(message["Date"] or ""),
        text=_part(message, "plain"),
        html=_part(message, "html"),
    )


def _part(message: EmailMessage, subtype: str) -> str:
    body = message.get_body(preferencelist=(subtype,))
    if body is None or body.get_content_subtype() != subtype:
        return ""
    return str(body.get_content())


def _row_letter(row: OutboundEmail) -> Letter:
    return Letter(
        url=reverse("mail:row", args=[row.pk]),
        subject=row.subject,
        to=row.to,
        date=f"{row.created_at:%a, %d %b %Y %H:%M:%S} UTC ({row.get_state_display()})",
        text=row.text,
        html=row.html,
    )
