"""Readers of other evaluation tools' runs into the run model (:class:`kagreport.runs.Run`).

:func:`read_run` detects the format of a path (a file or a folder) and reads it; each
reader reads the tool's files itself (typed msgspec structs), with no dependency on the
tool that wrote them. :data:`FORMATS` lists the formats by name.
:func:`read_inspect` reads an Inspect log (optionally its summaries only), :func:`write_eee`
writes a run as Every Eval Ever files, :func:`convert_run` as either format.
"""

from __future__ import annotations

from kagreport.sources._coerce import as_run
from kagreport.sources._compare import compare_files, join_runs
from kagreport.sources._convert import TARGETS, convert_run
from kagreport.sources._eee_write import write_eee
from kagreport.sources._inspect import read_inspect
from kagreport.sources._registry import FORMATS, SourceFormat, detect_format, read_run
from kagreport.sources._watch import watch_run

__all__ = [
    "FORMATS",
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
    "write_eee",
]
