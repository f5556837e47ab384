"""The one rule for a number read from text someone sent: a query string (``?step=3``), a
form field, a record pasted from paper. Written in ASCII digits 0-9 only, and bounded.

Python's own tests are wider than that and fail late: ``"²".isdigit()`` is true but
``int("²")`` raises (a 500), ``int("٣")`` is 3 (a number nobody typed as such), and
``int()`` of a 5,000-digit string raises ValueError past Python's limit of 4,300 digits
(or is a number no column holds below it). Pure: no Django.
"""

from __future__ import annotations

# The most digits any number read has: every value fits PostgreSQL's bigint.
DIGITS = 18


def whole_number(text: str | None, *, most: int, negative: bool = False) -> int | None:
    """``text`` (surrounding spaces aside) as a whole number from 0 to ``most`` (from
    ``-most`` with ``negative``), when it is written in ASCII digits, with a leading ``-``
    only if ``negative``; None for anything else: empty, other digits, too big."""
    if text is None:
        return None
    text = text.strip()
    digits = text[1:] if negative and text.startswith("-") else text
    if not digits or len(digits) > len(str(most)) or not (digits.isascii() and digits.isdigit()):
        return None
    value = int(text)
    return value if abs(value) <= most else None


def is_written_number(text: str) -> bool:
    """Whether ``text`` is written like a whole number (ASCII digits, an optional leading
    ``-``), however long: for saying "too big" rather than "not a number"."""
    digits = text.strip().removeprefix("-")
    return bool(digits) and digits.isascii() and digits.isdigit()


# The bounds of the numbers pages read: a step of a game, a page of a list.
STEPS_MOST = 999_999
PAGES_MOST = 999_999
