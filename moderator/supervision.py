"""``make run``'s last word (supervisord.conf): an event listener of supervisord that ends
the whole run when one of its processes cannot be started, rather than leave the others
running without it (a web server without a worker takes orders and resolves nothing).

supervisord gives a process up (its state FATAL) when it died within ``startsecs`` of
being started, ``startretries`` times in a row; it has said so in its log ("gave up: ...").
This listener then says which process and what to do, and asks supervisord to stop
(SIGTERM, as a Ctrl-C would): every other process is stopped cleanly. A process that ran
and died later is not given up: supervisord says so and starts it again."""

from __future__ import annotations

import os
import signal
import sys

from supervisor import childutils


def main() -> None:
    # Stopped with the rest (SIGTERM): an ordinary end, status 0.
    signal.signal(signal.SIGTERM, lambda signum, frame: sys.exit(0))
    while True:
        headers, payload = childutils.listener.wait(sys.stdin, sys.stdout)
        if headers["eventname"] == "PROCESS_STATE_FATAL":
            name = childutils.get_headers(payload.split("\n", 1)[0])["processname"]
            sys.stderr.write(
                f"make run stops: {name} could not be started (it exited again and again"
                " right after starting; its output above says why).\n"
            )
            sys.stderr.flush()
            os.kill(os.getppid(), signal.SIGTERM)
        childutils.listener.ok(sys.stdout)


if __name__ == "__main__":
    main()
