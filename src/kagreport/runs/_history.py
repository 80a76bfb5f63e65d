"""The history of runs: each system's value of a metric across runs in time order, and each
consecutive change tested (paired on the shared items, Holm over the sequence).

The value and its interval are the leaderboard's (:func:`kagreport.runs.leaderboard`), so a
history and a run's leaderboard show the same numbers. A change is tested with the paired
sign-flip test (:func:`kagreport.stats.sign_flip_test`) on the items both runs hold, or, when
they hold none in common, the normal two-sample test of the means; its interval is the one
that agrees with the Holm-adjusted test (:func:`kagreport.stats.interval_from_test` at the
hypothesis's Holm level, as the run comparisons' verdicts build it).
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from statistics import NormalDist
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt

from kagreport._errors import KagreportError
from kagreport.runs._leaderboard import mean_rows
from kagreport.runs._model import Run
from kagreport.runs._repeats import item_means, item_questions
from kagreport.runs._times import run_time
from kagreport.stats import holm_adjust, interval_from_test, sign_flip_test
from kagreport.stats._holm import holm_levels
from kagreport.stats._signflip import paired_differences

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["HISTORY_COLUMNS", "PAIRED", "UNPAIRED", "history"]

#: ``method`` of a change tested on the items both runs hold, followed by how its p-value
#: was computed (``"paired sign-flip (exact-lattice)"``: ``kagreport.stats.METHODS``).
PAIRED = "paired sign-flip"
#: ``method`` of a change between runs that share no item.
UNPAIRED = "two-sample normal"

#: The columns of :func:`history`'s frame, in order.
HISTORY_COLUMNS = (
    "run", "time", "time_source", "position", "system", "metric", "value", "low", "high",
    "interval", "n_items", "previous", "change", "change_low", "change_high", "p_value",
    "p_value_holm", "significant", "method", "n_pairs",
)  # fmt: skip

Runs = Mapping[str, Run] | Sequence[tuple[str, Run]]


@dataclass(frozen=True)
class _Entry:
    name: str
    run: Run
    time: datetime | None
    source: str | None  # "recorded", "file", or None (no time)


def _entries(runs: Runs, fallback_times: Mapping[str, Any] | None) -> list[_Entry]:
    pairs = list(runs.items()) if isinstance(runs, Mapping) else list(runs)
    names: set[str] = set()
    entries = []
    for pair in pairs:
        if not (isinstance(pair, tuple) and len(pair) == 2 and isinstance(pair[1], Run)):
            raise KagreportError("history takes a mapping of name -> Run or (name, Run) pairs")
        name, run = str(pair[0]), pair[1]
        if name in names:
            raise KagreportError(f"history: two runs are named {name!r}")
        names.add(name)
        moment, source = run_time(run.metadata, (fallback_times or {}).get(name))
        entries.append(_Entry(name, run, moment, source))
    unknown = set(fallback_times or ()) - names
    if unknown:
        raise KagreportError(f"history: fallback time of no run: {', '.join(sorted(unknown))}")
    # Time order; equal times by name; runs with no time at all last, by name.
    far = datetime.max.replace(tzinfo=UTC)
    return sorted(entries, key=lambda e: (e.time is None, e.time or far, e.name))


def _item_ids(run: Run, vocabulary: dict[tuple[str, str], int]) -> npt.NDArray[np.int64]:
    """Each row's item as an id shared by every run (its (dataset, question) names)."""
    if not len(run):
        return np.zeros(0, dtype=np.int64)
    codes = run.dataset.astype(np.int64) * max(1, len(run.question_names)) + run.question
    unique, inverse = np.unique(codes, return_inverse=True)
    n_q = max(1, len(run.question_names))
    ids = np.array(
        [
            vocabulary.setdefault(
                (run.dataset_names[int(c) // n_q], run.question_names[int(c) % n_q]),
                len(vocabulary),
            )
            for c in unique
        ],
        dtype=np.int64,
    )
    found: npt.NDArray[np.int64] = ids[inverse.ravel()]
    return found


def _system_values(
    run: Run,
    metric: str,
    system: str,
    ids: npt.NDArray[np.int64],
    first: Any,
    vocabulary: dict[tuple[str, str], int],
) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.float64]]:
    """(item ids ascending, values) of ``system``'s defined values of ``metric``: one per
    item (the mean of its repeats when the run holds repeats as rows, keyed by the test
    they repeat: :func:`kagreport.runs._repeats.item_questions`, as the gate keys them)."""
    values, repeats = first
    rows = np.flatnonzero(run.system == run.systems.index(system))
    if repeats is not None:
        rows = rows[repeats[rows]]
        questions = item_questions(run, rows)
        item_of = np.array(
            [
                vocabulary.setdefault(
                    (run.dataset_names[d], run.question_names[q]), len(vocabulary)
                )
                for d, q in zip(run.dataset[rows].tolist(), questions.tolist(), strict=True)
            ],
            dtype=np.int64,
        )
    else:
        item_of = ids[rows]
    mine = values[rows]
    keep = ~np.isnan(mine)
    item, mine = item_of[keep], mine[keep]
    order = np.argsort(item, kind="stable")
    return item[order], mine[order]


def _test(
    before: tuple[npt.NDArray[np.int64], npt.NDArray[np.float64]],
    after: tuple[npt.NDArray[np.int64], npt.NDArray[np.float64]],
    n_resamples: int,
    seed: int,
) -> tuple[float, float, float, str | None, int]:
    """(change, raw p, null standard error, method, pairs) of ``after`` against ``before``."""
    _, at_a, at_b = np.intersect1d(after[0], before[0], assume_unique=True, return_indices=True)
    if len(at_a):
        d = paired_differences(after[1][at_a], before[1][at_b])
        result = sign_flip_test(d, n_resamples=n_resamples, seed=seed)
        null_se = math.sqrt(math.fsum((d * d).tolist())) / len(d)
        return result.statistic, result.p_value, null_se, f"{PAIRED} ({result.method})", len(d)
    a, b = after[1], before[1]
    if len(a) < 2 or len(b) < 2:
        return math.nan, math.nan, math.nan, None, 0
    mean_a, mean_b = math.fsum(a.tolist()) / len(a), math.fsum(b.tolist()) / len(b)
    change = mean_a - mean_b
    # Exactly rounded sums (math.fsum): the same digits in any item order.
    var_a = math.fsum(((a - mean_a) ** 2).tolist()) / (len(a) - 1)
    var_b = math.fsum(((b - mean_b) ** 2).tolist()) / (len(b) - 1)
    se = math.sqrt(var_a / len(a) + var_b / len(b))
    if se == 0.0:
        p = 1.0 if change == 0.0 else 0.0
    else:
        p = 2.0 * NormalDist().cdf(-abs(change) / se)
    return change, p, se, UNPAIRED, 0


# Over 80 lines with its docstring: order the runs, take each leaderboard, test each step.
def history(
    runs: Runs,
    *,
    metrics: Sequence[str] | None = None,
    fallback_times: Mapping[str, Any] | None = None,
    alpha: float = 0.05,
    n_resamples: int = 10_000,
    seed: int = 0,
) -> pd.DataFrame:
    """Each system's value of each metric across runs in time order, and every consecutive
    change tested, Holm-adjusted over the sequence.

    Parameters
    ----------
    runs : mapping of str to Run, or sequence of (str, Run)
        The runs by name (the names label the runs; they must be unique).
    metrics : sequence of str, optional
        The metrics to follow; default the runs' headline metrics
        (:attr:`Run.headline`), in the order the runs first name them. A run lacking a
        metric has no row of it.
    fallback_times : mapping of str to time, optional
        Run name -> a time to order the run by when it records none
        (``metadata["created"]``, :mod:`kagreport.sources`): e.g. its file's modification
        time, as ``kagreport site build --history`` passes. A datetime-like string or Unix
        seconds; ``time_source`` says ``"file"`` for such a run.
    alpha : float, default 0.05
        The family-wise error rate of each sequence's Holm family.
    n_resamples, seed : int
        Of :func:`kagreport.stats.sign_flip_test` (a 0/1 metric's test is exact).

    Returns
    -------
    pandas.DataFrame
        One row per (metric, system, run holding the system with the metric defined), in
        that order (metrics as given, systems by name, runs in time order); columns:

        - ``run``, ``time`` (UTC, NaT when unknown), ``time_source`` (``"recorded"``: the
          time its tool recorded; ``"file"``: a file's modification time, the one
          ``kagreport convert`` kept in the document (``metadata["created_from"]``) or
          the caller's fallback; None: no time), ``position``
          (0, 1, ... : the run's place in the time order);
        - ``value``, ``low``, ``high``, ``interval``, ``n_items``: the system's
          :func:`kagreport.runs.leaderboard` row (``mean``, ``ci``, ``interval``,
          ``n_defined``), the same numbers as the run's leaderboard;
        - against the previous run holding the system (``previous``; None on a system's
          first row, whose change columns are then NaN/None): ``change`` (the mean paired
          difference, this run minus the previous, over the items both hold; unpaired:
          the difference of the means), ``p_value`` (two-sided), ``p_value_holm``,
          ``change_low``/``change_high`` (the interval at the level Holm tested the step
          at (Holm's level for its place in the sequence), which excludes 0 exactly when
          ``significant``), ``significant`` (``p_value_holm < alpha`` and a non-zero
          change), ``method`` and ``n_pairs``.

        ``method`` is ``"paired sign-flip"`` and how its p-value was computed, e.g. ``"paired
        sign-flip (exact-lattice)"``: the paired sign-flip test on the shared items (Fisher
        1935; exact for 0/1 scores: McNemar's test), its interval's null standard error
        ``sqrt(sum d_i**2) / n``. ``"two-sample normal"``, when the two runs share no item of the
        system: the normal two-sample test of the difference of the means with the
        unpooled standard error ``sqrt(s_a**2 / n_a + s_b**2 / n_b)`` (Welch 1947, with
        the normal in place of Student's t: samples of hundreds of items), also the
        interval's. Holm (1979) is applied per (system, metric) over the changes of its
        sequence. A run with repeats as rows (promptfoo) pairs each item once, on the
        mean of its repeats. ``attrs`` records ``alpha``, ``adjustment``, ``interval``,
        ``order`` and ``tests``. The frame does not depend on the order of ``runs``.

    Raises
    ------
    KagreportError
        For runs that are not named runs, two runs of one name, a fallback time of no
        run, a metric no run holds, or an ``alpha`` outside (0, 1).
    """
    import pandas as pd

    if isinstance(alpha, bool) or not isinstance(alpha, int | float) or not 0 < alpha < 1:
        raise KagreportError(f"`alpha` must be in (0, 1), not {alpha!r}")
    entries = _entries(runs, fallback_times)
    if metrics is None:
        metrics = list(dict.fromkeys(e.run.headline for e in entries if e.run.metrics))
    for metric in metrics:
        if not any(metric in e.run.metrics for e in entries):
            raise KagreportError(f"history: no run has the metric {metric!r}")
    vocabulary: dict[tuple[str, str], int] = {}
    ids = [_item_ids(e.run, vocabulary) for e in entries]
    rows: list[dict[str, Any]] = []
    for metric in metrics:
        # run -> system -> (leaderboard row, (item ids, values))
        steps: dict[str, list[tuple[int, Any, Any]]] = {}
        for k, entry in enumerate(entries):
            if metric not in entry.run.metrics:
                continue
            column = entry.run.metrics[metric]
            averaged = item_means(entry.run, {metric: column})
            values = (column, None) if averaged is None else (averaged[0][metric], averaged[1])
            for row in mean_rows(entry.run, metric)[0]:  # the leaderboard's, without ranks
                if row.n_defined:
                    held = _system_values(entry.run, metric, row.system, ids[k], values, vocabulary)
                    steps.setdefault(row.system, []).append((k, row, held))
        for system in sorted(steps):
            rows += _sequence(entries, metric, system, steps[system], alpha, n_resamples, seed)
    frame = pd.DataFrame(rows, columns=list(HISTORY_COLUMNS))
    frame["time"] = pd.to_datetime(frame["time"], utc=True)
    frame["significant"] = frame["significant"].astype("boolean")
    frame["n_pairs"] = frame["n_pairs"].astype("Int64")
    frame.attrs.update(
        alpha=float(alpha),
        adjustment="holm over each (system, metric) sequence of consecutive changes",
        interval="value: the leaderboard's; change: test-based at the Holm level of each step",
        order="the run's time, else the caller's fallback (time_source 'file' for a file "
        "time: the fallback, or the one kagreport convert kept); equal times "
        "by run name; runs with no time last, by name",
        tests={PAIRED: "on the items both runs hold", UNPAIRED: "when they share none"},
    )
    return frame


def _sequence(
    entries: list[_Entry],
    metric: str,
    system: str,
    steps: list[tuple[int, Any, Any]],
    alpha: float,
    n_resamples: int,
    seed: int,
) -> list[dict[str, Any]]:
    """The rows of one (system, metric): values, and each change Holm-adjusted together."""
    tests = [
        _test(before[2], after[2], n_resamples, seed) for before, after in itertools.pairwise(steps)
    ]
    raw = [t[1] for t in tests]
    adjusted, levels = holm_adjust(raw), holm_levels(raw, alpha)
    rows = []
    for j, (k, row, _) in enumerate(steps):
        entry = entries[k]
        out: dict[str, Any] = {
            "run": entry.name,
            "time": entry.time,
            "time_source": entry.source,
            "position": k,
            "system": system,
            "metric": metric,
            "value": row.mean,
            "low": row.low,
            "high": row.high,
            "interval": row.interval,
            "n_items": row.n_defined,
            "previous": None,
            "change": math.nan,
            "change_low": math.nan,
            "change_high": math.nan,
            "p_value": math.nan,
            "p_value_holm": math.nan,
            "significant": None,
            "method": None,
            "n_pairs": None,
        }
        if j:
            change, p, se, method, n_pairs = tests[j - 1]
            out.update(previous=entries[steps[j - 1][0]].name, method=method, n_pairs=n_pairs)
            if method is not None and not math.isnan(p):
                significant = bool(adjusted[j - 1] < alpha and change != 0.0)
                # Holm's decision as made (1 - (1 - level) may round past level); below
                # 1e-15 a level has no normal quantile in floating point.
                confidence = 1.0 - max(levels[j - 1], 1e-15)
                interval = interval_from_test(change, p, confidence, se, rejects=significant)
                out.update(
                    change=change,
                    change_low=float(interval.low),
                    change_high=float(interval.high),
                    p_value=p,
                    p_value_holm=adjusted[j - 1],
                    significant=significant,
                )
        rows.append(out)
    return rows
