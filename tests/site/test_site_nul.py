"""A NUL character in a question or a response never reaches a page raw (HTML forbids it:
browsers drop it and grep takes the page for binary; the adversarial trial of #14)."""

from __future__ import annotations

from pathlib import Path

from conftest import Tree, mcq
from kagreport.site import RunConfig, SiteConfig, build_site


def test_nul_is_shown_as_the_replacement_character(tree: Tree, tmp_path: Path) -> None:
    entry = mcq("A")
    entry["input"] = "before\u0000after"
    tree.question("ds", "q1", entry)
    tree.ok("ds", "q1", "alpha", "A\u0000")
    tree.ok("ds", "q1", "beta", "nul\u0000here")
    out = tmp_path / "site"
    build_site(
        SiteConfig(runs=(RunConfig("run", tree.datasets_path, tree.results, compare="all-pairs"),)),
        out,
    )
    pages = sorted(out.rglob("*.html"))
    assert len(pages) >= 3
    for page in pages:
        assert b"\x00" not in page.read_bytes(), page
    shown = "".join(p.read_text(encoding="utf-8") for p in pages)
    assert "nul\ufffdhere" in shown
