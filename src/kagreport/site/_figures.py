"""SVG export of the site's charts, in a helper process so it overlaps the rest of the build.

vl-convert holds the GIL while it renders (about a tenth of a second a chart, most of it
measuring text), so a site of many setups spends much of its build there.
:class:`FigureWriter` hands the specs to one helper process (``python -m
kagreport.site._figures``, which reads one JSON job a line on stdin and answers one line per
job on stdout) while this process grades and renders pages. The helper imports vl-convert
only (not Altair or pandas) and starts its renderer at once, so its start-up overlaps grading.
Its SVG is what :func:`kagreport.charts.save_figure` writes: the same call to vl-convert with
the Vega-Lite version Altair targets. If the helper cannot be started or dies, the remaining
figures are exported in this process: the output is the same.
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


def _export(spec: Any, path: str) -> None:
    from kagreport.charts import save_figure

    save_figure(spec, path)


def _render(spec: Any, path: str, vl_version: str | None) -> None:
    """The helper's export: :func:`save_figure`'s SVG path without importing Altair."""
    import vl_convert as vlc

    from kagreport._atomic import write_atomic

    write_atomic(Path(path), vlc.vegalite_to_svg(spec, vl_version=vl_version))


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
            try:
                env = dict(os.environ)
                env["PYTHONPATH"] = os.pathsep.join(
                    [p for p in (*sys.path, env.get("PYTHONPATH", "")) if p]
                )
                self.process = subprocess.Popen(
                    [sys.executable, "-m", "kagreport.site._figures"],
                    stdin=subprocess.PIPE,
                    stdout=subprocess.PIPE,
                    stderr=subprocess.DEVNULL,
                    env=env,
                )
            except OSError as exc:
                logger.debug("no figure helper process (%s); exporting in this process", exc)
                self.process = None

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
        job = {"spec": text, "path": str(path), "vl_version": self.vl_version}
        self.queue.put(json.dumps(job).encode("utf-8") + b"\n")

    def _local(self, text: str, path: str) -> None:
        try:
            _export(json.loads(text), path)
        except (ValueError, OSError) as exc:
            raise SiteError(f"cannot export the figure {path}: {exc}", path=path) from None

    def finish(self) -> None:
        """Wait for every figure; export in this process those the helper did not write.

        Raises
        ------
        KagreportError
            If a figure cannot be exported.
        """
        if self.process is None:
            return
        self.queue.put(_STOP)
        if self.feeder is None:  # no figure was submitted: the feeder never started
            assert self.process.stdin is not None
            self.process.stdin.close()
        assert self.process.stdout is not None
        with self.process.stdout as stdout:  # closed once read (no ResourceWarning)
            answers = [line.decode("utf-8", "replace").rstrip("\n") for line in stdout]
        self.process.wait()
        if self.feeder is not None:
            self.feeder.join()
        self.process = None
        for index, (text, path) in enumerate(self.jobs):
            answer = answers[index] if index < len(answers) else ""
            if answer == "ok":
                continue
            if answer.startswith("error "):
                raise SiteError(f"cannot export the figure {path}: {answer[6:]}", path=path)
            self._local(text, path)  # the helper died before this one
        self.jobs = []

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
        except Exception as exc:  # reported to the parent, which raises it
            message = " ".join(f"{type(exc).__name__}: {exc}".split())
            sys.stdout.write(f"error {message}\n")
        else:
            sys.stdout.write("ok\n")
        sys.stdout.flush()
    return 0


if __name__ == "__main__":
    raise SystemExit(_main())
