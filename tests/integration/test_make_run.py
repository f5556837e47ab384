"""``make run``: honcho with the Procfile, on the embedded default (SQLite, the filesystem
broker, email to files). Ctrl-C stops every process cleanly: the worker ends at once,
without an error line and before honcho would kill it."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

from tests.browser import free_port

ROOT = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent


def embedded_default(tmp_path: Path) -> dict[str, str]:
    """The environment of ``make run`` with its files under ``tmp_path``: no database,
    Redis or broker of the tests, the virtual environment first on the PATH."""
    env = {
        key: value
        for key, value in os.environ.items()
        if key not in {"DATABASE_URL", "REDIS_URL", "CELERY_BROKER_URL", "SECRET_KEY", "DEBUG"}
        and not key.startswith("DJANGO_")
    }
    return env | {"VAR_DIR": str(tmp_path / "var"), "PATH": f"{BIN}:{env['PATH']}"}


def wait_for(output: Path, patterns: list[str], process: subprocess.Popen[bytes]) -> None:
    deadline = time.monotonic() + 90
    while not all(re.search(p, output.read_text(errors="replace"), re.M) for p in patterns):
        assert process.poll() is None, output.read_text(errors="replace")
        assert time.monotonic() < deadline, output.read_text(errors="replace")
        time.sleep(0.2)


def test_ctrl_c_on_make_run_stops_every_process_cleanly(tmp_path: Path) -> None:
    env = embedded_default(tmp_path)
    subprocess.run(
        [sys.executable, "manage.py", "migrate", "--noinput"],
        cwd=ROOT, env=env, check=True, capture_output=True,
    )  # fmt: skip
    # The Procfile as it is, but for the web server's port (another may be using 8000)
    # and beat's schedule file (kept with this test's files).
    procfile = (ROOT / "Procfile").read_text()
    procfile = procfile.replace("127.0.0.1:8000", f"127.0.0.1:{free_port()}")
    procfile = procfile.replace("var/celerybeat-schedule", str(tmp_path / "beat-schedule"))
    (tmp_path / "Procfile").write_text(procfile)
    output = tmp_path / "honcho.log"
    with output.open("wb") as log:
        honcho = subprocess.Popen(
            [str(BIN / "honcho"), "start", "--no-colour", "-f", str(tmp_path / "Procfile"),
             "-d", str(ROOT)],
            cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True,
        )  # fmt: skip
        try:
            wait_for(
                output,
                [
                    r"worker\.1 +\| .*celery@\S+ ready\.",
                    r"beat\.1 +\| .*beat: Starting",
                    r"web\.1 .*Quit the server",
                ],
                honcho,
            )
            honcho.send_signal(signal.SIGINT)  # what Ctrl-C sends it
            honcho.wait(timeout=30)
        finally:
            if honcho.poll() is None:
                os.killpg(honcho.pid, signal.SIGKILL)
                honcho.wait()
    lines = output.read_text(errors="replace").splitlines()
    stopped = sorted(
        re.sub(r"^\S+ system +\| ", "", line) for line in lines if " stopped (rc=" in line
    )
    noise = [line for line in lines if re.search(r"ERROR|CRITICAL|Traceback|SIGKILL", line)]
    assert (stopped, noise) == (
        ["beat.1 stopped (rc=0)", "web.1 stopped (rc=-15)", "worker.1 stopped (rc=0)"],
        [],
    )
