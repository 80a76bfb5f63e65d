"""Record whether the real kag reads each datasets file of ``verdicts.json``.

Usage (from the repository root; a kag binary comes from ``shared/kag-real/build.sh``)::

    python tests/data/kag-datasets/record.py --kag /path/to/kag

Each case's text is written as ``datasets.json`` beside an empty ``results/`` folder, and
``kag stats -d datasets.json -r results`` runs: exit 0 means kag read the file, 1 that it
refused it (its message is kept). The cases are what msgspec's typed decode does not see:
each copy of a dataset or question given twice (kag reads every copy's names), and numbers
inside an entry's ``output`` (its internally tagged enum buffers them all) or beside it (an
unknown field: skipped unread), and entries and MCQ outputs written as arrays of their fields
(serde reads a struct so).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
FIXTURE = HERE / "verdicts.json"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kag", required=True)
    args = parser.parse_args()
    fixture = json.loads(FIXTURE.read_text(encoding="utf-8"))
    for case in fixture["cases"]:
        with tempfile.TemporaryDirectory() as root:
            Path(root, "datasets.json").write_text(case["text"], encoding="utf-8")
            os.mkdir(os.path.join(root, "results"))
            done = subprocess.run(
                [args.kag, "stats", "-d", "datasets.json", "-r", "results"],
                cwd=root, capture_output=True, text=True, check=False,
            )  # fmt: skip
        case["kag_exit"] = done.returncode
        case["kag_stderr"] = done.stderr.strip()
    version = subprocess.run([args.kag, "--version"], capture_output=True, text=True)
    fixture["kag"] = version.stdout.strip()
    FIXTURE.write_text(json.dumps(fixture, indent=1, ensure_ascii=False) + "\n", "utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
