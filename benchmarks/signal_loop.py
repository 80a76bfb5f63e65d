"""SIGTERM or SIGINT to a command's process group at random moments, a bounded number of
tries per command: each must end within 3 s with 0 (it finished first), 130, 143 or by the
signal itself (it came as the interpreter exited), print no traceback, leave no process of
its group and no half-written output.

Run: ``.venv/bin/python benchmarks/signal_loop.py [SEED] [TRIES]`` (the 50,000-question
tree comes from ``benchmarks/bench_stats.py``; without it that command is skipped).
"""

from __future__ import annotations

import contextlib
import json
import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
KAGREPORT = str(Path(sys.executable).parent / "kagreport")
DATA = ROOT / "tests" / "data" / "sources"
BIG = ROOT / "benchmarks" / "_data" / "stats-50000"
MMLU = ROOT / "examples" / "mmlu-pro-philosophy"
LOGS = sorted((ROOT / "src" / "kagreport" / "examples" / "inspect-popularity").glob("*.eval"))


def _labelled_evaluation(folder: Path) -> list[str]:
    """``evaluate --labels`` on 2,000 answers with rule judges, 286 of them labelled."""
    folder.mkdir(parents=True, exist_ok=True)
    answers = ("Paris", "paris", "Lyon", "Paris, France", "")
    with open(folder / "items.jsonl", "w", encoding="utf-8") as items:
        for i in range(2000):
            row = {"identifier": f"q{i}", "question": "Capital?", "answer": answers[i % 5],
                   "reference": "Paris"}  # fmt: skip
            items.write(json.dumps(row) + "\n")
    labels = ["id,exact_match"] + [f"q{i},{int(i % 5 in (0, 1))}" for i in range(0, 2000, 7)]
    (folder / "labels.csv").write_text("\n".join(labels) + "\n", encoding="utf-8")
    judges = '[[judges]]\nkind = "exact_match"\n\n[[judges]]\nkind = "token_f1"\n'
    (folder / "judges.toml").write_text(judges, encoding="utf-8")
    return [KAGREPORT, "evaluate", "--items", str(folder / "items.jsonl"), "--judges",
            str(folder / "judges.toml"), "--labels", str(folder / "labels.csv")]  # fmt: skip


def commands(out: Path, inputs: Path) -> dict[str, list[str]]:
    found = {
        "evaluate-labels": [*_labelled_evaluation(inputs), "-o", str(out / "ev.json")],
        "convert": [KAGREPORT, "convert", str(DATA / "inspect" / "inspect-0.3.285"), "-o",
                    str(out / "run.json")],
        "convert-eee": [KAGREPORT, "convert", str(DATA / "lm-eval" / "lm-eval-0.4.13" / "output"),
                        "-o", str(out / "x.eee")],
        "site": [KAGREPORT, "site", "build", "--run", str(DATA / "helm" / "real" / "tiny25"),
                 "-o", str(out / "site")],
        "compare": [KAGREPORT, "compare", str(LOGS[0]), str(LOGS[1]), "--shared"],
        "gate": [KAGREPORT, "gate", str(MMLU / "results"), "--baseline", str(MMLU / "results"),
                 "-d", str(MMLU / "datasets.json"), "-o", str(out / "gate")],
    }  # fmt: skip
    if BIG.is_dir():
        tree = [str(BIG / "results"), "-d", str(BIG / "datasets.json")]
        found["convert-kag-50k"] = [KAGREPORT, "convert", *tree, "-o", str(out / "big.json")]
        # The compiled scanner's commands: the pool reads, lists and decodes in C.
        found["stats-50k"] = [KAGREPORT, "stats", "-r", *tree, "--format", "json"]
        found["find-50k"] = [KAGREPORT, "stats", "find", "Answer", "-r", str(BIG / "results")]
    return found


def main() -> int:
    seed = int(sys.argv[1]) if len(sys.argv) > 1 else 0
    tries = int(sys.argv[2]) if len(sys.argv) > 2 else 8
    rng = random.Random(seed)
    bad = 0
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "out"
        for name, command in commands(out, Path(tmp) / "inputs").items():
            for attempt in range(tries):
                shutil.rmtree(out, ignore_errors=True)
                out.mkdir()
                sig = rng.choice([signal.SIGTERM, signal.SIGINT])
                delay = rng.uniform(0.05, 2.5)
                process = subprocess.Popen(
                    command, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                    start_new_session=True,
                )  # fmt: skip
                time.sleep(delay)
                sent = time.monotonic()
                with contextlib.suppress(ProcessLookupError):  # it finished first
                    os.killpg(process.pid, sig)
                try:
                    _, err = process.communicate(timeout=10)
                except subprocess.TimeoutExpired:
                    os.killpg(process.pid, signal.SIGKILL)
                    process.communicate()
                    print(f"{name} try {attempt}: still running 10 s after {sig.name}")
                    bad += 1
                    continue
                took = time.monotonic() - sent
                text = err.decode(errors="replace")
                group = subprocess.run(
                    ["pgrep", "-g", str(process.pid)], capture_output=True, text=True, check=False
                ).stdout.split()
                hidden = [p.name for p in out.rglob("*") if p.name.startswith(".")]
                ok = (
                    # -sig: it came after the work, as the interpreter exited with the
                    # default actions back (cli._stop): ended by the signal, silently
                    process.returncode in (0, 130, 143, -sig)
                    and "Traceback" not in text
                    and took < 3
                    and not group
                    and not hidden
                )
                bad += not ok
                print(
                    f"{name:16} try {attempt} {sig.name:7} at {delay:4.2f} s: exit "
                    f"{process.returncode:4} {took:4.2f} s after it"
                    f"{'' if ok else ' BAD'}"
                )
    print(f"{bad} bad")
    return 1 if bad else 0


if __name__ == "__main__":
    raise SystemExit(main())
