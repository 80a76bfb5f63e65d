"""Imported by multiprocessing's fork server when kagreport starts one (a caller with other
threads: a Jupyter kernel, a Dask client, a view following a run).

The server hands each forked grading worker the SIGINT disposition it had when it started
serving: ignored, set here, so that a Ctrl-C or kernel interrupt sent to the whole group
while a worker starts cannot raise KeyboardInterrupt in it (the grading process acts on
the interrupt and stops the workers). The grading code is imported once, here.
"""

from __future__ import annotations

import signal

import kagreport.grading._engine  # noqa: F401  (imported once, in the server)

signal.signal(signal.SIGINT, signal.SIG_IGN)
