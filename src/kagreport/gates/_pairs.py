"""What a gate compares: the systems of two runs paired, each item's value per metric
(repeats as one cluster), and the slices the items fall in.

Items of the two runs are identified by (dataset name, question name) and coded in one
space (:class:`ItemSpace`), so pairing a million items is a sorted intersection of
integer keys, not a dictionary of strings per comparison.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from kagreport._errors import InputError
from kagreport._format import is_proportion
from kagreport.runs._repeats import item_means, item_questions

if TYPE_CHECKING:
    import numpy.typing as npt

    from kagreport.runs import Run

__all__ = [
    "ALL",
    "SLICES",
    "ItemSpace",
    "Pairing",
    "SideValues",
    "pair_systems",
    "proportion",
    "side_values",
    "task_of",
]

#: How the items are split into hypotheses: one per dataset, per task, or all together.
SLICES = ("dataset", "task", "none")

#: The slice name of ``slice="none"``: every item.
ALL = "all"


@dataclass(frozen=True)
class Pairing:
    """The systems of two runs paired: ``pairs`` as (candidate, baseline) names, and the
    systems of each run left out (paired with none of the other's)."""

    pairs: tuple[tuple[str, str], ...]
    candidate_only: tuple[str, ...]
    baseline_only: tuple[str, ...]


def pair_systems(candidate: Run, baseline: Run, names: tuple[str, str]) -> Pairing:
    """One system per run: paired whatever their names; several: by name.

    Raises
    ------
    InputError
        If no system pairs (the message names both inputs, ``names``, and their systems).
    """
    if len(candidate.systems) == 1 and len(baseline.systems) == 1:
        return Pairing(((candidate.systems[0], baseline.systems[0]),), (), ())
    shared = [s for s in candidate.systems if s in set(baseline.systems)]
    if not shared:
        raise InputError(
            f"no system of {names[0]} ({_list(candidate.systems)}) is in {names[1]} "
            f"({_list(baseline.systems)}): runs of several systems pair them by name"
        )
    return Pairing(
        tuple((s, s) for s in shared),
        tuple(s for s in candidate.systems if s not in set(shared)),
        tuple(s for s in baseline.systems if s not in set(shared)),
    )


def _list(names: Sequence[str], most: int = 5) -> str:
    shown = ", ".join(repr(n) for n in names[:most])
    return shown + (f" and {len(names) - most} more" if len(names) > most else "") or "none"


def task_of(run: Run, dataset: str) -> str:
    """The task a source records for the items of ``dataset``.

    kag trees (a dataset is a task of the benchmark), Inspect AI (an item is (task, sample
    id): the dataset is ``eval.task``), lm-eval (an item is (task, doc_id)), OpenAI evals
    (the eval's name), promptfoo (no task: ``""``) and every_eval_ever (the evaluation's
    name) record no task apart from the dataset: the task is the dataset. HELM's dataset is
    the run name, ``scenario:arguments`` (and `` [perturbation]``): its task is the
    scenario, the part before the ``:``.
    """
    if run.metadata.get("tool") == "helm":
        return dataset.partition(":")[0].partition(" [")[0]
    return dataset


class ItemSpace:
    """Integer keys of the items of two runs in one space: ``dataset * n_questions +
    question``, with the dataset and question codes of the union of both runs' names
    (the baseline's first).

    Parameters
    ----------
    candidate, baseline : Run
    slice : {"dataset", "task", "none"}
        What :attr:`slice_names` and :meth:`slice_of` split the items by.
    """

    def __init__(self, candidate: Run, baseline: Run, slice: str) -> None:
        datasets: dict[str, int] = {name: i for i, name in enumerate(baseline.dataset_names)}
        questions: dict[str, int] = {name: i for i, name in enumerate(baseline.question_names)}
        # By role, not by run: a run gated against itself is both.
        self._dataset_code = {
            "baseline": np.arange(len(baseline.dataset_names), dtype=np.int64),
            "candidate": np.array(
                [datasets.setdefault(n, len(datasets)) for n in candidate.dataset_names],
                dtype=np.int64,
            ),
        }
        self._question_code = {
            "baseline": np.arange(len(baseline.question_names), dtype=np.int64),
            "candidate": np.array(
                [questions.setdefault(n, len(questions)) for n in candidate.question_names],
                dtype=np.int64,
            ),
        }
        self.n_questions = max(1, len(questions))
        dataset_names = list(datasets)
        tool_of = dict.fromkeys(candidate.dataset_names, candidate)
        tool_of.update(dict.fromkeys(baseline.dataset_names, baseline))
        if slice == "none":
            labels = [ALL] * len(dataset_names)
        elif slice == "task":
            labels = [task_of(tool_of[name], name) for name in dataset_names]
        else:
            labels = dataset_names
        #: The slices in order of first appearance (baseline's datasets first).
        self.slice_names: tuple[str, ...] = tuple(dict.fromkeys(labels))
        index = {name: i for i, name in enumerate(self.slice_names)}
        self._slice_of_dataset = np.array([index[x] for x in labels], dtype=np.int64)

    def keys(
        self,
        role: str,
        run: Run,
        rows: npt.NDArray[np.intp],
        questions: npt.NDArray[np.int64] | None = None,
    ) -> npt.NDArray[np.int64]:
        """The keys of ``rows`` of ``run``, the ``role`` (``"candidate"`` or
        ``"baseline"``) run; ``questions`` replaces the rows' question codes (the first
        repeat's, for a cluster of repeats)."""
        question = run.question[rows] if questions is None else questions
        dataset = self._dataset_code[role][run.dataset[rows]]
        return dataset * self.n_questions + self._question_code[role][question]

    def slice_of(self, keys: npt.NDArray[np.int64]) -> npt.NDArray[np.int64]:
        """The slice (an index into :attr:`slice_names`) of each key."""
        return self._slice_of_dataset[keys // self.n_questions]


@dataclass(frozen=True)
class SideValues:
    """One system's value of one metric per item it scored (NaN left out), by key."""

    keys: npt.NDArray[np.int64]  # ascending, unique
    values: npt.NDArray[np.float64]
    clustered: bool  # the values are means over repeats (promptfoo's repeat rows)


def side_values(role: str, run: Run, system: str, metric: str, space: ItemSpace) -> SideValues:
    """``metric`` of ``system`` per item: the row's value, or for repeats recorded as rows
    (``metadata["repeat_of"]``) the mean over the item's scored repeats
    (:func:`kagreport.runs._repeats.item_means`); items without a value are left out."""
    column = run.metrics[metric]
    rows = np.flatnonzero(run.system == run.systems.index(system))
    means = item_means(run, {metric: column})
    questions = None
    if means is None:
        values = column[rows]
    else:
        first = means[1][rows]
        rows = rows[first]
        values = means[0][metric][rows]
        questions = item_questions(run, rows)
    keep = ~np.isnan(values)
    keys = space.keys(role, run, rows[keep], None if questions is None else questions[keep])
    order = np.argsort(keys, kind="stable")
    return SideValues(keys[order], values[keep][order], means is not None)


def proportion(metric: str, *columns: npt.NDArray[np.float64]) -> bool:
    """Whether ``metric`` is a proportion (shown in percent and percentage points):
    :func:`kagreport._format.is_proportion` of its name and distinct values."""
    distinct = np.unique(np.concatenate([c[~np.isnan(c)] for c in columns]))
    # Among three distinct values one is neither 0 nor 1: the first three decide.
    return is_proportion(metric, distinct[:3].tolist())
