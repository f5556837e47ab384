import logging
import os

from django.core import checks
from django.core.wsgi import get_wsgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "moderator.settings")

application = get_wsgi_application()

# gunicorn runs no system checks: say at start what the checks would warn about (a
# production start with SITE_URL or the email backend left at the embedded default).
for problem in checks.run_checks(tags=[checks.Tags.compatibility]):
    if problem.id and problem.id.startswith("moderator."):
        logging.getLogger("moderator").warning("%s: %s %s", problem.id, problem.msg, problem.hint)
