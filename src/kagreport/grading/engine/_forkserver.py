"""The preload of the fork server kagreport starts for a caller with other threads (a
Jupyter kernel, a Dask client, a view following a run). Imported in that server only
(``set_forkserver_preload``), never in the grading process: it changes the server.

- The server hands each forked worker the SIGINT disposition it had when it started
  serving: ignored, set here, so that a Ctrl-C or kernel interrupt sent to the whole group
  while a worker starts cannot raise KeyboardInterrupt in it (the grading process acts on
  the interrupt and stops the workers).
- A worker forked from the server first imports the caller's main module again, as
  multiprocessing does for its fork server and for spawn: a script without an
  ``if __name__ == "__main__":`` guard would run again in every worker. Grading workers
  need nothing from it (their task and its arguments are kagreport's), so for them (the
  processes named ``WORKER_NAME-...``) that import is left out; other processes of the
  server are prepared as before.
- The grading code is imported once, here, not in each worker.
"""

from __future__ import annotations

import signal
from collections.abc import Mapping
from multiprocessing import spawn
from typing import Any

from kagreport.grading.engine._pool import WORKER_NAME

_MAIN_KEYS = ("init_main_from_path", "init_main_from_name")
_prepare = spawn.prepare


def _prepare_worker(data: Mapping[str, Any]) -> None:
    if str(data.get("name", "")).startswith(WORKER_NAME):
        data = {key: value for key, value in data.items() if key not in _MAIN_KEYS}
    _prepare(data)


# The server's children look spawn.prepare up when they start.
spawn.prepare = _prepare_worker
signal.signal(signal.SIGINT, signal.SIG_IGN)
# Started with SIGINT blocked (by _pool._pool_context): a Ctrl-C sent while it imported
# was held, and is dropped now that it is ignored.
signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})
