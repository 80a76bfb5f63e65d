"""Per-setup and per-dataset metrics, computed as ``kag stats`` computes them.

Source: kag ``src/subcommand/stats/metric.rs``. Times are accumulated as
integer nanoseconds (Rust ``Duration``) and turned into seconds only on
the way out, with Rust's own conversions (see ``duration_div_secs``).
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from typing import Any

__all__ = ["Metrics", "RetrievalMetrics", "duration_div_secs", "duration_secs"]

_NANOS_PER_SEC = 1_000_000_000


def duration_secs(nanoseconds: int) -> float:
    """Rust ``Duration::as_secs_f64``: ``secs as f64 + nanos as f64 / 1e9``."""
    secs, nanos = divmod(nanoseconds, _NANOS_PER_SEC)
    return float(secs) + nanos / 1e9


def duration_div_secs(nanoseconds: int, divisor: int) -> float:
    """Rust ``Duration::div_f64(divisor).as_secs_f64()``, bit for bit.

    ``div_f64`` divides ``as_secs_f64()`` by the divisor in floating point,
    then ``Duration::from_secs_f64`` rounds the exact binary value of the
    quotient to the nearest nanosecond, ties to even (rust-lang/rust#96051,
    Rust >= 1.62).
    """
    quotient = duration_secs(nanoseconds) / float(divisor)
    exact = Fraction(quotient) * _NANOS_PER_SEC
    nanos = round(exact)  # Fraction rounds half to even
    return duration_secs(nanos)


def _ratio(numerator: int, denominator: int) -> float | None:
    return numerator / denominator if denominator else None


@dataclass(frozen=True, slots=True)
class RetrievalMetrics:
    """Retrieval totals of a group of KAG results.

    Attributes
    ----------
    time_ns : int
        Summed retrieval wall time, nanoseconds.
    vertices, relationships, properties : int
        Summed graph elements rendered into the contexts.
    samples : int
        Results that reported a retrieval (>= 1).
    """

    time_ns: int
    vertices: int
    relationships: int
    properties: int
    samples: int

    @property
    def time_secs(self) -> float:
        """Summed retrieval time, seconds."""
        return duration_secs(self.time_ns)

    @property
    def avg_time_secs(self) -> float | None:
        """Mean retrieval time per sample, seconds (Rust ``Duration::div_f64``)."""
        return duration_div_secs(self.time_ns, self.samples) if self.samples else None

    @property
    def avg_vertices(self) -> float | None:
        """Mean vertices per sample."""
        return _ratio(self.vertices, self.samples)

    @property
    def avg_relationships(self) -> float | None:
        """Mean relationships per sample."""
        return _ratio(self.relationships, self.samples)

    @property
    def avg_properties(self) -> float | None:
        """Mean properties per sample."""
        return _ratio(self.properties, self.samples)

    @property
    def avg_graph_elements(self) -> float | None:
        """Mean vertices + relationships + properties per sample."""
        return _ratio(self.vertices + self.relationships + self.properties, self.samples)

    def to_dict(self) -> dict[str, Any]:
        """The kag JSON object, keys in kag's order."""
        return {
            "time_secs": self.time_secs,
            "vertices": self.vertices,
            "relationships": self.relationships,
            "properties": self.properties,
            "samples": self.samples,
            "avg_time_secs": self.avg_time_secs,
            "avg_vertices": self.avg_vertices,
            "avg_relationships": self.avg_relationships,
            "avg_properties": self.avg_properties,
        }


@dataclass(frozen=True, slots=True)
class Metrics:
    """Outcome counts and timings of a group of graded results (a setup, or a setup on a dataset).

    Definitions (kag ``metric.rs``): ``total = correct + incorrect + errors``,
    ``parsed = correct + incorrect`` (the committed answers),
    ``accuracy = correct / total``, ``precision = correct / parsed``,
    ``coverage = parsed / total``; each is ``None`` when its denominator is 0.

    Attributes
    ----------
    correct, incorrect, errors : int
        Outcome counts.
    generation_ns : int
        Summed generation wall time over the successful results, nanoseconds.
    generation_samples : int
        Results that contributed a generation time (``correct + incorrect``).
    context_bytes : int
        Summed UTF-8 length of their prompts, bytes.
    retrieval : RetrievalMetrics or None
        ``None`` when no result reported a retrieval.
    """

    correct: int = 0
    incorrect: int = 0
    errors: int = 0
    generation_ns: int = 0
    generation_samples: int = 0
    context_bytes: int = 0
    retrieval: RetrievalMetrics | None = None

    @property
    def total(self) -> int:
        """Graded results: ``correct + incorrect + errors``."""
        return self.correct + self.incorrect + self.errors

    @property
    def parsed(self) -> int:
        """Committed answers: ``correct + incorrect``."""
        return self.correct + self.incorrect

    @property
    def accuracy(self) -> float | None:
        """``correct / total`` in [0, 1], or ``None`` when nothing was graded."""
        return _ratio(self.correct, self.total)

    @property
    def precision(self) -> float | None:
        """``correct / parsed`` in [0, 1], or ``None`` without committed answers."""
        return _ratio(self.correct, self.parsed)

    @property
    def coverage(self) -> float | None:
        """``parsed / total`` in [0, 1], or ``None`` when nothing was graded."""
        return _ratio(self.parsed, self.total)

    @property
    def total_generation_secs(self) -> float:
        """Summed generation time, seconds (0.0 without samples)."""
        return duration_secs(self.generation_ns)

    @property
    def avg_generation_secs(self) -> float | None:
        """Mean generation time per sample, seconds (Rust ``Duration::div_f64``)."""
        if not self.generation_samples:
            return None
        return duration_div_secs(self.generation_ns, self.generation_samples)

    @property
    def avg_context_length(self) -> float | None:
        """Mean prompt length, bytes; ``None`` without samples or when every prompt is empty."""
        if not self.generation_samples or not self.context_bytes:
            return None
        return self.context_bytes / self.generation_samples

    def to_dict(self) -> dict[str, Any]:
        """The kag JSON object, keys in kag's order."""
        return {
            "total": self.total,
            "correct": self.correct,
            "incorrect": self.incorrect,
            "errors": self.errors,
            "parsed": self.parsed,
            "accuracy": self.accuracy,
            "precision": self.precision,
            "coverage": self.coverage,
            "avg_generation_secs": self.avg_generation_secs,
            "total_generation_secs": self.total_generation_secs,
            "avg_context_length": self.avg_context_length,
            "retrieval": None if self.retrieval is None else self.retrieval.to_dict(),
        }
