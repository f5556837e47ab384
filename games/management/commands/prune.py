from __future__ import annotations

from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand
from django.utils import timezone

from games.records import retention


class Command(BaseCommand):
    help = (
        "Remove what is past its retention now, as the workers do daily: the bodies of "
        "emails written more than MAIL_RETENTION_DAYS ago whose sending is over, expired "
        "magic links, sign-ins and sessions, lapsed sign-ups, the payloads of old webhook "
        "posts and pushes, and failing push subscriptions (games/records/retention.py). "
        "Game records, dice and orders are never pruned."
    )

    def handle(self, *args: Any, **options: Any) -> None:
        pruned = retention.prune(now=timezone.now())
        self.stdout.write(
            f"Pruned the bodies of {pruned.bodies} emails older than "
            f"{settings.MAIL_RETENTION_DAYS} days and {pruned.links} expired links.\n"
            f"Also {pruned.sign_ins} expired sign-ins, {pruned.sign_ups} lapsed sign-ups, "
            f"the payloads of {pruned.posts} webhook posts and pushes, and "
            f"{pruned.subscriptions} failing push subscriptions.\n"
        )
