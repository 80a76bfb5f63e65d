"""The example runs shipped with kagreport (package data).

- :func:`mmlu_pro_philosophy`: REAL data. 499 philosophy questions of MMLU-Pro
  and the predictions of 6 models published by the MMLU-Pro authors
  (TIGER-AI-Lab/MMLU-Pro; dataset MIT, repository Apache-2.0), converted to a
  kag datasets file and result tree by ``examples/build_mmlu_pro_philosophy.py``.
- :func:`kagreport.kag.simulate_run`: SIMULATED data, generated on demand.
"""

from __future__ import annotations

from dataclasses import dataclass
from importlib.resources import files
from pathlib import Path

__all__ = ["ExampleRun", "mmlu_pro_philosophy"]


@dataclass(frozen=True, slots=True)
class ExampleRun:
    """A bundled kag run.

    Attributes
    ----------
    name : str
        Display name.
    datasets : Path
        The datasets file.
    results : Path
        The results root.
    attribution : str
        Source and licence; show it wherever the data is shown.
    """

    name: str
    datasets: Path
    results: Path
    attribution: str


MMLU_PRO_ATTRIBUTION = (
    "MMLU-Pro philosophy: 499 questions and the predictions of 6 models (5-shot CoT runs "
    "published by the MMLU-Pro authors), TIGER-AI-Lab/MMLU-Pro, "
    "eval_results/model_outputs_*_5shots.zip; dataset MIT, repository Apache-2.0."
)


def mmlu_pro_philosophy() -> ExampleRun:
    """The real MMLU-Pro philosophy run, as a kag datasets file and result tree.

    One setup per model; option keys ``a``, ``b``, ...; a prediction the
    authors could not parse is an ``ok`` record whose result is empty (graded
    incorrect); a question a model has no output for has no result file.

    Raises
    ------
    FileNotFoundError
        If the package data is missing (a broken install).
    """
    root = Path(str(files("kagreport.examples"))) / "mmlu-pro-philosophy"
    datasets = root / "datasets.json"
    if not datasets.is_file():
        raise FileNotFoundError(f"the bundled example is missing: {datasets}")
    return ExampleRun("MMLU-Pro philosophy", datasets, root / "results", MMLU_PRO_ATTRIBUTION)
