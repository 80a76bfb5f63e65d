"""Memory a kag run (``kagreport.runs.Run``) holds, on a large SIMULATED kag result tree.

Usage (from the repository root)::

    .venv/bin/python benchmarks/bench_run_memory.py                # 100,000 files, kept
    .venv/bin/python benchmarks/bench_run_memory.py --files 20000

The tree is written by :func:`kagreport.kag.write_simulated_run` (every default setup,
16-float embedding vectors: the vectors are never held by a run, so their length only
costs disk) to ``benchmarks/_data/run-memory-<N>`` (git-ignored) and reused when it is
there. In one process, with :mod:`tracemalloc` tracing Python and NumPy allocations:

* the datasets file (``load_datasets``), which a kag run keeps to look its item texts up;
* ``grade()`` (``workers=1``: every allocation in this process) to a ``StatsReport``;
* ``Run.from_stats(report)``: what building the run allocates;
* what the run alone keeps once the report is dropped (datasets file included, and
  without it);
* a page of 50 responses (read from their result files), then every response read once:
  what the run keeps afterwards (its cache is bounded), against the responses' own size;
* a run of 1,000,000 rows with the same columns, built without a tree (its texts lazy),
  and a selection of half of it.

Numbers are bytes as tracemalloc counts them (not RSS), printed as a table.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import sys
import time
import tracemalloc
from pathlib import Path

import numpy as np

from kagreport.grading import grade
from kagreport.kag import load_datasets
from kagreport.kag._simulate import DEFAULT_SETUPS, write_simulated_run
from kagreport.runs import Run
from kagreport.runs._texts import LazyTexts

HERE = Path(__file__).parent


def _tree(files: int, data: Path) -> tuple[str, str]:
    """The simulated tree of about ``files`` result files (written once, then reused)."""
    per_question = len(DEFAULT_SETUPS)
    datasets = 6
    questions = max(1, files // (datasets * per_question))
    root = data / f"run-memory-{files}"
    marker = root / "bench-params.json"
    params = {"questions": questions, "datasets": datasets, "vector_dim": 16, "seed": 0}
    if marker.is_file() and json.loads(marker.read_text()) == params:
        return str(root / "datasets.json"), str(root / "results")
    data.mkdir(parents=True, exist_ok=True)
    started = time.perf_counter()
    written = write_simulated_run(root, **params)
    marker.write_text(json.dumps(params))
    print(f"wrote {written.files:,} result files in {time.perf_counter() - started:.0f} s")
    return written.datasets_path, written.results_path


def _now() -> int:
    gc.collect()
    return tracemalloc.get_traced_memory()[0]


def _synthetic(rows: int, systems: int = 4) -> Run:
    """A run of ``rows`` rows shaped like a kag run (one metric, six costs, six lazy text
    columns reading nothing)."""
    per = rows // systems

    def load(row: int) -> str:
        return f"text {row}"

    n = per * systems
    return Run(
        kind="answers",
        systems=tuple(f"s{k}" for k in range(systems)),
        dataset_names=("d",),
        question_names=tuple(f"q{k}" for k in range(per)),
        system=np.repeat(np.arange(systems, dtype=np.int32), per),
        dataset=np.zeros(n, dtype=np.int32),
        question=np.tile(np.arange(per, dtype=np.int32), systems),
        outcome=np.zeros(n, dtype=np.int8),
        metrics={"correct": np.ones(n)},
        costs={name: np.ones(n) for name in ("a", "b", "c", "d", "e", "f")},
        question_texts=LazyTexts(load, n),
        options=LazyTexts(lambda row: None, n),
        responses=LazyTexts(load, n),
        references=LazyTexts(load, n),
        explanations=LazyTexts(load, n),
        errors=LazyTexts(load, n),
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", type=int, default=100_000)
    parser.add_argument("--data", type=Path, default=HERE / "_data")
    args = parser.parse_args()
    datasets_path, results = _tree(args.files, args.data)

    table: list[tuple[str, str]] = []
    tracemalloc.start()
    base = _now()
    truth = load_datasets(datasets_path)
    datasets_bytes = _now() - base
    table.append(("datasets file, parsed (kept by the run)", f"{datasets_bytes:,}"))

    started = time.perf_counter()
    report = grade(truth, results, workers=1)
    graded = time.perf_counter() - started
    n = len(report.items)
    table.append(("result files graded (rows)", f"{n:,} in {graded:.1f} s"))
    after_report = _now()
    table.append(("StatsReport (item table), bytes", f"{after_report - base - datasets_bytes:,}"))

    tracemalloc.reset_peak()
    before_run = _now()
    run = Run.from_stats(report)
    built = _now() - before_run
    peak = tracemalloc.get_traced_memory()[1] - before_run
    table.append(("Run.from_stats: kept / peak, bytes", f"{built:,} / {peak:,}"))
    del report
    held = _now() - base
    table.append(("the run alone, datasets file included", f"{held:,} ({held / n:.0f} B/row)"))
    table.append(
        ("the run alone, without the datasets file", f"{held - datasets_bytes:,} "
         f"({(held - datasets_bytes) / n:.0f} B/row; columns {run.nbytes:,})")
    )  # fmt: skip
    assert isinstance(run.responses, LazyTexts)

    started = time.perf_counter()
    page = list(run.responses[:50])
    table.append(("a page of 50 responses read", f"{(time.perf_counter() - started) * 1e3:.1f} ms"))
    before = _now()
    started = time.perf_counter()
    total = sum(len(r or "") for r in run.responses)
    elapsed = time.perf_counter() - started
    kept = _now() - before
    table.append(("every response read once", f"{elapsed:.1f} s, {total:,} characters"))
    table.append(("kept by the run afterwards (bounded cache)", f"{kept:,}"))
    del page

    tracemalloc.reset_peak()
    before = _now()
    million = _synthetic(1_000_000)
    table.append(("1,000,000-row run (lazy texts), bytes", f"{_now() - before:,}"))
    before = _now()
    half = million.select(million.systems[:2])
    table.append(("a selection of 500,000 of its rows, bytes", f"{_now() - before:,}"))
    assert isinstance(half.responses, LazyTexts)
    tracemalloc.stop()

    width = max(len(k) for k, _ in table)
    print(f"kag run memory, {n:,} rows ({args.files:,} files asked), {sys.platform}")
    for key, value in table:
        print(f"  {key:<{width}}  {value}")
    return 0


if __name__ == "__main__":
    os.environ.setdefault("PYTHONHASHSEED", "0")
    raise SystemExit(main())
