"""``make run``: supervisord with supervisord.conf, on the embedded default (SQLite for the
database and the broker, email to files), as the Makefile starts it. A process that dies
is said so and started again, and the work goes on; one that cannot be started ends the
whole run with a line that says which; Ctrl-C stops every process cleanly: the worker
ends at once, without an error line and before supervisord would kill it."""

from __future__ import annotations

import os
import re
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
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


def untimed(lines: Iterable[str]) -> list[str]:
    """Log lines without their date and time."""
    return [re.sub(r"^\S+ \S+ ", "", line) for line in lines]


class MakeRun:
    """What ``make run`` starts after its migrate and demo: supervisord in the foreground
    with the repository's supervisord.conf, its output (and every child's) appended to
    a file, on a free port and with its files under ``tmp_path``. ``startsecs`` and
    ``startretries`` are the Makefile's STARTSECS and STARTRETRIES (20 and 5 by default):
    a test that waits for a process to count as started, or to be given up, lowers them."""

    def __init__(self, tmp_path: Path, startsecs: int = 20, startretries: int = 5) -> None:
        self.port = str(free_port())
        self.env = embedded_default(tmp_path) | {
            "PORT": self.port,
            "STARTSECS": str(startsecs),
            "STARTRETRIES": str(startretries),
        }
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
        return untimed(line for line in self.text().splitlines() if SUPERVISORD.match(line))

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


@dataclass
class KilledThenStopped:
    """One ``make run`` whose worker was killed, started again and seen doing beat's work,
    and which was then stopped with Ctrl-C."""

    run: MakeRun
    killed: int
    restarted: int


@pytest.fixture(scope="module")
def killed_then_stopped(tmp_path_factory: pytest.TempPathFactory) -> Iterator[KilledThenStopped]:
    """The run the two tests below read, started once for both (``xdist_group``: in one
    worker). A process counts as started after 2 s rather than 20: the run is ready
    sooner, and nothing here dies at its start."""
    run = MakeRun(tmp_path_factory.mktemp("make-run"), startsecs=2)
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
    yield KilledThenStopped(run, killed, restarted)


@pytest.mark.xdist_group("make_run_killed_then_stopped")
def test_ctrl_c_on_make_run_stops_every_process_cleanly(
    killed_then_stopped: KilledThenStopped,
) -> None:
    run = killed_then_stopped.run
    stopped = sorted(line for line in run.supervisord_says() if "stopped: " in line)
    # The one line of noise is the kill's, before the Ctrl-C.
    assert (run.process.returncode, stopped, untimed(noise(run.text()))) == (
        0,
        [
            "INFO stopped: beat (exit status 0)",
            "INFO stopped: supervision (exit status 0)",
            "INFO stopped: web (exit status 0)",
            "INFO stopped: worker (exit status 0)",
        ],
        ["WARN exited: worker (terminated by SIGKILL; not expected)"],
    )


@pytest.mark.xdist_group("make_run_killed_then_stopped")
def test_a_worker_killed_under_make_run_is_said_and_started_again(
    killed_then_stopped: KilledThenStopped,
) -> None:
    run, killed, restarted = (
        killed_then_stopped.run,
        killed_then_stopped.killed,
        killed_then_stopped.restarted,
    )
    says = run.supervisord_says()
    assert restarted != killed
    assert [line for line in says if "exited: " in line or "spawned: 'worker'" in line] == [
        f"INFO spawned: 'worker' with pid {killed}",
        "WARN exited: worker (terminated by SIGKILL; not expected)",
        f"INFO spawned: 'worker' with pid {restarted}",
    ]
    assert "INFO stopped: worker (exit status 0)" in says


def test_a_process_that_cannot_start_ends_make_run_with_a_clear_line(tmp_path: Path) -> None:
    # The web server cannot start again: once the others are up, it is killed and its port
    # taken. supervisord tries it again (twice: STARTRETRIES), gives it up, and the whole
    # run ends, the others stopped cleanly. (Taken once the worker and beat are up: a
    # worker stopped before it has set up its signal handlers would die of the SIGTERM.
    # A start that fails within 60 s counts as failed: a slow machine may take 20.)
    run = MakeRun(tmp_path, startsecs=60, startretries=2)
    try:
        run.wait_for(r"celery@\S+ ready\.", r"beat: Starting", r"Quit the server")
        with socket.socket() as taken:
            taken.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            os.kill(run.pid("web"), signal.SIGKILL)
            deadline = time.monotonic() + 10
            while True:  # until the killed server's socket is closed: a moment
                try:
                    taken.bind(("127.0.0.1", int(run.port)))
                    break
                except OSError:
                    assert time.monotonic() < deadline, run.text()
                    time.sleep(0.02)
            taken.listen()
            run.process.wait(timeout=300)
    finally:
        run.kill()
    says = run.supervisord_says()
    assert "Error: That port is already in use." in run.text()
    assert "INFO gave up: web entered FATAL state, too many start retries too quickly" in says
    assert (
        "make run stops: web could not be started (it exited again and again right after "
        "starting; its output above says why)."
    ) in run.text()
    assert "INFO stopped: worker (exit status 0)" in says
    assert "INFO stopped: beat (exit status 0)" in says
