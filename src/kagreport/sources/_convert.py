"""Converting a run of another tool into a kagreport.run document."""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

from kagreport._errors import UsageError
from kagreport.sources._registry import read_run

if TYPE_CHECKING:
    from kagreport.runs import Run

__all__ = ["convert_run"]


def convert_run(
    path: str | os.PathLike[str], output: str | os.PathLike[str], format: str | None = None
) -> Run:
    """Read the run at ``path`` (:func:`read_run`) and write it as a ``kagreport.run`` document.

    The document is written atomically (a crash leaves any old ``output`` whole).

    Parameters
    ----------
    path : str or path-like
        The run's file or folder.
    output : str or path-like
        The document to write; its name must end in ``.json``.
    format : str, optional
        The input format (:data:`FORMATS`); detected when omitted.

    Returns
    -------
    Run
        The run written.

    Raises
    ------
    UsageError
        If ``output`` does not end in ``.json``, is a folder, or is the input itself (or a
        file inside an input folder); raised before anything is read.
    KagreportError
        As :func:`read_run`.
    """
    source, target = Path(path), Path(output)
    if target.suffix != ".json":
        raise UsageError(f"{target}: a run document's name ends in .json")
    if target.is_dir():
        raise UsageError(f"{target} is a folder, not a file to write")
    resolved, inside = target.resolve(), source.resolve()
    if resolved == inside or (source.is_dir() and inside in resolved.parents):
        raise UsageError(f"{target} is the run being read ({source}): choose another output")
    if target.exists() and source.exists() and os.path.samefile(target, source):
        raise UsageError(f"{target} is the run being read ({source}): choose another output")
    run = read_run(source, format=format)
    run.write(target)
    return run
