"""A sampling profiler for a benchmark's own process, in the standard library: every
millisecond of CPU time a signal interrupts it and the sample counts for the first layer
its stack meets from the innermost frame out. Unlike cProfile it does not slow every call,
so the shares it gives are those of the work as it runs."""

from __future__ import annotations

import signal
from collections import Counter
from collections.abc import Sequence
from types import FrameType

# (layer, the fragments of a frame's file path that put it there), looked for in order
# from the innermost frame out: the first frame that belongs to a layer decides.
Layers = Sequence[tuple[str, Sequence[str]]]

LAYERS: Layers = (
    ("database driver and waits (psycopg)", ("/psycopg/", "/psycopg_c/")),
    ("SMTP client and sockets (smtplib)", ("/smtplib.py", "/socket.py", "/ssl.py")),
    ("MIME (email package, Django's mail)", ("/email/", "/django/core/mail/")),
    ("templates (Django's engine and tags)", ("/django/template/",
                                                             "/django/templatetags/")),
    ("ORM (queries built, rows to objects)", ("/django/db/",)),
    ("game rules (engines)", ("/games/engines/",)),
    ("translations (gettext)", ("/django/utils/translation/", "/gettext.py")),
    ("JSON", ("/json/",)),
)  # fmt: skip
OTHER = "other Python (the service's code, Django, the standard library)"


def layer_of(frame: FrameType | None, layers: Layers = LAYERS) -> str:
    while frame is not None:
        path = frame.f_code.co_filename
        for name, fragments in layers:
            if any(fragment in path for fragment in fragments):
                return name
        frame = frame.f_back
    return OTHER


class Sampler:
    """Samples this process's main thread every ``interval`` seconds of its CPU time
    (SIGPROF from setitimer's ITIMER_PROF, as statistical profilers do), while entered:
    where the CPU went, waits for a socket not counted. Entered from the main thread."""

    def __init__(self, interval: float = 0.001, layers: Layers = LAYERS) -> None:
        self.interval, self.layers = interval, layers
        self.counts: Counter[str] = Counter()

    def _sample(self, signum: int, frame: FrameType | None) -> None:
        self.counts[layer_of(frame, self.layers)] += 1

    def __enter__(self) -> Sampler:
        self._previous = signal.signal(signal.SIGPROF, self._sample)
        signal.setitimer(signal.ITIMER_PROF, self.interval, self.interval)
        return self

    def __exit__(self, *exc: object) -> None:
        signal.setitimer(signal.ITIMER_PROF, 0, 0)
        signal.signal(signal.SIGPROF, self._previous)

    def shares(self) -> dict[str, float]:
        total = sum(self.counts.values()) or 1
        return {name: count / total for name, count in self.counts.most_common()}
