from django.conf import settings
from django.contrib import admin
from django.urls import include, path
from django.views.decorators.csrf import csrf_exempt
from django.views.i18n import set_language

from moderator.health import healthz

urlpatterns = [
    path("healthz", healthz, name="healthz"),
    # /metrics for Prometheus (games/web/ops/).
    path("", include("games.web.ops.urls")),
    path("admin/", admin.site.urls),
    # The language switcher's POST (Django's set_language): the language cookie of a page
    # that follows the browser (docs/languages.md). No language in the addresses: the
    # links in emails already sent keep working. Without a CSRF token: a forged post can
    # change nothing but a page's language, and a token in every page's footer would give
    # every public page a cookie and make no two of them alike.
    path("i18n/setlang/", csrf_exempt(set_language), name="set_language"),
    # The API for programs (games/web/api/, docs/api.md): /api/v1/, its document and page.
    path("", include("games.web.api.urls")),
    path("gm/campaigns/", include("campaigns.web.urls")),
    path("gm/", include("games.web.gm.urls")),
    # The ESPs' inbound and tracking webhooks (moderator/mail/webhooks.py).
    path("mail/webhooks/", include("moderator.mail.webhooks")),
    # Players' public pages and the rankings of rated games (games/web/public/standings.py).
    path("", include("games.web.public.standing_urls")),
    # Open games and sign-up (games/community/signups.py): no sign-in needed.
    path("open/", include("games.web.public.signup_urls")),
    # A player's own place: signing in by email, their games and settings.
    path("", include("games.web.me.urls")),
    path("", include("games.web.play.urls")),
]
if settings.DEBUG:
    # The embedded default's local mailbox: every email the service wrote to var/mail.
    urlpatterns.append(path("mailbox/", include("moderator.mail.urls")))
