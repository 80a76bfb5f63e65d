"""Where the CPU time of one result file goes in ``kagreport stats`` and ``stats find``.

Usage (from the repository root; any tree with ``results/``, e.g. one that
``benchmarks/bench_stats.py --keep`` wrote)::

    .venv/bin/python benchmarks/bench_per_file.py --tree benchmarks/_data/stats-50000

Takes the first ``--files`` result files of the tree (whole question folders, in name order)
and times each stage of the per-file path on them, in this process, one stage at a time:
the CPU time (``time.process_time``) per file, the minimum of ``--repeats`` passes (the
least disturbed by other processes on a shared host). The stages:

* listing a question folder and picking its result files (``stats``' workers);
* reading (``read_bytes``: open, fstat, one read, close; page cache warm);
* msgspec's typed decode, and the same with the embedding vector cut out of the bytes (what
  the vector alone costs msgspec);
* kag's strictness checks on the decoded record (``kag._checks.check_ok``);
* the Python decoder whole (decode, checks, the record);
* ``grade_chunk`` whole (list, read, decode, grade, columns), per file, on the pure-Python
  path;
* with the compiled scanner (``kag/_scan.c``): listing a folder, decoding bytes in memory,
  reading and decoding a file in one call, ``grade_chunk`` with the scanner giving a record
  at a time (graded in Python), and ``grade_chunk`` whole (a folder graded in place by
  ``grade_folder``, the default).

A stage's figure includes Python's call overhead; the whole is not the sum of the parts.
"""

from __future__ import annotations

import argparse
import os
import time
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any


def _per_file(function: Callable[[], Any], files: int, repeats: int) -> float:
    best = float("inf")
    for _ in range(repeats):
        start = time.process_time()
        function()
        best = min(best, time.process_time() - start)
    return best / files * 1e6


def _each(function: Callable[[Any], Any], items: Iterable[Any]) -> Callable[[], None]:
    def run() -> None:
        for item in items:
            try:  # noqa: SIM105 (suppress() would add its own cost to every item)
                function(item)
            except ValueError:  # an unparsable file: timed as far as it goes
                pass

    return run


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tree", type=Path, required=True, help="holds results/")
    parser.add_argument("--files", type=int, default=4000)
    parser.add_argument("--repeats", type=int, default=9)
    args = parser.parse_args()

    from kagreport.grading import _chunk
    from kagreport.grading._chunk import grade_chunk
    from kagreport.kag import _records, _tree, _walk
    from kagreport.kag._checks import check_ok
    from kagreport.kag._envelope import _decoder, _Ok
    from kagreport.kag._records import _RESULT_SCHEMA, decode_python, read_bytes
    from kagreport.kag._tree import LocalTree
    from kagreport.kag._walk import result_files

    results = str(args.tree / "results")
    folders: list[str] = []
    count = 0
    for dataset in sorted(os.listdir(results)):
        for question in sorted(os.listdir(os.path.join(results, dataset))):
            folder = os.path.join(results, dataset, question)
            folders.append(folder)
            count += len(os.listdir(folder))
            if count >= args.files:
                break
        if count >= args.files:
            break
    tree = LocalTree(results)
    paths = [path for f in folders for _, path, _ in result_files(tree.list_dir(f), f, "", tree)]
    datas = [read_bytes(path) for path in paths]
    decoded = []
    cut = []
    for data in datas:
        try:
            ok = _decoder.decode(data).ok
        except ValueError:
            continue
        if not isinstance(ok, _Ok):
            continue
        decoded.append((data, ok))
        at = data.find(b'"vec"')
        head = data.find(b"[", at)
        tail = data.find(b"]", head) + 1
        cut.append(data[:head] + b"[]" + data[tail:] if at >= 0 else data)
    n, repeats = len(paths), args.repeats
    size = sum(map(len, datas)) / n
    print(f"{n} result files of {args.tree} ({size:,.0f} bytes on average); CPU us per file,")
    print(f"minimum of {repeats} passes (load average {os.getloadavg()[0]:.2f})")

    def listing() -> None:
        for folder in folders:
            result_files(tree.list_dir(folder), folder, "", tree)

    answers, codes = ["a"] * len(folders), [0] * len(folders)

    def grading() -> None:
        for start in range(0, len(folders), 64):
            grade_chunk(folders[start : start + 64], answers, codes, "")

    def checks(item: tuple[bytes, Any]) -> None:
        check_ok(item[0], item[1], _RESULT_SCHEMA)

    def without(*patched: tuple[Any, str]) -> Callable[[], None]:
        def run() -> None:
            saved = [getattr(module, name) for module, name in patched]
            for module, name in patched:
                setattr(module, name, None)
            try:
                grading()
            finally:
                for (module, name), value in zip(patched, saved, strict=True):
                    setattr(module, name, value)

        return run

    # The pure-Python path: what runs without the compiled scanner.
    python_grading = without(
        (_tree, "scan_file"), (_walk, "list_results"), (_records, "_SCANNER"),
        (_chunk, "grade_folder"),
    )  # fmt: skip
    # The scanner a record at a time (read_record, then grading in Python).
    record_grading = without((_chunk, "grade_folder"))

    d = len(decoded)
    stages = [
        ("list a folder, pick its result files", listing, n),
        ("read (open, fstat, read, close)", _each(read_bytes, paths), n),
        ("msgspec typed decode", _each(_decoder.decode, [x for x, _ in decoded]), d),
        ("  the same, embedding vector cut out", _each(_decoder.decode, cut), d),
        ("kag strictness checks (check_ok)", _each(checks, decoded), d),
        ("decode_python whole (the Python decoder)", _each(decode_python, datas), n),
        ("grade_chunk whole, Python path, per file", python_grading, n),
    ]
    scanner = _records._SCANNER
    if scanner is not None:

        def scan_listing() -> None:
            for folder in folders:
                scanner.list_results(folder, "")

        stages += [
            ("scanner: list a folder (list_results)", scan_listing, n),
            ("scanner: decode (bytes in memory)", _each(scanner.decode, datas), n),
            ("scanner: read and decode (read_record)", _each(scanner.read_record, paths), n),
            ("grade_chunk, scanner a record at a time", record_grading, n),
            ("grade_chunk whole, scanner, in place", grading, n),
        ]  # fmt: skip
    else:
        print("  (the compiled scanner is not built: python hatch_build.py)")
    for name, function, files in stages:
        print(f"  {name:42s} {_per_file(function, files, repeats):7.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
