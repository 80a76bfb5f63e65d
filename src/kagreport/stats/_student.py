"""Student's t quantiles and p-values (SciPy, loaded lazily) and the argument checks that
clustered means, pass@k and prediction-powered inference share.

SciPy is imported inside the functions, through :mod:`kagreport._optional`, so that
``import kagreport.stats`` still loads NumPy only (tests/test_architecture.py). Only
``scipy.special`` is loaded: ``scipy.stats`` takes several times as long to import.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

import numpy as np

from kagreport._errors import InputError

if TYPE_CHECKING:
    import numpy.typing as npt

__all__: list[str] = []


def t_quantile(probability: float, df: int) -> float:
    """The ``probability`` quantile of Student's t with ``df`` degrees of freedom."""
    from kagreport._optional import optional

    with optional("scipy"):
        from scipy.special import stdtrit
    return float(stdtrit(df, probability))


def t_two_sided_pvalue(statistic: float, df: int) -> float:
    """``P(|T| >= |statistic|)`` for T of Student's t with ``df`` degrees of freedom."""
    from kagreport._optional import optional

    with optional("scipy"):
        from scipy.special import stdtr
    if math.isnan(statistic):
        return math.nan
    return min(1.0, 2.0 * float(stdtr(df, -abs(statistic))))


def t_interval(center: float, se: float, df: int, confidence: float) -> tuple[float, float]:
    """``center -/+ t_{(1 + confidence) / 2, df} * se``."""
    half = t_quantile((1.0 + confidence) / 2.0, df) * se
    return (center - half, center + half)


def check_confidence(confidence: float) -> float:
    """``confidence`` as a float in (0, 1), else an InputError naming it."""
    if isinstance(confidence, bool) or not isinstance(confidence, int | float | np.floating):
        raise InputError(f"`confidence` must be a number in (0, 1), not {confidence!r}")
    if not 0.0 < confidence < 1.0:
        raise InputError(f"`confidence` must be in (0, 1), not {confidence!r}")
    return float(confidence)


def as_finite(values: npt.ArrayLike, name: str) -> np.ndarray[Any, np.dtype[np.float64]]:
    """``values`` as a one-dimensional float64 array with no NaN or infinity."""
    try:
        array = np.asarray(values, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise InputError(f"`{name}` must be numbers: {exc}") from None
    if array.ndim != 1:
        raise InputError(f"`{name}` must be one-dimensional, not of shape {array.shape}")
    finite = np.isfinite(array)
    if not finite.all():
        at = int(np.flatnonzero(~finite)[0])
        raise InputError(f"`{name}` holds {array[at]} at index {at}; leave undefined values out")
    return array


def same_length(first: np.ndarray[Any, Any], second: Any, names: tuple[str, str]) -> None:
    """An InputError naming both arguments when their lengths differ."""
    if len(first) != len(second):
        raise InputError(
            f"`{names[0]}` and `{names[1]}` differ in length: {len(first)} and {len(second)}"
        )


def cluster_codes(
    clusters: npt.ArrayLike, n: int, name: str = "values"
) -> tuple[np.ndarray[Any, np.dtype[np.intp]], int]:
    """Each value's cluster as 0..G-1, in the sorted order of the cluster labels, and G.

    Labels are integers, other numbers or strings, of one kind. Codes in the labels'
    sorted order make the bootstrap's draws independent of the order of the values.
    """
    array = np.asarray(clusters)
    if array.dtype.kind in "US" and not isinstance(clusters, np.ndarray):
        array = np.asarray(clusters, dtype=object)  # NumPy made [0, "a"] two strings
    if array.ndim != 1:
        raise InputError(f"`clusters` must be one-dimensional, not of shape {array.shape}")
    if len(array) != n:
        raise InputError(f"`{name}` and `clusters` differ in length: {n} and {len(array)}")
    if array.dtype.kind not in "biufUS":
        kinds = sorted({type(label).__name__ for label in array.tolist()})
        if kinds != ["str"] and not set(kinds) <= {"int", "float"}:
            raise InputError(
                "`clusters` must be labels of one kind (numbers or strings), "
                f"not {', '.join(kinds)}"
            )
        array = array.astype(str) if kinds == ["str"] else array.astype(np.float64)
    if array.dtype.kind == "f" and np.isnan(array).any():
        at = int(np.flatnonzero(np.isnan(array))[0])
        raise InputError(f"`clusters` holds NaN at index {at}; every value needs a cluster")
    if array.dtype.kind in "biu" and n:
        # Integer labels of a narrow range (item indices): a count instead of a sort.
        low, high = int(array.min()), int(array.max())
        if high - low <= 4 * n + 1024 and -(2**62) < low <= high < 2**62:
            offsets = (array.astype(np.int64) - low).astype(np.intp)
            present = np.bincount(offsets) > 0
            rank = np.cumsum(present) - 1
            return rank[offsets].astype(np.intp), int(rank[-1]) + 1
    labels, codes = np.unique(array, return_inverse=True)
    return codes.reshape(-1).astype(np.intp, copy=False), len(labels)
