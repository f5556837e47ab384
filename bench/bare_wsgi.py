"""The framework's limit, for bench/order_submission.py: the project's settings and
middleware, with the URLs of bench/bare_urls.py (one view that writes one row) instead of
the project's, on Django's own PostgreSQL engine (``django.db.backends.postgresql``): the
project's engine (moderator.db.postgresql) is project code, part of what the orders
measure, not of the framework. ``BARE_ENGINE=project`` keeps the project's engine, for the
benchmark's second bare figure. Served by gunicorn exactly as ``moderator.wsgi`` is::

    python -m gunicorn bench.bare_wsgi
"""

from __future__ import annotations

import os
from typing import cast

from django.conf import settings
from django.core.wsgi import get_wsgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "moderator.settings")
settings.ROOT_URLCONF = "bench.bare_urls"
database = settings.DATABASES["default"]
if database["ENGINE"] == "moderator.db.postgresql" and os.environ.get("BARE_ENGINE") != "project":
    database["ENGINE"] = "django.db.backends.postgresql"
    # The project's engine's own option (prepared reads), which Django's would hand psycopg.
    options = dict(cast(dict[str, object], database["OPTIONS"]))
    options.pop("prepared_statements", None)
    database["OPTIONS"] = options

application = get_wsgi_application()
