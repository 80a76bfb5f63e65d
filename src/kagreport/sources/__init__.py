"""Readers of other evaluation tools' runs into the run model (:class:`kagreport.runs.Run`).

:func:`read_run` detects the format of a path (a file or a folder) and reads it; each
reader reads the tool's files itself (typed msgspec structs), with no dependency on the
tool that wrote them.
:func:`join_runs` puts runs of one system each side by side, items matched by name, and
:func:`convert_run` writes a run as a kagreport.run document or as Every Eval Ever files.
"""

from __future__ import annotations

import typing

from kagreport._lazy import lazy_attributes as _lazy_attributes

if typing.TYPE_CHECKING:
    from kagreport.sources._coerce import as_run
    from kagreport.sources._compare import join_runs
    from kagreport.sources._convert import convert_run
    from kagreport.sources._registry import read_run
    from kagreport.sources._watch import watch_run

# Loaded on first access (PEP 562): the command line builds its parser from the names
# above without loading a reader (and the run model, NumPy...) that `kagreport stats` never
# uses. Name -> the module that defines it.
_LAZY = {
    "as_run": "._coerce",
    "join_runs": "._compare",
    "convert_run": "._convert",
    "read_run": "._registry",
    "watch_run": "._watch",
}

__all__ = [
    "as_run",
    "convert_run",
    "join_runs",
    "read_run",
    "watch_run",
]


__getattr__, __dir__ = _lazy_attributes(__name__, _LAZY, globals())
