"""Reading what ``kag benchmark`` writes: the datasets file, result files, the result tree.

This layer reads and validates; it grades nothing (see :mod:`kagreport.grading`).
"""

from __future__ import annotations

from kagreport.kag._datasets import MCQ, Datasets, Question, load_datasets
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
