"""Run in each worker process of the LocalCluster kagreport starts (a Dask preload).

Ctrl-C reaches the whole process group; the client stops the workers itself, so a worker
ignores SIGINT (no KeyboardInterrupt traceback from its event loop) and dies of SIGTERM at
once (the default action). A worker the nanny restarts after a death gets the same.
"""

from __future__ import annotations

import signal
from typing import Any

__all__ = ["dask_setup"]


def dask_setup(worker: Any) -> None:
    """Dask's preload hook: restore the stop signals' dispositions in this worker."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
