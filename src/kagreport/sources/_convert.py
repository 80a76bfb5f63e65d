"""Converting a run of another tool into a kagreport.run document or Every Eval Ever files."""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

from kagreport._errors import KagreportError, UsageError
from kagreport.sources._eee_write import check_output, write_eee
from kagreport.sources._names import TARGETS
from kagreport.sources._registry import read_run

if TYPE_CHECKING:
    from collections.abc import Sequence

    from kagreport.runs import Run

__all__ = ["TARGETS", "convert_run"]

#: Output formats: a kagreport.run document (``.json``) or an EEE 0.3 folder.


def output_format(output: str | os.PathLike[str], to: str | None) -> str:
    """``to``, else ``"eee"`` when the output's name ends in ``.eee``, else ``"kagreport"``."""
    if to is None:
        return "eee" if Path(output).name.endswith(".eee") else "kagreport"
    if to not in TARGETS:
        raise UsageError(f"unknown output format {to!r}; formats: {', '.join(TARGETS)}")
    return to


def _stamp_file_time(run: Run, source: Path) -> Run:
    """``run`` with its folder's file time, stated as such, when it records no time.

    Only a run read from a folder (a kag result tree, a HELM run): its files were written
    by the run. A single file may be a copy or a document written later (a kagreport.run
    document converts to itself, byte for byte)."""
    import dataclasses
    from datetime import UTC, datetime

    from kagreport.runs._times import CREATED, CREATED_FROM

    if run.metadata.get(CREATED) is not None:
        return run
    try:
        if not source.is_dir():
            return run
        newest = source.stat().st_mtime
        with os.scandir(source) as entries:  # result folders, the files of a run
            newest = max([newest, *(e.stat().st_mtime for e in entries)])
    except OSError:
        return run
    stamp = datetime.fromtimestamp(newest, UTC).isoformat().replace("+00:00", "Z")
    metadata = {**run.metadata, CREATED: stamp, CREATED_FROM: "file"}
    return dataclasses.replace(run, metadata=metadata)


def convert_run(
    path: str | os.PathLike[str],
    output: str | os.PathLike[str],
    format: str | None = None,
    to: str | None = None,
    *,
    systems: Sequence[str] | None = None,
    **options: Any,
) -> Run:
    """Read the run at ``path`` (:func:`read_run`) and write it as a ``kagreport.run``
    document or as Every Eval Ever 0.3 files (``write_eee``, a folder).

    Either is written atomically (a crash leaves any old ``output`` whole).

    Parameters
    ----------
    path : str or path-like
        The run's file or folder.
    output : str or path-like
        The document to write (its name ends in ``.json``), or the EEE folder.
    format : str, optional
        The input format (a name :func:`read_run` takes); detected when omitted.
    to : {"kagreport", "eee"}, optional
        The output format; ``"eee"`` when ``output``'s name ends in ``.eee``, else
        ``"kagreport"``.
    systems : sequence of str, optional
        Keep only these systems, in this order (:meth:`Run.select`): one system of a
        run, to gate it alone.
    **options
        The input format's options (:func:`read_run`): ``datasets=`` (and ``prefix=``)
        for a kag result tree.

    Returns
    -------
    Run
        The run written. A run read from a folder whose tool records no time (a kag
        tree, HELM) gets the newest modification time of ``path`` and its entries as
        ``metadata["created"]``,
        marked ``metadata["created_from"] = "file"``: a history orders it by that time and
        says it is a file time (:func:`kagreport.runs.history`). It is kept in the document,
        where a copy or a checkout would change the files' times.

    Raises
    ------
    UsageError
        For an unknown ``to``; if a kagreport ``output`` does not end in ``.json`` or is a
        folder; if ``output`` is the input itself, inside an input folder, or (EEE) a
        folder holding the input; raised before anything is read. For a name of
        ``systems`` the run does not hold (one line listing its systems).
    KagreportError
        As :func:`read_run`; if ``output``'s folder does not exist or ``output`` cannot be
        written (the old one, if any, is then whole).
    """
    source, target = Path(path), Path(output)
    eee = output_format(target, to) == "eee"
    if not eee and target.suffix != ".json":
        raise UsageError(f"{target}: a run document's name ends in .json (or use --to eee)")
    if not eee and target.is_dir():
        raise UsageError(f"{target} is a folder, not a file to write")
    try:
        resolved, inside = target.resolve(), source.resolve()
    except (RuntimeError, OSError) as exc:  # a symbolic link loop (RuntimeError before 3.13)
        raise KagreportError(f"{target} or {source}: cannot follow the path: {exc}") from None
    if resolved == inside or (source.is_dir() and inside in resolved.parents):
        raise UsageError(f"{target} is the run being read ({source}): choose another output")
    if target.exists() and source.exists() and os.path.samefile(target, source):
        raise UsageError(f"{target} is the run being read ({source}): choose another output")
    if eee and resolved in inside.parents:
        raise UsageError(f"{target} holds the run being read ({source}): choose another output")
    if eee:
        check_output(target)
    if not target.absolute().parent.is_dir():
        raise KagreportError(f"cannot write {target}: its folder does not exist", path=target)
    run = _stamp_file_time(read_run(source, format=format, **options), source)
    if systems is not None:
        run = _select(run, systems, source)
    try:
        if eee:
            write_eee(run, target)
        else:
            run.write(target)
    except OSError as exc:  # a name too long for the file system, a full disk, ...
        raise KagreportError(f"cannot write {target}: {exc.strerror or exc}", path=target) from None
    return run


def _select(run: Run, systems: Sequence[str], source: Path) -> Run:
    unknown = [s for s in systems if s not in run.systems]
    if unknown:
        error = UsageError(
            f"{source} holds no system {', '.join(map(repr, unknown))}; "
            f"its systems: {', '.join(run.systems)}"
        )
        error.show_usage = False  # one line: the names are what the user needs
        raise error
    return run.select(list(dict.fromkeys(systems)))
