"""Record which numbers the real kag refuses as an f64 (``number out of range``).

Usage (from the repository root; a kag binary comes from ``shared/kag-real/build.sh``)::

    python tests/data/kag-f64/record.py --kag /path/to/kag

Each number of ``verdicts.json`` is put, in a copy of the KAG result file below, once as the
first element of the embedding vector (``Vec<f64>``) and once as the temperature (``f64``),
one setup per file; ``kag stats --format json`` lists the setups of the files it read. The
numbers sit near the largest f64, where serde_json (built without ``float_roundtrip``, as
kag is) rounds differently from a correctly rounded parse, and at the edges of its exponent
and 19-digit significand.
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

DATASETS = {
    "ds": {"q1": {"input": "x", "output": {"type": "MCQ", "options": {"A": "a"}, "answer": "A"}}}
}


def result_file(vec_head: str = "0.5", temperature: str = "0.0") -> str:
    """A KAG success record as kag writes it, with ``vec_head`` first in its vector."""
    return (
        '{\n  "ok": {\n    "result": "A",\n    "stats": {\n      "prompt": "p",\n'
        '      "retrieval": {\n        "result": "r",\n        "stats": {\n'
        '          "embedder": {\n            "embedding": {\n'
        '              "document": "d",\n              "vec": [\n'
        f"                {vec_head},\n                0.25\n              ]\n"
        "            },\n"
        '            "database": {\n              "neo4j": {\n                "vertices": 1,\n'
        '                "relationships": 2,\n                "properties": 3,\n'
        '                "time": {\n                  "secs": 0,\n                  "nanos": 5\n'
        "                }\n              }\n            },\n"
        '            "time": {\n              "secs": 0,\n              "nanos": 7\n'
        "            }\n          }\n        }\n      },\n"
        '      "config": {\n        "provider": "p",\n        "model": "m",\n'
        f'        "temperature": {temperature},\n        "tokens": null\n      }},\n'
        '      "time": {\n        "secs": 1,\n        "nanos": 0\n      }\n    }\n  }\n}\n'
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kag", required=True)
    args = parser.parse_args()
    fixture = json.loads(FIXTURE.read_text(encoding="utf-8"))
    numbers = [case["number"] for case in fixture["cases"]]
    with tempfile.TemporaryDirectory() as root:
        folder = os.path.join(root, "results", "ds", "q1")
        os.makedirs(folder)
        for k, number in enumerate(numbers):
            Path(folder, f"v{k}.json").write_text(result_file(vec_head=number))
            Path(folder, f"t{k}.json").write_text(result_file(temperature=number))
        Path(root, "datasets.json").write_text(json.dumps(DATASETS))
        done = subprocess.run(
            [args.kag, "stats", "-d", "datasets.json", "-r", "results", "--format", "json"],
            cwd=root, capture_output=True, check=True,
        )  # fmt: skip
        read = {setup["setup"] for setup in json.loads(done.stdout)["setups"]}
        version = subprocess.run([args.kag, "--version"], capture_output=True, text=True)
    fixture["kag"] = version.stdout.strip()
    fixture["cases"] = [
        {"number": n, "vec": f"v{k}" in read, "temperature": f"t{k}" in read}
        for k, n in enumerate(numbers)
    ]
    FIXTURE.write_text(json.dumps(fixture, indent=1) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
