"""A SIMULATED run's chart titles say SIMULATED once (#26 item 9)."""

from __future__ import annotations

import json
import re
from pathlib import Path

from kagreport.kag import simulate_run
from kagreport.site import RunConfig, SiteConfig, build_site


def test_a_simulated_runs_chart_titles_say_simulated_once(tmp_path: Path) -> None:
    run = simulate_run(
        tmp_path / "sim", questions=6, datasets=2, seed=5, vector_dim=4, unparsable_files=0
    )
    config = SiteConfig(
        title="t", runs=(RunConfig("nu-sim", Path(run.datasets_path), Path(run.results_path)),)
    )
    out = tmp_path / "site"
    build_site(config, out, execute_notebooks=False)
    titles: list[str] = []
    for page in out.rglob("*.html"):
        for spec in re.findall(
            r'<script type="application/json"[^>]*>(.*?)</script>', page.read_text("utf-8"), re.S
        ):
            title = json.loads(spec).get("title") if spec.strip().startswith("{") else None
            text = title.get("text") if isinstance(title, dict) else title
            if text:
                titles.append(" ".join(text) if isinstance(text, list) else str(text))
    assert any("against" in t for t in titles), titles  # the comparison's forest is there
    for title in titles:
        assert title.startswith("SIMULATED: "), title
        assert title.count("SIMULATED") == 1, title
