from django.conf import settings
from django.contrib import admin
from django.urls import include, path

from games.metrics import metrics
from moderator.health import healthz

urlpatterns = [
    path("healthz", healthz, name="healthz"),
    path("metrics", metrics, name="metrics"),
    path("admin/", admin.site.urls),
    path("gm/campaigns/", include("campaigns.urls")),
    path("gm/", include("games.gm_urls")),
    # The ESPs' inbound and tracking webhooks (moderator/mail/webhooks.py).
    path("mail/webhooks/", include("moderator.mail.webhooks")),
    # Players' public pages and the rankings of rated games (games/standing_views.py).
    path("", include("games.standing_urls")),
    # Open games and sign-up (games/signups.py): no sign-in needed.
    path("open/", include("games.signup_urls")),
    # A player's own place: signing in by email, their games and settings.
    path("", include("games.player_urls")),
    path("", include("games.urls")),
]
if settings.DEBUG:
    # The embedded default's local mailbox: every email the service wrote to var/mail.
    urlpatterns.append(path("mailbox/", include("moderator.mail.urls")))
