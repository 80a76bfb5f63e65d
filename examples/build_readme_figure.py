"""Draw the README's picture, ``docs/images/accuracy-cost.svg``: accuracy against mean
retrieval time on the SIMULATED kag run the report site shows (``kagreport simulate``, seed 0,
3 datasets of 40 questions), drawn by :func:`kagreport.charts.accuracy_cost_chart`.

The chart's own title says SIMULATED; the last subtitle lines say where the data come from, so
the picture cannot be taken for a measurement wherever it is shown. The output is the same
bytes for the same kagreport and vl-convert.

Usage: ``python examples/build_readme_figure.py [OUT]`` (``make figures`` runs it).
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

from kagreport import grade
from kagreport.charts import accuracy_cost_chart, save_figure
from kagreport.kag import simulate_run

OUT = Path(__file__).resolve().parents[1] / "docs" / "images" / "accuracy-cost.svg"
SOURCE = ("Data: SIMULATED by kagreport simulate", "(seed 0); no model was run.")


def main(out: Path = OUT) -> Path:
    with tempfile.TemporaryDirectory() as folder:
        run = simulate_run(folder, seed=0)
        report = grade(run.datasets_path, run.results_path)
    chart = accuracy_cost_chart(report, cost="retrieval")
    spec = chart.to_dict()
    title = spec["title"]
    assert title["text"][0].startswith("SIMULATED"), title  # the chart labels it itself
    title["subtitle"] = [*title["subtitle"], *SOURCE]
    return save_figure(spec, out)


if __name__ == "__main__":
    print(main(Path(sys.argv[1]) if len(sys.argv) > 1 else OUT))
