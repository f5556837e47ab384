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

from django import forms
from django.apps import apps
from django.conf import settings
from django.core.paginator import Page, Paginator
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, render
from django.urls import reverse
from django.utils.html import escape, format_html
from django.utils.safestring import SafeString, mark_safe

from moderator.mail import mailfiles
from moderator.mail.models import OutboundEmail
from moderator.numbers import PAGES_MOST, whole_number

FILE_BACKEND = "django.core.mail.backends.filebased.EmailBackend"
URL = re.compile(r"https?://[^\s<>\"']+")
PER_PAGE = 50


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


class MailboxFilter(forms.Form):
    to = forms.CharField(label="To", required=False, max_length=254)
    game = forms.IntegerField(
        label="Game",
        required=False,
        min_value=1,
        error_messages={
            "invalid": "Choose a game from the list.",
            "min_value": "Choose a game from the list.",
        },
    )


@debug_only
def mailbox(request: HttpRequest) -> HttpResponse:
    """Every email, newest first, 50 a page, filtered by recipient (any part of the
    address, in any case) and by game. Only the page's emails are read whole; the list
    itself comes from the files' index (``mailfiles``) or from the outbox's rows."""
    form = MailboxFilter(request.GET)
    wanted = form.cleaned_data if form.is_valid() else {}
    to, game = (wanted.get("to") or "").strip().lower(), wanted.get("game")
    number = whole_number(request.GET.get("page"), most=PAGES_MOST)
    if settings.EMAIL_BACKEND == FILE_BACKEND:
        page, letters, game_ids = _from_files(to, game, number)
        source = f"files in {settings.EMAIL_FILE_PATH}"
    else:
        page, letters, game_ids = _from_outbox(to, game, number)
        source = "the outbox"
    # The games' titles, read through the app registry: the mail plumbing knows no app's
    # models by import (docs/architecture.md).
    game_model = apps.get_model("games", "Game")
    titles = dict(game_model.objects.filter(pk__in=game_ids).values_list("pk", "title"))
    context = {
        "form": form,
        "letters": letters,
        "page": page,
        "source": source,
        "games": sorted((pk, titles.get(pk, "")) for pk in game_ids),
        "filtered": bool(to or game),
    }
    return render(request, "mail/mailbox.html", context)


def _from_files(
    to: str, game: int | None, number: int | None
) -> tuple[Page[Any], list[Letter], set[int]]:
    entries = mailfiles.entries(_directory())
    chosen = [
        entry
        for entry in entries
        if (not to or to in entry.to.lower()) and (game is None or entry.game == game)
    ]
    page = Paginator(chosen, PER_PAGE).get_page(number)
    letters = [_entry_letter(entry) for entry in page.object_list]
    return page, letters, {entry.game for entry in entries if entry.game is not None}


def _from_outbox(
    to: str, game: int | None, number: int | None
) -> tuple[Page[Any], list[Letter], set[int]]:
    rows = OutboundEmail.objects.only("pk", "to", "subject", "created_at", "state", "pruned_at")
    if to:
        rows = rows.filter(to__icontains=to)
    if game is not None:
        rows = rows.filter(game_id=game)
    page = Paginator(rows, PER_PAGE).get_page(number)
    letters = [_row_letter(row) for row in page.object_list]
    games = OutboundEmail.objects.filter(game__isnull=False).order_by().values_list("game_id")
    return page, letters, {pk for (pk,) in games.distinct()}


@debug_only
def file_message(request: HttpRequest, name: str, index: int) -> HttpResponse:
    # The name must be one of the directory's mail files: no traversal, no index.
    if name not in {item.name for item in mailfiles.mail_files(_directory())}:
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


def _messages(name: str) -> list[EmailMessage]:
    return read_mail_file(_directory() / name)


def read_mail_file(path: Path) -> list[EmailMessage]:
    """The messages in a file of Django's file backend: one file per connection, so two
    messages sent in the same second may share a file."""
    return [
        message_from_bytes(part, _class=EmailMessage, policy=policy.default)
        for part in mailfiles.split_messages(path.read_bytes())
    ]


def _entry_letter(entry: mailfiles.Entry) -> Letter:
    return Letter(
        url=reverse("mail:file", args=[entry.name, entry.index]),
        subject=entry.subject,
        to=entry.to,
        date=entry.date,
    )


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
    text = row.text
    if row.pruned_at is not None:
        text = (
            f"(The text of this email was removed {settings.MAIL_RETENTION_DAYS} days after "
            "it was written: MAIL_RETENTION_DAYS.)"
        )
    return Letter(
        url=reverse("mail:row", args=[row.pk]),
        subject=row.subject,
        to=row.to,
        date=f"{row.created_at:%a, %d %b %Y %H:%M:%S} UTC ({row.get_state_display()})",
        text=text,
        html=row.html,
    )
