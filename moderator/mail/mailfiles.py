"""The index of the local mailbox's files (Django's file backend, DEBUG only).

The file backend writes one file per connection, never touched again once it is closed,
each holding one or more whole messages. The mailbox's list shows four headers of each
message, so parsing every message whole on every visit (its MIME tree, both bodies:
about 2 ms a message) was nearly all of the page's time. Instead, the headers of each
file's messages are read once and kept in ``.index.json`` beside the files, under the
file's size and modification time: a visit reads the directory and the index, parses only
the files that are new or changed, and renders one page.
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass
from email import policy
from email.header import decode_header, make_header
from email.parser import BytesHeaderParser
from pathlib import Path
from typing import Any

# Django's file backend ends every message with a line of 79 dashes.
SEPARATOR = b"\n" + b"-" * 79 + b"\n"
INDEX = ".index.json"
# What the index holds changes with this number; an index of another version is rebuilt.
VERSION = 1
# The List-Id of a game's emails (moderator.mail.building.email_message).
GAME_LIST_ID = re.compile(r"<game-(\d+)\.")


@dataclass(frozen=True)
class Entry:
    """One message of the mailbox: where it is (file ``name``, ``index`` in the file) and
    the headers the list shows and filters by."""

    name: str
    index: int
    to: str
    subject: str
    date: str
    game: int | None


def mail_files(directory: Path) -> list[os.DirEntry[str]]:
    """The mail files of ``directory``, newest first (the index and any hidden file or
    folder are none)."""
    if not directory.is_dir():
        return []
    with os.scandir(directory) as scan:
        files = [item for item in scan if not item.name.startswith(".") and item.is_file()]
    files.sort(key=lambda item: (item.stat().st_mtime_ns, item.name), reverse=True)
    return files


# The entries of the last visit, per directory, under the (name, size, mtime) of each of its
# files: a visit that finds the same files reads no index. (One per process; the runserver
# of the embedded default is one.)
_last: dict[Path, tuple[list[tuple[str, int, int]], list[Entry]]] = {}


def forget() -> None:
    """Drop what this process remembers of its last visits: the next visit reads the index
    from the disk, as a new process does."""
    _last.clear()


def entries(directory: Path) -> list[Entry]:
    """Every message of the mailbox, newest first: by file, newest first, and within a
    file the last written first. The index is brought up to date on the way."""
    files = mail_files(directory)
    stats = [(item.name, item.stat().st_size, item.stat().st_mtime_ns) for item in files]
    last = _last.get(directory)
    if last is not None and last[0] == stats:
        return last[1]
    index = _load(directory / INDEX)
    changed = False
    for name, size, mtime in stats:
        known = index.get(name)
        if known is None or (known["size"], known["mtime"]) != (size, mtime):
            messages = headers_of(directory / name)
            index[name] = {"size": size, "mtime": mtime, "messages": messages}
            changed = True
    names = {name for name, _, _ in stats}
    if changed or index.keys() - names:
        _save(directory / INDEX, {name: index[name] for name in names})
    found = [
        Entry(name, number, *fields)
        for name, _, _ in stats
        for number, fields in reversed(list(enumerate(index[name]["messages"])))
    ]
    _last[directory] = (stats, found)
    return found


def split_messages(data: bytes) -> list[bytes]:
    """The messages of a file's content, each as the file backend wrote it."""
    return [part.lstrip(b"\n") for part in data.split(SEPARATOR) if part.strip()]


def headers_of(path: Path) -> list[list[Any]]:
    """[to, subject, date, game id or None] of each message in the file at ``path``: the
    header block alone is parsed, never the bodies (Python's compat32 parser: the default
    policy's parser is four times slower, for headers the list shows as text)."""
    parser = BytesHeaderParser(policy=policy.compat32)
    found: list[list[Any]] = []
    for message in split_messages(path.read_bytes()):
        header = parser.parsebytes(message.partition(b"\n\n")[0] + b"\n\n")
        to, subject, date, list_id = (
            _text(header[name]) for name in ("To", "Subject", "Date", "List-Id")
        )
        game = GAME_LIST_ID.match(list_id)
        found.append([to, subject, date, int(game[1]) if game else None])
    return found


def _text(value: str | None) -> str:
    """A header's value as text, its encoded words (RFC 2047) decoded."""
    return str(make_header(decode_header(value))) if value else ""


def _load(path: Path) -> dict[str, Any]:
    try:
        document = json.loads(path.read_bytes())
    except (OSError, ValueError):  # none yet, or cut short: it is rebuilt
        return {}
    if not isinstance(document, dict) or document.get("version") != VERSION:
        return {}
    files: dict[str, Any] = document.get("files", {})
    return files


def _save(path: Path, files: dict[str, Any]) -> None:
    """Write the index whole and swap it in, so that a visit at the same moment reads the
    old index or the new one, never half of one."""
    part = path.with_name(f"{path.name}.{os.getpid()}.{id(files)}")
    part.write_text(json.dumps({"version": VERSION, "files": files}, separators=(",", ":")))
    os.replace(part, path)
