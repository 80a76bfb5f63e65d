"""SVG export of the site's charts, in a helper process so it overlaps the rest of the build.

vl-convert holds the GIL while it renders (about a tenth of a second a chart, most of it
measuring text), so a site of many setups spends much of its build there.
:class:`FigureWriter` hands the specs to one helper process (``python -m
kagreport.site._figures``, which reads one JSON job a line on stdin and answers one line per
job on stdout) while this process grades and renders pages. The helper imports vl-convert
only (not Altair or pandas) and starts its renderer at once, so its start-up overlaps grading.
Its SVG is what :func:`kagreport.charts.save_figure` writes: the same call to vl-convert with
the Vega-Lite version Altair targets. If the helper cannot be started, the figures are
exported in this process: the output is the same.

A figure that cannot be exported fails alone: its file holds a short SVG saying so (the page
draws the chart from the same spec, and every link keeps working) and :meth:`finish` returns
one line about it, which the build reports as a warning. vl-convert may abort the process
that runs it (a Rust panic that cannot unwind, as a control character in a text did), so
after a helper dies the figure it was exporting is that failure, and the figures after it go
to a new helper, never to this process.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import subprocess
import sys
import threading
from pathlib import Path
from queue import Queue
from typing import Any

from kagreport._errors import SiteError

__all__ = ["FigureWriter"]

logger = logging.getLogger("kagreport.site")

_STOP = None
#: The helper process: this module run as __main__, rfc3987-syntax's parsers deferred
#: before the package (and Altair with it) is imported: 1.4 s of each helper's start.
_HELPER = (
    "from kagreport._optional import defer_iri_grammar; defer_iri_grammar(); "
    "import runpy; runpy.run_module('kagreport.site._figures', run_name='__main__')"
)


def _export(spec: Any, path: str) -> None:
    from kagreport.charts import save_figure

    save_figure(spec, path)


def _render(spec: Any, path: str, vl_version: str | None) -> None:
    """The helper's export: :func:`save_figure`'s SVG path without importing Altair."""
    import vl_convert as vlc

    from kagreport._atomic import write_atomic

    write_atomic(Path(path), vlc.vegalite_to_svg(spec, vl_version=vl_version))


#: What a figure's file holds when the figure could not be exported (no text of the run in
#: it: the warning names the reason).
PLACEHOLDER = (
    '<svg xmlns="http://www.w3.org/2000/svg" width="238" height="24" viewBox="0 0 238 24">'
    '<text x="4" y="15" font-family="Liberation Sans, Arial, sans-serif" font-size="9">'
    "This figure could not be exported; see its page.</text></svg>\n"
)


def _stopped(code: int) -> str:
    """Why a helper ended before answering, from its exit status."""
    if code < 0:
        return f"the exporter (vl-convert) ended with signal {-code}"
    return f"the exporter (vl-convert) ended with status {code}"


def _warm_up() -> None:
    # The first render starts vl-convert's JavaScript runtime (about a second).
    import vl_convert as vlc

    vlc.vegalite_to_svg({"mark": "point", "data": {"values": [{}]}})


class FigureWriter:
    """Export Vega-Lite specs to SVG files, in a helper process when possible.

    Parameters
    ----------
    helper : bool
        Start the helper process; False exports in this process, at :meth:`submit`.
    """

    def __init__(self, helper: bool = True) -> None:
        self.jobs: list[tuple[str, str]] = []  # (spec JSON, path), in submission order
        self.process: subprocess.Popen[bytes] | None = None
        self.queue: Queue[bytes | None] = Queue()
        self.feeder: threading.Thread | None = None
        self.helper = helper
        self.started = False
        self.vl_version: str | None = None
        self.failures: list[str] = []  # one line per figure that could not be exported

    def start(self) -> None:
        """Start the helper process now (it warms up while this process works).

        Starts no thread in this process (grading forks its workers only while this
        process has a single thread); the thread that feeds the helper starts with the
        first figure.
        """
        if self.started:
            return
        self.started = True
        if self.helper:
            self.process = self._spawn()

    def _spawn(self) -> subprocess.Popen[bytes] | None:
        """A new helper process; None if it cannot be started."""
        try:
            env = dict(os.environ)
            env["PYTHONPATH"] = os.pathsep.join(
                [p for p in (*sys.path, env.get("PYTHONPATH", "")) if p]
            )
            return subprocess.Popen(
                [sys.executable, "-c", _HELPER],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.DEVNULL,  # a panic's backtrace is not the user's to read
                env=env,
            )
        except OSError as exc:
            logger.debug("no figure helper process (%s); exporting in this process", exc)
            return None

    def _feed(self) -> None:
        assert self.process is not None
        stdin = self.process.stdin
        assert stdin is not None
        try:
            while True:
                line = self.queue.get()
                if line is _STOP:
                    break
                stdin.write(line)
                stdin.flush()
        except OSError:  # the helper died; finish() exports what it did not confirm
            pass
        finally:
            with contextlib.suppress(OSError):
                stdin.close()

    def submit(self, spec: Any, path: Path) -> None:
        """Export ``spec`` to ``path`` (now, or in the helper)."""
        text = json.dumps(spec, sort_keys=True)
        if not self.started:
            self.start()
        if self.process is None:
            self._local(text, str(path))
            return
        if self.feeder is None:
            from kagreport.charts._export import vegalite_version

            self.vl_version = vegalite_version()
            self.feeder = threading.Thread(target=self._feed, daemon=True)
            self.feeder.start()
        self.jobs.append((text, str(path)))
        self.queue.put(self._line(text, str(path)))

    def _line(self, text: str, path: str) -> bytes:
        job = {"spec": text, "path": path, "vl_version": self.vl_version}
        return json.dumps(job).encode("utf-8") + b"\n"

    def _local(self, text: str, path: str) -> None:
        try:
            _export(json.loads(text), path)
        except Exception as exc:  # any failure of the exporter fails this figure alone
            self._failed(path, f"{type(exc).__name__}: {exc}")

    def _failed(self, path: str, reason: str) -> None:
        """Record that the figure at ``path`` could not be exported; write its placeholder.

        Raises
        ------
        SiteError
            If the placeholder cannot be written either.
        """
        from kagreport._atomic import write_atomic
        from kagreport._format import printable

        where = Path(path)
        shown = f"{where.parent.name}/{where.name}"
        why = printable(" ".join(reason.split()), 300)
        self.failures.append(f"figure {shown} could not be exported ({why}); its page draws it")
        try:
            write_atomic(where, PLACEHOLDER)
        except OSError as exc:
            raise SiteError(
                f"cannot write the figure {shown}: {exc.strerror or exc}", path=where
            ) from None

    def _answered(self, jobs: list[tuple[str, str]], answers: list[str]) -> int:
        """Take the helper's answers to ``jobs``; the number of jobs answered."""
        for (_, path), answer in zip(jobs, answers, strict=False):
            if answer != "ok":
                self._failed(path, answer.removeprefix("error ") or "no answer")
        return min(len(answers), len(jobs))

    def finish(self) -> list[str]:
        """Wait for every figure. After a helper died, the figure it was on fails and the
        rest go to a new helper (to this process only if none can be started).

        Returns
        -------
        list of str
            One line per figure that could not be exported (its file then says so).

        Raises
        ------
        KagreportError
            If a figure's file cannot be written at all.
        """
        if self.process is not None:
            self.queue.put(_STOP)
            if self.feeder is None:  # no figure was submitted: the feeder never started
                assert self.process.stdin is not None
                self.process.stdin.close()
            assert self.process.stdout is not None
            with self.process.stdout as stdout:  # closed once read (no ResourceWarning)
                answers = [line.decode("utf-8", "replace").rstrip("\n") for line in stdout]
            code = self.process.wait()
            if self.feeder is not None:
                self.feeder.join()
            self.process = None
            rest = self.jobs
            while rest:
                done = self._answered(rest, answers)
                if done == len(rest):
                    break
                self._failed(rest[done][1], _stopped(code))  # the helper died on it
                rest = rest[done + 1 :]
                answers, code = self._again(rest)
        self.jobs = []
        return list(self.failures)

    def _again(self, jobs: list[tuple[str, str]]) -> tuple[list[str], int]:
        """Export ``jobs`` in a new helper (in this process if none starts): its answers
        and exit status."""
        if not jobs:
            return [], 0
        process = self._spawn()
        if process is None:
            for text, path in jobs:
                self._local(text, path)
            return ["ok"] * len(jobs), 0  # failures are recorded by _local
        try:
            out, _ = process.communicate(b"".join(self._line(t, p) for t, p in jobs))
        except BaseException:  # a stop: no helper is left behind
            process.kill()
            process.wait()
            raise
        # Whole lines only: a helper that died in the middle of one did not answer.
        return out.decode("utf-8", "replace").split("\n")[:-1], process.wait()

    def close(self) -> None:
        """Stop the helper (after a failed build)."""
        if self.process is not None:
            self.queue.put(_STOP)
            self.process.kill()
            self.process.wait()
            if self.feeder is not None:
                self.feeder.join()  # it closes the helper's stdin
            elif self.process.stdin is not None:
                self.process.stdin.close()
            if self.process.stdout is not None:
                self.process.stdout.close()
            self.process = None


def _main() -> int:
    with contextlib.suppress(Exception):  # the first job reports what is wrong
        _warm_up()
    for line in sys.stdin.buffer:
        try:
            job = json.loads(line)
            _render(json.loads(job["spec"]), job["path"], job["vl_version"])
        except Exception as exc:  # reported to the parent: this figure fails
            from kagreport._format import printable

            message = printable(" ".join(f"{type(exc).__name__}: {exc}".split()), 300)
            sys.stdout.write(f"error {message}\n")
        else:
            sys.stdout.write("ok\n")
        sys.stdout.flush()
    return 0


if __name__ == "__main__":
    raise SystemExit(_main())
