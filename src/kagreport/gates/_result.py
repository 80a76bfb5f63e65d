"""The result of a gate: one :class:`GateHypothesis` per (system pair, metric, slice), and
the :class:`GateResult` that holds them, versioned as ``{"schema": "kagreport.gate",
"version": 1, ...}``."""

from __future__ import annotations

import dataclasses
import math
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Annotated, Any, ClassVar, Literal

import msgspec

from kagreport._document import Document, convert, jsonable
from kagreport._errors import InputError
from kagreport._format import json_safe
from kagreport.gates import _outputs

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["INCONCLUSIVE_POLICIES", "SCHEMA", "VERDICTS", "VERSION", "GateHypothesis", "GateResult"]

SCHEMA = "kagreport.gate"
VERSION = 1
#: A hypothesis's and a gate's verdicts.
VERDICTS = ("pass", "fail", "inconclusive")
#: What ``exit_code`` does with an inconclusive gate: exit 3, or count it as pass or fail.
INCONCLUSIVE_POLICIES = ("exit", "pass", "fail")

_FLOATS = (
    "baseline_mean", "candidate_mean", "difference", "low", "high", "level", "p_value",
    "p_value_holm", "variance", "mde", "power",
)  # fmt: skip


@dataclass(frozen=True, eq=False)
class GateHypothesis:
    """One hypothesis of a gate: a system pair's metric on one slice of the items.

    H0: Δ = -margin, where Δ is the mean over the paired items of d_i = candidate_i -
    baseline_i (the metric's units; a proportion's in [0, 1]); tested two-sided by the
    paired sign-flip test of d_i + margin at Holm's level ``level``.

    Attributes
    ----------
    candidate_system, baseline_system : str
        The systems paired (the same name unless each run holds one system).
    metric : str
    slice : str
        The dataset or task the items belong to (``"all"`` with ``slice="none"``).
    n_pairs : int
        Items both systems scored (a cluster of repeats counts once).
    candidate_only, baseline_only : int
        Items left out, scored by one side only.
    baseline_mean, candidate_mean, difference : float
        Means over the paired items and their difference, Δ; NaN with no pair.
    low, high : float
        Interval of Δ at confidence ``1 - level`` that agrees with the test: it lies
        above ``-margin`` when the verdict is pass, below when fail; NaN with no pair.
    level : float
        Holm's level for this hypothesis, α_i (NaN with no pair).
    p_value, p_value_holm : float
        Two-sided p-value of H0 and its Holm-adjusted value over the gate's hypotheses.
    method : str
        How the p-value was computed (:data:`kagreport.stats.METHODS`; ``"none"``
        without a pair).
    verdict : {"pass", "fail", "inconclusive"}
    variance : float
        Sample variance of the d_i (ddof 1); NaN below 2 pairs.
    mde : float
        The smallest true change this benchmark detects at its size, with probability
        0.8 at level α_i (:func:`kagreport.stats.minimum_detectable_effect`); NaN when
        undefined.
    n_needed : int or None
        Items needed to show non-inferiority with probability 0.8 when the true change
        is 0 (:func:`kagreport.stats.required_sample_size` of the margin); None when
        undefined (no variance, or margin 0).
    power : float
        Predicted probability that this hypothesis fails when the true change is
        ``-2 * margin`` (:func:`kagreport.stats.power` of the margin); NaN when undefined.
    proportion : bool
        Whether the metric is a proportion (shown in percent and percentage points).
    """

    candidate_system: str
    baseline_system: str
    metric: str
    slice: str
    n_pairs: int
    candidate_only: int
    baseline_only: int
    baseline_mean: float
    candidate_mean: float
    difference: float
    low: float
    high: float
    level: float
    p_value: float
    p_value_holm: float
    method: str
    verdict: str
    variance: float
    mde: float
    n_needed: int | None
    power: float
    proportion: bool

    @property
    def system(self) -> str:
        """The pair's name: the system's, or ``"candidate vs baseline"`` when they differ."""
        if self.candidate_system == self.baseline_system:
            return self.candidate_system
        return f"{self.candidate_system} vs {self.baseline_system}"

    def to_dict(self) -> dict[str, Any]:
        """The hypothesis as a mapping (NaN kept; JSON writes it as null)."""
        return {f.name: getattr(self, f.name) for f in dataclasses.fields(self)}

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, GateHypothesis):
            return NotImplemented
        return bool(json_safe(self.to_dict()) == json_safe(other.to_dict()))

    __hash__ = None  # type: ignore[assignment]


_Count = Annotated[int, msgspec.Meta(ge=0, le=2**63 - 1)]


class _HypothesisShape(msgspec.Struct, forbid_unknown_fields=True):
    candidate_system: str
    baseline_system: str
    metric: str
    slice: str
    n_pairs: _Count
    candidate_only: _Count
    baseline_only: _Count
    method: str
    verdict: Literal["pass", "fail", "inconclusive"]
    proportion: bool
    n_needed: _Count | None = None
    baseline_mean: float | None = None
    candidate_mean: float | None = None
    difference: float | None = None
    low: float | None = None
    high: float | None = None
    level: float | None = None
    p_value: float | None = None
    p_value_holm: float | None = None
    variance: float | None = None
    mde: float | None = None
    power: float | None = None


class _Settings(msgspec.Struct, forbid_unknown_fields=True):
    metrics: list[str]
    margin: float
    alpha: float
    slice: Literal["dataset", "task", "none"]
    min_paired: float


class _GateShape(msgspec.Struct):
    verdict: Literal["pass", "fail", "inconclusive"]
    candidate: str
    baseline: str
    settings: _Settings
    candidate_only_systems: list[str]
    baseline_only_systems: list[str]
    hypotheses: list[_HypothesisShape]


def _nan(value: float | None) -> float:
    return math.nan if value is None else float(value)


@dataclass(frozen=True, eq=False)
class GateResult(Document):
    """A regression gate's result: the verdict and every hypothesis behind it.

    Attributes
    ----------
    verdict : {"pass", "fail", "inconclusive"}
        fail if a hypothesis fails, else inconclusive if one is, else pass.
    hypotheses : tuple of GateHypothesis
        One per (system pair, metric, slice), the family Holm adjusts over.
    candidate, baseline : str
        The inputs' names (their paths, or ``"candidate"``/``"baseline"`` for runs given
        as objects).
    settings : mapping
        ``metrics`` (list), ``margin`` (metric units), ``alpha``, ``slice``,
        ``min_paired``.
    candidate_only_systems, baseline_only_systems : tuple of str
        Systems of one run that paired with none of the other's (left out).

    Notes
    -----
    Serialised as ``{"schema": "kagreport.gate", "version": 1, ...}`` (JSON; NaN as
    null): :meth:`dumps`, :meth:`read`, :meth:`from_dict`. :meth:`write` writes the gate's
    folder (``gate.md``, ``gate.xml``, ``gate.json``, ``badge.svg``).
    """

    verdict: str
    hypotheses: tuple[GateHypothesis, ...]
    candidate: str
    baseline: str
    settings: Mapping[str, Any] = field(default_factory=dict)
    candidate_only_systems: tuple[str, ...] = ()
    baseline_only_systems: tuple[str, ...] = ()

    SCHEMA: ClassVar[str] = SCHEMA
    SCHEMA_VERSION: ClassVar[int] = VERSION
    VERSION_KEY: ClassVar[str] = "version"
    WRITES: ClassVar[tuple[str, ...]] = ("json",)
    NOUN: ClassVar[str] = "document"

    @property
    def margin(self) -> float:
        """The non-inferiority margin, in the metrics' units."""
        return float(self.settings["margin"])

    @property
    def alpha(self) -> float:
        """The family-wise error rate of the gate."""
        return float(self.settings["alpha"])

    def exit_code(self, inconclusive: str = "exit") -> int:
        """The command line's exit code: 0 pass, 1 fail, 3 inconclusive (``inconclusive``
        ``"pass"`` or ``"fail"`` counts it as 0 or 1).

        Raises
        ------
        InputError
            For another ``inconclusive`` policy.
        """
        if inconclusive not in INCONCLUSIVE_POLICIES:
            raise InputError(
                f"`inconclusive` must be one of {', '.join(INCONCLUSIVE_POLICIES)}, "
                f"not {inconclusive!r}"
            )
        if self.verdict == "inconclusive":
            return {"exit": 3, "pass": 0, "fail": 1}[inconclusive]
        return 0 if self.verdict == "pass" else 1

    # ------------------------------------------------------------------ views

    def markdown(self) -> str:
        """``gate.md``: the verdict first, a row per hypothesis, what was left out, what an
        inconclusive hypothesis would need; every name escaped for Markdown and HTML."""
        return _outputs.markdown(self)

    def junit(self) -> str:
        """``gate.xml``: JUnit XML, a ``testcase`` per hypothesis (``failure`` for fail,
        ``skipped`` for inconclusive)."""
        return _outputs.junit(self)

    def badge(self) -> str:
        """``badge.svg``: a static badge of the verdict (green, red or grey)."""
        return _outputs.badge(self)

    def text(self) -> str:
        """The terminal's short table, the verdict first."""
        return _outputs.text(self)

    def _repr_markdown_(self) -> str:
        return self.markdown()

    def _repr_html_(self) -> str:
        return str(_outputs.html(self))

    def __repr__(self) -> str:
        return (
            f"<GateResult {self.verdict}: {len(self.hypotheses)} hypotheses, "
            f"margin {self.margin:g}, alpha {self.alpha:g}>"
        )

    def to_frame(self) -> pd.DataFrame:
        """One row per hypothesis (the :class:`GateHypothesis` fields and ``system``).

        Raises
        ------
        MissingExtraError
            Without pandas (``pip install 'kagreport[notebook]'``).
        """
        from kagreport._optional import optional

        with optional("pandas"):
            import pandas as pd

        rows = [{"system": h.system, **h.to_dict()} for h in self.hypotheses]
        columns = ["system", *(f.name for f in dataclasses.fields(GateHypothesis))]
        return pd.DataFrame(rows, columns=columns)

    # ------------------------------------------------------------------ documents

    def to_dict(self) -> dict[str, Any]:
        """The gate as a ``kagreport.gate`` version-1 mapping (NaN kept)."""
        return {
            "schema": SCHEMA,
            "version": VERSION,
            "verdict": self.verdict,
            "candidate": self.candidate,
            "baseline": self.baseline,
            "settings": jsonable(self.settings),
            "candidate_only_systems": list(self.candidate_only_systems),
            "baseline_only_systems": list(self.baseline_only_systems),
            "hypotheses": [h.to_dict() for h in self.hypotheses],
        }

    @classmethod
    def _from_checked(cls, data: Mapping[str, Any]) -> GateResult:
        shape = convert(data, _GateShape, cls.__name__)
        hypotheses = []
        for h in shape.hypotheses:
            values: dict[str, Any] = msgspec.structs.asdict(h)
            values |= {name: _nan(values[name]) for name in _FLOATS}
            hypotheses.append(GateHypothesis(**values))
        return cls(
            verdict=shape.verdict,
            hypotheses=tuple(hypotheses),
            candidate=shape.candidate,
            baseline=shape.baseline,
            settings=msgspec.structs.asdict(shape.settings),
            candidate_only_systems=tuple(shape.candidate_only_systems),
            baseline_only_systems=tuple(shape.baseline_only_systems),
        )

    def write(self, path: str | os.PathLike[str], format: str | None = None) -> None:
        """Write the gate's folder ``path`` (made if missing): ``gate.md``, ``gate.xml``,
        ``gate.json`` and ``badge.svg``, each atomically (a reader sees the old file or the
        new one). ``format`` must be None or ``"folder"``.

        Raises
        ------
        OSError
            If the folder cannot be made or a file written (those written stay whole).
        """
        if format not in (None, "folder"):
            raise InputError(f"a GateResult is written as a folder, not {format!r}")
        _outputs.write_folder(self, path)
