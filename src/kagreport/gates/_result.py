"""The result of a gate: :class:`GateResult`, one :class:`GateHypothesis` per (system
pair, metric, slice), versioned as ``{"schema": "kagreport.gate", "version": 2, ...}``.

Version 2 added ``settings.inconclusive`` (the policy) and each hypothesis's ``reason``;
version 1 documents read as policy ``"exit"`` and no reason."""

from __future__ import annotations

import dataclasses
import math
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Annotated, Any, ClassVar, Literal

import msgspec

from kagreport._atomic import write_atomic_set
from kagreport._document import Document, convert, jsonable
from kagreport._errors import InputError
from kagreport._format import plural
from kagreport.gates import _outputs
from kagreport.gates._hypothesis import FLOATS, GateHypothesis

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["INCONCLUSIVE_POLICIES", "SCHEMA", "VERDICTS", "VERSION", "GateResult"]

SCHEMA = "kagreport.gate"
VERSION = 2
#: A hypothesis's and a gate's verdicts.
VERDICTS = ("pass", "fail", "inconclusive")
#: What ``exit_code`` does with an inconclusive gate: exit 3, or count it as pass or fail.
INCONCLUSIVE_POLICIES = ("exit", "pass", "fail")

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
    reason: str = ""  # absent from version 1


class _Settings(msgspec.Struct, forbid_unknown_fields=True):
    metrics: list[str]
    margin: float
    alpha: float
    slice: Literal["dataset", "task", "none"]
    min_paired: float
    inconclusive: Literal["exit", "pass", "fail"] = "exit"  # absent from version 1


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
        ``min_paired``, ``inconclusive`` (the policy: ``"exit"``, ``"pass"`` or
        ``"fail"``).
    candidate_only_systems, baseline_only_systems : tuple of str
        Systems of one run that paired with none of the other's (left out).

    Notes
    -----
    Serialised as ``{"schema": "kagreport.gate", "version": 2, ...}`` (JSON; NaN as
    null; version 1 is read too): :meth:`dumps`, :meth:`read`, :meth:`from_dict`.
    :meth:`write` writes the gate's folder (``gate.md``, ``gate.xml``, ``gate.json``,
    ``badge.svg``).
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
    READABLE_VERSIONS: ClassVar[tuple[int, ...]] = (1, VERSION)
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

    @property
    def inconclusive(self) -> str:
        """The policy for an inconclusive gate: ``"exit"`` (3), ``"pass"`` or ``"fail"``."""
        return str(self.settings.get("inconclusive", "exit"))

    def exit_code(self, inconclusive: str | None = None) -> int:
        """The command line's exit code: 0 pass, 1 fail, 3 inconclusive (``inconclusive``
        ``"pass"`` or ``"fail"`` counts it as 0 or 1); ``inconclusive`` defaults to the
        gate's policy, :attr:`inconclusive`.

        Raises
        ------
        InputError
            For another ``inconclusive`` policy.
        """
        if inconclusive is None:
            inconclusive = self.inconclusive
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
            f"<GateResult {self.verdict}: "
            f"{plural(len(self.hypotheses), 'hypothesis', 'hypotheses')}, "
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
        """The gate as a ``kagreport.gate`` version-2 mapping (NaN kept)."""
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
            values |= {name: _nan(values[name]) for name in FLOATS}
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
        ``gate.json`` and ``badge.svg``, as one set (a reader, or a Ctrl-C, sees the old
        four or the new four, never a mix: written beside them, renamed into place together).
        ``format`` must be None or ``"folder"``.

        Raises
        ------
        InputError
            If ``path`` is a file, or ``format`` another format.
        OSError
            If the folder cannot be made or a file written (those written stay whole).
        """
        if format not in (None, "folder"):
            raise InputError(f"a GateResult is written as a folder, not {format!r}")
        if os.path.lexists(path) and not os.path.isdir(path):
            raise InputError(f"{os.fsdecode(path)} is a file, not a folder", path=path)
        os.makedirs(path, exist_ok=True)
        contents = (self.markdown(), self.junit(), self.dumps(), self.badge())
        write_atomic_set(path, dict(zip(_outputs.FILES, contents, strict=True)))
