"""What the outbox shows of an email to a person who is not its recipient (a GM, an
admin): its words, with every secret that acts for the recipient hidden. A magic link's
token (43 URL-safe characters: a seat's, a sign-in's, a sign-up's), the HMAC of a stable
seat token (a reply, message or stop address, a calendar feed or a stop link:
``<digits>-<26 base32 characters>``) and a sign-in's code each read ``[hidden]``, so that
no link or address shown there opens a seat, orders for it or signs its player in."""

from __future__ import annotations

import json
import re
from typing import Any

HIDDEN = "[hidden]"
# moderator.links.new_token: 32 random bytes, URL-safe base64 without padding.
_LINK_TOKEN = re.compile(r"(?<![A-Za-z0-9_-])[A-Za-z0-9_-]{43}(?![A-Za-z0-9_-])")
# games.postal.access.seat_token and press_token: the HMAC after the seat's position.
_SEAT_MAC = re.compile(r"(?<=\d-)[A-Za-z2-7]{26}(?![A-Za-z0-9])")
# games.community.players.new_code: six digits, in the sign-in email only.
_CODE = re.compile(r"(?<!\d)\d{6}(?!\d)")
SIGNIN_KINDS = frozenset({"signin"})


def mask(text: str, kind: str = "") -> str:
    """``text`` with its secrets hidden; an email of ``kind`` "signin" has its code hidden
    too."""
    text = _SEAT_MAC.sub(HIDDEN, _LINK_TOKEN.sub(HIDDEN, text))
    return _CODE.sub(HIDDEN, text) if kind in SIGNIN_KINDS else text


def mask_json(value: Any, kind: str = "") -> str:
    """``value`` (an email's headers or attachments) as JSON, masked."""
    return mask(json.dumps(value, ensure_ascii=False, indent=1, sort_keys=True), kind)
