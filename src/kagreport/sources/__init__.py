"""Readers of other evaluation tools' runs into the run model (:class:`kagreport.runs.Run`).

:func:`read_run` detects the format of a path (a file or a folder) and reads it; each
reader reads the tool's files itself (typed msgspec structs), with no dependency on the
tool that wrote them. :data:`FORMATS` lists the formats by name.
:func:`read_inspect` reads an Inspect log (optionally its summaries only), ``write_eee``
writes a run as Every Eval Ever files, :func:`convert_run` as either format.
"""

from __future__ import annotations

import typing

from kagreport.sources._names import FORMAT_NAMES, TARGETS

if typing.TYPE_CHECKING:
    from kagreport.sources._coerce import as_run
    from kagreport.sources._compare import compare_files, join_runs
    from kagreport.sources._convert import convert_run
    from kagreport.sources._inspect import read_inspect
    from kagreport.sources._registry import FORMATS, SourceFormat, detect_format, read_run
    from kagreport.sources._watch import watch_run

# Loaded on first access (PEP 562): the command line builds its parser from the names
# above without loading a reader (and the run model, NumPy...) that `kagreport stats` never
# uses. Name -> the module that defines it.
_LAZY = {
    "as_run": "_coerce",
    "compare_files": "_compare",
    "join_runs": "_compare",
    "convert_run": "_convert",
    "read_inspect": "_inspect",
    **dict.fromkeys(("FORMATS", "SourceFormat", "detect_format", "read_run"), "_registry"),
    "watch_run": "_watch",
}

__all__ = [
    "FORMATS",
    "FORMAT_NAMES",
    "TARGETS",
    "SourceFormat",
    "as_run",
    "compare_files",
    "convert_run",
    "detect_format",
    "join_runs",
    "read_inspect",
    "read_run",
    "watch_run",
]


def __getattr__(name: str) -> object:
    if name in _LAZY:
        import importlib

        value = getattr(importlib.import_module(f"kagreport.sources.{_LAZY[name]}"), name)
        globals()[name] = value  # later lookups skip this function
        return value
    raise AttributeError(f"module 'kagreport.sources' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY))
