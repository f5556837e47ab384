"""``make run``: supervisord with supervisord.conf, on the embedded default (SQLite for the
database and the broker, email to files), as the Makefile starts it. A process that dies
is said so and started again, and the work goes on; one that cannot be started ends the
whole run with a line that says which; Ctrl-C stops every process cleanly: the worker
ends at once, without an error line and before supervisord would kill it."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.browser import free_port

pytestmark = pytest.mark.integration

ROOT = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent
# supervisord's own lines (its log is the terminal's, as the children's output is).
SUPERVISORD = re.compile(r"^\S+ \S+ (INFO|WARN|CRIT|ERRO) (?!celery\.|moderator\.|django\.)")


def embedded_default(tmp_path: Path) -> dict[str, str]:
    """The environment of ``make run`` with its files under ``tmp_path``: no database,
    Redis or broker of the tests, the virtual environment first on the PATH."""
    env = {
        key: value
        for key, value in os.environ.items()
        if key not in {"DATABASE_URL", "REDIS_URL", "CELERY_BROKER_URL", "SECRET_KEY", "DEBUG"}
        and not key.startswith(("DJANGO_", "CELERY_"))  # the unit tests' eager tasks
    }
    return env | {"VAR_DIR": str(tmp_path / "var"), "PATH": f"{BIN}:{env['PATH']}"}


def wait_for(output: Path, patterns: list[str], process: subprocess.Popen[bytes]) -> None:
    deadline = time.monotonic() + 180
    while not all(re.search(p, output.read_text(errors="replace"), re.M) for p in patterns):
        assert process.poll() is None, output.read_text(errors="replace")
        assert time.monotonic() < deadline, output.read_text(errors="replace")
        time.sleep(0.2)


class MakeRun:
    """What ``make run`` starts after its migrate and demo: supervisord in the foreground
    with the repository's supervisord.conf, its output (and every child's) appended to
    a file, on a free port and with its files under ``tmp_path``."""

    def __init__(self, tmp_path: Path, port: str = "") -> None:
        self.env = embedded_default(tmp_path) | {"PORT": port or str(free_port())}
        subprocess.run(
            [sys.executable, "manage.py", "migrate", "--noinput"],
            cwd=ROOT, env=self.env, check=True, capture_output=True,
        )  # fmt: skip
        self.output = tmp_path / "make-run.log"
        # Appended: supervisord and each child write to the same file, as to a terminal.
        with self.output.open("ab") as log:
            self.process = subprocess.Popen(
                [str(BIN / "supervisord"), "-n", "-c", str(ROOT / "supervisord.conf")],
                cwd=ROOT, env=self.env, stdout=log, stderr=subprocess.STDOUT,
                start_new_session=True,
            )  # fmt: skip

    def text(self) -> str:
        return self.output.read_text(errors="replace")

    def wait_for(self, *patterns: str) -> None:
        wait_for(self.output, list(patterns), self.process)

    def pid(self, program: str) -> int:
        """The process id of ``program``'s latest start."""
        return int(re.findall(rf"spawned: '{program}' with pid (\d+)", self.text())[-1])

    def supervisord_says(self) -> list[str]:
        return [
            re.sub(r"^\S+ \S+ ", "", line) for line in self.text().splitlines()
            if SUPERVISORD.match(line)
        ]  # fmt: skip

    def ctrl_c(self) -> None:
        self.process.send_signal(signal.SIGINT)  # what Ctrl-C sends it
        self.process.wait(timeout=90)

    def kill(self) -> None:
        if self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGKILL)
            self.process.wait()


READY = [
    r"celery@\S+ ready\.",
    r"beat: Starting",
    r"Quit the server",
    r"success: worker entered RUNNING state",
]


def noise(text: str) -> list[str]:
    return [line for line in text.splitlines() if re.search(r"ERROR|Traceback|SIGKILL", line)]


def test_ctrl_c_on_make_run_stops_every_process_cleanly(tmp_path: Path) -> None:
    run = MakeRun(tmp_path)
    try:
        run.wait_for(*READY)
        run.ctrl_c()
    finally:
        run.kill()
    stopped = sorted(line for line in run.supervisord_says() if "stopped: " in line)
    assert (run.process.returncode, stopped, noise(run.text())) == (
        0,
        [
            "INFO stopped: beat (exit status 0)",
            "INFO stopped: supervision (exit status 0)",
            "INFO stopped: web (exit status 0)",
            "INFO stopped: worker (exit status 0)",
        ],
        [],
    )


def test_a_worker_killed_under_make_run_is_said_and_started_again(tmp_path: Path) -> None:
    run = MakeRun(tmp_path)
    try:
        run.wait_for(*READY)
        killed = run.pid("worker")
        os.kill(killed, signal.SIGKILL)
        run.wait_for(r"WARN exited: worker \(terminated by SIGKILL; not expected\)")
        # Started again, and the work goes on: the tasks beat sends (every 5 s) are done
        # by the new worker.
        run.wait_for(rf"spawned: 'worker' with pid (?!{killed}\b)\d+")
        after = len(run.text())
        deadline = time.monotonic() + 180
        done = r"ready\..*Task (games\.hand_out_steps\[\S+\]) received.*\1 succeeded"
        while not re.search(done, run.text()[after:], re.S):
            assert run.process.poll() is None and time.monotonic() < deadline, run.text()
            time.sleep(0.5)
        restarted = run.pid("worker")
        run.ctrl_c()
    finally:
        run.kill()
    says = run.supervisord_says()
    assert restarted != killed
    assert [line for line in says if "exited: " in line or "spawned: 'worker'" in line] == [
        f"INFO spawned: 'worker' with pid {killed}",
        "WARN exited: worker (terminated by SIGKILL; not expected)",
        f"INFO spawned: 'worker' with pid {restarted}",
    ]
    assert "INFO stopped: worker (exit status 0)" in says


def test_a_process_that_cannot_start_ends_make_run_with_a_clear_line(tmp_path: Path) -> None:
    # The web server cannot start: its port is no port. supervisord tries it again, gives
    # it up, and the whole run ends, the others stopped cleanly.
    run = MakeRun(tmp_path, port="no-port")
    try:
        run.process.wait(timeout=300)
    finally:
        run.kill()
    says = run.supervisord_says()
    assert "INFO gave up: web entered FATAL state, too many start retries too quickly" in says
    assert (
        "make run stops: web could not be started (it exited again and again right after "
        "starting; its output above says why)."
    ) in run.text()
    assert "INFO stopped: worker (exit status 0)" in says
    assert "INFO stopped: beat (exit status 0)" in says
