"""HELM run folders and suite folders (format name ``"helm"``).

HELM (stanford-crfm/helm) writes ``benchmark_output/runs/<suite>/<run name>/`` per run:
``run_spec.json`` (``name``, ``adapter_spec.model``/``model_deployment``/
``num_train_trials``), ``scenario_state.json`` (``request_states``: ``instance`` (``id``,
``references`` with ``tags``, ``split``, ``perturbation``), ``train_trial_index``,
``reference_index``, ``result`` (``success``, ``completions[0].text``, ``request_time``,
``error``)), ``per_instance_stats.json`` (a list of ``instance_id``, ``perturbation``,
``train_trial_index``, ``stats``: ``Stat`` with ``name`` = ``{name, split, sub_split,
perturbation}``, ``count``, ``sum``, ``mean`` ...) and ``stats.json`` (the aggregates).

Mapping: a system per model (``adapter_spec.model``, else ``model_deployment``; two runs
of one model on one dataset are told apart by their run names); the dataset is the run
name without its ``model=``/``model_deployment=`` arguments, so runs of one scenario with
the same arguments pair across models; the question is the ``instance_id``. Only the split
HELM evaluates (``test``, else ``valid``) is read. A perturbed instance is its own item of
the dataset ``"<dataset> [<perturbation name>]"``. With several train trials each metric is
the mean over the instance's trials. A stat's value is its ``mean`` (``sum / count``; HELM's
aggregate weights an instance by its stat's ``count``, 1 for the usual per-instance stats); a
stat HELM dropped (a NaN) is NaN. Two perturbations of one name in a run are told apart by
their fields. HELM's bookkeeping stats are not metrics
(:func:`~kagreport.sources._helm_build.is_bookkeeping`: counts, finish reasons, training
costs, runtimes, logprob, and whatever the suite's ``schema.json`` puts in its
``efficiency`` and ``general_information`` metric groups): ``num_prompt_tokens``/
``num_output_tokens`` become the costs ``input_tokens``/``output_tokens`` (tokens),
``inference_runtime`` (else the summed ``request_time`` of the item's requests)
``generation_secs`` (seconds), and the rest ``metadata["bookkeeping"]`` (per stat, per
system: the mean over its items). ``correct`` is the first of :data:`MAIN_METRICS` a run
records with 0/1 values; the outcome is ``error`` when a request of the item failed. The
run's headline (``metadata["headline"]``, what views rank by) is the first of
:data:`MAIN_METRICS` every item of every run records (HELM's EM, averaged over trials as
stats.json averages it), not ``correct``, which runs with trials leave undefined. A
``multiple_choice_joint`` item's options are the letters of the request's
``output_mapping``, its reference the correct letter(s), its response the letter answered.

HELM's own numbers are kept as HELM states them: ``metadata["runs"][<folder>]["stats"]``
holds stats.json's means of the evaluated split (scores and costs; a perturbed one labelled
``"<stat> [<perturbation>/<computed_on>]"``), and ``metadata["groups"][<run group>]``
helm-summarize's leaderboard numbers: per system, each stat merged over the system's runs
in the group (``run_spec.json`` ``groups``) as HELM merges a ``Stat`` (sums and counts
added), and ``main``, the group's main metric when ``schema.json`` names it.
"""

from __future__ import annotations

import math
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

import msgspec

from kagreport._errors import DocumentError
from kagreport.sources._helm_build import MAIN_METRICS, HelmRun, Item, build_run, stat_label
from kagreport.sources._load import load

if TYPE_CHECKING:
    from kagreport.runs import Run

__all__ = ["MAIN_METRICS", "dataset_name", "is_helm", "read_helm"]


class _AdapterSpec(msgspec.Struct):
    model: str = ""
    model_deployment: str = ""
    method: str = ""
    num_train_trials: int = 1


class _RunSpec(msgspec.Struct):
    name: str
    adapter_spec: _AdapterSpec
    groups: list[str] = msgspec.field(default_factory=list)


class _MetricName(msgspec.Struct):
    name: str
    split: str | None = None
    sub_split: str | None = None
    perturbation: dict[str, Any] | None = None


class _Stat(msgspec.Struct):
    name: _MetricName
    count: int = 0
    sum: float = 0.0
    mean: float | None = None


class _PerInstanceStats(msgspec.Struct):
    instance_id: str
    train_trial_index: int
    stats: list[_Stat]
    perturbation: dict[str, Any] | None = None


class _Output(msgspec.Struct):
    text: str = ""


class _Reference(msgspec.Struct):
    output: _Output
    tags: list[str]


class _Input(msgspec.Struct):
    text: str = ""


class _Instance(msgspec.Struct):
    references: list[_Reference]
    input: _Input | None = None
    id: str | None = None
    split: str | None = None
    perturbation: dict[str, Any] | None = None


class _Completion(msgspec.Struct):
    text: str


class _Result(msgspec.Struct):
    success: bool
    completions: list[_Completion] = msgspec.field(default_factory=list)
    request_time: float | None = None
    error: str | None = None


class _RequestState(msgspec.Struct):
    instance: _Instance
    train_trial_index: int
    reference_index: int | None = None
    output_mapping: dict[str, str] | None = None
    result: _Result | None = None


class _ScenarioState(msgspec.Struct):
    request_states: list[_RequestState]


class _GroupMetric(msgspec.Struct):
    name: str


class _MetricGroup(msgspec.Struct):
    name: str
    metrics: list[_GroupMetric] = msgspec.field(default_factory=list)


class _RunGroup(msgspec.Struct):
    name: str
    environment: dict[str, str] = msgspec.field(default_factory=dict)


class _Schema(msgspec.Struct):
    metric_groups: list[_MetricGroup] = msgspec.field(default_factory=list)
    run_groups: list[_RunGroup] = msgspec.field(default_factory=list)


#: The metric groups of a HELM schema that hold no score: its leaderboards' "Efficiency"
#: and "General information" tables (runtimes, token counts, instance and trial counts).
_NOT_SCORES = ("efficiency", "general_information")


def _is_run_folder(path: Path) -> bool:
    return (path / "run_spec.json").is_file() and (path / "per_instance_stats.json").is_file()


def _run_folders(path: Path) -> list[Path]:
    if path.is_file():
        return [path.parent] if _is_run_folder(path.parent) else []
    if _is_run_folder(path):
        return [path]
    if not path.is_dir():
        return []
    found = []
    for folder in sorted(p for p in path.iterdir() if p.is_dir()):
        if _is_run_folder(folder):
            found.append(folder)
        elif any(os.path.lexists(folder / name) for name in _RUN_FILES):
            # A run folder whose file is a FIFO, a folder or a link loop: not left out unsaid.
            bad = next(folder / n for n in _RUN_FILES if not (folder / n).is_file())
            raise DocumentError(f"{bad}: not a regular file (a HELM run's)", path=bad)
    return found


_RUN_FILES = ("run_spec.json", "per_instance_stats.json")


def is_helm(path: Path) -> bool:
    """Whether ``path`` is a HELM run folder, a file in one, or a suite folder of them."""
    try:
        folders = _run_folders(path)
        if not folders:
            return False
        with open(folders[0] / "run_spec.json", "rb") as handle:
            head = handle.read(4096)
    except OSError:
        return False
    return b'"adapter_spec"' in head


def _decode(file: Path, kind: type[Any]) -> Any:
    return load(file, kind)


def dataset_name(run_name: str) -> str:
    """The run name without its model arguments (``"mmlu:subject=anatomy"``)."""
    scenario, _, args = run_name.partition(":")
    kept = [
        a for a in args.split(",") if a and a.split("=")[0] not in ("model", "model_deployment")
    ]
    return f"{scenario}:{','.join(kept)}" if kept else scenario


def _perturbation_key(perturbation: dict[str, Any] | None) -> str:
    return (
        ""
        if perturbation is None
        else msgspec.json.encode(dict(sorted(perturbation.items()))).decode()
    )


def _value(stat: _Stat) -> float:
    if stat.mean is not None:
        return float(stat.mean)
    return float(stat.sum) / stat.count if stat.count else math.nan


def _eval_split(entries: list[_PerInstanceStats]) -> str | None:
    splits = {stat.name.split for entry in entries for stat in entry.stats}
    return next((s for s in ("test", "valid") if s in splits), None)


def _read_run(folder: Path) -> HelmRun:
    """One run folder: its spec, evaluated split and items (in file order)."""
    spec: _RunSpec = _decode(folder / "run_spec.json", _RunSpec)
    stats_file = folder / "per_instance_stats.json"
    entries: list[_PerInstanceStats] = _decode(stats_file, list[_PerInstanceStats])
    split = _eval_split(entries)
    items: dict[tuple[str, str], Item] = {}
    for entry in entries:
        key = (entry.instance_id, _perturbation_key(entry.perturbation))
        values = {
            stat.name.name: _value(stat)
            for stat in entry.stats
            if stat.name.split == split and _perturbation_key(stat.name.perturbation) == key[1]
        }
        if not values:
            continue  # an instance of another split
        item = items.setdefault(key, Item(*key[:1], entry.perturbation))
        if entry.train_trial_index in item.trials:
            raise DocumentError(
                f"{stats_file}: instance_id {entry.instance_id!r} train_trial_index "
                f"{entry.train_trial_index} appears twice"
            )
        item.trials[entry.train_trial_index] = values
    state_file = folder / "scenario_state.json"
    has_state = state_file.is_file()
    if has_state:
        _attach_requests(state_file, items)
    stats_json = folder / "stats.json"
    stats: dict[str, tuple[float, int]] = {}
    if stats_json.is_file():
        for stat in _decode(stats_json, list[_Stat]):
            if stat.name.split == split and stat.name.sub_split is None:
                stats[stat_label(stat.name.name, stat.name.perturbation)] = (stat.sum, stat.count)
    return HelmRun(
        folder=folder.name,
        name=spec.name,
        model=spec.adapter_spec.model,
        model_deployment=spec.adapter_spec.model_deployment,
        num_train_trials=spec.adapter_spec.num_train_trials,
        dataset=dataset_name(spec.name),
        split=split,
        items=list(items.values()),
        has_requests=has_state,
        has_stats=stats_json.is_file(),
        groups=spec.groups,
        stats=stats,
    )


def _attach_requests(state_file: Path, items: dict[tuple[str, str], Item]) -> None:
    state: _ScenarioState = _decode(state_file, _ScenarioState)
    for number, request_state in enumerate(state.request_states):
        instance = request_state.instance
        if instance.id is None:
            raise DocumentError(f"{state_file}: $.request_states[{number}].instance.id is missing")
        item = items.get((instance.id, _perturbation_key(instance.perturbation)))
        result = request_state.result
        if item is None or result is None:
            continue
        trial = request_state.train_trial_index
        seconds = math.nan if result.request_time is None else result.request_time
        item.seconds[trial] = item.seconds.get(trial, 0.0) + seconds
        if not result.success:
            item.any_failed = True
            item.failed = item.failed or result.error or "request failed"
        if item.question_text is None and instance.input is not None and instance.input.text:
            item.question_text = instance.input.text
        if item.reference is None:
            correct = [r.output.text for r in instance.references if "correct" in r.tags]
            item.reference = "\n".join(correct)
        if item.response is None and request_state.reference_index is None and result.completions:
            item.response = result.completions[0].text
            if request_state.output_mapping:  # multiple_choice_joint: the letters asked for
                item.options = tuple(request_state.output_mapping.items())
                right = {r.output.text for r in instance.references if "correct" in r.tags}
                keys = [k for k, v in item.options if v in right]
                item.reference = "\n".join(keys) or item.reference


def read_helm(path: Path) -> Run:
    """Read a HELM run folder (or a suite folder of them) into a :class:`Run`.

    Raises
    ------
    DocumentError
        For a folder with no run, or a file that is not valid HELM output (one line
        naming the file and the field), or an instance/trial that appears twice.
    """
    folders = _run_folders(path) if path.exists() else []
    if not folders:
        raise DocumentError(f"{path}: no HELM run folder (run_spec.json, per_instance_stats.json)")
    runs = [_read_run(folder) for folder in folders]
    schema_file = folders[0].parent / "schema.json"
    if not schema_file.is_file():
        return build_run(runs)
    schema: _Schema = _decode(schema_file, _Schema)
    not_scores = {m.name for g in schema.metric_groups if g.name in _NOT_SCORES for m in g.metrics}
    mains = {
        g.name: g.environment["main_name"]
        for g in schema.run_groups
        if "main_name" in g.environment
    }
    return build_run(runs, not_scores=frozenset(not_scores), main_names=mains)
