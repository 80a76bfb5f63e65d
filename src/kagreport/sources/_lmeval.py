"""lm-evaluation-harness ``--log_samples`` output folders (format name ``"lm-eval"``).

lm-eval writes ``<output_path>/<model_name_sanitized>/results_<date>.json`` (the
aggregates: ``results[task]["acc,none"]``, ``"acc_stderr,none"``, ``config``,
``model_name``) and, per task, ``samples_<task>_<date>.jsonl``: one line per
(document, filter) with ``doc_id``, ``doc``, ``target``, ``arguments``, ``resps``,
``filtered_resps``, ``filter``, ``metrics`` (the names) and each metric's value.

Mapping: one system per results file (its ``model_name``, else ``config.model_args``,
else the folder name); one item per (task, ``doc_id``); a metric per (metric, filter)
named ``"acc"`` when the filter is ``"none"`` and ``"exact_match,flexible-extract"``
otherwise; ``correct`` (and the outcome) from ``acc`` under the filter ``none``, else
``exact_match`` (filter ``none`` first, else the first filter of the file), when its
values are 0/1. A non-numeric metric value (corpus metrics such as ``bleu`` log a
tuple) is NaN. The response is the main filter's first filtered response, the reference
the target as text. A multiple-choice document (a log-likelihood request per option)
answers with the option lm-eval's ``acc`` picks (the highest log-likelihood), shown as
``"<letter>: <option text>"``; its reference is the gold option's letter (lm-eval writes
the target index as a string), its explanation names the log-likelihoods and the options
``acc`` and ``acc_norm`` pick (``acc_norm``: the highest log-likelihood per character of
the option, as lm-eval computes it), and ``metadata["systems"][<system>]["loglikelihoods"]
[<task>][<doc_id>]`` keeps the log-likelihoods, one per option, as numbers.

lm-eval's own numbers are kept as it prints them (``lm_eval`` ``make_table``, 0.4.13):
``metadata["systems"][<system>]["results"]`` are the rows of its "Tasks" table (the
results file's ``results``, groups included) and ``["groups"]`` those of its "Groups" table
(``groups``), in its order: dicts with ``name`` (the task or group), ``alias`` (the name it
prints), ``filter``, ``metric``, ``value`` and ``stderr`` (lm-eval's numbers; None where it
has none or writes ``"N/A"``) and ``kagreport_mean``, kagreport's own mean of the column
over the items it read for the task (a group: its tasks'), each document weighing the
same; it equals ``value`` for a task and for a group aggregated with ``weight_by_size``,
not for a group lm-eval averages over its tasks' means. ``metadata["headline"]`` (hence
:attr:`Run.headline`, what :func:`kagreport.runs.leaderboard` ranks by when no metric is
named) is the column of the first row
lm-eval prints that kagreport holds: the top group's (or first task's) first metric.
"""

from __future__ import annotations

import math
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

import msgspec
import numpy as np

from kagreport._errors import DocumentError
from kagreport.sources._common import json_lines
from kagreport.sources._load import convert, decode, read_document

if TYPE_CHECKING:
    from kagreport.runs import Run

__all__ = ["is_lmeval", "read_lmeval"]

_MAIN = ("acc", "exact_match")
#: Run.outcome codes (indices into runs._columns.OUTCOMES).
_CORRECT, _INCORRECT = 0, 1


_CONVENTION = (
    "one system per results file; an item per (task, doc_id); a metric per (metric, filter); "
    "correct from acc under the filter none, else exact_match; a multiple-choice answer is the "
    "option of the highest log-likelihood (lm-eval's acc); lm-eval's own values and stderrs, "
    "as its tables print them, are metadata systems[<system>]['results'] and ['groups'] "
    "(its acc_stderr is the sample standard deviation over the square root of n, a group's "
    "its tasks' pooled one); kagreport's means weigh every document the same"
)


class _Results(msgspec.Struct):
    results: dict[str, dict[str, Any]]
    config: dict[str, Any] | None = None
    model_name: str | None = None
    lm_eval_version: str | None = None
    git_hash: str | None = None
    versions: dict[str, Any] | None = None
    n_samples: dict[str, Any] | None = msgspec.field(default=None, name="n-samples")
    groups: dict[str, dict[str, Any]] | None = None
    group_subtasks: dict[str, list[str]] | None = None
    configs: dict[str, dict[str, Any]] | None = None
    date: Any = None  # Unix seconds when the evaluation started (lm-eval's time.time())


class _Sample(msgspec.Struct):
    doc_id: int
    filter: str
    metrics: list[str]
    target: Any = None
    filtered_resps: list[Any] | None = None
    arguments: Any = None  # the requests: the first one's arg_0 is the prompt


def _results_files(path: Path) -> list[Path]:
    if path.is_file():
        return [path]
    found = sorted(path.glob("results_*.json")) + sorted(path.glob("*/results_*.json"))
    return [p for p in found if p.is_file()]


def is_lmeval(path: Path) -> bool:
    """Whether ``path`` is an lm-eval results file or a folder holding one."""
    try:
        files = _results_files(path) if path.is_dir() else [path]
        for file in files[:1]:
            if not (file.name.startswith("results_") and file.suffix == ".json"):
                return False
            with open(file, "rb") as handle:
                head = handle.read(4096)
            return b'"results"' in head
    except OSError:
        return False
    return False


def _decode(data: bytes, kind: type[Any], where: str) -> Any:
    return decode(data, kind, where)


def _read(path: Path) -> bytes:
    return read_document(path)


def _number(value: Any) -> float:
    if isinstance(value, bool):
        return float(value)
    if isinstance(value, (int, float)):
        return float(value)
    return math.nan


def _metric_name(metric: str, filter_key: str) -> str:
    return metric if filter_key == "none" else f"{metric},{filter_key}"


def _system_name(results: _Results, file: Path) -> str:
    if results.model_name:
        return results.model_name
    args = (results.config or {}).get("model_args")
    if isinstance(args, str) and args:
        return args
    return file.parent.name


def _text(value: Any) -> str | None:
    if value is None:
        return None
    while isinstance(value, list) and value:
        value = value[0]
    return value if isinstance(value, str) else msgspec.json.encode(value).decode()


def _read_samples(file: Path) -> list[tuple[_Sample, dict[str, Any]]]:
    lines = []
    for number, line in json_lines(_read(file)):
        where = f"{file}: line {number}"
        raw = _decode(line, dict[str, Any], where)
        sample = convert(raw, _Sample, where)
        for metric in sample.metrics:
            if metric not in raw:
                raise DocumentError(f"{where}: $.{metric} is missing (named in $.metrics)")
        lines.append((sample, raw))
    return lines


def read_lmeval(path: Path) -> Run:
    """Read an lm-eval output folder (or one results file) into a :class:`Run`."""
    files = _results_files(path)
    if not files:
        raise DocumentError(f"{path}: no results_*.json file")
    systems: list[str] = []
    rows: list[tuple[int, str, int, dict[str, float], _Texts]] = []
    metric_names: dict[str, None] = {}
    metadata: dict[str, Any] = {
        "tool": "lm-evaluation-harness",
        "convention": _CONVENTION,
        "systems": {},
    }
    dates = []
    for file in files:
        results = _decode(_read(file), _Results, str(file))
        dates.append(results.date)
        name = _system_name(results, file)
        date = file.stem[len("results_") :]
        if name in systems:
            name = f"{name} ({date})"
        system = len(systems)
        systems.append(name)
        subtasks = results.group_subtasks or {}
        first = len(rows)
        loglikelihoods: dict[str, dict[str, list[float]]] = {}
        metadata["systems"][name] = {
            "file": file.name,
            "lm_eval_version": results.lm_eval_version,
            "git_hash": results.git_hash,
            "model": (results.config or {}).get("model"),
            "model_args": (results.config or {}).get("model_args"),
            "tasks": sorted(results.results),
            "results": _table(results.results, subtasks),
            "groups": _table(results.groups or {}, subtasks),
            "loglikelihoods": loglikelihoods,
        }
        for task in sorted(results.results):
            samples_file = file.parent / f"samples_{task}_{date}.jsonl"
            if os.path.lexists(samples_file) and not samples_file.is_file():
                # A FIFO, a folder, a link loop in its place: said, not left out.
                raise DocumentError(
                    f"{samples_file}: not a regular file (task {task!r}'s samples)",
                    path=samples_file,
                )
            if not samples_file.is_file():
                continue  # a group's row, or a run without --log_samples for it
            config = (results.configs or {}).get(task)
            delimiter = config.get("target_delimiter") if isinstance(config, dict) else None
            for doc_id, values, texts in _read_task(samples_file, delimiter):
                metric_names.update(dict.fromkeys(values))
                rows.append((system, task, doc_id, values, texts))
                if texts.loglikelihoods is not None:
                    loglikelihoods.setdefault(task, {})[str(doc_id)] = list(texts.loglikelihoods)
        _own_means(metadata["systems"][name], subtasks, rows[first:])
    headline = _headline(metadata["systems"], metric_names)
    if headline is not None:
        metadata["headline"] = headline
    from kagreport.runs._times import latest_time

    created = latest_time(dates)  # of several results files, the latest
    if created is not None:
        metadata["created"] = created
    return _build(systems, rows, list(metric_names), metadata)


def _table(section: dict[str, dict[str, Any]], subtasks: dict[str, list[str]]) -> list[Any]:
    """The rows of lm-eval's printed table of a results file's ``results`` or ``groups``
    section, in its order (``lm_eval.utils.make_table`` of 0.4.13): the tasks and groups
    walked down ``group_subtasks`` from the top groups (each level sorted by name), then
    the rest sorted; a task's ``"<metric>,<filter>"`` keys sorted, its stderr from
    ``"<metric>_stderr,<filter>"``."""
    order: dict[str, None] = {}
    children = {c for names in subtasks.values() for c in names}
    # Depth first, children in name order; a name is walked once (a hostile file's cycle
    # or a deep chain ends; lm-eval itself recurses).
    stack = sorted((t for t in subtasks if t not in children), reverse=True)
    walked: set[str] = set()
    while stack:
        name = stack.pop()
        if name in walked:
            continue
        walked.add(name)
        if name in section:
            order[name] = None
        stack += sorted(subtasks.get(name, ()), reverse=True)
    order.update(dict.fromkeys(sorted(k for k in section if k not in order)))
    rows = []
    for name in order:
        entry = section[name]
        alias = entry.get("alias", name)
        for key in sorted(k for k in entry if k not in _NOT_METRICS):
            metric, _, filter_key = key.partition(",")
            if metric.endswith("_stderr"):
                continue
            stderr = entry.get(f"{metric}_stderr,{filter_key}")
            rows.append(
                {
                    "name": name,
                    "alias": alias if isinstance(alias, str) else name,
                    "filter": filter_key,
                    "metric": metric,
                    "value": _finite(entry[key]),
                    "stderr": _finite(stderr),
                }
            )
    return rows


#: Keys of a results entry lm-eval's table leaves out.
_NOT_METRICS = frozenset({"alias", "name", "sample_len", "sample_count"})


def _finite(value: Any) -> float | None:
    """A number lm-eval states, or None (``"N/A"``, a non-number, NaN, infinite)."""
    number = _number(value)
    return number if math.isfinite(number) else None


def _leaves(name: str, subtasks: dict[str, list[str]]) -> set[str]:
    """The tasks of a group (through its subgroups), or the task itself."""
    leaves, walked, stack = set(), set(), [name]
    while stack:
        task = stack.pop()
        if task in walked:
            continue
        walked.add(task)
        if task in subtasks:
            stack += subtasks[task]
        else:
            leaves.add(task)
    return leaves


def _own_means(
    entry: dict[str, Any],
    subtasks: dict[str, list[str]],
    rows: list[tuple[int, str, int, dict[str, float], _Texts]],
) -> None:
    """Set each table row's ``kagreport_mean``: the mean of its column over the items of
    its task(s) in ``rows`` (one system's), NaN left out; None when no item has a value."""
    sums: dict[tuple[str, str], list[float]] = {}
    for _, task, _, metrics, _ in rows:
        for column, value in metrics.items():
            if not math.isnan(value):
                sums.setdefault((task, column), []).append(value)
    for row in (*entry["results"], *entry["groups"]):
        column = _metric_name(row["metric"], row["filter"])
        values = [v for t in _leaves(row["name"], subtasks) for v in sums.get((t, column), ())]
        row["kagreport_mean"] = math.fsum(values) / len(values) if values else None


def _headline(systems: dict[str, Any], metric_names: dict[str, None]) -> str | None:
    """The column of the first row lm-eval prints (the first system's table) that the run
    holds."""
    entry = next(iter(systems.values()), {"results": ()})
    columns = (_metric_name(row["metric"], row["filter"]) for row in entry["results"])
    return next((c for c in columns if c in metric_names), None)


class _Texts(NamedTuple):
    """A document's texts: what the model answered, the gold answer, the prompt, the
    options of a multiple-choice document and how it was scored."""

    response: str | None
    reference: str | None
    prompt: str | None
    options: tuple[tuple[str, str], ...] | None = None
    explanation: str | None = None
    loglikelihoods: tuple[float, ...] | None = None


def _texts(sample: _Sample, delimiter: str) -> _Texts:
    """The texts of one sample line. A multiple-choice document (one log-likelihood request
    per option) answers with the option of the highest log-likelihood, as lm-eval's ``acc``
    scores it (``np.argmax``: the first of equal ones); its explanation names the
    log-likelihoods and the picks of ``acc`` and, when scored, ``acc_norm`` (the highest
    log-likelihood per character of the option, ``lm_eval.api.task.process_results``).
    ``delimiter`` is the task's ``target_delimiter``, which each request's continuation
    starts with."""
    prompt = _prompt(sample.arguments)
    choices = _multiple_choice(sample)
    if choices is None:
        return _Texts(_text(sample.filtered_resps), _text(sample.target), prompt)
    continuations, likelihoods = choices
    options = tuple((chr(ord("A") + k), text.strip()) for k, text in enumerate(continuations))
    chosen = _argmax(likelihoods)
    explanation = "log-likelihoods: " + ", ".join(
        f"{key} {value:.6g}" for (key, _), value in zip(options, likelihoods, strict=True)
    )
    explanation += f"; acc picks {options[chosen][0]} (the highest log-likelihood)"
    lengths = [len(c.removeprefix(delimiter)) for c in continuations]
    if "acc_norm" in sample.metrics and all(lengths):
        normed = _argmax([v / n for v, n in zip(likelihoods, lengths, strict=True)])
        explanation += f", acc_norm picks {options[normed][0]} (the highest per character)"
    key, text = options[chosen]
    return _Texts(
        f"{key}: {text}",
        _gold(sample.target, options),
        prompt,
        options,
        explanation,
        tuple(likelihoods),
    )


def _argmax(values: list[float]) -> int:
    return max(range(len(values)), key=lambda k: (values[k], -k))


def _gold(target: Any, options: tuple[tuple[str, str], ...]) -> str | None:
    """The gold option's key: lm-eval writes the target (an option index, else the
    option's text) as a string; a target that is neither stays as text."""
    index = target if isinstance(target, int) and not isinstance(target, bool) else None
    if isinstance(target, str) and target.isascii() and target.isdigit():
        index = int(target)
    if index is not None and 0 <= index < len(options):
        return options[index][0]
    if isinstance(target, str):
        for key, text in options:
            if text == target.strip():
                return key
    return _text(target)


def _requests(arguments: Any) -> list[Any] | None:
    """A sample's requests in order: lm-eval 0.4.3 and later write ``{"gen_args_<i>":
    {"arg_0": ..., "arg_1": ...}}``, earlier ones a list (of argument lists or dicts)."""
    if isinstance(arguments, list):
        return arguments
    if not isinstance(arguments, dict):
        return None
    keys = list(arguments)
    if keys != [f"gen_args_{i}" for i in range(len(keys))]:
        return None
    return [arguments[key] for key in keys]


def _multiple_choice(sample: _Sample) -> tuple[list[str], list[float]] | None:
    """(each option's continuation, log-likelihoods) of a multiple-choice sample; None for
    any other (a generation's ``filtered_resps`` is text)."""
    responses, arguments = sample.filtered_resps, _requests(sample.arguments)
    if not isinstance(responses, list) or len(responses) < 2 or len(responses) > 26:
        return None
    if arguments is None or len(arguments) != len(responses):
        return None
    likelihoods = []
    for response in responses:
        first = response[0] if isinstance(response, list) and response else None
        try:
            value = float(first)  # type: ignore[arg-type]
        except (TypeError, ValueError):
            return None
        if value != value:  # NaN
            return None
        likelihoods.append(value)
    continuations = []
    for argument in arguments:
        request = next(iter(argument.values()), None) if isinstance(argument, dict) else None
        if isinstance(request, dict) and "arg_1" not in request:
            request = None
        request = argument if isinstance(argument, dict) and "arg_1" in argument else request
        continuation = request.get("arg_1") if isinstance(request, dict) else None
        if isinstance(argument, list) and len(argument) == 2:  # (context, continuation)
            continuation = argument[1]
        if not isinstance(continuation, str):
            return None
        continuations.append(continuation)
    return continuations, likelihoods


def _read_task(
    samples_file: Path, delimiter: Any = None
) -> list[tuple[int, dict[str, float], _Texts]]:
    """One task's documents: (doc_id, metrics, texts); ``delimiter`` is the task's
    ``target_delimiter`` (lm-eval's default ``" "`` when it is not a string)."""
    delimiter = delimiter if isinstance(delimiter, str) else " "
    samples = _read_samples(samples_file)
    if not samples:  # --log_samples writes a line per document, so none is a cut file
        raise DocumentError(f"{samples_file}: no sample line", path=samples_file)
    items: dict[int, dict[str, float]] = {}
    seen: set[tuple[int, str]] = set()
    filters: list[str] = []
    for sample, raw in samples:
        key = (sample.doc_id, sample.filter)
        if key in seen:
            raise DocumentError(
                f"{samples_file}: doc_id {sample.doc_id} filter {sample.filter!r} appears twice"
            )
        seen.add(key)
        if sample.filter not in filters:
            filters.append(sample.filter)
        values = items.setdefault(sample.doc_id, {})
        for metric in sample.metrics:
            values[_metric_name(metric, sample.filter)] = _number(raw[metric])
    main = _main_metric(items, filters)
    # The response of the main metric's filter (else of the first filter seen).
    text_filter = filters[0] if main is None else main[2]
    texts: dict[int, _Texts] = {}
    for sample, _ in samples:
        if sample.filter == text_filter or sample.doc_id not in texts:
            texts[sample.doc_id] = _texts(sample, delimiter)
    out = []
    for doc_id, values in sorted(items.items()):
        if main is not None:
            values["correct"] = values.get(main[1], math.nan)
        out.append((doc_id, values, texts[doc_id]))
    return out


def _prompt(arguments: Any) -> str | None:
    """The prompt of a document: its first request's context (``arg_0``)."""
    first = arguments[0] if isinstance(arguments, list) and arguments else arguments
    if isinstance(first, dict):
        first = next(iter(first.values()), None) if "arg_0" not in first else first
    if isinstance(first, dict) and isinstance(first.get("arg_0"), str):
        return str(first["arg_0"])
    return None


def _main_metric(
    items: dict[int, dict[str, float]], filters: list[str]
) -> tuple[str, str, str] | None:
    """(metric, column, filter) of ``correct``: acc, else exact_match, when 0/1."""
    names = {name for values in items.values() for name in values}
    for metric in _MAIN:
        order = ["none"] + [f for f in filters if f != "none"]
        for filter_key in order:
            column = _metric_name(metric, filter_key)
            if column in names:
                got = {v.get(column, math.nan) for v in items.values()}
                if all(math.isnan(v) or v in (0.0, 1.0) for v in got):
                    return metric, column, filter_key
                return None
    return None


def _build(
    systems: list[str],
    rows: list[tuple[int, str, int, dict[str, float], _Texts]],
    metric_names: list[str],
    metadata: dict[str, Any],
) -> Run:
    tasks = sorted({row[1] for row in rows})
    questions = sorted({row[2] for row in rows})
    task_code = {t: i for i, t in enumerate(tasks)}
    question_code = {q: i for i, q in enumerate(questions)}
    metrics = {
        m: np.array([row[3].get(m, math.nan) for row in rows], dtype=np.float64)
        for m in metric_names
    }
    outcome = np.full(len(rows), -1, dtype=np.int8)
    if "correct" in metrics:
        correct = metrics["correct"]
        outcome[correct == 1.0] = _CORRECT
        outcome[correct == 0.0] = _INCORRECT
    from kagreport.runs import Run

    return Run(
        kind="answers",
        systems=tuple(systems),
        dataset_names=tuple(tasks),
        question_names=tuple(str(q) for q in questions),
        system=np.array([row[0] for row in rows], dtype=np.int32),
        dataset=np.array([task_code[row[1]] for row in rows], dtype=np.int32),
        question=np.array([question_code[row[2]] for row in rows], dtype=np.int32),
        outcome=outcome,
        metrics=metrics,
        responses=tuple(row[4].response for row in rows),
        references=tuple(row[4].reference for row in rows),
        metadata=metadata,
        question_texts=tuple(row[4].prompt for row in rows),
        options=tuple(row[4].options for row in rows) if any(r[4].options for r in rows) else None,
        explanations=(
            tuple(row[4].explanation for row in rows)
            if any(r[4].explanation for r in rows)
            else None
        ),
    )
