"""Reading what ``kag benchmark`` writes: the datasets file, result files, the result tree.

This layer reads and validates; it grades nothing (see :mod:`kagreport.grading`).
"""

from __future__ import annotations

import typing

from kagreport._lazy import lazy_attributes as _lazy_attributes
from kagreport.kag._datasets import MCQ, Datasets, Question, load_datasets

if typing.TYPE_CHECKING:
    from kagreport.kag._simulate import SimulatedRun, SimulatedSetup, simulate_run

__all__ = [
    "MCQ",
    "Datasets",
    "Question",
    "SimulatedRun",
    "SimulatedSetup",
    "load_datasets",
    "simulate_run",
]

# Loaded on first access: `kagreport stats` never simulates, and the simulator imports
# random, tempfile and shutil. Name -> the module that defines it.
_LAZY = {
    "SimulatedRun": "._simulate",
    "SimulatedSetup": "._simulate",
    "simulate_run": "._simulate",
}
__getattr__, __dir__ = _lazy_attributes(__name__, _LAZY, globals())
