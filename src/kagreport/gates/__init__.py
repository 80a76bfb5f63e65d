"""Regression gates for CI: is a candidate run no worse than a baseline run?

:func:`gate` pairs the systems and items of two runs (any format
:func:`kagreport.sources.read_run` reads), tests each (system pair, metric, slice) for
non-inferiority within a margin by the paired sign-flip test, Holm-adjusted over all of
them, and returns a :class:`GateResult`: pass, fail or inconclusive, with the smallest
change the benchmark could detect and the items it would need. The result writes
``gate.md`` (a CI job summary), ``gate.xml`` (JUnit), ``gate.json`` (a versioned document)
and ``badge.svg``; ``kagreport gate`` is its command line.

This layer sits after :mod:`kagreport.sources` (it reads runs) and before the views; only
the command line and the package root import it.
"""

from __future__ import annotations

from kagreport.gates._gate import gate
from kagreport.gates._hypothesis import GateHypothesis
from kagreport.gates._result import GateResult

__all__ = [
    "GateHypothesis",
    "GateResult",
    "gate",
]
