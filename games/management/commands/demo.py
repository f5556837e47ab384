from __future__ import annotations

from typing import Any

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError
from django.db import transaction
from django.utils import timezone

from games import postal
from games.engines import registry
from games.engines.base import Profile
from games.models import Game
from games.postal import access

PLAYERS = [("ann", "ann@example.org"), ("bob", "bob@example.org"), ("cy", "cy@example.org")]


class Command(BaseCommand):
    help = (
        "Embedded default only: create, once, a demo GM (gm / gm) and a running 3-player "
        "game (the first game of the registry), and print the URLs of the GM panel and of "
        "each demo player."
    )

    def handle(self, *args: Any, **options: Any) -> None:
        if not settings.DEBUG:
            raise CommandError("the demo is for the embedded default (DEBUG on) only")
        now = timezone.now()
        key, profile = demo_game()
        title = f"Demo: {profile.title} for three"
        with transaction.atomic():
            gm, created = get_user_model().objects.get_or_create(
                username="gm",
                defaults={"email": "gm@example.org", "is_staff": True, "is_superuser": True},
            )
            if created:
                gm.set_password("gm")
                gm.save()
            game = Game.objects.filter(gm=gm, title=title).first()
            if game is None:
                game = postal.create_game(
                    gm=gm,
                    engine_key=key,
                    title=title,
                    options=profile_options(key, profile),
                    players=[postal.Player(name, email) for name, email in PLAYERS],
                    time_zone="UTC",
                    schedule_spec={"kind": "interval", "seconds": 24 * 3600},
                )
                postal.start_game(game.pk, now=now)
            tokens = access.mint(game.seats.order_by("position"), now=now)
        site = settings.SITE_URL
        self.stdout.write(
            f"\nThe moderator runs at {site}/\n"
            f"  GM panel:      {site}/gm/  (admin: {site}/admin/; user gm, password gm)\n"
            f"  Local mailbox: {site}/mailbox/  (every email the service sends)\n"
            f"  Demo game:     {game.title}\n"
        )
        for seat in game.seats.order_by("position"):
            self.stdout.write(f"  {seat.name:<6} {access.url(tokens[seat.position])}\n")
        self.stdout.write("\n")


def demo_game() -> tuple[str, Profile]:
    """The first game of the registry that three players can play, in its first profile."""
    for key, profile in registry.profiles():
        engine = registry.get(key)
        if engine.min_players <= len(PLAYERS) <= engine.max_players:
            return key, profile
    raise CommandError("no registered game takes three players")


def profile_options(key: str, profile: Profile) -> dict[str, Any]:
    profile_key = registry.settings(key).profile_key
    return {profile_key: profile.key} if profile_key else {}
