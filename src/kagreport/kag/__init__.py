"""Reading what ``kag benchmark`` writes: the datasets file, result files, the result tree.

This layer reads and validates; it grades nothing (see :mod:`kagreport.grading`).
"""

from __future__ import annotations

import typing

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

# Loaded on first access (PEP 562): `kagreport stats` never simulates, and the simulator
# imports random, tempfile and shutil. Name -> the module that defines it.
_LAZY = {
    "SimulatedRun": "_simulate",
    "SimulatedSetup": "_simulate",
    "simulate_run": "_simulate",
}


def __getattr__(name: str) -> object:
    if name in _LAZY:
        import importlib

        value = getattr(importlib.import_module(f"kagreport.kag.{_LAZY[name]}"), name)
        globals()[name] = value  # later lookups skip this function
        return value
    raise AttributeError(f"module 'kagreport.kag' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY))
