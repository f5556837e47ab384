"""The one settings file. Everything that differs between machines comes from the
environment, read through strict helpers: a bad value stops the service at start.

With no environment at all the service runs as the embedded default: SQLite for the
database and for the broker under ``var/``, email written to files, DEBUG on.
"""

from __future__ import annotations

import json
import os
from datetime import timedelta
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlsplit

from celery.schedules import crontab
from django.core.exceptions import ImproperlyConfigured

BASE_DIR = Path(__file__).resolve().parent.parent
VAR_DIR = Path(os.environ.get("VAR_DIR", BASE_DIR / "var"))


def envstr(name: str, default: str = "") -> str:
    return os.environ.get(name, default)


def envbool(name: str, default: bool) -> bool:
    value = os.environ.get(name)
    if value is None or value == "":
        return default
    if value.lower() in ("1", "true", "yes", "on"):
        return True
    if value.lower() in ("0", "false", "no", "off"):
        return False
    raise ImproperlyConfigured(f"{name} must be true or false, not {value!r}")


def envint(name: str, default: int, minimum: int | None = None) -> int:
    value = os.environ.get(name)
    if value is None or value == "":
        return default
    try:
        number = int(value)
    except ValueError:
        raise ImproperlyConfigured(f"{name} must be a whole number, not {value!r}") from None
    if minimum is not None and number < minimum:
        raise ImproperlyConfigured(f"{name} must be at least {minimum}, not {number}")
    return number


def envlist(name: str, default: str = "") -> list[str]:
    return [item.strip() for item in envstr(name, default).split(",") if item.strip()]


def database_from_url(url: str) -> dict[str, object]:
    """A DATABASES entry from ``postgres://user:password@host:port/name`` or
    ``sqlite:///relative/or//absolute/path``."""
    parts = urlsplit(url)
    if parts.scheme == "sqlite":
        path = parts.path[1:] if parts.path.startswith("/") else parts.path
        return {"ENGINE": "django.db.backends.sqlite3", "NAME": path or VAR_DIR / "db.sqlite3"}
    if parts.scheme in ("postgres", "postgresql"):
        return {
            "ENGINE": "django.db.backends.postgresql",
            "NAME": unquote(parts.path.lstrip("/")),
            "USER": unquote(parts.username or ""),
            "PASSWORD": unquote(parts.password or ""),
            "HOST": parts.hostname or "",
            "PORT": str(parts.port or ""),
            "CONN_MAX_AGE": envint("DB_CONN_MAX_AGE", 60, minimum=0),
            "CONN_HEALTH_CHECKS": True,
            # Parameters bound on the server and statements run five times on a connection
            # prepared there (psycopg's threshold): the hot reads and writes of an order
            # and a step are then parsed and planned once per connection, which lives
            # DB_CONN_MAX_AGE, so no plan outlives the table sizes it was made for by
            # long. Behind PgBouncer in transaction mode, set its max_prepared_statements
            # (docs/operations.md).
            "OPTIONS": {"server_side_binding": True, "prepare_threshold": 5},
        }
    raise ImproperlyConfigured(f"DATABASE_URL has an unknown scheme: {parts.scheme!r}")


DEBUG = envbool("DEBUG", default="SECRET_KEY" not in os.environ)
SECRET_KEY = envstr("SECRET_KEY", "embedded-default-not-secret")
if not DEBUG and SECRET_KEY.startswith("embedded-default"):
    raise ImproperlyConfigured("SECRET_KEY must be set when DEBUG is off")
# Earlier keys, comma-separated: what they signed (players' seats cookies, GMs' sessions,
# password reset links) still reads while they are listed.
SECRET_KEY_FALLBACKS = envlist("SECRET_KEY_FALLBACKS")
ALLOWED_HOSTS = envlist("ALLOWED_HOSTS", "localhost,127.0.0.1,[::1],testserver")
# Health checks from inside the host or container ask for 127.0.0.1 over plain HTTP.
ALLOWED_HOSTS += [host for host in ("127.0.0.1", "localhost") if host not in ALLOWED_HOSTS]
SECURE_REDIRECT_EXEMPT = [r"^healthz$", r"^metrics$"]
SITE_URL = envstr("SITE_URL", "http://127.0.0.1:8000").rstrip("/")

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    # Django's own form widget templates, for FORM_RENDERER below.
    "django.forms",
    "axes",
    # htmx's script, served as a static file (games/templatetags/live.py)
    "django_htmx",
    # The API's page (Swagger UI) from django-ninja's own static files, not a CDN.
    "ninja",
    "moderator.mail",
    "games",
    "campaigns",
]

# Form widgets render through TEMPLATES (Django's documented way to override a built-in
# widget template): templates/django/forms/widgets/select.html writes a select's options
# without an include each.
FORM_RENDERER = "django.forms.renderers.TemplatesSetting"

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    # The page's language (docs/languages.md): the browser's (its language cookie, else
    # Accept-Language), English in the GM panel; a seat's page and a signed-in player's
    # pages then speak the seat's or the player's (games.notify.languages.speak).
    "moderator.middleware.LanguageMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "moderator.middleware.ContentSecurityPolicyMiddleware",
    # After the others, so that its page has what every page has (the nonce, the user).
    "moderator.middleware.NulInAddressMiddleware",
    # Last, as django-axes asks: it turns a locked-out login into its lock-out page.
    "axes.middleware.AxesMiddleware",
]

ROOT_URLCONF = "moderator.urls"
WSGI_APPLICATION = "moderator.wsgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "OPTIONS": {
            # Django's own loaders, with a game's templates read from its own folder
            # (games/engines/<game>/templates/, games.lib.templates), all cached.
            "loaders": [
                (
                    "django.template.loaders.cached.Loader",
                    [
                        "django.template.loaders.filesystem.Loader",
                        "games.lib.templates.GameLoader",
                        "django.template.loaders.app_directories.Loader",
                    ],
                )
            ],
            "context_processors": [
                "django.template.context_processors.request",
                "django.template.context_processors.i18n",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
            ],
        },
    },
]

DATABASES = {
    "default": database_from_url(envstr("DATABASE_URL", f"sqlite:///{VAR_DIR / 'db.sqlite3'}"))
}
if DATABASES["default"]["ENGINE"] == "django.db.backends.sqlite3":
    DATABASES["default"]["OPTIONS"] = {
        "timeout": 20,
        "transaction_mode": "IMMEDIATE",
        "init_command": "PRAGMA journal_mode=WAL;",
    }
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

REDIS_URL = envstr("REDIS_URL")
# How long a process waits for Redis to take a connection or to answer a command, for the
# cache here and for the broker (below), before it goes on without it: Redis answers in
# well under a millisecond, so a wait this long means the server, or the network to it, is
# gone. Without a bound a request that hands a task to the workers (a player's "email me my
# links") would wait as long as a network partition lasts, and longer (kombu's default is
# to wait forever); with it, the request is answered and the database's sweeps do what the
# lost message would have (docs/operations.md, "Across hosts").
REDIS_TIMEOUT_SECONDS = envint("REDIS_TIMEOUT_SECONDS", 2, minimum=1)
if REDIS_URL:
    CACHES: dict[str, dict[str, Any]] = {
        "default": {
            "BACKEND": "django.core.cache.backends.redis.RedisCache",
            "LOCATION": REDIS_URL,
            # Passed to redis-py's connection pool.
            "OPTIONS": {
                "socket_connect_timeout": REDIS_TIMEOUT_SECONDS,
                "socket_timeout": REDIS_TIMEOUT_SECONDS,
            },
        }
    }
    # Sessions stay in the database and are read through Redis (moderator/sessions.py):
    # a player's page then reads no session row. Without Redis: the database alone.
    SESSION_ENGINE = "moderator.sessions"
else:
    CACHES = {"default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"}}
# How long a session may be read from the cache before the database is asked again.
SESSION_CACHE_SECONDS = envint("SESSION_CACHE_SECONDS", 300, minimum=1)

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
]

# The languages players are written to in (docs/languages.md): English, the default and
# the GM panel's, and German. One catalogue for the project, locale/de/LC_MESSAGES, whose
# compiled django.mo is committed (a fresh machine has no gettext tools);
# manage.py checkmessages, run by make check, keeps both complete and in step.
LANGUAGE_CODE = "en"
LANGUAGES = [("en", "English"), ("de", "Deutsch")]
# Each game's words live in its home (games/engines/<game>/locale: games.engines.text);
# the words the games share (games/engines/base.py, dice.py) in games/engines/locale.
# The first catalogue that has a text says it: the service's, a game's, the shared one.
LOCALE_PATHS = [
    BASE_DIR / "locale",
    *sorted((BASE_DIR / "games" / "engines").glob("*/locale")),
    BASE_DIR / "games" / "engines" / "locale",
]
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True

STATIC_URL = "static/"
STATIC_ROOT = VAR_DIR / "static"
# The site's one stylesheet (moderator/ is the project, not an app with a static folder).
STATICFILES_DIRS = [BASE_DIR / "moderator" / "static"]
if DEBUG:
    # The embedded default serves what the apps ship; production runs collectstatic.
    STATIC_ROOT.mkdir(parents=True, exist_ok=True)

# --- email -----------------------------------------------------------------------------
# ESP through anymail: EMAIL_BACKEND=anymail.backends.<esp>.EmailBackend plus ANYMAIL_*.
# Self-hosters: EMAIL_BACKEND=moderator.mail.smtp.EmailBackend (Django's SMTP backend,
# telling a send whose outcome is unknown from one to retry) plus EMAIL_HOST...
EMAIL_BACKEND = envstr("EMAIL_BACKEND", "django.core.mail.backends.filebased.EmailBackend")
EMAIL_FILE_PATH = VAR_DIR / "mail"
EMAIL_HOST = envstr("EMAIL_HOST", "localhost")
EMAIL_PORT = envint("EMAIL_PORT", 25)
EMAIL_HOST_USER = envstr("EMAIL_HOST_USER")
EMAIL_HOST_PASSWORD = envstr("EMAIL_HOST_PASSWORD")
EMAIL_USE_TLS = envbool("EMAIL_USE_TLS", False)
EMAIL_TIMEOUT = envint("EMAIL_TIMEOUT", 30, minimum=1)
DEFAULT_FROM_EMAIL = envstr("DEFAULT_FROM_EMAIL", "Moderator <moderator@localhost>")
ANYMAIL: dict[str, object] = {
    key.removeprefix("ANYMAIL_"): value
    for key, value in os.environ.items()
    if key.startswith("ANYMAIL_")
}
# Anymail takes a setting as it is given, and from the environment it is text: "false"
# would be true, and "" false. Whether anymail confirms Amazon SNS subscriptions itself
# (its default).
if "ANYMAIL_AMAZON_SES_AUTO_CONFIRM_SNS_SUBSCRIPTIONS" in os.environ:
    ANYMAIL["AMAZON_SES_AUTO_CONFIRM_SNS_SUBSCRIPTIONS"] = envbool(
        "ANYMAIL_AMAZON_SES_AUTO_CONFIRM_SNS_SUBSCRIPTIONS", True
    )
# The webhooks' basic-auth secret, "user:password"; several, comma-separated, while one is
# being rotated out. Without it every webhook answers 403: nobody may post orders or
# delivery events to an open URL.
ANYMAIL["WEBHOOK_SECRET"] = envlist("ANYMAIL_WEBHOOK_SECRET")
# Orders by reply: reports carry Reply-To <local>+<seat token>@<domain> of this address,
# routed by the ESP to its inbound webhook. Unset: replies go to the GM.
INBOUND_ADDRESS = envstr("INBOUND_ADDRESS")
if INBOUND_ADDRESS and (INBOUND_ADDRESS.count("@") != 1 or "+" in INBOUND_ADDRESS):
    raise ImproperlyConfigured("INBOUND_ADDRESS must be one plain address, like orders@example.org")
# Inbound email (moderator/mail/inbound.py): a webhook post larger than this many bytes
# is refused (413) unread; what it takes is kept as posted and read by a mail worker,
# which refuses, with an answer to the seat, an email of more MIME parts than
# INBOUND_MAX_PARTS or nested deeper than INBOUND_MAX_DEPTH. A refusal quotes at most
# INBOUND_QUOTE_BYTES of what was written.
INBOUND_MAX_BYTES = envint("INBOUND_MAX_BYTES", 30 * 1024 * 1024, minimum=64 * 1024)
INBOUND_MAX_PARTS = envint("INBOUND_MAX_PARTS", 100, minimum=2)
INBOUND_MAX_DEPTH = envint("INBOUND_MAX_DEPTH", 8, minimum=1)
INBOUND_QUOTE_BYTES = envint("INBOUND_QUOTE_BYTES", 4096, minimum=256)
# Message-IDs, thread roots and List-Ids are minted under this domain.
MAIL_DOMAIN = envstr("MAIL_DOMAIN") or (
    DEFAULT_FROM_EMAIL.rstrip("> ").partition("@")[2] or "localhost"
)
# Transient failures are retried after min(cap, base * 2**(attempts-1)) * jitter(0.5..1)
# seconds, by the sweep; after the last attempt the row is failed and the GM is told.
MAIL_RETRY_BASE_SECONDS = envint("MAIL_RETRY_BASE_SECONDS", 30, minimum=1)
MAIL_RETRY_CAP_SECONDS = envint("MAIL_RETRY_CAP_SECONDS", 3600, minimum=1)
MAIL_MAX_ATTEMPTS = envint("MAIL_MAX_ATTEMPTS", 8, minimum=1)
# A row handed to the backend and never confirmed for this long is "unknown": it may have
# been delivered, so it is never sent again without a human asking.
MAIL_SENDING_TIMEOUT_SECONDS = envint("MAIL_SENDING_TIMEOUT_SECONDS", 300, minimum=1)
# How many rows one mail task sends over one connection (see moderator/mail/sending.py).
MAIL_BATCH = envint("MAIL_BATCH", 50, minimum=1)
# Within a batch, rows are claimed and recorded this many at a time: a worker killed
# mid-batch leaves at most this many rows unknown; the batch's later rows stay pending.
MAIL_CLAIM = envint("MAIL_CLAIM", 10, minimum=1)
# The body of an email whose sending is over is removed this many days after it was
# written (moderator/mail/pruning.py); the row stays. Game records, dice and orders are
# never pruned.
MAIL_RETENTION_DAYS = envint("MAIL_RETENTION_DAYS", 30, minimum=1)

# Outgoing webhooks (games/notify/webhooks.py, docs/webhooks.md): retried as email is
# (the MAIL_RETRY_*
# settings and MAIL_MAX_ATTEMPTS), each post given this many seconds. Plain http is refused
# except to this machine (127.0.0.1, localhost), and that only when DEBUG is on or
# WEBHOOK_ALLOW_LOCAL_HTTP says so (tests against a local server); without it, an address
# on this machine or a private network is refused too, when set and when posting.
WEBHOOK_TIMEOUT_SECONDS = envint("WEBHOOK_TIMEOUT_SECONDS", 5, minimum=1)
WEBHOOK_ALLOW_LOCAL_HTTP = envbool("WEBHOOK_ALLOW_LOCAL_HTTP", DEBUG)

# Web push (games/notify/push.py, docs/operations.md): the service's VAPID key pair, both
# base64url (``manage.py makevapidkeys`` makes one), and the address push services may
# write to about it. Without keys, push is off and the seat's settings say so. Unset, they
# are read from VAPID_KEYS_FILE if it exists (``make run`` writes one into var/). Pushes
# are posted to public addresses only (moderator/outbound.py), as webhooks are.
VAPID_KEYS_FILE = Path(envstr("VAPID_KEYS_FILE", str(VAR_DIR / "vapid.json")))
_vapid_file = (
    json.loads(VAPID_KEYS_FILE.read_text())
    if "VAPID_PRIVATE_KEY" not in os.environ and VAPID_KEYS_FILE.is_file()
    else {}
)
VAPID_PUBLIC_KEY = envstr("VAPID_PUBLIC_KEY", _vapid_file.get("public", ""))
VAPID_PRIVATE_KEY = envstr("VAPID_PRIVATE_KEY", _vapid_file.get("private", ""))
VAPID_SUBJECT = envstr("VAPID_SUBJECT", "")
# How long a push service keeps a push for a browser that is offline.
PUSH_TTL_SECONDS = envint("PUSH_TTL_SECONDS", 12 * 3600, minimum=0)
# A push subscription whose latest push failed and that has delivered none for this many
# days is removed by the daily prune (games.records.retention): its browser is gone.
PUSH_FAILING_DAYS = envint("PUSH_FAILING_DAYS", 30, minimum=1)

# --- Celery ----------------------------------------------------------------------------
# The embedded default's broker is kombu's SQLAlchemy transport on a SQLite file: it needs
# no server, and a message is a row inserted in a transaction, so a worker never reads half
# of one. (kombu's filesystem transport, the default before, writes a message's file in
# place: a worker polling at that moment read it empty and died of the JSONDecodeError.)
BROKER_FILE = VAR_DIR / "broker.sqlite3"
CELERY_BROKER_URL = envstr("CELERY_BROKER_URL", REDIS_URL or f"sqla+sqlite:///{BROKER_FILE}")
if CELERY_BROKER_URL.startswith(("sqla+", "sqlalchemy+")):
    # kombu passes these on to SQLAlchemy's create_engine() (every option but its table
    # names, so not kombu's polling_interval: an idle worker looks for messages every
    # second, kombu's default). The web, the worker and beat all write to the file; each
    # waits up to 20 s for another's transaction (SQLite's busy timeout) instead of failing
    # at once.
    CELERY_BROKER_TRANSPORT_OPTIONS: dict[str, object] = {"connect_args": {"timeout": 20}}
    if CELERY_BROKER_URL.startswith(("sqla+sqlite:///", "sqlalchemy+sqlite:///")):
        BROKER_FILE.parent.mkdir(parents=True, exist_ok=True)
elif CELERY_BROKER_URL.startswith("filesystem://"):
    # kombu's filesystem transport, when asked for (CELERY_BROKER_URL=filesystem://): not
    # safe with a worker polling while another process writes (see above).
    BROKER_DIR = VAR_DIR / "broker"
    CELERY_BROKER_TRANSPORT_OPTIONS = {
        "data_folder_in": str(BROKER_DIR / "queue"),
        "data_folder_out": str(BROKER_DIR / "queue"),
        "control_folder": str(BROKER_DIR / "control"),
    }
    for folder in ("queue", "control"):
        (BROKER_DIR / folder).mkdir(parents=True, exist_ok=True)
elif CELERY_BROKER_URL.startswith(("redis://", "rediss://")):
    # kombu's Redis transport waits forever by default, to connect and for an answer: a
    # publish over a connection to a Redis cut off by the network waited as long as the
    # partition lasted, and a request publishing one (docs/operations.md, "Across hosts").
    CELERY_BROKER_TRANSPORT_OPTIONS = {
        "socket_connect_timeout": REDIS_TIMEOUT_SECONDS,
        "socket_timeout": REDIS_TIMEOUT_SECONDS,
    }
CELERY_TASK_IGNORE_RESULT = True
CELERY_TASK_ACKS_LATE = True
CELERY_TASK_REJECT_ON_WORKER_LOST = True
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
# Three queues: "steps" (resolving), "mail" (sending), and "urgent" for the short tasks a
# person or the sweep waits on (handing out due steps, writing order receipts, finding a
# player's lost links, and the email a person waits for: receipts, links). Every worker
# takes "urgent" too: Celery on Redis takes from a worker's queues in turn, so an urgent
# task waits for at most the task each worker has under way, never behind a rush of
# deadlines.
STEPS_QUEUE = "steps"
URGENT_QUEUE = "urgent"
CELERY_TASK_DEFAULT_QUEUE = STEPS_QUEUE
CELERY_TASK_ROUTES = {
    "games.hand_out_steps": {"queue": URGENT_QUEUE},
    "games.write_receipts": {"queue": URGENT_QUEUE},
    "games.send_lost_links": {"queue": URGENT_QUEUE},
    "mail.send_urgent_emails": {"queue": URGENT_QUEUE},
    "games.send_webhooks": {"queue": "mail"},
    "games.send_pushes": {"queue": "mail"},
    "games.send_player_posts": {"queue": "mail"},
    "mail.*": {"queue": "mail"},
    "games.*": {"queue": STEPS_QUEUE},
}
CELERY_BROKER_CONNECTION_RETRY_ON_STARTUP = True
# A publish that fails is tried once more, on a new connection (a pooled one the broker
# dropped, after a restart), not three times (Celery's default): every message has the
# database behind it (the steps run, the sweep, the receipts run hand the work out again),
# and with Redis out of reach each try costs REDIS_TIMEOUT_SECONDS or two of the waiting
# request's.
CELERY_TASK_PUBLISH_RETRY_POLICY = {
    "max_retries": 1,
    "interval_start": 0,
    "interval_step": 0.2,
    "interval_max": 0.2,
}
CELERY_WORKER_HIJACK_ROOT_LOGGER = False
# Celery's Django fixup closes the database connection before and after every task unless
# this is set (then only every 2 x this many tasks): a new PostgreSQL connection per task
# cost a step about as much as its own queries. moderator/celery.py treats each task as a
# request instead: CONN_MAX_AGE and CONN_HEALTH_CHECKS decide, and a connection that saw
# an error is closed.
CELERY_DB_REUSE_MAX = envint("CELERY_DB_REUSE_MAX", 1000, minimum=0)
# Beat's fixed schedule: due steps handed out, the sweep of everything else that is due,
# the receipts of orders (an order's request only marks its order; games/postal.py), and
# pruning. Deadlines live in the database, never in the broker. Due steps are looked for
# every STEP_SWEEP_SECONDS (one indexed count): a step is resolved within that of its
# deadline when workers are free.
STEP_SWEEP_SECONDS = envint("STEP_SWEEP_SECONDS", 5, minimum=1)
SWEEP_SECONDS = envint("SWEEP_SECONDS", 30, minimum=1)
RECEIPT_SECONDS = envint("RECEIPT_SECONDS", 5, minimum=1)
# A seat gets at most one order receipt per step in this many seconds: later orders wait
# for the window to pass, and then one receipt names the latest (postal.write_receipts).
RECEIPT_WINDOW_SECONDS = envint("RECEIPT_WINDOW_SECONDS", 600, minimum=0)
CELERY_BEAT_SCHEDULE = {
    "steps": {"task": "games.hand_out_steps", "schedule": float(STEP_SWEEP_SECONDS)},
    "sweep": {"task": "games.sweep", "schedule": float(SWEEP_SECONDS)},
    "receipts": {"task": "games.write_receipts", "schedule": float(RECEIPT_SECONDS)},
    # What is past its retention (MAIL_RETENTION_DAYS, LINK_DAYS): daily, at a quiet hour.
    "prune": {"task": "games.prune", "schedule": crontab(hour=3, minute=30)},
}
if CELERY_BROKER_URL.startswith(("sqla+", "sqlalchemy+")):
    # kombu's SQLAlchemy transport keeps each message a worker took (hidden): they go every
    # ten minutes, a few hundred rows (moderator/queues.py).
    CELERY_BEAT_SCHEDULE["broker"] = {"task": "games.prune_broker", "schedule": 600.0}
# How much lower than the web's a worker's CPU priority is (os.nice; 0: the same): on a
# machine shared with gunicorn, a rush of deadlines takes the cycles the pages leave.
WORKER_NICENESS = envint("WORKER_NICENESS", 10, minimum=0)
# Tests may run tasks in the calling process.
CELERY_TASK_ALWAYS_EAGER = envbool("CELERY_TASK_ALWAYS_EAGER", False)

# --- the game service --------------------------------------------------------------------
# A step whose resolution fails this many times in a row needs the GM.
STEP_FAILURE_LIMIT = envint("STEP_FAILURE_LIMIT", 5, minimum=1)
# How long a magic link in an email stays valid.
LINK_DAYS = envint("LINK_DAYS", 60, minimum=1)
# How long the link that confirms a sign-up to an open game may be used to confirm it
# (games.community.signups); a sign-up not confirmed by then lapses, and the address may sign
# up again.
SIGNUP_CONFIRM_HOURS = envint("SIGNUP_CONFIRM_HOURS", 48, minimum=1)
# How long a player's sign-in link and code stay valid (games.community.players), in minutes.
SIGNIN_MINUTES = envint("SIGNIN_MINUTES", 15, minimum=1)
# The privacy page (/privacy/, docs/players.md "Your data"): who runs the service and whom to
# write to about the data it keeps (an email address becomes a link), and the operator's
# own text (the legal basis, the supervisory authority, a postal address...), in paragraphs
# separated by a blank line. Both shown as written, in every language.
PRIVACY_CONTACT = envstr("PRIVACY_CONTACT", "")
PRIVACY_TEXT = envstr("PRIVACY_TEXT", "")
# How many pending emails (or order receipts) one sweep (or receipts run) hands out at
# most; the next takes the rest.
SWEEP_BATCH = envint("SWEEP_BATCH", 500, minimum=1)
# How many due steps one resolve_due_steps task claims (each resolved in its own
# transaction): a task's message, acknowledgement and wait are paid once per batch.
STEP_BATCH = envint("STEP_BATCH", 10, minimum=1)
# At most this many resolve_due_steps tasks wait in the steps queue (a bound, far above
# what a rush needs: 10,000 due steps are 1,000 tasks).
STEP_TASKS_MOST = envint("STEP_TASKS_MOST", 10_000, minimum=1)

# --- rate limits and login lock-outs (moderator/ratelimit.py) ----------------------------
# How many proxies stand in front of gunicorn (the TLS proxy of docs/operations.md: 1).
# Each appends the address it was reached from to X-Forwarded-For, so the client is the
# Nth entry from the right; entries further left are the client's own word. 0: the client
# is REMOTE_ADDR and X-Forwarded-For is ignored.
TRUSTED_PROXY_COUNT = envint("TRUSTED_PROXY_COUNT", 0, minimum=0)
# Hits per client address (or per seat) and minute, each kind of endpoint in its own scope.
RATES = {
    "link": "30/m",  # magic links, GET and POST
    "calendar": "60/m",  # calendar feeds built afresh; a feed served from the cache is free
    "order-seat": "20/m",  # order posts for one seat, from anywhere
    "order-address": "60/m",  # order posts from one address, for any seats
    "lost-links-email": "3/h",  # "email me my links" for one email address, from anywhere
    "lost-links-address": "10/h",  # "email me my links" from one client address, any emails
    "signup-email": "5/h",  # sign-ups to open games for one email address, from anywhere
    "signup-address": "20/h",  # sign-ups to open games from one client address, any emails
    "signin-email": "5/h",  # sign-in emails asked for one email address, from anywhere
    "signin-address": "20/h",  # sign-in emails asked from one client address, any emails
    "signin-code": "30/h",  # sign-in codes typed from one client address
    "press-seat": "20/h",  # messages between players written by one seat, web and email
    "press-game": "100/h",  # messages between players written in one game, all seats
    "command-email": "10/h",  # commands by email (help, status, ...) from one seat's address
    "push-test": "10/h",  # test pushes asked for one seat
    "email-test": "5/h",  # test emails (the latest report again) asked for one seat
    "webhook-test": "5/h",  # test posts to a player's own webhook, for one seat
    "api-token": "600/m",  # calls with one API token (docs/api.md): 10 a second on average
}
# A calendar feed is served from the cache this long (as its Cache-Control says): a calendar
# app polling every minute costs one query per feed per five minutes.
CALENDAR_CACHE_SECONDS = 300
# Admin (and so GM panel) logins: 10 failures for one username from one address lock that
# pair for 15 minutes. Nobody else is locked: not the same GM from elsewhere, not another
# GM behind the same address.
# The GM's sign-in page (games.web.gm.signin); the admin keeps its own at /admin/login/.
LOGIN_URL = "gm:sign_in"
AUTHENTICATION_BACKENDS = [
    "axes.backends.AxesStandaloneBackend",
    "django.contrib.auth.backends.ModelBackend",
]
AXES_FAILURE_LIMIT = 10
AXES_COOLOFF_TIME = timedelta(minutes=15)
AXES_LOCKOUT_PARAMETERS = [["username", "ip_address"]]
AXES_CLIENT_IP_CALLABLE = "moderator.ratelimit.client_address"
AXES_LOCKOUT_CALLABLE = "moderator.ratelimit.login_locked_out"
AXES_RESET_ON_SUCCESS = True
# The lock ends 15 minutes after it began: retrying while locked does not extend it.
AXES_RESET_COOL_OFF_ON_FAILURE_DURING_LOCKOUT = False
# Failures are what the lock-out needs; a row for every successful login nobody reads.
AXES_DISABLE_ACCESS_LOG = True
# No banner on every start and manage.py command; failures and lock-outs are still logged.
AXES_VERBOSE = False

# /metrics for Prometheus (games/web/ops/metrics.py): off unless set; a scrape sends it as a bearer
# token.
METRICS_TOKEN = envstr("METRICS_TOKEN")

# One line per log record on standard error; LOG_FORMAT=json writes each as a JSON object
# (python-json-logger) with the record's fields: a resolved step's game, step and outcome,
# a sent email's outbox row, kind and game (docs/operations.md, "Logs").
LOG_FORMAT = envstr("LOG_FORMAT", "text")
if LOG_FORMAT not in ("text", "json"):
    raise ImproperlyConfigured("LOG_FORMAT must be text or json")
LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "formatters": {
        "text": {"format": "%(asctime)s %(levelname)s %(name)s: %(message)s"},
        "json": {
            "()": "pythonjsonlogger.json.JsonFormatter",
            "fmt": "%(asctime)s %(levelname)s %(name)s %(message)s",
            "rename_fields": {"asctime": "time", "levelname": "level", "name": "logger"},
        },
    },
    "handlers": {"console": {"class": "logging.StreamHandler", "formatter": LOG_FORMAT}},
    "root": {"handlers": ["console"], "level": envstr("LOG_LEVEL", "INFO")},
    # django-axes says at INFO what every successful login cleared; failures and lock-outs
    # are warnings. WeasyPrint (the zine's PDF) says its progress at INFO and warns of each
    # rule of the site's stylesheet it does not read (screen sizes, scrolling boxes).
    "loggers": {"axes": {"level": "WARNING"}, "weasyprint": {"level": "ERROR"}},
}

# --- security ----------------------------------------------------------------------------
# Sent in every mode, so that a page the policy breaks is seen in development first. Only
# our own scripts, styles, images and forms; "{nonce}" is a fresh nonce per response, for
# the few inline scripts (moderator/middleware.py); inline styles run no code.
# How often an open seat's page, and the GM's page of a game, ask whether something changed
# (games/web/live.py): an answer with nothing new is one small query and no page.
LIVE_POLL_SECONDS = envint("LIVE_POLL_SECONDS", 20, minimum=1)
# The API's event streams (games/web/api/stream.py, docs/api.md): how often a stream looks
# for news (one small query), how long one lasts before the client connects again with
# the last id it saw, a comment every so often for the proxies, the reconnection delay
# the stream asks for, and how many may be open per token, in all, and in one web process
# (each holds a web thread while it lasts: keep API_STREAMS_PER_PROCESS under gunicorn's
# --threads, 8 in docker/compose.yaml, so that every process keeps threads for pages).
API_STREAM_LOOK_SECONDS = envint("API_STREAM_LOOK_SECONDS", 2, minimum=1)
API_STREAM_SECONDS = envint("API_STREAM_SECONDS", 300, minimum=1)
API_STREAM_PING_SECONDS = 15
API_STREAM_RETRY_MS = 3000
API_STREAMS_PER_TOKEN = envint("API_STREAMS_PER_TOKEN", 2, minimum=1)
API_STREAMS_MOST = envint("API_STREAMS_MOST", 40, minimum=1)
API_STREAMS_PER_PROCESS = envint("API_STREAMS_PER_PROCESS", 4, minimum=1)
# A seat's page listens to the same stream (games/web/play/stream.py), for news sooner than
# its poll: so many tabs of one seat at once (the others poll as before).
LIVE_STREAMS_PER_SEAT = 3

CONTENT_SECURITY_POLICY = envstr(
    "CONTENT_SECURITY_POLICY",
    "default-src 'self'; script-src 'self' 'nonce-{nonce}'; style-src 'self' 'unsafe-inline'; "
    "img-src 'self' data:; object-src 'none'; base-uri 'none'; form-action 'self'; "
    "frame-ancestors 'none'",
)
SECURE_REFERRER_POLICY = "same-origin"
SECURE_CONTENT_TYPE_NOSNIFF = True
X_FRAME_OPTIONS = "DENY"

if not DEBUG:
    SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
    SESSION_COOKIE_SECURE = envbool("SESSION_COOKIE_SECURE", True)
    CSRF_COOKIE_SECURE = envbool("CSRF_COOKIE_SECURE", True)
    SECURE_SSL_REDIRECT = envbool("SECURE_SSL_REDIRECT", True)
    SECURE_HSTS_SECONDS = envint("SECURE_HSTS_SECONDS", 3600, minimum=0)
    SECURE_HSTS_INCLUDE_SUBDOMAINS = envbool("SECURE_HSTS_INCLUDE_SUBDOMAINS", True)
    SECURE_HSTS_PRELOAD = envbool("SECURE_HSTS_PRELOAD", False)
    if not SECURE_HSTS_PRELOAD:
        # Joining the browsers' preload list is the domain owner's choice (a year of HSTS
        # on every subdomain, hard to undo), not a default: say yes with the variable.
        SILENCED_SYSTEM_CHECKS = ["security.W021"]
