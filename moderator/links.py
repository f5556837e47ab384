"""Magic-link tokens: 32 random bytes, URL-safe; only their SHA-256 is ever stored."""

from __future__ import annotations

import hashlib
import secrets

TOKEN_BYTES = 32


def new_token() -> str:
    return secrets.token_urlsafe(TOKEN_BYTES)


def digest(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()
