"""A kag result tree as a run: :func:`read_kag`, what ``read_run(path, format="kag")`` does."""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from kagreport._errors import UsageError

if TYPE_CHECKING:
    from kagreport.runs import Run

__all__ = ["KAG_OPTIONS", "read_kag"]

#: The keyword options ``read_run(..., format="kag")`` takes.
KAG_OPTIONS = ("datasets", "prefix", "storage_options", "engine_options", "keep_text")


def read_kag(
    results: str | os.PathLike[str],
    *,
    datasets: str | os.PathLike[str] | None = None,
    prefix: str = "",
    storage_options: Mapping[str, Any] | None = None,
    engine_options: Any = None,
    keep_text: bool | int = False,
) -> Run:
    """Grade the kag result tree ``results`` against ``datasets`` and return its run.

    The run equals ``Run.from_stats(grade(datasets, results, prefix))``: the setups in
    kag's rank order, one row per graded result file, metric ``correct``, kag's costs;
    question texts, options and answer keys from the datasets file, responses and errors
    read from the result files when a view shows them (or, with ``keep_text``, kept
    as grading read them: whole, or cut to that many characters).

    Parameters
    ----------
    results : str or path-like
        The results root (``<results>/<dataset>/<question>/<prefix><setup>.json``): a
        local folder or an fsspec URL.
    datasets : str or path-like
        The datasets file the tree is graded against (required).
    prefix : str
        The result files' name prefix (``kag benchmark --prefix``).
    storage_options : mapping, optional
        fsspec options for URLs; also used when the responses are read later.
    engine_options : EngineOptions, optional
        How the tree is graded (:func:`kagreport.grading.grade`'s ``options``).
    keep_text : bool or int
        As :func:`kagreport.grading.grade`: keep the responses and errors in memory as the
        grading pass reads them (True: whole; an int: that many characters of each)
        instead of reading them again when shown.

    Raises
    ------
    UsageError
        Without ``datasets`` (kag grades against its datasets file).
    DatasetsError, ResultTreeError
        As :func:`kagreport.grading.grade`.
    """
    from kagreport.grading import grade
    from kagreport.runs import Run

    if datasets is None:
        raise UsageError(
            f"{os.fspath(results)}: a kag result tree is read with its datasets file "
            "(datasets=..., or --datasets)"
        )
    extra: dict[str, Any] = {"keep_text": keep_text}
    if storage_options is not None:
        extra["storage_options"] = storage_options
    if engine_options is not None:
        extra["options"] = engine_options
    report = grade(datasets, results, prefix, **extra)
    return Run.from_stats(report, storage_options=storage_options)
