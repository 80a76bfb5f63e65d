"""The forest plot of a run's comparisons in the unit of the tables beside it (#26 item 9)."""

from __future__ import annotations

import pandas as pd

from kagreport.charts import forest_plot
from kagreport.charts._forest import forest_data
from kagreport.examples import fast_graphrag_2wiki
from kagreport.runs import Run, compare_setups


def test_a_metric_scored_0_or_1_is_drawn_in_points() -> None:
    """complete@8 is no proportion by name, but every item is 0 or 1: the site's table writes
    its differences in percentage points, so the forest's axis and tooltips do too."""
    evaluations = fast_graphrag_2wiki(ks=(8,))
    labels = list(evaluations)
    run = Run.from_evaluations(list(evaluations.values()), labels=labels)
    comparisons = compare_setups(run, "all-pairs", metrics=["complete@8"], n_resamples=200)
    # The items are 0/1 (checked here, not by kagreport).
    values = pd.Series(run.metrics["complete@8"]).dropna()
    assert set(values.unique()) <= {0.0, 1.0}
    spec = forest_plot(comparisons, metric="complete@8").to_dict()
    point = next(layer for layer in spec["layer"] if layer["mark"]["type"] == "point")
    assert "(pp" in point["encoding"]["x"]["title"]
    assert "labelExpr" in point["encoding"]["x"]["axis"]
    # The first pair's difference, computed from the run's rows by hand, in points.
    first = comparisons.comparisons[0]
    frame = pd.DataFrame(
        {
            "system": [run.systems[s] for s in run.system],
            "item": list(zip(run.dataset, run.question, strict=True)),
            "value": run.metrics["complete@8"],
        }
    )
    wide = frame.pivot_table(index="item", columns="system", values="value").dropna()
    difference = 100 * (wide[first.candidate] - wide[first.baseline]).mean()
    sign = "+" if difference > 0 else "\u2212"
    rows = [r for rows in spec["datasets"].values() for r in rows if "difference_text" in r]
    text = rows[0]["difference_text"]
    assert text.startswith(f"{sign}{abs(difference):.1f} pp [")
    data = forest_data(comparisons, metric="complete@8")
    assert data["proportion"].all()
