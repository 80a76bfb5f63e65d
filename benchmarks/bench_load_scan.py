"""The bounded loading layer's scan for integers past a float's range, against msgspec's own
decode of the same document (issue 25): prints both times for one ~140 MB JSON document.

Run: ``.venv/bin/python benchmarks/bench_load_scan.py``
"""

from __future__ import annotations

import json
import time

import msgspec

from kagreport.sources._load import _long_digits


def main() -> None:
    rows = [{"id": i, "text": "x" * 100, "score": i * 0.5} for i in range(950_000)]
    document = json.dumps(rows).encode()
    start = time.perf_counter()
    _long_digits(document)
    scan = time.perf_counter() - start
    start = time.perf_counter()
    msgspec.json.decode(document)
    decode = time.perf_counter() - start
    print(
        f"{len(document) / 1e6:.0f} MB: scan {scan:.2f} s, decode {decode:.2f} s, "
        f"scan/decode {scan / decode:.2f}"
    )


if __name__ == "__main__":
    main()
