"""Evaluation reports as files: output-path checks, writing, comparing two report files.

What ``kagreport evaluate`` and ``kagreport compare`` do with paths, so that their errors
are translated here, once, into :class:`~kagreport.KagreportError` messages naming the
file or value at fault.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Any

from kagreport._document import format_for
from kagreport._errors import (
    DifferentItemsError,
    InputError,
    KagreportError,
    NoSharedItemsError,
    ReportError,
    UsageError,
)
from kagreport.evaluation._comparison import EvaluationComparison
from kagreport.evaluation._read import read_report
from kagreport.evaluation._report import AnswerEvaluation, RetrievalEvaluation
from kagreport.evaluation.judges._config import prompt_files

__all__ = [
    "check_evaluate_paths",
    "check_output_path",
    "compare_report_files",
    "write_report",
]

_Path = str | os.PathLike[str]


def _same_file(first: str, second: str) -> bool:
    """Whether two paths name one file: the same inode when both exist (hard links,
    symbolic links), else the same resolved path (a file one of them will create)."""
    if os.path.exists(first) and os.path.exists(second):
        return os.path.samefile(first, second)
    return os.path.realpath(first) == os.path.realpath(second)


def check_output_path(path: _Path, inputs: Sequence[_Path | None] = ()) -> None:
    """Refuse, before any work, a report output that cannot be written or would replace an input.

    Parameters
    ----------
    path : path
        The report file to write (its suffix names the format).
    inputs : sequence of paths
        The files the work reads (``None`` entries are ignored).

    Raises
    ------
    UsageError
        For an unknown suffix, a missing or unwritable folder, a folder as the target, or
        a target that is one of ``inputs`` (compared as files: hard and symbolic links
        included, also when they do not exist yet).
    """
    name = os.fspath(path)
    target = os.path.abspath(name)
    folder = os.path.dirname(target)
    if os.path.isdir(target):
        raise UsageError(f"the output {name} is a folder", path=name)
    try:
        format_for(name, None)
    except ValueError as exc:
        raise UsageError(str(exc), path=name) from None
    if not os.path.isdir(folder):
        raise UsageError(f"the folder of the output {name} does not exist", path=name)
    if not os.access(folder, os.W_OK):
        raise UsageError(f"the folder of the output {name} is not writable", path=name)
    for other in inputs:
        # Also when neither exists yet: a cache the run would create, then replace.
        if other and _same_file(os.fspath(other), target):
            raise UsageError(f"the output {name} would replace the input {other}", path=name)


def check_evaluate_paths(
    output: _Path,
    *,
    judges: _Path,
    items: _Path | None = None,
    datasets: _Path | None = None,
    results: _Path | None = None,
    cache: _Path | None = None,
    labels: _Path | None = None,
) -> None:
    """Refuse, before any work, an output or cache that is one of an evaluation's inputs.

    Parameters
    ----------
    output : path
        The report to write.
    judges : path
        The judges TOML file (its prompt files are inputs too).
    items, datasets : path, optional
        The items JSONL file, or the datasets file of a kag run.
    results : path, optional
        The results root of a kag run.
    cache : path, optional
        The judge cache (``":memory:"`` is no file).
    labels : path, optional
        The human labels file.

    Raises
    ------
    UsageError
        As :func:`check_output_path` for ``output`` against the items, judges, datasets,
        labels, prompt and cache files; if the cache is one of the input files; or if ``output``
        lies in a question folder of the results tree.
    """
    name = os.fspath(output)
    inputs = [p for p in (items, judges, datasets, labels) if p is not None]
    inputs += prompt_files(judges)
    check_output_path(name, inputs)
    if cache is not None and os.fspath(cache) != ":memory:":
        cache_name = os.fspath(cache)
        if _same_file(cache_name, name):
            raise UsageError(
                f"the output {name} would replace the judge cache {cache_name} "
                "(which the run writes as responses arrive); give them different files",
                path=name,
            )
        for other in inputs:
            if other and _same_file(cache_name, os.fspath(other)):
                raise UsageError(
                    f"the judge cache {cache_name} would replace the input {other}",
                    path=cache_name,
                )
    if results is not None and os.path.isdir(results):
        relative = os.path.relpath(os.path.realpath(name), os.path.realpath(results))
        parts = relative.split(os.sep)
        if parts[0] != os.pardir and len(parts) >= 3:
            raise UsageError(
                f"the output {name} is inside a question folder of the results tree "
                f"{os.fspath(results)}, where kag's result files are; write it elsewhere",
                path=name,
            )


def write_report(report: Any, path: _Path) -> None:
    """Write an evaluation report or comparison atomically (format from the suffix).

    Raises
    ------
    ReportError
        If the suffix names no format or the file cannot be written (an existing file
        is then left intact); the message names the file.
    """
    name = os.fspath(path)
    try:
        report.write(name)
    except OSError as exc:
        raise ReportError(f"cannot write {name}: {exc.strerror or exc}", path=name) from None
    except ValueError as exc:
        raise ReportError(f"cannot write {name}: {exc}", path=name) from None


def compare_report_files(
    candidate: _Path,
    baseline: _Path,
    *,
    n_resamples: int = 10000,
    seed: int = 0,
    shared_only: bool = False,
    metrics: Sequence[str] | None = None,
) -> EvaluationComparison:
    """Read two evaluation report files and compare them (``kagreport compare``).

    Parameters
    ----------
    candidate, baseline : path
        AnswerEvaluation or RetrievalEvaluation files (of the same kind).
    n_resamples, seed, shared_only, metrics
        As :meth:`AnswerEvaluation.compare <kagreport.AnswerEvaluation.compare>`.

    Returns
    -------
    EvaluationComparison

    Raises
    ------
    ReportError
        If a file cannot be read or is not a report (:func:`read_report`).
    DifferentItemsError
        If the reports hold different items and not ``shared_only``; the message names
        both files and the two counts.
    NoSharedItemsError
        If the reports share no item (a UsageError: exit code 2), naming both files.
    UsageError
        If ``metrics`` names no metric or one both do not hold (the message names the
        ``--metrics`` option of ``kagreport compare`` and lists the shared ones).
    KagreportError
        If the reports are of different kinds, share no item or no metric, or cannot be
        compared (one line naming both files).
    """
    first, second = os.fspath(candidate), os.fspath(baseline)
    kinds = (AnswerEvaluation, RetrievalEvaluation)
    # Only the two kinds are read (kinds=...): both have compare().
    reports: list[Any] = [read_report(name, kinds=kinds) for name in (first, second)]
    where = f"cannot compare {first} with {second}"
    if type(reports[0]) is not type(reports[1]):
        raise KagreportError(
            f"{where}: they are reports of different kinds ({type(reports[0]).__name__} "
            f"and {type(reports[1]).__name__})"
        )
    try:
        comparison: EvaluationComparison = reports[0].compare(
            reports[1],
            n_resamples=n_resamples,
            seed=seed,
            shared_only=shared_only,
            metrics=metrics,
        )
    except NoSharedItemsError as exc:
        raise NoSharedItemsError(
            f"{where}: the two reports share no item",
            only_candidate=exc.only_candidate,
            only_baseline=exc.only_baseline,
        ) from None
    except DifferentItemsError as exc:
        raise DifferentItemsError(
            f"{where}: they hold different items ({exc.only_candidate} only in the "
            f"candidate, {exc.only_baseline} only in the baseline); --shared "
            "(shared_only=True) compares the items both hold",
            only_candidate=exc.only_candidate,
            only_baseline=exc.only_baseline,
        ) from None
    except InputError as exc:
        if str(exc).startswith("`metrics`"):
            raise UsageError("--metrics" + str(exc).removeprefix("`metrics`")) from None
        raise InputError(f"{where}: {exc}") from None
    return comparison
