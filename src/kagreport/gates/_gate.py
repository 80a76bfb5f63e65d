"""The regression gate: non-inferiority of a candidate run against a baseline run, per
system pair, metric and slice, Holm-adjusted over all of them."""

from __future__ import annotations

import math
import os
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from kagreport._errors import InputError, KagreportError
from kagreport._format import percent
from kagreport.gates._hypothesis import GateHypothesis
from kagreport.gates._pairs import (
    ALL,
    SLICES,
    ItemSpace,
    SideValues,
    pair_systems,
    proportion,
    side_values,
)
from kagreport.gates._result import INCONCLUSIVE_POLICIES, GateResult
from kagreport.stats import (
    holm_adjust,
    interval_from_test,
    minimum_detectable_effect,
    power,
    required_sample_size,
    sign_flip_test,
)
from kagreport.stats._holm import holm_levels
from kagreport.stats._signflip import DUST, exact_mean, paired_differences

if TYPE_CHECKING:
    import numpy.typing as npt

    from kagreport.runs import Run

__all__ = ["gate"]

#: Power the MDE and the items needed are computed at.
POWER = 0.8


# Over 80 lines only with its docstring (the method, its formulas and sources).
def gate(
    candidate: Run | str | os.PathLike[str],
    baseline: Run | str | os.PathLike[str],
    *,
    metrics: Sequence[str] | None = None,
    margin: float = 0.02,
    alpha: float = 0.05,
    slice: str = "dataset",
    min_paired: float = 0.5,
    datasets: str | os.PathLike[str] | None = None,
    inconclusive: str = "exit",
) -> GateResult:
    """Test whether ``candidate`` is no worse than ``baseline`` by more than ``margin``.

    Parameters
    ----------
    candidate, baseline : Run, str or path-like
        Runs, or paths :func:`kagreport.sources.read_run` reads (any format).
    metrics : sequence of str, optional
        Metrics to gate (higher is better); default the runs' headline metrics
        (:attr:`Run.headline`) that both hold.
    margin : float, default 0.02
        Non-inferiority margin, >= 0, in the metrics' units (0.02: 2 percentage points of
        a proportion).
    alpha : float, default 0.05
        Family-wise error rate over all hypotheses, in (0, 1).
    slice : {"dataset", "task", "none"}, default "dataset"
        One hypothesis per dataset, per task (``task_of``), or
        over all items.
    min_paired : float, default 0.5
        The smallest share of items (of those either side scored) both sides must hold,
        per system pair and metric, in (0, 1].
    datasets : str or path-like, optional
        The datasets file of an input that is a kag result tree (a path that is not a
        regular file).
    inconclusive : {"exit", "pass", "fail"}, default "exit"
        The policy for an inconclusive gate, recorded in ``settings`` and stated by every
        output: :meth:`GateResult.exit_code` gives 3, or counts it as a pass (0) or a
        failure (1); with ``"fail"`` an inconclusive row is a JUnit ``failure``.

    Returns
    -------
    GateResult

    Raises
    ------
    InputError
        For a bad ``margin``, ``alpha``, ``slice``, ``min_paired`` or ``inconclusive``; a
        ``datasets`` file that does not exist, or one given when neither input is a kag
        result tree; a metric either run
        lacks (listing those it has); runs whose systems do not pair; too few paired items
        (naming the share, the minimum and both inputs).
    KagreportError
        For an input that cannot be read (naming the file).

    Notes
    -----
    Systems: with one per run they are paired whatever their names; with several, by
    name. A baseline system the candidate lacks (a system that crashed) gives one
    inconclusive hypothesis per metric (no pair, its items counted as baseline-only,
    ``reason`` "not in the candidate run"), outside the Holm family; a candidate system
    the baseline lacks (a new system) is left out and listed. Items are (dataset,
    question); promptfoo's repeats (rows tied by ``metadata["repeat_of"]``) count as one
    item, the mean of its repeats (Inspect AI's epochs are already reduced per row). For
    each hypothesis the paired differences d_i = candidate_i - baseline_i (within 1e-12 of
    zero on the scores' scale: 0) test H0: Δ = -margin two-sided, by the
    paired sign-flip test of x_i = d_i + margin (Fisher 1935): its randomisation
    distribution has variance sum x_i**2 / n**2, which under H0 estimates Var(d) / n, so
    the test is a score-type test, asymptotically exact (Hoeffding 1952); exact by
    enumeration or lattice where those apply, else Monte Carlo, else (more than 20,000
    non-zero differences) its normal approximation. Holm (1979) adjusts over every
    hypothesis of the gate; α_i is the level at which Holm tests hypothesis i
    (Holm's level for its place in the family). The interval of Δ is
    ``interval_from_test(mean(d) + margin, p, 1 - α_i, sd(d) / sqrt(n)) - margin``: it
    excludes -margin exactly when p < α_i, i.e. when the adjusted p is below ``alpha``.

    Verdicts: **pass** when the adjusted p < alpha and mean(d) > -margin (the interval lies
    above -margin: non-inferior); **fail** when the adjusted p < alpha and mean(d) <
    -margin (a regression larger than the margin); else **inconclusive**. Overall: fail if
    any fails, else inconclusive if any is, else pass. With v the sample variance of d:
    ``mde = (z_{1-α_i/2} + z_0.8) sqrt(v / n)``; ``n_needed`` the non-inferiority sample
    size at true change 0, ``v (z_{1-α_i/2} + z_0.8)**2 / margin**2`` (Julious 2004;
    Chow, Shao and Wang 2008, s. 3.1), at least the fewest pairs at which the sign-flip
    test can reject at all (its smallest p-value is 2 / 2**n);
    ``power = Phi(margin / sqrt(v / n) - z_{1-α_i/2})``, the probability of failing when
    the true change is -2 margin.

    References
    ----------
    .. [1] R. A. Fisher (1935), *The Design of Experiments*, s. 21.
    .. [2] W. Hoeffding (1952), "The large-sample power of tests based on permutations of
       observations", *Annals of Mathematical Statistics* 23(2), 169-192.
    .. [3] S. Holm (1979), "A simple sequentially rejective multiple test procedure",
       *Scandinavian Journal of Statistics* 6(2), 65-70.
    .. [4] S. A. Julious (2004), "Sample sizes for clinical trials with normal data",
       *Statistics in Medicine* 23(12), 1921-1986.
    .. [5] S.-C. Chow, J. Shao, H. Wang (2008), *Sample Size Calculations in Clinical
       Research*, 2nd ed., s. 3.1.
    """
    margin, alpha, min_paired = _settings(margin, alpha, slice, min_paired)
    if inconclusive not in INCONCLUSIVE_POLICIES:
        raise InputError(
            f"`inconclusive` must be one of {', '.join(INCONCLUSIVE_POLICIES)}, "
            f"not {inconclusive!r}"
        )
    _check_datasets(datasets, candidate, baseline)
    names = (_name(candidate, "candidate"), _name(baseline, "baseline"))
    cand = _as_run(candidate, datasets)
    base = _as_run(baseline, datasets)
    pairing = pair_systems(cand, base, names)
    chosen = _metrics(cand, base, metrics, names)
    space = ItemSpace(cand, base, slice)

    drafts: list[dict[str, Any]] = []
    for cand_system, base_system in pairing.pairs:
        for metric in chosen:
            c = side_values("candidate", cand, cand_system, metric, space)
            b = side_values("baseline", base, base_system, metric, space)
            _check_share(c, b, min_paired, names, metric, (cand_system, base_system))
            is_proportion = proportion(metric, cand.metrics[metric], base.metrics[metric])
            for index, name in enumerate(space.slice_names):
                drafts.append(
                    _test(c, b, space, index, margin)
                    | {"candidate_system": cand_system, "baseline_system": base_system}
                    | {"metric": metric, "slice": name, "proportion": is_proportion}
                )
    for system in pairing.baseline_only:
        for metric in chosen:
            b = side_values("baseline", base, system, metric, space)
            is_proportion = proportion(metric, base.metrics[metric])
            drafts.append(_missing(system, metric, int(b.keys.size), is_proportion))
    drafts = [d for d in drafts if d["n_pairs"] or d["candidate_only"] or d["baseline_only"]]
    # One order whatever the runs' row order: systems and slices by name, metrics as given.
    rank = {metric: k for k, metric in enumerate(chosen)}
    drafts.sort(
        key=lambda d: (d["candidate_system"], d["baseline_system"], rank[d["metric"]], d["slice"])
    )
    raw = [d["p_value"] for d in drafts]
    adjusted = holm_adjust(raw)
    levels = holm_levels(raw, alpha)
    hypotheses = tuple(
        _decide(d, p_holm, level, margin, alpha)
        for d, p_holm, level in zip(drafts, adjusted, levels, strict=True)
    )
    verdicts = {h.verdict for h in hypotheses}
    verdict = "fail" if "fail" in verdicts else "pass" if verdicts == {"pass"} else "inconclusive"
    settings = {"metrics": list(chosen), "margin": margin, "alpha": alpha, "slice": slice}
    settings |= {"min_paired": min_paired, "inconclusive": inconclusive}
    return GateResult(
        verdict=verdict,
        hypotheses=hypotheses,
        candidate=names[0],
        baseline=names[1],
        settings=settings,
        candidate_only_systems=pairing.candidate_only,
        baseline_only_systems=pairing.baseline_only,
    )


def _settings(margin: Any, alpha: Any, slice: Any, min_paired: Any) -> tuple[float, float, float]:
    def number(value: Any, name: str) -> float:
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise InputError(f"`{name}` must be a number, not {value!r}")
        return float(value)

    m, a, share = number(margin, "margin"), number(alpha, "alpha"), number(min_paired, "min_paired")
    if not (math.isfinite(m) and m >= 0):
        raise InputError(f"`margin` must be a finite number >= 0, not {margin!r}")
    if not 0 < a < 1:
        raise InputError(f"`alpha` must be in (0, 1), not {alpha!r}")
    if not 0 < share <= 1:
        raise InputError(f"`min_paired` must be in (0, 1], not {min_paired!r}")
    if slice not in SLICES:
        raise InputError(f"`slice` must be one of {', '.join(SLICES)}, not {slice!r}")
    return m, a, share


def _name(value: object, role: str) -> str:
    if isinstance(value, str | os.PathLike):
        return os.fsdecode(value)
    return role


def _check_datasets(datasets: Any, *inputs: object) -> None:
    """A datasets file must exist and go with an input that is a kag result tree (a path
    that is not a regular file): else it would be ignored without a word."""
    if datasets is None:
        return
    if not os.path.exists(datasets):
        raise InputError(f"{os.fsdecode(datasets)}: no such file (--datasets)", path=datasets)
    trees = [x for x in inputs if isinstance(x, str | os.PathLike) and not os.path.isfile(x)]
    if not trees:
        raise InputError(
            "--datasets is given but neither input is a kag result tree (a folder): "
            "leave it out, or name the tree"
        )


def _as_run(value: Run | str | os.PathLike[str], datasets: Any) -> Run:
    from kagreport.runs import Run
    from kagreport.sources import read_run

    if isinstance(value, Run):
        return value
    if not isinstance(value, str | os.PathLike):
        raise InputError(f"a run or a path is needed, not {type(value).__name__}")
    if datasets is not None and not os.path.isfile(value):
        return read_run(value, datasets=datasets)
    return read_run(value)


def _metrics(
    candidate: Run, baseline: Run, metrics: Sequence[str] | None, names: tuple[str, str]
) -> tuple[str, ...]:
    if isinstance(metrics, str):
        metrics = [metrics]
    if metrics is None:
        try:
            headlines = dict.fromkeys((candidate.headline, baseline.headline))
        except KagreportError as exc:
            raise InputError(f"no metric to gate: {exc}") from None
        shared = tuple(m for m in headlines if m in candidate.metrics and m in baseline.metrics)
        if not shared:
            both = [m for m in candidate.metrics if m in baseline.metrics]
            raise InputError(
                f"{names[0]} and {names[1]} share no headline metric "
                f"({', '.join(map(repr, headlines))}); name one with --metric "
                f"(metrics of both: {', '.join(map(repr, both)) or 'none'})"
            )
        return shared
    if not metrics:
        raise InputError("`metrics` names no metric")
    for metric in metrics:
        for run, name in ((candidate, names[0]), (baseline, names[1])):
            if metric not in run.metrics:
                raise InputError(
                    f"{name} holds no metric {metric!r}; its metrics: "
                    f"{', '.join(map(repr, run.metrics)) or 'none'}"
                )
    return tuple(dict.fromkeys(metrics))


def _check_share(
    c: SideValues,
    b: SideValues,
    minimum: float,
    names: tuple[str, str],
    metric: str,
    systems: tuple[str, str],
) -> None:
    paired = np.intersect1d(c.keys, b.keys, assume_unique=True).size
    union = c.keys.size + b.keys.size - paired
    share = paired / union if union else 0.0
    if share < minimum:
        pair = systems[0] if systems[0] == systems[1] else f"{systems[0]} vs {systems[1]}"
        raise InputError(
            f"only {percent(share)} of the items ({paired:,} of {union:,}) of {metric!r} "
            f"({pair}) are in both {names[0]} and {names[1]}; the gate needs at least "
            f"{percent(minimum)} (--min-paired)"
        )


def _test(
    c: SideValues, b: SideValues, space: ItemSpace, index: int, margin: float
) -> dict[str, Any]:
    c_in = space.slice_of(c.keys) == index
    b_in = space.slice_of(b.keys) == index
    c_keys, c_values = c.keys[c_in], c.values[c_in]
    b_keys, b_values = b.keys[b_in], b.values[b_in]
    _, ci, bi = np.intersect1d(c_keys, b_keys, assume_unique=True, return_indices=True)
    n = int(ci.size)
    draft: dict[str, Any] = {
        "n_pairs": n,
        "candidate_only": int(c_keys.size) - n,
        "baseline_only": int(b_keys.size) - n,
        "candidate_mean": exact_mean(c_values[ci]),
        "baseline_mean": exact_mean(b_values[bi]),
    }
    if not n:
        reason = "no item in both runs"
        if not draft["baseline_only"]:
            reason = "not in the baseline run"
        elif not draft["candidate_only"]:
            reason = "not in the candidate run"
        empty = {"d": None, "p_value": math.nan, "method": "none", "unit": False}
        return draft | empty | {"reason": reason}
    d = paired_differences(c_values[ci], b_values[bi])
    # d + margin is rounding dust where d is -margin in exact arithmetic (0.48 - 0.50 +
    # 0.02 is -1.7e-17): a tie, by the rule paired_differences applies to d itself.
    x = d + margin
    scale = max(margin, float(np.abs(c_values[ci]).max()), float(np.abs(b_values[bi]).max()))
    x[np.abs(x) <= DUST * scale] = 0.0
    result = sign_flip_test(x, fallback="normal")
    unit = all(bool(((v >= 0.0) & (v <= 1.0)).all()) for v in (c_values[ci], b_values[bi]))
    return draft | {"d": d, "p_value": result.p_value, "method": result.method, "unit": unit}


def _missing(system: str, metric: str, scored: int, is_proportion: bool) -> dict[str, Any]:
    """The draft of a baseline system the candidate lacks: no pair, its items left out."""
    nan = math.nan
    return {
        "n_pairs": 0, "candidate_only": 0, "baseline_only": scored, "candidate_mean": nan,
        "baseline_mean": nan, "d": None, "p_value": nan, "method": "none", "unit": False,
        "candidate_system": system, "baseline_system": system, "metric": metric,
        "slice": ALL, "proportion": is_proportion, "reason": "not in the candidate run",
    }  # fmt: skip


def _fewest_rejecting(level: float) -> int:
    """The fewest pairs at which the sign-flip test can reject at ``level``: its smallest
    p-value is 2 / 2**n (all differences one way), so n > 1 + log2(1 / level)."""
    return math.floor(1.0 + math.log2(1.0 / level)) + 1


def _decide(
    draft: dict[str, Any], p_holm: float, level: float, margin: float, alpha: float
) -> GateHypothesis:
    d: npt.NDArray[np.float64] | None = draft.pop("d")
    unit = bool(draft.pop("unit"))
    nan = math.nan
    fields: dict[str, Any] = {"difference": nan, "low": nan, "high": nan, "variance": nan}
    fields |= {"mde": nan, "n_needed": None, "power": nan}
    verdict = "inconclusive"
    if d is not None:
        n = d.size
        mean = exact_mean(d)
        # math.fsum: exactly rounded, so the variance is the same in any item order.
        variance = math.fsum(((d - mean) ** 2).tolist()) / (n - 1) if n >= 2 else nan
        se = math.sqrt(variance / n) if n >= 2 else nan
        rejected = p_holm < alpha
        # The decision is Holm's, passed as it is (1 - (1 - level) may round past level).
        # Below 1e-15 a level has no normal quantile in floating point: the interval is
        # drawn at 1e-15 then (its side of -margin is still the decision's).
        confidence = 1.0 - max(level, 1e-15)
        ci = interval_from_test(mean + margin, draft["p_value"], confidence, se, rejects=rejected)
        low, high = ci.low - margin, ci.high - margin
        if unit:
            # Scores in [0, 1] differ by at most 1: the normal width may reach past that.
            # Cutting there moves no bound across -margin (< 1), so the verdict still agrees.
            low, high = max(low, -1.0), min(high, 1.0)
        fields |= {"difference": mean, "low": low, "high": high}
        fields["variance"] = variance
        if rejected and mean > -margin:
            verdict = "pass"
        elif rejected and mean < -margin:
            verdict = "fail"
        if n >= _fewest_rejecting(level):
            fields["mde"] = minimum_detectable_effect(variance, n, alpha=level, power=POWER)
            fields["power"] = power(margin, variance, n, alpha=level)
        elif n >= 2:
            # Too few pairs for the sign-flip test to reject at all (its smallest p-value,
            # 2 / 2**n, is at least the level): no change is detectable, whatever its size.
            fields["power"] = 0.0
        if n >= 2 and margin > 0:
            needed = required_sample_size(variance, margin, alpha=level, power=POWER)
            fields["n_needed"] = max(needed, _fewest_rejecting(level))
    return GateHypothesis(**draft, **fields, p_value_holm=p_holm, level=level, verdict=verdict)
