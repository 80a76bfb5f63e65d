"""The bundled notebooks run top to bottom on a real Jupyter kernel, and are stored clean."""

from __future__ import annotations

from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient

from kagreport.site._notebooks import poll_in_slices

NOTEBOOKS = sorted((Path(__file__).resolve().parents[1] / "notebooks").glob("*.ipynb"))


def test_there_are_five_notebooks() -> None:
    assert [p.name[:2] for p in NOTEBOOKS] == ["01", "02", "03", "04", "05"]


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_stored_without_outputs(path: Path) -> None:
    notebook = nbformat.read(path, as_version=4)
    for cell in notebook.cells:
        if cell.cell_type == "code":
            assert cell.outputs == [], f"{path.name}: a cell has stored outputs"
            assert cell.execution_count is None


@pytest.mark.notebook
@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_runs_on_a_real_kernel(path: Path, tmp_path: Path) -> None:
    notebook = nbformat.read(path, as_version=4)
    client = NotebookClient(
        notebook,
        timeout=300,
        kernel_name="python3",
        resources={"metadata": {"path": str(tmp_path)}},
        allow_errors=False,
    )
    # As the site runs notebooks: no wait for a reply outlasts it (nbclient issue 312).
    client.on_notebook_start = lambda notebook: poll_in_slices(client.kc)
    client.execute()  # raises CellExecutionError on the first failing cell
    outputs = [o for cell in notebook.cells if cell.cell_type == "code" for o in cell.outputs]
    assert outputs, "no cell produced output"
    assert not [o for o in outputs if o.output_type == "error"]
    # Displays carry HTML (tables) or Vega-Lite (charts), not only plain text.
    kinds = {key for o in outputs for key in o.get("data", {})}
    assert "text/html" in kinds


def test_the_notebooks_show_the_run_model() -> None:
    code = "\n".join(
        cell.source
        for path in NOTEBOOKS
        for cell in nbformat.read(path, as_version=4).cells
        if cell.cell_type == "code"
    )
    for name in ("Run.from_stats(", "Run.from_evaluations(", "leaderboard(", "compare_setups("):
        assert name in code
    for name in ("cost_frontier(", "StatsView(run)", "ComparisonView(run", "ItemBrowser(run)"):
        assert name in code
