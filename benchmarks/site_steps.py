"""Where the report site's build spends its time: seconds per step, and per SVG figure.

Usage (from the repository root, after ``benchmarks/bench_site.py`` has written its tree)::

    .venv/bin/python benchmarks/site_steps.py [TREE]

TREE defaults to ``benchmarks/_data/site-20x5x1000`` (SIMULATED data: no model was run).
The site is built once in this process, notebooks off, into ``benchmarks/_data/steps-out``;
each line gives the seconds from one progress message of :func:`kagreport.site.build_site`
to the next (the last step ends when the build returns, figures included). Then every SVG
figure of the site is exported again with vl-convert, timed one by one (after one untimed
export that starts vl-convert's runtime). Only uses ``build_site``'s progress callback, so it
runs against older versions of the package too (for a before/after comparison).
"""

from __future__ import annotations

import json
import re
import sys
import time
from pathlib import Path


def main(argv: list[str]) -> int:
    here = Path(__file__).resolve().parent
    tree = Path(argv[0]) if argv else here / "_data" / "site-20x5x1000"
    if not (tree / "datasets.json").is_file():
        sys.stderr.write(f"site_steps: no run at {tree}; run benchmarks/bench_site.py first\n")
        return 1
    start = time.perf_counter()
    from kagreport.site import RunConfig, SiteConfig, build_site

    steps: list[tuple[str, float]] = [("imports", time.perf_counter())]

    def progress(message: str) -> None:
        steps.append((message, time.perf_counter()))

    config = SiteConfig(
        title="steps",
        runs=(RunConfig("run", tree / "datasets.json", tree / "results"),),
    )
    out = here / "_data" / "steps-out"
    build_site(config, out, execute_notebooks=False, progress=progress)
    end = time.perf_counter()
    steps[0] = ("imports", start)
    for (message, at), following in zip(steps, [t for _, t in steps[1:]] + [end], strict=True):
        print(f"{following - at:7.2f} s  {message}")
    print(f"{end - start:7.2f} s  in all")

    import vl_convert as vlc

    from kagreport.charts._export import vegalite_version

    figures = sorted((out / "figures").glob("*.svg"))
    names = {f"chart-{p.stem}" for p in figures}
    specs = []
    for page in sorted(out.rglob("*.html")):
        pattern = r'<script type="application/json" class="vega-spec" data-chart="([^"]*)">(.*?)<'
        for found in re.finditer(pattern, page.read_text(encoding="utf-8"), re.S):
            if found.group(1) in names:
                names.discard(found.group(1))
                specs.append((found.group(1), json.loads(found.group(2))))
    if specs:
        vlc.vegalite_to_svg(specs[0][1], vl_version=vegalite_version())
    total = 0.0
    for name, spec in specs:
        begin = time.perf_counter()
        vlc.vegalite_to_svg(spec, vl_version=vegalite_version())
        total += time.perf_counter() - begin
        print(f"{time.perf_counter() - begin:7.3f} s  figure {name.removeprefix('chart-')}")
    print(f"{len(specs)} figure(s), {total:.2f} s of vl-convert in all")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
