"""Build time, page sizes and render time of the static report site on a large SIMULATED run.

Usage (from the repository root)::

    .venv/bin/python benchmarks/bench_site.py                  # 20 setups x 5 datasets x 1,000
    .venv/bin/python benchmarks/bench_site.py --no-notebooks   # skip the notebook measurement
    .venv/bin/python benchmarks/bench_site.py --repeats 3      # more timed repetitions

The run is generated once with :func:`kagreport.kag.simulate_run` (20 setups, every other
one a KAG setup with 384-float embedding vectors; 5 datasets of 1,000 questions, plus the
simulator's small unlabelled and free-form datasets) under ``benchmarks/_data/site-20x5x1000``
(git-ignored) and reused while its marker file matches. No model was run.

In one run it measures, on the same tree:

* **grading**: ``kagreport stats -d ... -r ... --format json`` in a child process;
* **build**: :func:`kagreport.site.build_site` of that run, notebooks off, in a child
  process (imports included, as for the CLI); the site goes to ``benchmarks/_data/site-out``;
* **notebook cost** (unless ``--no-notebooks``): a site holding only the repository's
  notebooks, executed, built in a child process; reported apart, as the fixed cost the
  build target allows on top of 3x grading;
* **sizes**: ``index.html`` with what it loads except ``assets/vega.js`` (the one shared
  script), and the largest page of the site;
* **render**: headless Chromium (``/usr/bin/chromium`` or ``$KAGREPORT_CHROMIUM``), every
  request that is not ``file://`` aborted, a fresh page per repetition; time from
  navigation start to the ``load`` event, and to every ``div.chart`` holding drawn SVG marks
  (``performance.now()`` once they are drawn), for the index, the largest setup page and the
  largest page; and, as the browser's floor, an empty page and a page that only loads
  ``assets/vega.js`` (not judged).

Each timing is the median of ``--repeats`` runs; grading is run once untimed first, which
warms the page cache for it and for the builds after it. Targets, each printed PASS or MISS:
build <= 3x grading; index < 1 MB; every rendered page < 2 s (median). The exit status is 0
when every target is met, else 1.
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

__all__ = ["main"]

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
DATA = HERE / "_data"
SETUPS = 20
DATASETS = 5
QUESTIONS = 1000
VECTOR_DIM = 384
SEED = 0
MARKER = ".bench-site-tree.json"
MARKER_VERSION = 1

TARGET_BUILD_RATIO = 3.0  # build / grading, at most (notebooks excluded)
TARGET_INDEX_BYTES = 1_000_000  # index page without assets/vega.js, below
TARGET_RENDER_SECS = 2.0  # navigation start to charts drawn, below

CHROMIUM = os.environ.get("KAGREPORT_CHROMIUM", "/usr/bin/chromium")
LAUNCH_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]

# True once every div.chart holds drawn marks; records when (performance.now(), ms since
# navigation start) in the page itself, so the Playwright round trip is not counted.
CHARTS_DRAWN_JS = """
() => {
  const drawn = Array.from(document.querySelectorAll('div.chart')).every((chart) => {
    const svg = chart.querySelector('svg');
    if (!svg) return false;
    return Array.from(svg.querySelectorAll('g[class*="mark-"]'))
      .some((g) => !/role-(axis|legend|title)/.test(g.getAttribute('class') || '')
        && g.childElementCount > 0);
  });
  if (drawn && window.__benchDrawnAt === undefined) window.__benchDrawnAt = performance.now();
  return drawn;
}
"""


# --------------------------------------------------------------------------- the tree


def _setups() -> list[Any]:
    from kagreport.kag import SimulatedSetup

    return [
        SimulatedSetup(
            f"setup-{i:02d}",
            f"sim-model-{i % 5}",
            skill=0.45 + 0.02 * i,
            error_rate=0.01 + 0.002 * (i % 5),
            kag=i % 2 == 0,
            mean_generation_secs=0.8 + 0.15 * i,
        )
        for i in range(SETUPS)
    ]


def _params() -> dict[str, Any]:
    return {
        "marker_version": MARKER_VERSION,
        "setups": SETUPS,
        "datasets": DATASETS,
        "questions": QUESTIONS,
        "vector_dim": VECTOR_DIM,
        "seed": SEED,
    }


def ensure_tree(root: Path) -> tuple[Any, bool, float]:
    """The simulated run under ``root``, generated unless its marker matches."""
    from kagreport.kag import SimulatedRun, simulate_run

    marker = root / MARKER
    params = _params()
    try:
        if json.loads(marker.read_text(encoding="utf-8")) == params:
            run = SimulatedRun(
                str(root), str(root / "datasets.json"), str(root / "results"), files=-1
            )
            return run, False, 0.0
    except (OSError, ValueError):
        pass
    print(f"generating the simulated run under {_rel(root)} (once) ...", flush=True)
    marker.unlink(missing_ok=True)
    start = time.perf_counter()
    run = simulate_run(
        root,
        setups=_setups(),
        questions=QUESTIONS,
        datasets=DATASETS,
        vector_dim=VECTOR_DIM,
        seed=SEED,
    )
    secs = time.perf_counter() - start
    marker.write_text(json.dumps(params), encoding="utf-8")
    return run, True, secs


# --------------------------------------------------------------------------- children


def child_build(config_json: str, out: str, execute_notebooks: bool) -> int:
    """Build a site from a JSON description (runs and notebooks); print nothing."""
    from kagreport.site import RunConfig, SiteConfig, build_site

    spec = json.loads(config_json)
    config = SiteConfig(
        title=spec["title"],
        runs=tuple(
            RunConfig(name=r["name"], datasets=Path(r["datasets"]), results=Path(r["results"]))
            for r in spec["runs"]
        ),
        notebooks=tuple(Path(n) for n in spec["notebooks"]),
    )
    build_site(config, out, execute_notebooks=execute_notebooks)
    return 0


def _timed(command: Sequence[str]) -> float:
    """Wall time of one child process; its output is discarded, a failure stops the run."""
    start = time.perf_counter()
    done = subprocess.run(list(command), capture_output=True, text=True, check=False)
    secs = time.perf_counter() - start
    if done.returncode != 0:
        raise SystemExit(
            f"bench_site: {' '.join(command)} failed ({done.returncode}):\n{done.stderr[-4000:]}"
        )
    return secs


def _median(command: Sequence[str], repeats: int, warm: bool = True) -> tuple[float, float]:
    """(median, min) wall time over ``repeats`` runs, after one untimed run if ``warm``."""
    if warm:
        _timed(command)
    times = [_timed(command) for _ in range(repeats)]
    return statistics.median(times), min(times)


def _build_command(spec: dict[str, Any], out: Path, notebooks: bool) -> list[str]:
    return [
        sys.executable,
        str(Path(__file__).resolve()),
        "--build-child",
        json.dumps(spec),
        str(out),
        "1" if notebooks else "0",
    ]


# --------------------------------------------------------------------------- sizes


def _page_assets(page: Path) -> list[Path]:
    """Local files a page loads (script src, link href, img src), resolved."""
    import re

    html = page.read_text(encoding="utf-8", errors="replace")
    found = []
    for tag in re.finditer(r"<(script|link|img)\b[^>]*>", html, re.I):
        attr = re.search(r"\b(?:src|href)\s*=\s*[\"']([^\"']+)[\"']", tag.group(0), re.I)
        if attr is None or re.match(r"[a-z][a-z0-9+.-]*:", attr.group(1), re.I):
            continue
        target = (page.parent / attr.group(1).split("#")[0].split("?")[0]).resolve()
        if target.is_file():
            found.append(target)
    return found


def sizes(site: Path) -> dict[str, Any]:
    index = site / "index.html"
    vega = (site / "assets" / "vega.js").resolve()
    assets = [a for a in dict.fromkeys(_page_assets(index)) if a != vega]
    pages = sorted(site.rglob("*.html"), key=lambda p: (-p.stat().st_size, str(p)))
    setups = [p for p in pages if p.parent.name == "setups"]
    return {
        "index": index.stat().st_size,
        "index_with_assets": index.stat().st_size + sum(a.stat().st_size for a in assets),
        "index_assets": [a.relative_to(site.resolve()).as_posix() for a in assets],
        "vega": vega.stat().st_size if vega.is_file() else 0,
        "largest": pages[0],
        "largest_setup": setups[0] if setups else None,
        "pages": len(pages),
        "total": sum(p.stat().st_size for p in site.rglob("*") if p.is_file()),
    }


# --------------------------------------------------------------------------- render


def render_times(pages: Sequence[Path], repeats: int) -> dict[Path, dict[str, float]]:
    """Per page: median seconds from navigation start to ``load`` and to charts drawn."""
    from playwright.sync_api import Route, sync_playwright

    blocked: list[str] = []
    errors: list[str] = []

    def route(r: Route) -> None:
        if r.request.url.startswith("file:"):
            r.continue_()
        else:
            blocked.append(r.request.url)
            r.abort()

    def recorder(name: str) -> tuple[Any, Any]:
        def console(message: Any) -> None:
            if message.type == "error":
                errors.append(f"{name}: {message.text}")

        def page_error(error: Any) -> None:
            errors.append(f"{name}: {error}")

        return console, page_error

    results: dict[Path, dict[str, float]] = {}
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=LAUNCH_ARGS)
        context = browser.new_context(viewport={"width": 1280, "height": 900})
        for path in pages:
            loads: list[float] = []
            dcls: list[float] = []
            drawn: list[float] = []
            for attempt in range(repeats + 1):
                page = context.new_page()
                page.route("**/*", route)
                on_console, on_error = recorder(path.name)
                page.on("console", on_console)
                page.on("pageerror", on_error)
                page.goto(path.resolve().as_uri(), wait_until="load", timeout=120_000)
                page.wait_for_function(CHARTS_DRAWN_JS, polling="raf", timeout=120_000)
                charts_ms = float(page.evaluate("() => window.__benchDrawnAt"))
                timing = page.evaluate(
                    "() => { const n = performance.getEntriesByType('navigation')[0];"
                    " return [n.domContentLoadedEventEnd, n.loadEventEnd]; }"
                )
                dcl_ms, load_ms = float(timing[0]), float(timing[1])
                page.close()
                if attempt:  # the first is the untimed warm-up
                    loads.append(load_ms / 1000)
                    dcls.append(dcl_ms / 1000)
                    drawn.append(max(charts_ms, load_ms) / 1000)
            results[path] = {
                "dcl": statistics.median(dcls),
                "load": statistics.median(loads),
                "drawn": statistics.median(drawn),
                "drawn_max": max(drawn),
            }
        context.close()
        browser.close()
    if blocked or errors:
        print("  browser problems:")
        for line in [f"blocked {u}" for u in blocked] + errors:
            print(f"    {line[:300]}")
    return results


# --------------------------------------------------------------------------- main


def _rel(path: Path | str) -> str:
    try:
        return os.path.relpath(path)
    except ValueError:
        return str(path)


def _verdict(ok: bool) -> str:
    return "PASS" if ok else "MISS"


def _mb(size: int) -> str:
    return f"{size / 1e6:.2f} MB"


def _parse_args(argv: Sequence[str]) -> Any:
    import argparse

    parser = argparse.ArgumentParser(
        description="Time the static site build against kagreport stats, and Chromium's "
        "rendering of its pages, on a simulated run of 20 setups x 5 datasets x 1,000 questions.",
    )
    parser.add_argument("--data", metavar="DIR", help="the simulated run (default: under _data)")
    parser.add_argument("--out", metavar="DIR", help="the built site (default: _data/site-out)")
    parser.add_argument("--repeats", type=int, default=1, metavar="K", help="timed runs (1)")
    parser.add_argument(
        "--no-notebooks", action="store_true", help="skip the notebook execution measurement"
    )
    return parser.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> int:
    """Run the benchmark; return 0 when every target is met, 1 otherwise."""
    args_list = sys.argv[1:] if argv is None else list(argv)
    if len(args_list) == 4 and args_list[0] == "--build-child":
        return child_build(args_list[1], args_list[2], args_list[3] == "1")
    args = _parse_args(args_list)
    repeats = max(1, int(args.repeats))
    tree_root = Path(args.data) if args.data else DATA / f"site-{SETUPS}x{DATASETS}x{QUESTIONS}"
    out = Path(args.out) if args.out else DATA / "site-out"
    DATA.mkdir(parents=True, exist_ok=True)

    print("kagreport site benchmark (SIMULATED data: no model was run)")
    load1, load5, _load15 = os.getloadavg()
    print(f"machine: {os.cpu_count()} CPUs, load average {load1:.2f} (1 min), {load5:.2f} (5 min)")
    run, generated, secs = ensure_tree(tree_root)
    how = f"generated in {secs:.1f} s" if generated else "reused: its marker matched"
    print(
        f"run: {_rel(tree_root)} ({how}): {SETUPS} setups x {DATASETS} datasets x "
        f"{QUESTIONS:,} questions, every other setup KAG ({VECTOR_DIM}-float vectors)"
    )

    kagreport = Path(sys.executable).with_name("kagreport")
    stats_cmd = [
        str(kagreport),
        "stats",
        "-q",
        "-d",
        run.datasets_path,
        "-r",
        run.results_path,
        "--format",
        "json",
    ]
    spec = {
        "title": "bench_site",
        "runs": [
            {"name": "Simulated run", "datasets": run.datasets_path, "results": run.results_path}
        ],
        "notebooks": [],
    }
    print(f"\ntimings (median of {repeats}; min in brackets)")
    grade_med, grade_min = _median(stats_cmd, repeats)
    print(f"  kagreport stats (grading):      {grade_med:8.2f} s  [{grade_min:.2f}]")
    build_med, build_min = _median(_build_command(spec, out, False), repeats, warm=False)
    print(f"  site build, notebooks off:      {build_med:8.2f} s  [{build_min:.2f}]")
    notebook_secs: float | None = None
    if not args.no_notebooks:
        notebooks = sorted(str(p) for p in (ROOT / "notebooks").glob("*.ipynb"))
        nb_spec = {"title": "bench_site notebooks", "runs": [], "notebooks": notebooks}
        nb_out = DATA / "site-out-notebooks"
        notebook_secs = _timed(_build_command(nb_spec, nb_out, True))
        print(
            f"  notebooks only, executed:       {notebook_secs:8.2f} s  "
            f"({len(notebooks)} notebooks; the fixed cost, apart)"
        )
    ratio = build_med / grade_med

    size = sizes(out)
    print(f"\nsite: {_rel(out)}: {size['pages']} pages, {_mb(size['total'])} in all")
    print(
        f"  index.html:                     {_mb(size['index'])}; with what it loads except "
        f"assets/vega.js ({', '.join(size['index_assets']) or 'nothing'}): "
        f"{_mb(size['index_with_assets'])}"
    )
    print(f"  assets/vega.js (shared, once):  {_mb(size['vega'])}")
    largest: Path = size["largest"]
    print(f"  largest page:                   {_mb(largest.stat().st_size)} ({_rel(largest)})")

    floor = DATA / "site-floor"
    floor.mkdir(exist_ok=True)
    (floor / "empty.html").write_text("<!doctype html><title>empty</title><p>x</p>\n")
    vega = Path(os.path.relpath(out / "assets" / "vega.js", floor)).as_posix()
    (floor / "vega-only.html").write_text(
        f'<!doctype html><title>vega only</title><script src="{vega}"></script><p>x</p>\n'
    )
    to_render = [floor / "empty.html", floor / "vega-only.html", out / "index.html"]
    for extra in (size["largest_setup"], largest):
        if extra is not None and extra not in to_render:
            to_render.append(extra)
    print(f"\nrender in headless Chromium (median of {repeats}, network blocked)")
    renders = render_times(to_render, repeats)
    for path, times in renders.items():
        print(
            f"  {_rel(path)}{'  (floor)' if path.parent == floor else ''}\n"
            f"    DOMContentLoaded {times['dcl']:6.3f} s   load {times['load']:6.3f} s"
            f"   charts drawn {times['drawn']:6.3f} s (max {times['drawn_max']:.3f})"
        )
    judged = {p: t for p, t in renders.items() if p.parent != floor}
    slowest = max(t["drawn"] for t in judged.values())
    slowest_max = max(t["drawn_max"] for t in judged.values())

    checks = [
        (
            f"build / grading: {ratio:.2f}x ({build_med:.2f} s / {grade_med:.2f} s)",
            f"<= {TARGET_BUILD_RATIO:.0f}x",
            ratio <= TARGET_BUILD_RATIO,
        ),
        (
            f"index page: {_mb(size['index_with_assets'])}",
            f"< {_mb(TARGET_INDEX_BYTES)}",
            size["index_with_assets"] < TARGET_INDEX_BYTES,
        ),
        (
            f"slowest page rendered: {slowest:.3f} s median ({slowest_max:.3f} s max)",
            f"< {TARGET_RENDER_SECS:.0f} s",
            slowest < TARGET_RENDER_SECS,
        ),
    ]
    print("\ntargets")
    for text, target, ok in checks:
        print(f"  {text:<56} {target:<12} {_verdict(ok)}")
    if notebook_secs is not None:
        allowed = TARGET_BUILD_RATIO * grade_med + notebook_secs
        print(
            f"  (with the notebooks the build may take {allowed:.1f} s = 3 x {grade_med:.2f} s "
            f"+ {notebook_secs:.1f} s of notebook execution)"
        )
    return 0 if all(ok for _text, _target, ok in checks) else 1


if __name__ == "__main__":
    sys.exit(main())
