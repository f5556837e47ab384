"""The text of a PDF as WeasyPrint writes it, page by page, for tests that read what a PDF
says (no PDF reader is among the project's packages, and poppler's tools are not on every
machine).

Enough of PDF for WeasyPrint's output: its objects, compressed one by one or in object
streams (FlateDecode); its pages in order (``/Kids``); on each page, its text runs (a
``Tm`` to place them, a ``Tf`` to pick the font, a ``TJ`` of glyph ids), read through
each font's ``/ToUnicode`` map. Runs on one baseline are joined, each baseline is a line."""

from __future__ import annotations

import re
import zlib

OBJECT = re.compile(rb"(\d+) 0 obj\b")


def _objects(pdf: bytes) -> tuple[dict[int, str], dict[int, bytes]]:
    """Every object's dictionary (as text) and every stream's data, by object number:
    read from the start, each stream skipped by its length, so that no stream's bytes are
    taken for an object."""
    dictionaries: dict[int, str] = {}
    streams: dict[int, bytes] = {}
    position = 0
    while (match := OBJECT.search(pdf, position)) is not None:
        number = int(match[1])
        end = pdf.index(b"endobj", match.end())
        keyword = re.compile(rb"stream\r?\n").search(pdf, match.end(), end)
        head = pdf[match.end() : keyword.start() if keyword else end].decode("latin-1").strip()
        dictionaries[number] = head
        position = end + len(b"endobj")
        if keyword is not None:
            length = re.search(r"/Length (\d+)", head)
            assert length is not None, head
            data = pdf[keyword.end() : keyword.end() + int(length[1])]
            streams[number] = zlib.decompress(data) if "/FlateDecode" in head else data
            position = pdf.index(b"endobj", keyword.end() + len(data)) + len(b"endobj")
    for number, head in list(dictionaries.items()):
        if "/Type /ObjStm" in head:
            dictionaries.update(_packed(head, streams[number]))
    return dictionaries, streams


def _packed(head: str, data: bytes) -> dict[int, str]:
    """The objects of an object stream: N pairs (number, offset), then the objects."""
    count = int(re.search(r"/N (\d+)", head)[1])  # type: ignore[index]
    first = int(re.search(r"/First (\d+)", head)[1])  # type: ignore[index]
    pairs = [int(n) for n in data[:first].split()]
    numbers, offsets = pairs[0::2], [*pairs[1::2][:count], len(data) - first]
    body = data[first:].decode("latin-1")
    return {numbers[i]: body[offsets[i] : offsets[i + 1]].strip() for i in range(count)}


def _unicode_map(cmap: bytes) -> dict[int, str]:
    """Glyph id -> text, from a ToUnicode CMap's bfchar and bfrange entries."""
    text = cmap.decode("latin-1")
    glyphs: dict[int, str] = {}

    def chars(hex_text: str) -> str:
        return bytes.fromhex(hex_text).decode("utf-16-be")

    for block in re.findall(r"beginbfchar(.*?)endbfchar", text, re.S):
        for glyph, value in re.findall(r"<([0-9A-Fa-f]+)>\s*<([0-9A-Fa-f]*)>", block):
            glyphs[int(glyph, 16)] = chars(value)
    for block in re.findall(r"beginbfrange(.*?)endbfrange", text, re.S):
        for low, high, value in re.findall(
            r"<([0-9A-Fa-f]+)>\s*<([0-9A-Fa-f]+)>\s*<([0-9A-Fa-f]+)>", block
        ):
            for offset in range(int(high, 16) - int(low, 16) + 1):
                glyphs[int(low, 16) + offset] = chr(int(value, 16) + offset)
    return glyphs


def _fonts(dictionaries: dict[int, str], streams: dict[int, bytes]) -> dict[str, dict[int, str]]:
    """Each font's name as the pages' ``Tf`` call it (its subset tag) -> its glyph map."""
    fonts: dict[str, dict[int, str]] = {}
    for head in dictionaries.values():
        found = re.search(r"/BaseFont /(\w+)\+\S*?/ToUnicode (\d+) 0 R", head)
        if found is not None:
            fonts[found[1]] = _unicode_map(streams[int(found[2])])
    return fonts


def _page_text(content: bytes, fonts: dict[str, dict[int, str]]) -> str:
    lines: list[str] = []
    baseline: str | None = None
    glyphs: dict[int, str] = {}
    operation = re.compile(rb"(\S+) Tm|/(\w+) [\d.]+ Tf|\[(.*?)\] TJ", re.S)
    for match in operation.finditer(content):
        if match[1] is not None:
            y = match[1].decode()
            if y != baseline:
                lines.append("")
            baseline = y
        elif match[2] is not None:
            glyphs = fonts[match[2].decode()]
        else:
            for hex_text in re.findall(rb"<([0-9A-Fa-f]+)>", match[3]):
                ids = bytes.fromhex(hex_text.decode())
                lines[-1] += "".join(
                    glyphs.get(int.from_bytes(ids[i : i + 2], "big"), "\ufffd")
                    for i in range(0, len(ids), 2)
                )
    return "\n".join(lines)


def pages(pdf: bytes) -> list[str]:
    """The text of each page of ``pdf``, in order."""
    dictionaries, streams = _objects(pdf)
    fonts = _fonts(dictionaries, streams)
    kids = next(head for head in dictionaries.values() if "/Type /Pages" in head)
    numbers = [int(n) for n in re.findall(r"(\d+) 0 R", re.search(r"/Kids \[(.*?)\]", kids)[1])]  # type: ignore[index]
    texts = []
    for number in numbers:
        contents = re.search(r"/Contents (\d+) 0 R", dictionaries[number])
        assert contents is not None, dictionaries[number]
        texts.append(_page_text(streams[int(contents[1])], fonts))
    return texts


def media_box(pdf: bytes) -> list[float]:
    """The first page's size, [x0, y0, x1, y1] in points."""
    dictionaries, _ = _objects(pdf)
    page = next(head for head in dictionaries.values() if re.search(r"/Type /Page\b", head))
    box = re.search(r"/MediaBox \[([^\]]*)\]", page)
    assert box is not None, page
    return [float(n) for n in box[1].split()]
