"""The framework's limit, for the web benchmarks (bench/order_submission.py,
bench/seat_page.py): the project's settings (the same database and connection settings,
health checks included) and middleware, with the URLs of bench/bare_urls.py instead of the
project's. Served by gunicorn exactly as ``moderator.wsgi`` is::

    python -m gunicorn bench.bare_wsgi
"""

from __future__ import annotations

import os

from django.conf import settings
from django.core.wsgi import get_wsgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "moderator.settings")
settings.ROOT_URLCONF = "bench.bare_urls"

application = get_wsgi_application()
