"""Record the real kag's ``stats find`` output on the result files of ``literals.json``.

Usage (from the repository root; a kag binary comes from ``shared/kag-real/build.sh``)::

    python tests/data/kag-find/record.py --kag /path/to/kag

The files are written into a temporary ``results/`` folder exactly as listed (raw text: the
JSON escapes are in the bytes), kag runs ``kag stats -r results find PATTERN --format json``
and ``-v`` from that folder for each pattern, and its stdout and the result files it warned
about are stored beside each pattern in ``literals.json``. The cases are the classes a
literal prefilter of ``find`` must get right: a literal written with JSON escapes, case
flags, alternation and classes, a pattern with no required literal, the literal only outside
the response, and files that do not parse whether or not they hold the literal.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
FIXTURE = HERE / "literals.json"


def write_tree(files: dict[str, str], root: str) -> None:
    for name, text in files.items():
        path = os.path.join(root, "results", *name.split("/"))
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w", encoding="utf-8", newline="") as out:
            out.write(text)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kag", required=True)
    args = parser.parse_args()
    fixture = json.loads(FIXTURE.read_text(encoding="utf-8"))
    with tempfile.TemporaryDirectory() as root:
        write_tree(fixture["files"], root)
        for case in fixture["cases"]:
            command = [args.kag, "stats", "-r", "results", "find", case["pattern"]]
            done = subprocess.run(
                [*command, "--format", "json"], cwd=root, capture_output=True, text=True, check=True
            )
            verbose = subprocess.run(
                [args.kag, "-v", *command[1:], "--format", "json"],
                cwd=root, capture_output=True, text=True, check=True,
            )  # fmt: skip
            warned = sorted(
                line.split('"')[1] for line in verbose.stderr.splitlines() if "Failed to" in line
            )
            case["kag_stdout"] = done.stdout
            case["kag_warned"] = warned
    fixture["recorded_with"] = "tests/data/kag-find/record.py --kag <kag 0.2.0, shared/kag-real>"
    FIXTURE.write_text(json.dumps(fixture, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
