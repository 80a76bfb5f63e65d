"""Files per second per worker of the local and the Dask engine, and an incremental rerun
after 1% new files against a full grade (issue #15 item 5).

Usage (from the repository root)::

    .venv/bin/python benchmarks/bench_scale.py                      # 100k files
    .venv/bin/python benchmarks/bench_scale.py --files 100000 1000000

Writes SIMULATED runs (no model was run; 25 setups, 384-float vectors as kag's stats carry)
to ``benchmarks/_data/scale-<files>`` (git-ignored; reused when present), then in one process
and one run: grades each with the local engine, with the Dask engine on a ``LocalCluster`` of
this machine's cores (single-threaded worker processes; started once, not timed), after one
untimed grade that warms the page cache for all alike (figures are for a warm cache), checks that
both print the same JSON (exit 1 if not), then grades with a grade store, adds 1% new result
files (written as kag writes them: ``.json.tmp``, then rename) and grades again. Prints the
ratios (Dask / local throughput; rerun / full grade) measured in this run, and a projection
for 10 million files on N workers from the measured per-worker rate and S3's published
request limits (per prefix: 5,500 GET/HEAD and 3,500 PUT requests a second; LIST returns
at most 1,000 keys a request; https://docs.aws.amazon.com/AmazonS3/latest/userguide/
optimizing-performance.html).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

T = TypeVar("T")

S3_GET_PER_PREFIX = 5500
S3_LIST_KEYS = 1000


def _tree(files: int) -> Path:
    from kagreport.kag import SimulatedSetup, simulate_run

    root = Path(__file__).resolve().parent / "_data" / f"scale-{files}"
    if not (root / "datasets.json").is_file():
        setups = [
            SimulatedSetup(f"setup-{i:02d}", "m", 0.4 + 0.02 * i, 0.03, i % 2 == 0, 1.0)
            for i in range(25)
        ]
        questions = max(1, files // (25 * 4))
        print(f"writing {root} ({4 * questions * 25:,} result files) ...", flush=True)
        simulate_run(root, questions=questions, datasets=4, setups=setups, vector_dim=384)
    return root


def _add_one_percent(root: Path) -> int:
    """Copy 1% of the result files under a new setup name, as kag writes them."""
    results = root / "results"
    folders = sorted(q for d in sorted(results.iterdir()) for q in sorted(d.iterdir()))
    total = sum(1 for _ in results.glob("*/*/*.json"))
    wanted, added = total // 100, 0
    for folder in folders:
        for source in sorted(folder.glob("setup-*.json")):
            if added >= wanted:
                return added
            target = folder / f"new-{source.name}"
            tmp = target.with_name(target.name + ".tmp")
            shutil.copyfile(source, tmp)
            os.replace(tmp, target)
            added += 1
    return added


def _remove_added(root: Path) -> None:
    for path in (root / "results").glob("*/*/new-setup-*.json"):
        path.unlink()


def _timed(function: Callable[..., T], *args: Any, **kwargs: Any) -> tuple[T, float]:
    started = time.perf_counter()
    value = function(*args, **kwargs)
    return value, time.perf_counter() - started


def _s3_rerun(files: int) -> tuple[int, float, int, float, int]:
    """On a moto S3 server on 127.0.0.1: (files, full grade s with a store, 1% added,
    rerun s, files read by the rerun); LIST carries each object's ETag, so a rerun
    lists everything and GETs only the new objects."""
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
    import s3fs

    from kagreport import grade
    from s3server import moto_server

    root = _tree(files)
    _remove_added(root)
    with moto_server() as url, tempfile.TemporaryDirectory() as store:
        s3 = s3fs.S3FileSystem(endpoint_url=url, skip_instance_cache=True)
        s3.mkdir("bench")

        def upload(paths: list[Path]) -> None:
            s3.pipe({f"bench/{p.relative_to(root).as_posix()}": p.read_bytes() for p in paths})

        upload([p for p in sorted(root.rglob("*")) if p.is_file()])
        options = {"endpoint_url": url}
        datasets, results = "s3://bench/datasets.json", "s3://bench/results"
        full, full_s = _timed(grade, datasets, results, store=store, storage_options=options)
        added = _add_one_percent(root)
        upload(sorted((root / "results").glob("*/*/new-setup-*.json")))
        rerun, rerun_s = _timed(grade, datasets, results, store=store, storage_options=options)
        _remove_added(root)
    return full.files_read, full_s, added, rerun_s, rerun.files_read


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", type=int, nargs="+", default=[100_000])
    parser.add_argument(
        "--s3", type=int, default=0, metavar="FILES",
        help="also the incremental rerun on a moto S3 server on 127.0.0.1 (moto serves "
        "~200 objects/s: a few thousand files)",
    )  # fmt: skip
    args = parser.parse_args(argv)
    from kagreport import grade
    from kagreport.grading.engine._dask import dask_client

    cores = os.cpu_count() or 1
    workers = max(1, min(cores, 8))
    failed = False
    rows = []
    for files in args.files:
        root = _tree(files)
        _remove_added(root)
        datasets, results = str(root / "datasets.json"), str(root / "results")
        # The local engine first, with no cluster in this process (its threads would
        # have the workers start from a fork server: measured apart, not mixed in).
        grade(datasets, results)  # untimed: the page cache warm for every engine alike
        local, local_s = _timed(grade, datasets, results)
        with tempfile.TemporaryDirectory() as store:
            _, full_s = _timed(grade, datasets, results, store=store)
            added = _add_one_percent(root)
            rerun, rerun_s = _timed(grade, datasets, results, store=store)
            fresh = grade(datasets, results)
            if rerun.to_json() != fresh.to_json():
                print("the incremental report differs from a fresh grade", file=sys.stderr)
                failed = True
        _remove_added(root)
        client, close = dask_client(None)  # started (not timed) for this size only
        try:
            dask, dask_s = _timed(grade, datasets, results, engine="dask", client=client)
        finally:
            if close is not None:
                close()
        if dask.to_json() != local.to_json():
            print("the Dask engine's JSON differs from the local engine's", file=sys.stderr)
            failed = True
        n = local.files_read
        rows.append((n, local_s, dask_s, full_s, added, rerun_s, rerun.files_read))
    print(f"\n{cores} cores; {workers} local worker processes; Dask: {workers} x 1 thread; "
          "warm page cache")  # fmt: skip
    print("files      local s  files/s/worker  dask s  files/s/worker  dask/local  "
          "store full s  +1% files  rerun s  rerun/full  rerun/local")  # fmt: skip
    for n, local_s, dask_s, full_s, added, rerun_s, read in rows:
        lw, dw = n / local_s / workers, n / dask_s / workers
        print(f"{n:>9,}  {local_s:7.2f}  {lw:14,.0f}  {dask_s:6.2f}  {dw:14,.0f}  "
              f"{dask_s / local_s:9.2f}x  {full_s:12.2f}  {added:9,}  {rerun_s:7.2f}  "
              f"{rerun_s / full_s:9.1%}  {rerun_s / local_s:10.1%}  (read {read:,})")  # fmt: skip
    n, _, dask_s, *_ = rows[-1]
    per_worker = n / dask_s / workers
    print("\nProjection, 10,000,000 files (100 setups x 10 datasets x 10,000 questions):")
    print(f"  measured Dask rate here: {per_worker:,.0f} files/s per worker (local disk)")
    for count in (8, 32, 128):
        cpu_bound = 10_000_000 / (per_worker * count)
        print(f"  {count:>4} workers: {cpu_bound / 60:6.1f} min if reading keeps up")
    print(f"  S3 caps GETs at {S3_GET_PER_PREFIX:,}/s per prefix; with one prefix per dataset "
          f"(10) reads cap at {10 * S3_GET_PER_PREFIX:,}/s = "
          f"{10_000_000 / (10 * S3_GET_PER_PREFIX) / 60:.1f} min for 10M objects;")  # fmt: skip
    lists = 10_000_000 // S3_LIST_KEYS
    print(f"  listing needs 10M / {S3_LIST_KEYS:,} = {lists:,} LIST requests (100,000 "
          "question folders listed in parallel; ~17 min serially at 100 ms each).")  # fmt: skip
    s3_row = None
    if args.s3:
        s3_row = _s3_rerun(args.s3)
        n, full_s, added, rerun_s, read = s3_row
        print(f"\nS3 (moto on 127.0.0.1), {n:,} files, local engine: full grade with a store "
              f"{full_s:.2f} s; +{added:,} files: rerun {rerun_s:.2f} s = {rerun_s / full_s:.1%} "
              f"(read {read:,})")  # fmt: skip
    print(json.dumps({"rows": rows, "s3": s3_row}))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
