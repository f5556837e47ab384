"""``manage.py makevapidkeys``: a new VAPID key pair for web push (docs/operations.md)."""

from __future__ import annotations

import base64
import json
from typing import Any

from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec
from django.conf import settings
from django.core.management.base import BaseCommand, CommandParser


def new_keys() -> dict[str, str]:
    """A P-256 key pair, base64url without padding: the private key's 32 bytes, and the
    public key as browsers take it (the uncompressed point, 65 bytes)."""
    key = ec.generate_private_key(ec.SECP256R1())
    private = key.private_numbers().private_value.to_bytes(32, "big")
    public = key.public_key().public_bytes(
        serialization.Encoding.X962, serialization.PublicFormat.UncompressedPoint
    )
    return {"public": _b64(public), "private": _b64(private)}


def _b64(raw: bytes) -> str:
    return base64.urlsafe_b64encode(raw).rstrip(b"=").decode()


class Command(BaseCommand):
    help = (
        "Print a new VAPID key pair for web push, as the two settings to set "
        "(VAPID_PUBLIC_KEY, VAPID_PRIVATE_KEY). With --file, write them to VAPID_KEYS_FILE "
        "instead, unless it exists (the embedded default's keys, kept in var/)."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "--file", action="store_true", help="write VAPID_KEYS_FILE if it does not exist"
        )

    def handle(self, *args: Any, **options: Any) -> None:
        keys = new_keys()
        if options["file"]:
            path = settings.VAPID_KEYS_FILE
            if path.exists():
                self.stdout.write(f"{path.name} exists: its keys are kept")
                return
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(json.dumps(keys))
            path.chmod(0o600)
            self.stdout.write(f"wrote a new VAPID key pair to {path.name}")
            return
        self.stdout.write(f"VAPID_PUBLIC_KEY={keys['public']}")
        self.stdout.write(f"VAPID_PRIVATE_KEY={keys['private']}")
