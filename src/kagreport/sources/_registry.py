"""The formats :func:`read_run` knows, and how it tells them apart."""

from __future__ import annotations

import dataclasses
import os
import re
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

from kagreport._errors import DocumentError, KagreportError, UsageError
from kagreport._format import name_labels
from kagreport.sources import _inspect, _openai_evals, _promptfoo
from kagreport.sources._common import file_head
from kagreport.sources._eee import is_eee, read_eee
from kagreport.sources._helm import is_helm, read_helm
from kagreport.sources._kag import KAG_OPTIONS, read_kag
from kagreport.sources._lmeval import is_lmeval, read_lmeval

if TYPE_CHECKING:
    from kagreport.runs import Run

__all__ = ["FORMATS", "SourceFormat", "detect_format", "read_run"]


@dataclass(frozen=True)
class SourceFormat:
    """One readable format.

    Attributes
    ----------
    name : str
        The name ``read_run(path, format=name)`` takes (``"kagreport"``).
    description : str
        What the format is, for messages.
    detect : callable
        ``detect(path) -> bool``: whether ``path`` (a file or folder) looks like this
        format. It reads at most a few kilobytes and never raises for an unreadable path.
    read : callable
        ``read(path, **options) -> Run``; raises :class:`kagreport.KagreportError` naming
        the file and the field for a file it cannot read.
    options : tuple of str
        The keyword options ``read`` takes (``datasets`` for a kag tree); empty for most.
    """

    name: str
    description: str
    detect: Callable[[Path], bool]
    read: Callable[..., Run]
    options: tuple[str, ...] = ()


def _never(path: Path) -> bool:
    return False


def _is_run_document(path: Path) -> bool:
    head = file_head(path, (".json",))
    return head is not None and b'"kagreport.run"' in head


def _read_run_document(path: Path) -> Run:
    from kagreport.runs import Run

    return Run.read(path)


_FORMATS: dict[str, SourceFormat] = {
    "kagreport": SourceFormat(
        "kagreport",
        "a kagreport.run document (Run.write)",
        _is_run_document,
        _read_run_document,
    ),
    # Detected only when a datasets file is given (a results tree holds no marker).
    "kag": SourceFormat(
        "kag",
        "a kag benchmark result tree (<results>/<dataset>/<question>/<setup>.json), "
        "read with its datasets file (datasets=...)",
        _never,
        read_kag,
        KAG_OPTIONS,
    ),
    "lm-eval": SourceFormat(
        "lm-eval",
        "an lm-evaluation-harness --log_samples output folder (results_*.json, samples_*.jsonl)",
        is_lmeval,
        read_lmeval,
    ),
    "helm": SourceFormat(
        "helm",
        "a HELM run folder (run_spec.json, per_instance_stats.json) or a suite folder of them",
        is_helm,
        read_helm,
    ),
    "promptfoo": SourceFormat(
        "promptfoo",
        "promptfoo eval -o results.json (results version 3) or its JSONL output",
        _promptfoo.is_promptfoo,
        _promptfoo.read_promptfoo,
    ),
    "openai-evals": SourceFormat(
        "openai-evals",
        "an OpenAI evals record log (oaieval --record_path, JSON lines)",
        _openai_evals.is_openai_evals,
        _openai_evals.read_openai_evals,
    ),
    "inspect": SourceFormat(
        "inspect",
        "Inspect AI eval logs (.eval or .json, log format 2), or a folder of them",
        _inspect.is_inspect,
        _inspect.read_inspect,
        ("summaries_only",),
    ),
    # Last: its folder search looks several levels down.
    "eee": SourceFormat(
        "eee",
        "Every Eval Ever schema 0.3: aggregate <uuid>.json with its <uuid>_samples.jsonl, "
        "or a folder of them",
        is_eee,
        read_eee,
    ),
}
#: The formats by name, in the order :func:`detect_format` tries them.
FORMATS: Mapping[str, SourceFormat] = MappingProxyType(_FORMATS)


def detect_format(path: str | os.PathLike[str]) -> SourceFormat:
    """The format of ``path`` (a file or folder).

    A kag result tree holds no mark of its own and is not detected: it is read with its
    datasets file (``read_run(path, datasets=...)``); a folder that looks like one (a
    ``<dataset>/<question>/<name>.json`` below it) is said to need it.

    Raises
    ------
    UsageError
        If no known format matches; the message lists the formats, or asks for the
        datasets file of a folder that looks like a kag result tree.
    """
    where = Path(path)
    if not where.exists():
        raise UsageError(f"{where}: no such file or folder")
    if _is_empty(where):
        raise _one_line(f"{where}: the file is empty, not a run")
    for source in _FORMATS.values():
        if source.detect(where):
            return source
    if _looks_like_kag(where):
        raise UsageError(
            f"{where}: looks like a kag result tree; read it with its datasets file "
            "(datasets=..., or --datasets)"
        )
    document = _other_document(where)
    if document is not None:
        raise _one_line(f"{where}: a {document}, not a run")
    known = ", ".join(f"{s.name} ({s.description})" for s in _FORMATS.values())
    raise UsageError(f"{where}: not a run of any format kagreport reads; formats: {known}")


def _one_line(message: str) -> UsageError:
    error = UsageError(message)
    error.show_usage = False  # the message says all: no usage text before it
    return error


def _is_empty(path: Path) -> bool:
    try:
        return path.is_file() and path.stat().st_size == 0
    except OSError:
        return False


#: What another kagreport document is, said when it is given as a run.
_DOCUMENTS = {"kagreport.gate": "the result of a gate"}


def _other_document(path: Path) -> str | None:
    """``"kagreport.X document (what it is)"`` when ``path`` is a JSON document of
    kagreport's that is not a run, else None (the first 4 KiB looked at)."""
    head = file_head(path, (".json",))
    found = re.search(rb'"schema"\s*:\s*"(kagreport\.[A-Za-z0-9_.]{1,60})"', head or b"")
    if found is None:
        return None
    schema = found.group(1).decode("ascii")
    what = _DOCUMENTS.get(schema)
    return f"{schema} document" + (f" ({what})" if what else "")


def _looks_like_kag(path: Path, limit: int = 20) -> bool:
    """Whether ``path`` is a folder with ``<dataset>/<question>/<name>.json`` below it (the
    first ``limit`` entries of each level looked at; never raises)."""
    try:
        datasets = [d for d in _first(path, limit) if d.is_dir()]
        for dataset in datasets:
            for question in (q for q in _first(dataset, limit) if q.is_dir()):
                if any(f.suffix == ".json" and f.is_file() for f in _first(question, limit)):
                    return True
    except OSError:
        return False
    return False


def _first(folder: Path, limit: int) -> list[Path]:
    with os.scandir(folder) as entries:
        found = []
        for entry in entries:
            found.append(Path(entry.path))
            if len(found) == limit:
                break
        return found


def read_run(path: str | os.PathLike[str], format: str | None = None, **options: Any) -> Run:
    """Read a run of any format into a :class:`Run`: a kag result tree, another tool's
    run, or a kagreport.run document.

    Parameters
    ----------
    path : str or path-like
        The run's file or folder (a kag tree's results root may be a URL).
    format : str, optional
        A format name, in the order detection tries them: ``"kagreport"``, ``"kag"``,
        ``"lm-eval"``, ``"helm"``, ``"promptfoo"``, ``"openai-evals"``, ``"inspect"``,
        ``"eee"``; detected from the path when omitted. Given a ``datasets`` option, the
        path is read as a kag result tree.
    **options
        The format's options. ``"inspect"`` takes ``summaries_only`` (read a ``.eval``
        log's header, summaries and reductions only: the metrics, outcomes and
        references, not the responses). ``"kag"`` takes ``datasets`` (the datasets file,
        required), ``prefix`` (the result files' prefix), ``storage_options`` (fsspec
        options for a URL), ``engine_options`` (how to grade: :func:`kagreport.grade`'s
        ``options``) and ``keep_text`` (keep the responses as grading reads them, as
        :func:`kagreport.grade`). A kag run equals
        ``Run.from_stats(grade(datasets, path, prefix))``: the same numbers, with the
        question texts, options and answer keys from the datasets file and the responses
        and errors read from the result files when shown.

    Raises
    ------
    UsageError
        For an unknown format name, a path no format matches, or an option the format
        does not take.
    KagreportError
        For a file the reader cannot read (one line naming the file and the field); a
        DocumentError for a file over its size limit, JSON nested deeper than the
        interpreter's recursion limit, a number out of a float's range or a field of the
        wrong type (every reader loads its files through the same bounded loader).
    UsageError
        Also for ``KAGREPORT_MAX_DOCUMENT_BYTES`` or ``KAGREPORT_MAX_MEMBER_BYTES`` set to
        something other than a number of bytes.
    """
    if not isinstance(path, str | os.PathLike):  # a caller without a type checker
        # A bundled kag example (kagreport.examples.ExampleRun) names its tree and datasets.
        results = getattr(path, "results", None)  # type: ignore[unreachable]
        datasets = getattr(path, "datasets", None)
        if results is None or datasets is None:
            raise UsageError(f"read_run takes a path, not {type(path).__name__}")
        if "datasets" in options:
            raise UsageError(
                "read_run: a bundled example names its datasets file; give no datasets"
            )
        return read_run(results, format, datasets=datasets, **options)
    if format is None:
        source = _FORMATS["kag"] if "datasets" in options else detect_format(path)
    elif format in _FORMATS:
        source = _FORMATS[format]
    else:
        raise UsageError(f"unknown run format {format!r}; formats: {', '.join(_FORMATS)}")
    unknown = sorted(set(options) - set(source.options))
    if unknown:
        takes = f"it takes {', '.join(source.options)}" if source.options else "it takes none"
        raise UsageError(
            f"the {source.name} format takes no option {', '.join(map(repr, unknown))} ({takes})"
        )
    kag = source.name == "kag"
    try:
        # A kag tree's results root may be a URL; every other reader takes a local path.
        return _plain_names(source.read(path if kag else Path(path), **options))
    except RecursionError:
        # sources._load refuses a document nested too deeply where it decodes it; a value
        # nested just under the limit can still meet it when a reader walks it (json.dumps
        # deeper in the stack): refused here, whichever reader met it.
        raise DocumentError(
            f"{os.fspath(path)}: nested too deeply to read as {source.name} "
            f"(more than {sys.getrecursionlimit():,} levels of arrays or objects)",
            path=path,
        ) from None
    except OverflowError as exc:
        # sources._load refuses integers past a float's range; any other overflow of a
        # reader's arithmetic on the values it read is refused here.
        raise DocumentError(
            f"{os.fspath(path)}: a number out of range in {source.name} data ({exc})", path=path
        ) from None
    except KagreportError as exc:
        if type(exc) is not KagreportError or kag or os.fspath(path) in exc.message:
            raise  # kag trees say what kag says
        # The Run built from the file refused it (an item in two rows, say): name the file.
        raise DocumentError(f"{os.fspath(path)}: {exc.message}", path=path) from None


def _plain_names(run: Run) -> Run:
    """``run`` with its system, dataset, question and metric names printable
    (:func:`kagreport._format.printable`: each control character, line separator, lone
    surrogate or noncharacter shown as its escape, ``a\\x00b``; distinct names kept
    distinct): names are labels on one line, in every view and file (a NUL aborted the SVG
    export, U+2028 a Vega expression, a lone surrogate every UTF-8 file). Texts keep theirs."""
    groups = (run.systems, run.dataset_names, run.question_names, tuple(run.metrics))
    if all(name.isprintable() for group in groups for name in group):
        return run
    systems, datasets, questions, metrics = labels = [name_labels(group) for group in groups]
    if all(shown == name for found in labels for name, shown in found.items()):
        return run
    headline = run.metadata.get("headline")
    metadata = dict(run.metadata)
    if isinstance(headline, str) and headline in metrics:
        metadata["headline"] = metrics[headline]
    return dataclasses.replace(
        run,
        systems=tuple(systems[n] for n in run.systems),
        dataset_names=tuple(datasets[n] for n in run.dataset_names),
        question_names=tuple(questions[n] for n in run.question_names),
        metrics={metrics[n]: values for n, values in run.metrics.items()},
        metadata=metadata,
    )
