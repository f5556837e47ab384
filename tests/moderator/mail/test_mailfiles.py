"""The index of the local mailbox's files: each file's headers are read once, a new or
changed file alone is read again, and a file that is gone leaves the index."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from django.core.mail import EmailMessage, get_connection

from moderator.mail import mailfiles

FILE_BACKEND = "django.core.mail.backends.filebased.EmailBackend"


def write(directory: Path, name: str, *subjects: str, mtime: int) -> None:
    before = set(directory.iterdir())
    messages = [
        EmailMessage(
            subject,
            "t",
            "moderator@localhost",
            ["ann@example.org"],
            headers={"List-Id": "<game-3.localhost>"},
        )
        for subject in subjects
    ]
    get_connection(FILE_BACKEND, file_path=str(directory)).send_messages(messages)
    (written,) = set(directory.iterdir()) - before
    written.rename(directory / name)
    os.utime(directory / name, (mtime, mtime))


@pytest.fixture
def read(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The names of the files whose headers are read, in order."""
    names: list[str] = []
    headers_of = mailfiles.headers_of

    def counted(path: Path) -> list[list[object]]:
        names.append(path.name)
        return headers_of(path)

    monkeypatch.setattr(mailfiles, "headers_of", counted)
    return names


def test_each_file_is_read_once_and_a_new_file_alone_after(tmp_path: Path, read: list[str]) -> None:
    write(tmp_path, "a.log", "One", "Two", mtime=1_000)
    assert [(e.name, e.index, e.subject, e.game) for e in mailfiles.entries(tmp_path)] == [
        ("a.log", 1, "Two", 3),
        ("a.log", 0, "One", 3),
    ]
    mailfiles.entries(tmp_path)
    mailfiles.forget()  # a new process: the index is read from the disk
    mailfiles.entries(tmp_path)
    write(tmp_path, "b.log", "Three", mtime=2_000)
    assert [e.subject for e in mailfiles.entries(tmp_path)] == ["Three", "Two", "One"]
    assert read == ["a.log", "b.log"]


def test_a_file_gone_leaves_the_index_and_a_broken_index_is_rebuilt(
    tmp_path: Path, read: list[str]
) -> None:
    write(tmp_path, "a.log", "One", mtime=1_000)
    write(tmp_path, "b.log", "Two", mtime=2_000)
    mailfiles.entries(tmp_path)
    (tmp_path / "a.log").unlink()
    assert [e.subject for e in mailfiles.entries(tmp_path)] == ["Two"]
    assert list(json.loads((tmp_path / ".index.json").read_text())["files"]) == ["b.log"]
    (tmp_path / ".index.json").write_text("{not json")
    mailfiles.forget()
    assert [e.subject for e in mailfiles.entries(tmp_path)] == ["Two"]
    assert read == ["b.log", "a.log", "b.log"]  # newest first


def test_encoded_subjects_and_names_are_read_as_text(tmp_path: Path) -> None:
    before = set(tmp_path.iterdir())
    EmailMessage(
        "Würfel für Ann",
        "t",
        "m@localhost",
        ["Änn Lee <ann@example.org>"],
        connection=get_connection(FILE_BACKEND, file_path=str(tmp_path)),
    ).send()
    (written,) = set(tmp_path.iterdir()) - before
    (entry,) = mailfiles.entries(tmp_path)
    assert (entry.name, entry.subject, entry.to, entry.game) == (
        written.name,
        "Würfel für Ann",
        "Änn Lee <ann@example.org>",
        None,
    )
