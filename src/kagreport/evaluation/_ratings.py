"""Reading a reliability table (coders x units of numbers or labels) into positions on a scale.

What :mod:`kagreport.evaluation._agreement` validates before Krippendorff's alpha
(:mod:`kagreport.stats`) is computed: missing ratings, labels against numbers, the declared
``value_order``, and the numeric position of every rating (NaN where missing).
"""

from __future__ import annotations

import itertools
import math
import numbers
from collections.abc import Hashable, Sequence
from typing import Any, TypeAlias

import numpy as np
import numpy.typing as npt

__all__ = ["Rating", "ReliabilityData"]

#: One rating: a number, a label, or ``None`` (or NaN) when the coder did not rate the unit.
Rating: TypeAlias = float | str | None

#: Coders x units: a 2-D array (or anything with ``__array__``) or a sequence of rows.
ReliabilityData: TypeAlias = npt.NDArray[Any] | Sequence[Sequence[Rating]]


def _check_order(value_order: Sequence[Hashable]) -> dict[Hashable, int]:
    """Map each value of the declared scale to its rank, 1 for the lowest."""
    if isinstance(value_order, str | bytes) or not isinstance(value_order, Sequence | np.ndarray):
        raise TypeError(
            f"`value_order` must be a sequence of values (lowest first), not {value_order!r}"
        )
    ranks: dict[Hashable, int] = {}
    for value in value_order:
        if _is_missing(value):
            raise ValueError(f"`value_order` cannot hold a missing value: {value!r}")
        if value in ranks:
            raise ValueError(f"`value_order` repeats {value!r}")
        ranks[value] = len(ranks) + 1
    return ranks


def _is_missing(cell: object) -> bool:
    return cell is None or (isinstance(cell, numbers.Real) and math.isnan(cell))


def _read_table(
    data: ReliabilityData,
) -> tuple[npt.NDArray[np.float64] | None, npt.NDArray[np.object_] | None]:
    """Return ``(numbers, None)`` with NaN for missing or ``(None, labels)`` with None for missing.

    Both have shape (coders, units).
    """
    if not isinstance(data, np.ndarray) and hasattr(data, "__array__"):
        data = np.asarray(data)  # e.g. a DataFrame: iterating it would yield column names
    if isinstance(data, np.ndarray):
        if data.ndim != 2:
            raise ValueError(
                f"reliability data must be 2-D (coders x units), not of shape {data.shape}"
            )
        if data.dtype.kind in "biuf":
            numeric = data.astype(np.float64)
            _check_finite(numeric)
            return numeric, None
        if data.dtype.kind == "U":
            if bool((data == "nan").any()):
                raise ValueError(
                    "a NumPy string array holds the label 'nan', which is how NumPy stores a NaN "
                    "among strings; pass a list or an object array with None for missing ratings"
                )
            return None, data.astype(object)
        rows: list[list[object]] = [list(row) for row in data.tolist()]
    else:
        if isinstance(data, str | bytes) or not isinstance(data, Sequence):
            raise TypeError(
                f"reliability data must be a 2-D array or a sequence of rows, not {data!r}"
            )
        rows = []
        for i, row_like in enumerate(data):
            row: object = row_like  # may be anything at run time, whatever the annotation says
            if isinstance(row, np.ndarray) and row.ndim == 1:
                rows.append(row.tolist())
            elif isinstance(row, Sequence) and not isinstance(row, str | bytes):
                rows.append(list(row))
            else:
                raise ValueError(
                    f"reliability data must be 2-D (coders x units); row {i} is {row!r}"
                )
    n_units = len(rows[0]) if rows else 0
    if any(len(row) != n_units for row in rows):
        raise ValueError(
            "every coder's row must have one rating per unit; row lengths: "
            f"{[len(row) for row in rows]}"
        )
    return _classify(rows, n_units)


def _classify(
    rows: list[list[object]], n_units: int
) -> tuple[npt.NDArray[np.float64] | None, npt.NDArray[np.object_] | None]:
    numeric = np.full((len(rows), n_units), np.nan)
    labels = np.full((len(rows), n_units), None, dtype=object)
    seen_number = seen_label = False
    for i, row in enumerate(rows):
        for j, cell in enumerate(row):
            if cell is None:
                continue
            if isinstance(cell, str):
                labels[i, j] = str(cell)
                seen_label = True
            elif isinstance(cell, numbers.Real):
                value = float(cell)
                if math.isinf(value):
                    raise ValueError(f"rating [{i}][{j}] is infinite: {cell!r}")
                if not math.isnan(value):
                    numeric[i, j] = value
                    seen_number = True
            else:
                raise TypeError(
                    f"rating [{i}][{j}] must be a number, a string or None, not {cell!r}"
                )
    if seen_number and seen_label:
        raise ValueError("reliability data mixes numbers and labels; use one or the other")
    return (None, labels) if seen_label else (numeric, None)


def _check_finite(numeric: npt.NDArray[np.float64]) -> None:
    if bool(np.isinf(numeric).any()):
        i, j = np.argwhere(np.isinf(numeric))[0]
        raise ValueError(f"rating [{i}][{j}] is infinite: {numeric[i, j]!r}")


def _label_positions(
    labels: npt.NDArray[np.object_], level: str, order: dict[Hashable, int] | None
) -> npt.NDArray[np.float64]:
    seen = list(dict.fromkeys(label for label in labels.ravel() if label is not None))
    if order is None:
        if level != "nominal":
            # Sorting the labels would silently invent a scale (alphabetical order is rarely the
            # intended one), so the caller must declare it.
            raise ValueError(
                f"{level} alpha on labels needs `value_order`, the scale from lowest to highest; "
                f"labels seen: {', '.join(map(repr, seen))}"
            )
        # Nominal differences only ask whether two labels are equal: any one-to-one code works.
        order = {label: code for code, label in enumerate(seen)}
    else:
        unknown = [label for label in seen if label not in order]
        if unknown:
            raise ValueError(f"labels not in `value_order`: {', '.join(map(repr, unknown))}")
    positions = np.full(labels.shape, np.nan)
    rated = np.array([label is not None for label in labels.ravel()], dtype=bool).reshape(
        labels.shape
    )
    positions[rated] = [order[label] for label in labels[rated]]
    return positions


def _number_positions(
    numeric: npt.NDArray[np.float64], level: str, order: dict[Hashable, int] | None
) -> npt.NDArray[np.float64]:
    rated = ~np.isnan(numeric)
    if order is None or not bool(rated.any()):
        # Nothing rated: the table could as well be labels, so the order cannot be checked
        # against numbers (and alpha is NaN anyway).
        return numeric
    values = numeric[rated]
    unknown = [value for value in dict.fromkeys(values.tolist()) if value not in order]
    if unknown:
        raise ValueError(f"values not in `value_order`: {', '.join(map(repr, unknown))}")
    if level in ("interval", "ratio"):
        # The numbers themselves carry the distances; the order only declares the domain, so it
        # must agree with them.
        declared: list[object] = list(order)
        steps = [float(v) for v in declared if isinstance(v, numbers.Real)]
        if len(steps) != len(declared) or any(a >= b for a, b in itertools.pairwise(steps)):
            raise ValueError(
                f"at {level} level a `value_order` of numbers must be strictly ascending, "
                f"not {declared!r}"
            )
        return numeric
    # Ordinal (and nominal) level: a number's place in the declared scale is what counts.
    positions = np.full(numeric.shape, np.nan)
    positions[rated] = [order[value] for value in values.tolist()]
    return positions
