"""The words a person wrote in a reply, as mail programs write replies (docs/email.md,
"Orders by email reply").

A reply is the person's own words above the report it quotes. Where the quotation starts:

- at the first line quoted with ``>``;
- at a header block or a separator a mail program writes above an unquoted copy (Outlook's
  "From: ...", "-----Original Message-----", a line of underscores, "Sent from my ...").

The paragraph just before the quotation is the mail program's attribution ("On ...
wrote:", "El ... escribió:", "Op ... schreef ...:", "Em ... escreveu:", in any language)
when its last line ends with a colon: it goes too, with the line before it when a mail
program wrapped a long one (Gmail wraps at the sender's address). From a line that is
``--`` (a signature's separator, with or without its trailing space) on, nothing is the
order.

A reply without a text part (some phones and web mail send HTML alone) is read from its
HTML with Python's own parser: blocks and line breaks become lines, up to the quotation
(a ``<blockquote>``, or the containers Gmail, Yahoo, Outlook and Apple Mail put the
message replied to in).
"""

from __future__ import annotations

import re
from html.parser import HTMLParser
from typing import Any

from moderator.mail import charsets

# Lines a mail program writes where it starts an unquoted copy of the message replied to.
QUOTE_START = re.compile(
    r"^\s*(On .{0,300}wrote:|Am .{0,300}schrieb .{0,200}:|Le .{0,300}a écrit ?:"
    r"|-{2,}\s*Original Message\s*-{2,}|_{10,}|From: .+|Sent from my .+)\s*$",
    re.I,
)
SIGNATURE = re.compile(r"^--\s*$")
# The first half of an attribution wrapped in two: it ends at an address's opening bracket
# or a comma, or it holds the date (a year, a time) or an address. No order line does.
WRAPPED = re.compile(r"(<|,)\s*$|\b(19|20)\d\d\b|\b\d{1,2}[:.]\d\d\b|@")


def reply_text(message: Any) -> str:
    """The words the person wrote above the quoted report: the ESP's stripped reply when it
    gives one, else the text part, else the HTML part, cut where the quotation starts."""
    stripped = getattr(message, "stripped_text", None)
    text = plain(stripped) if stripped else body_text(message)
    if not text.strip():
        text = html_text(body_text(message, "text/html"))
    return own_words(text)


def plain(value: Any) -> str:
    """``value`` as text PostgreSQL can store: a NUL character means nothing in an email,
    and a byte a charset could not read (a lone surrogate in Python) becomes U+FFFD."""
    text = str(value or "").replace("\x00", "")
    return text.encode("utf-8", "surrogatepass").decode("utf-8", "replace") if text else text


def _leaves(message: Any) -> list[Any]:
    """The parts of ``message`` that are not multipart containers, in order, walked
    without recursion (the worker has bounded how many there are)."""
    leaves, stack = [], [message]
    while stack:
        part = stack.pop(0)
        payload = part.get_payload() if part.is_multipart() else None
        if isinstance(payload, list):
            stack[:0] = payload
        else:
            leaves.append(part)
    return leaves


def _is_body(part: Any) -> bool:
    disposition = str(part.get("Content-Disposition", "")).strip().lower()
    return part.get_content_type() in ("text/plain", "text/html") and not disposition.startswith(
        "attachment"
    )


def body_text(message: Any, content_type: str = "text/plain") -> str:
    """The first ``content_type`` part of ``message`` that is no attachment, as text: in
    its charset, one Python does not know read as UTF-8, what cannot be read replaced
    (``charsets.decode``). Empty when there is none."""
    for part in _leaves(message):
        if part.get_content_type() != content_type or not _is_body(part):
            continue
        data = part.get_payload(decode=True)
        if not isinstance(data, bytes):
            return plain(part.get_payload())
        text = charsets.decode(data, part.get_content_charset())
        return plain(re.sub(r"\r\n|\r", "\n", text))
    return ""


def attachment_names(message: Any) -> list[str]:
    """The names of what is attached to ``message`` (every part but its text and HTML):
    never read, never kept."""
    return [
        plain(part.get_filename() or part.get_content_type())[:100]
        for part in _leaves(message)
        if not _is_body(part)
    ]


def own_words(text: str) -> str:
    """``text`` up to where the quotation starts, without the attribution and signature."""
    lines = text.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    quoted = next(
        (
            n
            for n, line in enumerate(lines)
            if line.lstrip().startswith(">") or QUOTE_START.match(line)
        ),
        None,
    )
    if quoted is not None:
        lines = _without_attribution(lines[:quoted])
    signature = next((n for n, line in enumerate(lines) if SIGNATURE.match(line)), None)
    if signature is not None:
        lines = lines[:signature]
    return "\n".join(lines).strip()


def _without_attribution(lines: list[str]) -> list[str]:
    """``lines`` (all that comes before the quotation) without the attribution that ends
    them: their last line when it ends with a colon, and the line before it when the
    attribution was wrapped there (``WRAPPED``)."""
    while lines and not lines[-1].strip():
        lines = lines[:-1]
    if not lines or not lines[-1].rstrip().endswith(":"):
        return lines
    lines = lines[:-1]
    if lines and WRAPPED.search(lines[-1]):
        lines = lines[:-1]
    return lines


class _Text(HTMLParser):
    """The visible text of an HTML email, a line per block, up to the quotation."""

    BLOCKS = frozenset(
        {"p", "div", "br", "li", "tr", "h1", "h2", "h3", "h4", "h5", "h6", "pre", "table"}
        | {"ul", "ol", "section", "article", "header", "footer", "hr"}
    )
    HIDDEN = frozenset({"style", "script", "head", "title"})
    EMPTY = frozenset({"br", "img", "hr", "meta", "link", "input", "wbr"})
    # Where mail programs put the message replied to: Gmail's, Yahoo's, Outlook's and
    # Apple Mail's containers, and a quoted block.
    QUOTE_MARKS = re.compile(
        r"gmail_quote|gmail_attr|yahoo_quoted|divRplyFwdMsg|appendonsend"
        r"|OutlookMessageHeader|AppleOriginalContents"
    )

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.parts: list[str] = []
        self.hidden = 0
        self.quoted = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        marks = " ".join(value or "" for name, value in attrs if name in ("class", "id"))
        if tag == "blockquote" or self.QUOTE_MARKS.search(marks):
            self.quoted = True  # the quotation starts: nothing after it is the reply
        if tag in self.HIDDEN:
            self.hidden += 1
        if tag in self.BLOCKS:
            self.parts.append("\n")

    def handle_endtag(self, tag: str) -> None:
        if tag in self.HIDDEN:
            self.hidden = max(0, self.hidden - 1)
        if tag in self.BLOCKS:
            self.parts.append("\n")

    def handle_data(self, data: str) -> None:
        if not self.hidden and not self.quoted:
            self.parts.append(data)


def html_text(html: str) -> str:
    """The text a person sees in ``html``, a line per block, without quoted blocks."""
    reader = _Text()
    reader.feed(html)
    reader.close()
    text = "".join(reader.parts).replace("\xa0", " ")
    lines = [" ".join(line.split()) for line in text.split("\n")]
    return re.sub(r"\n{3,}", "\n\n", "\n".join(lines)).strip()
