"""Repeats of an item as one cluster: every repeat's score and the item it repeats.

A tool that runs an item several times records the repeats in one of two ways, and a
run keeps each as the tool counts it:

- one row per item, the repeats reduced (Inspect AI's epochs: the row holds the reduced
  score, as Inspect reports it, and ``metadata["systems"][name]["epoch_scores"]`` every
  epoch's score);
- one row per repeat (promptfoo's ``repeat``: its pass rate counts every run), with
  ``metadata["repeat_of"]`` naming each repeat's first item.

:func:`repeat_scores` gives both as one shape: a score per repeat and the cluster (the
item) it belongs to, which a clustered standard error or a pass@k needs. A run without
repeats gives one repeat per row.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from kagreport._format import plural

if TYPE_CHECKING:
    import numpy.typing as npt

    from kagreport.runs._model import Run

__all__ = ["RepeatScores", "item_means", "item_questions", "repeat_scores"]


@dataclass(frozen=True, eq=False)
class RepeatScores:
    """Every repeat's score of one metric, with the cluster each belongs to.

    Attributes
    ----------
    metric : str
    values : ndarray of float64, shape (k,)
        One score per repeat; NaN where the repeat has none (an errored epoch).
    cluster : ndarray of intp, shape (k,)
        The run's row that stands for the repeat's item: the reduced row (epochs) or
        the item's first repeat (``repeat_of``); repeats of one item share it.
    source : {"epochs", "repeat_of", "none"}
        Where the repeats came from; ``"none"``: the run records no repeats, one per row.
    """

    metric: str
    values: npt.NDArray[np.float64]
    cluster: npt.NDArray[np.intp]
    source: str

    @property
    def n_clusters(self) -> int:
        """Distinct clusters (items)."""
        return len(np.unique(self.cluster))

    def __repr__(self) -> str:
        return (
            f"<RepeatScores {self.metric}: {plural(len(self.values), 'repeat')} of "
            f"{plural(self.n_clusters, 'item')} ({self.source})>"
        )


def repeat_scores(run: Run, metric: str | None = None) -> RepeatScores:
    """Each repeat's score of ``metric`` (default the run's headline) and its cluster.

    Parameters
    ----------
    run : Run
    metric : str, optional
        A metric of the run; default :attr:`Run.headline`.

    Returns
    -------
    RepeatScores
        Inspect epochs: every epoch's score in row order, then epoch order, clustered
        by the row; a row whose item has no recorded epochs (or whose metric was not
        scored per epoch) gives its own value once. ``repeat_of``: every row, clustered
        by the first row of its test the system holds. Otherwise one repeat per row.

    Raises
    ------
    KagreportError
        For an unknown metric.
    """
    name = run.headline if metric is None else metric
    column = run.metric(name)
    systems = run.metadata.get("systems")
    epochs = {
        system: meta["epoch_scores"]
        for system, meta in (systems.items() if isinstance(systems, Mapping) else ())
        if isinstance(meta, Mapping) and isinstance(meta.get("epoch_scores"), Mapping)
    }
    if epochs:
        return _from_epochs(run, name, column, epochs)
    repeat_of = run.metadata.get("repeat_of")
    if isinstance(repeat_of, Mapping) and repeat_of:
        return _from_repeat_of(run, name, column, repeat_of)
    rows = np.arange(len(run), dtype=np.intp)
    return RepeatScores(name, column.copy(), rows, "none")


def _from_epochs(
    run: Run, name: str, column: npt.NDArray[np.float64], epochs: Mapping[str, Any]
) -> RepeatScores:
    values: list[float] = []
    cluster: list[int] = []
    for row in range(len(run)):
        mine = epochs.get(run.systems[run.system[row]], {})
        scores = mine.get(run.item_label(row), {}).get(name) if isinstance(mine, Mapping) else None
        if not isinstance(scores, list) or not scores:
            scores = [column[row]]
        values += [math.nan if v is None else float(v) for v in scores]
        cluster += [row] * len(scores)
    return RepeatScores(
        name, np.array(values, dtype=np.float64), np.array(cluster, dtype=np.intp), "epochs"
    )


def _from_repeat_of(
    run: Run, name: str, column: npt.NDArray[np.float64], repeat_of: Mapping[str, Any]
) -> RepeatScores:
    # Repeats of one test share a cluster: (system, the test's first item); the row that
    # stands for it is the first of them the system holds (a system may lack the first).
    first_row: dict[tuple[int, str], int] = {}
    cluster = np.arange(len(run), dtype=np.intp)
    for row in range(len(run)):
        label = run.item_label(row)
        key = (int(run.system[row]), str(repeat_of.get(label, label)))
        cluster[row] = first_row.setdefault(key, row)
    return RepeatScores(name, column.copy(), cluster, "repeat_of")


def item_means(
    run: Run, columns: Mapping[str, npt.NDArray[np.float64]]
) -> tuple[dict[str, npt.NDArray[np.float64]], npt.NDArray[np.bool_]] | None:
    """Each metric's mean over an item's repeats, on the row that stands for the item,
    when the run holds repeats as rows (promptfoo's ``repeat_of``); None otherwise (an
    Inspect row already is its item's score, its epochs reduced as the tool did).

    Returns
    -------
    means : dict of str to ndarray of float64, shape (len(run),)
        Metric -> the mean of the item's scored repeats on its first row (NaN when none
        is scored); NaN on the other repeats' rows.
    first : ndarray of bool, shape (len(run),)
        The rows that stand for an item.
    """
    repeat_of = run.metadata.get("repeat_of")
    if not (isinstance(repeat_of, Mapping) and repeat_of) or not columns:
        return None
    cluster = _from_repeat_of(run, "", np.zeros(len(run)), repeat_of).cluster
    first = cluster == np.arange(len(run))
    means = {}
    for name, values in columns.items():
        scored = np.flatnonzero(~np.isnan(values))
        # Each item's repeats summed in value order, not row order: the same digits
        # however the rows are ordered (float addition is not associative).
        scored = scored[np.lexsort((values[scored], cluster[scored]))]
        sums = np.zeros(len(run))
        counts = np.zeros(len(run))
        np.add.at(sums, cluster[scored], values[scored])
        np.add.at(counts, cluster[scored], 1.0)
        with np.errstate(invalid="ignore", divide="ignore"):
            mean = np.where(first & (counts > 0), sums / np.maximum(counts, 1.0), np.nan)
        means[name] = mean
    return means, first


def item_questions(run: Run, rows: npt.NDArray[np.intp]) -> npt.NDArray[np.int64]:
    """The question code of the item each of ``rows`` scores: the row's own, or, for a
    repeat recorded as a row (``metadata["repeat_of"]``: label -> the first repeat's label),
    the first repeat's, whichever repeats the row's system holds.

    Every run that pairs items across runs (the gate, the history) keys a cluster of
    repeats so: by the test it repeats, never by the first row a system happens to hold.
    """
    out = run.question[rows].astype(np.int64)
    repeat_of = run.metadata.get("repeat_of")
    if not (isinstance(repeat_of, Mapping) and repeat_of):
        return out
    codes = {name: i for i, name in enumerate(run.question_names)}
    for i, row in enumerate(rows.tolist()):
        label = run.item_label(row)
        first = repeat_of.get(label)
        if isinstance(first, str) and first != label:
            dataset = run.dataset_names[run.dataset[row]]
            name = first.removeprefix(f"{dataset}/") if dataset else first
            out[i] = codes.get(name, out[i])
    return out
