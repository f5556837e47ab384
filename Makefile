# The two commands a new user needs: `make run` and `make test`.
# Both create the virtual environment in .venv and install the locked packages first:
# `make run` what the service runs (requirements.lock), the rest what tests and checks
# need besides (requirements-dev.lock). The packages go in with uv when it can be had
# (several times faster than pip), else with pip: from uv's cache alone when it holds every
# pinned package (a new clone on a machine that installed them before: no network, 0.3 s
# instead of 12), else from the package registry.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
UV_VERSION := 0.13.9
RUNTIME := $(VENV)/.runtime-$(shell cat requirements.lock | cksum | cut -d' ' -f1)
STAMP := $(VENV)/.installed-$(shell cat requirements.lock requirements-dev.lock | cksum | cut -d' ' -f1)

.PHONY: run test test-later check fmt lint venv bench clean browser faketime lock messages

define install
	{ $(BIN)/python -m pip install --quiet --disable-pip-version-check uv==$(UV_VERSION) \
	  && { $(BIN)/uv pip install --offline --quiet --python $(BIN)/python -r $(1) 2>/dev/null \
	       || $(BIN)/uv pip install --quiet --python $(BIN)/python -r $(1); }; } \
	|| $(BIN)/python -m pip install --quiet --disable-pip-version-check -r $(1)
endef

$(RUNTIME): requirements.lock
	$(PYTHON) -c 'import sys; sys.exit("Python 3.11 or newer is needed" if sys.version_info < (3, 11) else 0)'
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(call install,requirements.lock)
	rm -f $(VENV)/.runtime-*
	touch $(RUNTIME)

$(STAMP): $(RUNTIME) requirements-dev.lock
	$(call install,requirements-dev.lock)
	rm -f $(VENV)/.installed-*
	touch $(STAMP)

venv: $(STAMP)

# The lock files again from pyproject.toml, each at the pins of the one before it (pins kept
# unless a range moved; add --upgrade to take newer versions).
lock: $(RUNTIME)
	$(BIN)/uv pip compile pyproject.toml --universal --python-version 3.11 -o requirements.lock
	$(BIN)/uv pip compile pyproject.toml --extra esp -c requirements.lock --universal \
	  --python-version 3.11 -o requirements-esp.lock
	$(BIN)/uv pip compile pyproject.toml --extra dev -c requirements-esp.lock --universal \
	  --python-version 3.11 -o requirements-dev.lock

# Web, Celery worker and beat on the embedded default (SQLite for the database and the
# broker, mail in var/), under supervisord (supervisord.conf): a process that dies is said
# so and started again. `make run PORT=8001` serves another port; VAR_DIR, another folder.
# A process counts as started once it has run STARTSECS seconds; one that dies before,
# STARTRETRIES times in a row, is given up and ends the run.
PORT ?= 8000
VAR_DIR ?= $(CURDIR)/var
STARTSECS ?= 20
STARTRETRIES ?= 5
run: $(RUNTIME)
	VAR_DIR="$(VAR_DIR)" $(BIN)/python manage.py migrate --noinput
	VAR_DIR="$(VAR_DIR)" $(BIN)/python manage.py demo
	VAR_DIR="$(VAR_DIR)" $(BIN)/python manage.py makevapidkeys --file
	PATH="$(CURDIR)/$(BIN):$$PATH" VAR_DIR="$(VAR_DIR)" PORT="$(PORT)" \
	  STARTSECS="$(STARTSECS)" STARTRETRIES="$(STARTRETRIES)" \
	  $(BIN)/supervisord -n -c supervisord.conf

# Everything this machine can run. REQUIRE_SERVICES=1 makes missing services fail, not skip.
# In TEST_WORKERS processes (pytest-xdist; a test database, a Redis database and a var/
# folder each: tests/services.py); `make test TEST_WORKERS=0` runs in this one process.
# The 25 slowest tests are listed at the end, so that they stay in sight.
TEST_WORKERS ?= 2
test: venv browser
	$(BIN)/python -m pytest -n $(TEST_WORKERS) --dist loadgroup --durations=25 $(PYTEST_ARGS)

# The whole suite with the clock 400 days ahead (libfaketime, for this process and every
# worker, server and browser it starts): no test may depend on the real date. (Timed
# waits on a condition, threading.Timer and Event.wait(timeout), do not return under
# libfaketime: tests wait with time.sleep.)
test-later: venv browser faketime
	faketime -f +400d $(BIN)/python -m pytest $(PYTEST_ARGS)

faketime:
	@command -v faketime >/dev/null 2>&1 || { [ "$$(id -u)" = 0 ] && apt-get update -qq && \
	  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq faketime >/dev/null; } || \
	  { echo "faketime is not installed (Debian's faketime package): make test-later needs it."; exit 1; }

# The browser tests drive the distribution's Chromium (a browser cannot be downloaded by
# Playwright here), and the deployment test validates docker/compose.yaml with the
# distribution's docker-compose (no Docker engine needed). Installed when missing and the
# machine lets us; else those tests skip (or fail with REQUIRE_SERVICES=1).
browser:
	@missing=""; \
	command -v chromium >/dev/null 2>&1 || missing="$$missing chromium"; \
	command -v docker-compose >/dev/null 2>&1 || missing="$$missing docker-compose"; \
	if [ -n "$$missing" ]; then \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
	    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $$missing >/dev/null; \
	  else \
	    echo "Not installed:$$missing; the tests that need them will skip."; \
	  fi; \
	fi

# Style, types, the rooms' import contracts (pyproject.toml), migrations drift, and the
# message catalogues (complete, translated and compiled: docs/languages.md; it needs GNU
# gettext).
check: venv
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy .
	$(BIN)/lint-imports
	$(BIN)/python manage.py makemigrations --check --dry-run
	$(BIN)/python manage.py checkmessages

# The message catalogues brought in step with the code and compiled; then translate what
# it lists (docs/languages.md).
messages: venv
	$(BIN)/python manage.py checkmessages --write

fmt: venv
	$(BIN)/ruff check --fix .
	$(BIN)/ruff format .

lint: check

# Every benchmark, then docs/performance.md from their figures (about two and a half hours,
# bench/embedded_limits.py about 45 minutes of them; run it on a quiet machine: the figures
# are only as good as the machine is idle).
bench: venv
	@command -v wrk >/dev/null 2>&1 || { [ "$$(id -u)" = 0 ] && apt-get update -qq && \
	  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq wrk >/dev/null; } || \
	  echo "wrk is not installed: the web benchmarks (bench/order_submission.py, ...) need it."
	$(BIN)/python bench/deadline_rush.py
	$(BIN)/python bench/embedded_limits.py
	$(BIN)/python bench/step_costs.py
	$(BIN)/python bench/seat_page.py
	$(BIN)/python bench/live_pages.py
	$(BIN)/python bench/resolving_post.py
	$(BIN)/python bench/order_submission.py
	$(BIN)/python bench/order_cpu.py
	$(BIN)/python bench/mixed_load.py
	$(BIN)/python bench/resolve_steps.py
	$(BIN)/python bench/email_delivery.py
	$(BIN)/python bench/growth.py
	$(BIN)/python bench/mailbox.py
	$(BIN)/python bench/storage.py
	$(BIN)/python bench/reminder_sweep.py
	$(BIN)/python bench/performance_doc.py

clean:
	rm -rf $(VENV) var
