"""Speed and memory of ``kagreport stats`` on a large SIMULATED kag result tree.

Usage (from the repository root)::

    .venv/bin/python benchmarks/bench_stats.py                 # 100,000 files, tree deleted after
    .venv/bin/python benchmarks/bench_stats.py --keep          # keep the trees; reruns reuse them
    .venv/bin/python benchmarks/bench_stats.py --files 20000 --keep
    .venv/bin/python benchmarks/bench_stats.py --profile --keep  # cProfile of grade(), top 25

What one run measures, on the same tree and in the same process tree:

* **I/O floor**: a child that walks the tree with ``os.walk`` and reads every
  file's bytes with ``open(path, "rb").read()``, nothing else.
* **C floor**: a small C program (compiled here with ``cc -O2``; without a C
  compiler, ``find -type f -print0 | xargs -0 cat``, and the summary says which)
  that walks the tree with ``nftw`` and calls ``read()`` on every file: the target
  (kagreport at most 1.5x it, medians of the same run) is against this one.
* **kagreport**: ``.venv/bin/kagreport stats -d ... -r ... --format json``.
* **naive**: a straightforward grader written here (``pathlib.Path.rglob`` and
  ``json.load`` per file) that computes the same per-setup totals; its counts
  are checked against kagreport's JSON output.

Every measurement runs in a fresh child process (``os.posix_spawn``); wall time
is ``time.perf_counter`` from spawn to reap, and peak RSS and CPU time are that
child's own ``rusage`` as returned by ``os.wait4`` (not the cumulative
``RUSAGE_CHILDREN``). Each measurement is repeated three times, interleaved,
after one untimed full read of the tree that warms the page cache.

Memory growth per result file is the difference of kagreport's peak RSS between
the big tree and a tree ten times smaller, divided by the difference in graded
files. Both runs read the BIG tree's datasets file (the small run is
``-d <big>/datasets.json -r <small>/results``; the small tree's dataset and
question folders are checked to be a subset of the big datasets file), so the
ground truth they load is the same and cancels out. What the datasets file
itself costs is measured apart (``load_datasets()`` alone on both trees' files)
and reported per question, for information.

The tree is generated with :func:`kagreport.kag.simulate_run`, every setup a KAG
setup (each result carries a 384-float embedding vector). A marker file written
last records the parameters; a tree with a matching marker is reused.

Peak RSS needs care on Linux: ``exec`` carries the high-water mark of the image
it replaces into the new program's ``ru_maxrss``, so a child spawned straight
from this (large) parent would never report less than the parent's own peak.
Each child is therefore spawned by a minimal launcher (``python -S`` running
``--launch``, a few MiB) that times the target with ``time.perf_counter``, reaps
it with ``os.wait4`` and writes the target's wall time, CPU time and peak RSS to
a file. The launcher's own peak, the floor below which no reading can go, is
printed with the results.

The launcher and the children (``--io-floor``, ``--naive``) must not pay for
imports they do not need, so this module imports only ``os`` and ``sys`` at the
top; everything else is imported inside the functions that use it.
"""

from __future__ import annotations

import os
import sys

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Sequence
    from typing import Any

    from kagreport.kag import SimulatedSetup

__all__ = ["main"]

HERE = os.path.dirname(os.path.abspath(__file__))
MODULE = os.path.splitext(os.path.basename(__file__))[0]
DEFAULT_FILES = 100_000
SETUPS = 4
MAX_DATASETS = 5
VECTOR_DIM = 384
UNPARSABLE_FILES = 3
TEMPORARY_FILES = 2
REPEATS = 3
MARKER = ".bench-stats-tree.json"
MARKER_VERSION = 1

# Targets of the summary.
TARGET_IO_RATIO = 1.5  # kagreport / C floor, at most (issue 11: "a plain C read of every byte")
TARGET_NAIVE_RATIO = 3.0  # naive / kagreport, at least
TARGET_BYTES_PER_FILE = 200.0  # kagreport memory growth per result file, at most

# Unicode White_Space (Rust str::trim), and an ASCII-only lower-casing table
# (Rust eq_ignore_ascii_case): the naive grader applies kag's rule too.
_WHITE_SPACE = (
    "\u0009\u000a\u000b\u000c\u000d\u0020\u0085\u00a0\u1680"
    "\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a"
    "\u2028\u2029\u202f\u205f\u3000"
)
_ASCII_LOWER = {code: code + 32 for code in range(ord("A"), ord("Z") + 1)}


# --------------------------------------------------------------------------- children


def io_floor(root: str) -> dict[str, int]:
    """Walk ``root`` and read every file's bytes; nothing else."""
    files = 0
    size = 0
    for folder, _dirs, names in os.walk(root):
        for name in names:
            with open(os.path.join(folder, name), "rb") as file:
                size += len(file.read())
            files += 1
    return {"files": files, "bytes": size}


# The C floor: a plain C walk (nftw, no symbolic links followed) that read()s every
# regular file's bytes into one 1 MiB buffer and prints the same counts as io_floor.
C_FLOOR_SOURCE = r"""
#define _XOPEN_SOURCE 700
#include <fcntl.h>
#include <ftw.h>
#include <stdio.h>
#include <unistd.h>
static char buffer[1 << 20];
static long long files, bytes;
static int visit(const char *path, const struct stat *info, int type, struct FTW *ftw) {
    (void)info; (void)ftw;
    if (type != FTW_F) return 0;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return 0;
    ssize_t got;
    while ((got = read(fd, buffer, sizeof buffer)) > 0) bytes += got;
    close(fd);
    files++;
    return 0;
}
int main(int argc, char **argv) {
    if (argc != 2 || nftw(argv[1], visit, 64, FTW_PHYS) != 0) return 1;
    printf("{\"files\": %lld, \"bytes\": %lld}\n", files, bytes);
    return 0;
}
"""


def c_floor_argv(work: str) -> tuple[list[str], str]:
    """The C floor's command (root appended by the caller) and what it is.

    Compiles :data:`C_FLOOR_SOURCE` with ``cc -O2`` into ``work``; without a C
    compiler, falls back to ``find -type f -print0 | xargs -0 cat`` (which spends
    extra time in ``cat``'s start per batch and prints no counts).
    """
    import shutil
    import subprocess

    compiler = shutil.which("cc") or shutil.which("gcc") or shutil.which("clang")
    if compiler is not None:
        os.makedirs(work, exist_ok=True)
        source = os.path.join(work, "c_floor.c")
        binary = os.path.join(work, "c_floor")
        with open(source, "w", encoding="ascii") as file:
            file.write(C_FLOOR_SOURCE)
        done = subprocess.run(
            [compiler, "-O2", "-o", binary, source], capture_output=True, text=True, check=False
        )
        if done.returncode == 0:
            return [binary], f"C floor: nftw + read() (cc -O2, {_rel(binary)})"
    shell = 'find "$1" -type f -print0 | xargs -0 cat > /dev/null'
    return ["/bin/sh", "-c", shell, "c-floor"], "C floor: find | xargs cat (no C compiler)"


def _nanos(duration: Any) -> int:
    if isinstance(duration, dict):
        return int(duration["secs"]) * 1_000_000_000 + int(duration["nanos"])
    secs, nanos = duration
    return int(secs) * 1_000_000_000 + int(nanos)


def naive_grade(datasets_path: str, results_path: str) -> dict[str, Any]:
    """Grade a result tree the obvious way: ``rglob`` and ``json.load`` every file."""
    import json
    from pathlib import Path

    with open(datasets_path, encoding="utf-8") as file:
        truth: dict[str, dict[str, Any]] = json.load(file)
    results = Path(results_path)
    setups: dict[str, dict[str, int]] = {}
    unparsable = 0
    for path in results.rglob("*.json"):
        parts = path.relative_to(results).parts
        if len(parts) != 3 or not path.is_file():
            continue
        dataset, question, name = parts
        entry = truth.get(dataset, {}).get(question)
        if entry is None or entry.get("output") is None:
            continue
        answer = entry["output"].get("answer")
        if answer is None:
            continue
        try:
            with path.open(encoding="utf-8") as file:
                record = json.load(file)
        except (ValueError, UnicodeDecodeError):
            unparsable += 1
            continue
        totals = setups.setdefault(
            name[: -len(".json")],
            dict.fromkeys(
                (
                    "correct",
                    "incorrect",
                    "errors",
                    "generation_ns",
                    "context_bytes",
                    "retrieval_ns",
                    "vertices",
                    "relationships",
                    "properties",
                    "retrieval_samples",
                ),
                0,
            ),
        )
        if "error" in record:
            totals["errors"] += 1
            continue
        ok = record["ok"]
        response = ok["result"].strip(_WHITE_SPACE)
        if response.translate(_ASCII_LOWER) == answer.translate(_ASCII_LOWER):
            totals["correct"] += 1
        else:
            totals["incorrect"] += 1
        stats = ok["stats"]
        totals["generation_ns"] += _nanos(stats["time"])
        totals["context_bytes"] += len(stats["prompt"].encode("utf-8", "surrogatepass"))
        retrieval = stats.get("retrieval")
        if retrieval is not None:
            embedder = retrieval["stats"]["embedder"]
            neo4j = embedder["database"]["neo4j"]
            totals["retrieval_ns"] += _nanos(embedder["time"])
            totals["vertices"] += int(neo4j["vertices"])
            totals["relationships"] += int(neo4j["relationships"])
            totals["properties"] += int(neo4j["properties"])
            totals["retrieval_samples"] += 1
    return {"setups": setups, "unparsable_files": unparsable}


# --------------------------------------------------------------------------- the tree


def _bench_setups() -> list[SimulatedSetup]:
    from kagreport.kag import SimulatedSetup

    return [
        SimulatedSetup("kag-small", "sim-small-8b", 0.66, 0.04, kag=True, mean_generation_secs=1.3),
        SimulatedSetup("kag-medium", "sim-medium-32b", 0.72, 0.03, True, 2.0),
        SimulatedSetup("kag-large", "sim-large-70b", 0.80, 0.03, True, 3.1),
        SimulatedSetup("kag-huge", "sim-huge-405b", 0.84, 0.02, True, 4.6),
    ]


def _tree_shape(files: int) -> tuple[int, int]:
    """(datasets, questions per dataset) giving at least ``files`` result files."""
    import math

    datasets = min(MAX_DATASETS, max(1, math.ceil(files / SETUPS)))
    return datasets, math.ceil(files / (SETUPS * datasets))


def _tree_params(files: int, seed: int) -> dict[str, Any]:
    datasets, questions = _tree_shape(files)
    return {
        "marker_version": MARKER_VERSION,
        "requested_files": files,
        "datasets": datasets,
        "questions": questions,
        "setups": [s.name for s in _bench_setups()],
        "kag": True,
        "vector_dim": VECTOR_DIM,
        "seed": seed,
        "unparsable_files": UNPARSABLE_FILES,
        "temporary_files": TEMPORARY_FILES,
    }


class Tree:
    """A simulated tree on disk and how it was obtained."""

    def __init__(self, root: str, marker: dict[str, Any], generated: bool, secs: float) -> None:
        self.root = root
        self.marker = marker
        self.generated = generated
        self.secs = secs

    @property
    def datasets_path(self) -> str:
        return os.path.join(self.root, "datasets.json")

    @property
    def results_path(self) -> str:
        return os.path.join(self.root, "results")

    @property
    def result_files(self) -> int:
        return int(self.marker["result_files"])

    def describe(self) -> str:
        m = self.marker
        how = f"generated in {self.secs:.1f} s" if self.generated else "reused (marker matched)"
        return (
            f"{_rel(self.root)} ({how}): {m['result_files']:,} result files "
            f"({m['unparsable_files']} unparsable, {m['temporary_files']} .json.tmp), "
            f"{m['datasets']} datasets x {m['questions']:,} questions x "
            f"{len(m['setups'])} KAG setups, {m['vector_dim']}-float vectors; "
            f"{m['all_files']:,} files, {m['bytes']:,} bytes ({m['bytes'] / 2**20:,.1f} MiB) "
            "on disk"
        )


def _rel(path: str) -> str:
    try:
        rel = os.path.relpath(path)
    except ValueError:
        return path
    return path if rel.startswith("..") else rel


def _read_marker(root: str) -> dict[str, Any] | None:
    import json

    try:
        with open(os.path.join(root, MARKER), encoding="utf-8") as file:
            marker: dict[str, Any] = json.load(file)
    except (OSError, ValueError):
        return None
    return marker


def ensure_tree(root: str, files: int, seed: int) -> Tree:
    """Reuse the tree at ``root`` if its marker matches, else generate it there.

    Generation writes into a temporary sibling folder, writes the marker last and
    renames the folder into place, so an interrupted run leaves no half tree at ``root``.
    """
    import json
    import shutil
    import tempfile
    import time

    from kagreport.kag import simulate_run

    params = _tree_params(files, seed)
    root = os.path.abspath(root)
    marker = _read_marker(root)
    if marker is not None and {k: marker.get(k) for k in params} == params:
        return Tree(root, marker, generated=False, secs=0.0)
    if os.path.lexists(root):
        raise SystemExit(
            f"bench_stats: {root} exists but is not a benchmark tree with these parameters "
            f"(no matching {MARKER}); remove it or choose another --data folder"
        )
    parent = os.path.dirname(root)
    os.makedirs(parent, exist_ok=True)
    print(f"generating {_rel(root)} ({files:,} result files) ...", flush=True)
    start = time.perf_counter()
    staging = tempfile.mkdtemp(prefix=f".{os.path.basename(root)}-partial-", dir=parent)
    try:
        run = simulate_run(
            staging,
            questions=params["questions"],
            datasets=params["datasets"],
            setups=_bench_setups(),
            vector_dim=VECTOR_DIM,
            seed=seed,
            unlabelled_questions=0,
            free_form_questions=0,
            unparsable_files=UNPARSABLE_FILES,
            temporary_files=TEMPORARY_FILES,
        )
        all_files = 0  # every file but the marker
        size = 0
        for folder, _dirs, names in os.walk(staging):
            for name in names:
                size += os.lstat(os.path.join(folder, name)).st_size
                all_files += 1
        marker = {**params, "result_files": run.files, "all_files": all_files, "bytes": size}
        with open(os.path.join(staging, MARKER), "w", encoding="utf-8") as file:
            json.dump(marker, file, indent=2)
        os.rename(staging, root)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    return Tree(root, marker, generated=True, secs=time.perf_counter() - start)


# --------------------------------------------------------------------------- measuring


class Sample:
    """One child process: wall time, CPU time, peak RSS, exit status and output."""

    def __init__(
        self,
        wall: float,
        cpu: float,
        maxrss: int,
        status: int,
        stdout: str,
        stderr: str,
        launcher_rss: int,
        tree_rss: int = 0,
        tree_pss: int = 0,
        tree_procs: int = 0,
    ) -> None:
        self.launcher_rss = launcher_rss  # bytes; 0 when unknown
        # Sampled process-tree peaks (bytes) and most processes seen; 0 when not sampled.
        self.tree_rss = tree_rss
        self.tree_pss = tree_pss
        self.tree_procs = tree_procs
        self.wall = wall
        self.cpu = cpu
        self.maxrss = maxrss  # bytes
        self.status = status
        self.stdout = stdout
        self.stderr = stderr


def _tree_memory(root: int) -> tuple[int, int, int]:
    """(RSS, PSS, processes) summed over ``root`` and its descendants (Linux /proc), bytes."""
    pids = [root]
    rss = pss = 0
    index = 0
    while index < len(pids):
        pid = pids[index]
        index += 1
        try:
            for tid in os.listdir(f"/proc/{pid}/task"):
                with open(f"/proc/{pid}/task/{tid}/children", encoding="ascii") as file:
                    pids.extend(int(child) for child in file.read().split())
            with open(f"/proc/{pid}/smaps_rollup", encoding="ascii") as file:
                for line in file:
                    if line.startswith("Rss:"):
                        rss += int(line.split()[1]) * 1024
                    elif line.startswith("Pss:"):
                        pss += int(line.split()[1]) * 1024
        except (OSError, ValueError):
            continue  # the process ended meanwhile
    return rss, pss, len(pids)


def launch(report: str, argv: Sequence[str], *, sample: bool = False) -> int:
    """The launcher: spawn ``argv`` (inheriting fds 0-2), reap it, write its measurements.

    Writes ``wall cpu maxrss exit_code launcher_hwm tree_rss tree_pss tree_procs``
    to ``report`` (bytes). With ``sample``, polls the process tree's memory every
    20 ms instead of blocking (that run's times are then not clean).
    """
    import time

    start = time.perf_counter()
    pid = os.posix_spawn(argv[0], list(argv), os.environ)
    tree_rss = tree_pss = tree_procs = 0
    if sample:
        while True:
            done, status, usage = os.wait4(pid, os.WNOHANG)
            if done:
                break
            rss, pss, procs = _tree_memory(pid)
            tree_rss, tree_pss = max(tree_rss, rss), max(tree_pss, pss)
            tree_procs = max(tree_procs, procs)
            time.sleep(0.02)
    else:
        _pid, status, usage = os.wait4(pid, 0)
    wall = time.perf_counter() - start
    # ru_maxrss is KiB on Linux and the BSDs, bytes on macOS.
    scale = 1 if sys.platform == "darwin" else 1024
    hwm = 0
    try:
        with open("/proc/self/status", encoding="ascii") as file:
            for line in file:
                if line.startswith("VmHWM:"):
                    hwm = int(line.split()[1]) * 1024
    except OSError:
        pass
    with open(report, "w", encoding="ascii") as file:
        file.write(
            f"{wall!r} {usage.ru_utime + usage.ru_stime!r} {usage.ru_maxrss * scale} "
            f"{os.waitstatus_to_exitcode(status)} {hwm} {tree_rss} {tree_pss} {tree_procs}\n"
        )
    return 0


def _self_argv() -> list[str]:
    """Arguments that run this module's :func:`main` with the rest of the command line.

    It is imported (``-c``), not run as a script, so its cached bytecode is used:
    compiling this file on each start would cost the children time and memory.
    """
    code = (
        f"import sys; sys.path.insert(0, {HERE!r}); "
        f"from {MODULE} import main; sys.exit(main(sys.argv[1:]))"
    )
    return ["-c", code]


def child_env() -> dict[str, str]:
    """The environment of the measured children.

    Python startup compiles every module it cannot find in a bytecode cache, which
    is not what a user of an installed package pays. When this environment
    disables bytecode writing (``PYTHONDONTWRITEBYTECODE``) the children get a
    private cache under ``benchmarks/_data/pycache`` (``PYTHONPYCACHEPREFIX``), so
    nothing is written beside the sources either way.
    """
    env = dict(os.environ)
    if "PYTHONPYCACHEPREFIX" not in env:
        env["PYTHONPYCACHEPREFIX"] = os.path.join(HERE, "_data", "pycache")
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    return env


def _describe_env(env: dict[str, str]) -> str:
    note = ""
    if "PYTHONDONTWRITEBYTECODE" in os.environ:
        note = " (PYTHONDONTWRITEBYTECODE is set here; unset for the children)"
    return f"bytecode cache PYTHONPYCACHEPREFIX={_rel(env['PYTHONPYCACHEPREFIX'])}{note}"


def run_child(argv: Sequence[str], *, sample: bool = False) -> Sample:
    """Run ``argv`` through the launcher; return its wall time, rusage and output.

    stdout and stderr go to temporary files (no pipe to drain while timing).
    """
    import tempfile

    with tempfile.TemporaryDirectory(prefix="bench-stats-") as scratch:
        out = os.path.join(scratch, "stdout")
        err = os.path.join(scratch, "stderr")
        report = os.path.join(scratch, "report")
        flags = os.O_WRONLY | os.O_CREAT | os.O_TRUNC
        actions = [
            (os.POSIX_SPAWN_OPEN, 0, os.devnull, os.O_RDONLY, 0),
            (os.POSIX_SPAWN_OPEN, 1, out, flags, 0o600),
            (os.POSIX_SPAWN_OPEN, 2, err, flags, 0o600),
        ]
        launcher = [sys.executable, "-S", *_self_argv(), "--launch", report]
        launcher += ["--sample", "--"] if sample else ["--"]
        pid = os.posix_spawn(sys.executable, [*launcher, *argv], child_env(), file_actions=actions)
        _pid, status, _usage = os.wait4(pid, 0)
        with open(out, encoding="utf-8", errors="replace") as file:
            stdout = file.read()
        with open(err, encoding="utf-8", errors="replace") as file:
            stderr = file.read()
        if os.waitstatus_to_exitcode(status) != 0:
            raise SystemExit(f"bench_stats: the launcher failed on {list(argv)}:\n{stderr}")
        with open(report, encoding="ascii") as file:
            wall, cpu, *sizes = file.read().split()
    maxrss, code, floor, tree_rss, tree_pss, procs = map(int, sizes)
    return Sample(
        float(wall), float(cpu), maxrss, code, stdout, stderr, floor, tree_rss, tree_pss, procs
    )


def _check_ok(name: str, sample: Sample) -> None:
    if sample.status != 0:
        raise SystemExit(
            f"bench_stats: {name} exited with status {sample.status}\n"
            f"stderr:\n{sample.stderr[-4000:]}"
        )


def _kagreport_exe() -> str:
    import shutil

    candidate = os.path.join(os.path.dirname(sys.executable), "kagreport")
    if os.access(candidate, os.X_OK):
        return candidate
    found = shutil.which("kagreport")
    if found is None:
        raise SystemExit(
            "bench_stats: the kagreport script was not found; run with .venv/bin/python"
        )
    return found


class Measure:
    """A named command and its samples."""

    def __init__(self, name: str, argv: list[str]) -> None:
        self.name = name
        self.argv = argv
        self.samples: list[Sample] = []

    def run(self) -> Sample:
        sample = run_child(self.argv)
        _check_ok(self.name, sample)
        self.samples.append(sample)
        return sample

    @property
    def median_wall(self) -> float:
        import statistics

        return statistics.median(s.wall for s in self.samples)

    @property
    def min_wall(self) -> float:
        return min(s.wall for s in self.samples)

    @property
    def median_cpu(self) -> float:
        import statistics

        return statistics.median(s.cpu for s in self.samples)

    @property
    def median_rss(self) -> float:
        import statistics

        return statistics.median(s.maxrss for s in self.samples)

    @property
    def max_rss(self) -> int:
        return max(s.maxrss for s in self.samples)


def _cross_check(kag_json: str, naive_json: str, kag_stderr: str) -> list[str]:
    """Compare kagreport's JSON with the naive totals; raise on any difference."""
    import json
    import math
    import re

    kag = json.loads(kag_json)
    naive = json.loads(naive_json)
    problems: list[str] = []
    kag_setups = {s["setup"]: s["overall"] for s in kag["setups"]}
    naive_setups: dict[str, dict[str, int]] = naive["setups"]
    if set(kag_setups) != set(naive_setups):
        problems.append(
            f"setups differ: kagreport {sorted(kag_setups)}, naive {sorted(naive_setups)}"
        )
    lines = []
    for setup in sorted(set(kag_setups) & set(naive_setups)):
        k, n = kag_setups[setup], naive_setups[setup]
        for key in ("correct", "incorrect", "errors"):
            if k[key] != n[key]:
                problems.append(f"{setup}: {key} kagreport={k[key]} naive={n[key]}")
        if not math.isclose(k["total_generation_secs"], n["generation_ns"] / 1e9, rel_tol=1e-12):
            problems.append(f"{setup}: generation time differs")
        samples = k["correct"] + k["incorrect"]
        if k["avg_context_length"] is not None and not math.isclose(
            k["avg_context_length"] * samples, n["context_bytes"], rel_tol=1e-9
        ):
            problems.append(f"{setup}: context bytes differ")
        r = k["retrieval"]
        if r is None:
            problems.append(f"{setup}: kagreport reports no retrieval for a KAG setup")
        else:
            for key, naive_key in (
                ("vertices", "vertices"),
                ("relationships", "relationships"),
                ("properties", "properties"),
                ("samples", "retrieval_samples"),
            ):
                if r[key] != n[naive_key]:
                    problems.append(
                        f"{setup}: retrieval {key} kagreport={r[key]} naive={n[naive_key]}"
                    )
            if not math.isclose(r["time_secs"], n["retrieval_ns"] / 1e9, rel_tol=1e-12):
                problems.append(f"{setup}: retrieval time differs")
        lines.append(
            f"  {setup:<11} correct {k['correct']:>6,}  incorrect {k['incorrect']:>6,}  "
            f"errors {k['errors']:>5,}  (kagreport == naive)"
        )
    found = re.search(r"(\d+) result file\(s\) did not parse", kag_stderr)
    kag_unparsable = int(found.group(1)) if found else 0
    if kag_unparsable != naive["unparsable_files"]:
        problems.append(
            f"unparsable files: kagreport={kag_unparsable} naive={naive['unparsable_files']}"
        )
    lines.append(f"  unparsable files skipped: {kag_unparsable} (kagreport == naive)")
    if problems:
        raise AssertionError("naive grader and kagreport disagree:\n  " + "\n  ".join(problems))
    return lines


def _check_subset(datasets_path: str, results_path: str) -> tuple[int, int]:
    """Check that every dataset/question folder under ``results_path`` is in the datasets file.

    Returns (dataset folders, question folders) found. Raises :class:`AssertionError`
    naming the first few folders the datasets file lacks.
    """
    import json

    with open(datasets_path, encoding="utf-8") as file:
        truth: dict[str, dict[str, Any]] = json.load(file)
    datasets = questions = 0
    missing: list[str] = []
    for dataset in sorted(os.scandir(results_path), key=lambda e: e.name):
        if not dataset.is_dir():
            continue
        datasets += 1
        entries = truth.get(dataset.name)
        for question in os.scandir(dataset.path):
            if not question.is_dir():
                continue
            questions += 1
            if entries is None or question.name not in entries:
                missing.append(f"{dataset.name}/{question.name}")
    if missing:
        raise AssertionError(
            f"{len(missing):,} question folder(s) of {_rel(results_path)} are not in "
            f"{_rel(datasets_path)}, e.g. {', '.join(sorted(missing)[:5])}; the small run "
            "cannot use the big tree's datasets file"
        )
    if not questions:
        raise AssertionError(f"no question folders under {_rel(results_path)}")
    return datasets, questions


def _count_questions(datasets_path: str) -> int:
    """Entries (dataset x question) in a datasets file."""
    import json

    with open(datasets_path, encoding="utf-8") as file:
        truth: dict[str, dict[str, Any]] = json.load(file)
    return sum(len(entries) for entries in truth.values())


def _graded_files(kag_json: str) -> int:
    """Result files kagreport graded (``total`` = correct + incorrect + errors, every setup)."""
    import json

    return sum(int(s["overall"]["total"]) for s in json.loads(kag_json)["setups"])


def _mib(value: float) -> str:
    return f"{value / 2**20:,.1f} MiB"


def _verdict(ok: bool) -> str:
    return "PASS" if ok else "MISS"


def _machine_info() -> list[str]:
    import platform

    from kagreport import __version__

    try:
        from importlib.metadata import version

        msgspec_version = version("msgspec")
    except Exception:  # pragma: no cover - informational only
        msgspec_version = "?"
    mem = ""
    try:
        pages = os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
        mem = f", {pages / 2**30:.1f} GiB RAM"
    except (ValueError, OSError, AttributeError):
        pass
    return [
        f"machine: {platform.system()} {platform.release()} {platform.machine()}, "
        f"os.cpu_count()={os.cpu_count()}{mem}",
        f"python:  {platform.python_implementation()} {platform.python_version()} "
        f"({sys.executable})",
        f"kagreport {__version__}, msgspec {msgspec_version}",
    ]


def benchmark(big: Tree, small: Tree, repeats: int = REPEATS) -> bool:
    """Run every measurement, print the summary; return whether every target was met."""
    import json
    import time

    python = sys.executable
    me = [python, *_self_argv()]
    kagreport = _kagreport_exe()

    startup = Measure("python -c pass", [python, "-c", "pass"])
    kag_startup = Measure("kagreport --version", [kagreport, "--version"])
    io = Measure("I/O floor", [*me, "--io-floor", big.root])
    c_argv, c_label = c_floor_argv(os.path.join(HERE, "_data", "c-floor"))
    c_io = Measure("C floor", [*c_argv, big.root])
    kag = Measure(
        "kagreport",
        [kagreport, "stats", "-d", big.datasets_path, "-r", big.results_path, "--format", "json"],
    )
    naive = Measure("naive", [*me, "--naive", big.datasets_path, big.results_path])
    serial = Measure(
        "grade(workers=1)", [*me, "--grade-serial", big.datasets_path, big.results_path]
    )
    # The small results graded against the BIG datasets file: the same ground truth in
    # both runs, so the difference of their peaks is the cost of the extra result files.
    kag_small = Measure(
        "kagreport small",
        [kagreport, "stats", "-d", big.datasets_path, "-r", small.results_path, "--format", "json"],
    )
    truth_big = Measure("datasets only", [*me, "--load-datasets", big.datasets_path])
    truth_small = Measure("datasets only small", [*me, "--load-datasets", small.datasets_path])
    order = (startup, kag_startup, io, c_io, kag, serial, naive, kag_small, truth_big, truth_small)

    subset_datasets, subset_questions = _check_subset(big.datasets_path, small.results_path)
    big_questions = _count_questions(big.datasets_path)
    small_questions = _count_questions(small.datasets_path)
    print(
        f"\nmemory runs: the small results are graded against the big tree's datasets file;\n"
        f"  checked: all {subset_questions:,} question folders ({subset_datasets} datasets) of "
        f"{_rel(small.results_path)} are in {_rel(big.datasets_path)}"
    )

    env = child_env()
    print(f"\nchildren: {_describe_env(env)}")
    print(
        "warm-up: one untimed full read of each tree (os.walk + read) and one untimed run of\n"
        "every command below, so every timed measurement sees a warm page cache (and warm\n"
        "bytecode caches)"
    )
    start = time.perf_counter()
    for root in (big.root, small.root):
        _check_ok("warm-up read", run_child([*me, "--io-floor", root]))
    for measure in order:
        _check_ok(f"warm-up {measure.name}", run_child(measure.argv))
    print(f"  warm-up took {time.perf_counter() - start:.1f} s")

    print(f"\nmeasuring: {repeats} repetitions, interleaved, each in a fresh child process")
    for rep in range(repeats):
        for measure in order:
            sample = measure.run()
            print(
                f"  rep {rep + 1}/{repeats}  {measure.name:<20} {sample.wall:8.3f} s  "
                f"cpu {sample.cpu:7.3f} s  peak RSS {_mib(sample.maxrss):>11}",
                flush=True,
            )

    io_out = json.loads(io.samples[0].stdout)
    marker_size = os.path.getsize(os.path.join(big.root, MARKER))
    expected = {"files": big.marker["all_files"] + 1, "bytes": big.marker["bytes"] + marker_size}
    if io_out != expected:
        raise AssertionError(f"the I/O floor read {io_out}, expected {expected} (marker included)")
    if c_io.samples[0].stdout and json.loads(c_io.samples[0].stdout) != expected:
        raise AssertionError(f"the C floor read {c_io.samples[0].stdout}, expected {expected}")
    for measure in (kag, serial, naive, kag_small):
        if len({s.stdout for s in measure.samples}) != 1:
            raise AssertionError(f"{measure.name}: output differs between repetitions")
    if serial.samples[0].stdout != kag.samples[0].stdout:
        raise AssertionError("grade(workers=1).to_json() differs from the CLI's JSON")
    print(
        "\ncross-check of the naive grader against kagreport's JSON (every repetition identical):"
    )
    for line in _cross_check(kag.samples[0].stdout, naive.samples[0].stdout, kag.samples[0].stderr):
        print(line)
    print("  grade(workers=1).to_json() == the CLI's JSON, byte for byte")
    print(
        "  (the small run grades the small tree's answers against the big tree's datasets\n"
        "  file, so its counts are not cross-checked; only its memory is used)"
    )

    print("\none more, untimed run of kagreport on the big tree, sampling the memory of its")
    print("process tree (/proc smaps_rollup, every 20 ms), since it may fork worker processes:")
    sampled = run_child(kag.argv, sample=True)
    _check_ok("sampled kagreport", sampled)
    if sampled.tree_procs:
        print(
            f"  up to {sampled.tree_procs} processes; peak sum of RSS {_mib(sampled.tree_rss)}, "
            f"of PSS {_mib(sampled.tree_pss)} (shared pages counted once); wait4 ru_maxrss "
            f"{_mib(sampled.maxrss)} (largest single process)"
        )
    else:
        print("  not available here (needs Linux /proc with task/*/children and smaps_rollup)")

    files = big.result_files
    print(
        "\nresults: wall time from spawn to exit (median and min of "
        f"{repeats}), CPU = user + sys of that\n"
        "child, peak RSS = that child's own ru_maxrss from os.wait4; "
        f"big tree = {files:,} result files,\n"
        f"small = the small tree's {small.result_files:,} result files graded against the big "
        "tree's datasets.json"
    )
    print(f"  {'':<46} {'median':>9} {'min':>9} {'CPU med':>9} {'peak RSS med':>13} {'us/file':>8}")
    rows = (
        (startup, "python -c pass (interpreter startup)", False),
        (kag_startup, "kagreport --version (startup + imports)", False),
        (io, "I/O floor: os.walk + open().read(), big", True),
        (c_io, c_label + ", big", True),
        (kag, "kagreport stats --format json, big", True),
        (serial, "grade(workers=1) in-process, big", True),
        (naive, "naive: rglob + json.load grader, big", True),
        (kag_small, "kagreport stats, small results + big datasets", False),
        (truth_big, "load_datasets() only, big datasets.json", False),
        (truth_small, "load_datasets() only, small datasets.json", False),
    )
    for measure, label, per_file in rows:
        us = f"{measure.median_wall / files * 1e6:8.1f}" if per_file else f"{'':>8}"
        print(
            f"  {label:<46} {measure.median_wall:8.3f}s {measure.min_wall:8.3f}s "
            f"{measure.median_cpu:8.3f}s {_mib(measure.median_rss):>13} {us}"
        )
    floor = max(s.launcher_rss for m in order for s in m.samples)
    if floor:
        print(
            f"  (no peak RSS reading can be below the launcher's own peak, {_mib(floor)}; "
            "see the module docstring)"
        )

    io_ratio = kag.median_wall / io.median_wall
    io_ratio_min = kag.min_wall / io.min_wall
    c_ratio = kag.median_wall / c_io.median_wall
    c_ratio_min = kag.min_wall / c_io.min_wall
    naive_ratio = naive.median_wall / kag.median_wall
    naive_ratio_min = naive.min_wall / kag.min_wall
    graded_big = _graded_files(kag.samples[0].stdout)
    graded_small = _graded_files(kag_small.samples[0].stdout)
    if graded_big <= graded_small:
        raise AssertionError(f"graded files: big {graded_big:,} <= small {graded_small:,}")
    growth = (kag.median_rss - kag_small.median_rss) / (graded_big - graded_small)
    truth_per_question = (truth_big.median_rss - truth_small.median_rss) / (
        big_questions - small_questions
    )
    startup_share = kag_startup.median_wall / kag.median_wall
    print(
        f"\nkagreport CPU / wall: {kag.median_cpu / kag.median_wall:.2f} "
        f"(> 1 means worker processes ran in parallel; os.cpu_count()={os.cpu_count()}); "
        f"serial grade(workers=1) / I/O floor: {serial.median_wall / io.median_wall:.2f}x"
    )
    print(
        f"kagreport throughput: {files / kag.median_wall:,.0f} result files/s, "
        f"{big.marker['bytes'] / kag.median_wall / 2**20:,.0f} MiB/s (median wall, startup "
        f"included; startup alone is {startup_share:.0%} of it)"
    )
    net_kag = kag.median_wall - kag_startup.median_wall
    net_io = io.median_wall - startup.median_wall
    print(
        f"kagreport / I/O floor, each minus its startup: {net_kag:.3f} s / {net_io:.3f} s = "
        f"{net_kag / net_io:.2f}x"
    )
    print(
        f"memory growth per result file (same datasets file, {big_questions:,} questions, in "
        f"both runs):\n"
        f"  kagreport peak RSS {_mib(kag.median_rss)} grading {graded_big:,} files vs "
        f"{_mib(kag_small.median_rss)} grading {graded_small:,} -> {growth:,.1f} bytes per "
        "extra file"
    )
    print(
        f"datasets file, for information (not a target): load_datasets() alone peaks at "
        f"{_mib(truth_big.median_rss)} on {big_questions:,} questions vs "
        f"{_mib(truth_small.median_rss)} on {small_questions:,} -> "
        f"{truth_per_question:,.1f} bytes per extra question\n"
        f"  (file: {os.path.getsize(big.datasets_path) / big_questions:,.1f} bytes per question "
        "on disk)"
    )
    checks = (
        (
            f"kagreport / C floor:    {c_ratio:5.2f}x median ({c_ratio_min:.2f}x min)",
            f"target <= {TARGET_IO_RATIO}x",
            c_ratio <= TARGET_IO_RATIO,
        ),
        (
            f"naive / kagreport:      {naive_ratio:5.2f}x median ({naive_ratio_min:.2f}x min)",
            f"target >= {TARGET_NAIVE_RATIO}x",
            naive_ratio >= TARGET_NAIVE_RATIO,
        ),
        (
            f"growth per result file: {growth:5.1f} bytes",
            f"target <= {TARGET_BYTES_PER_FILE:.0f} bytes",
            growth <= TARGET_BYTES_PER_FILE,
        ),
    )
    print(
        f"kagreport / Python I/O floor: {io_ratio:.2f}x median ({io_ratio_min:.2f}x min); "
        f"C floor / Python I/O floor: {c_io.median_wall / io.median_wall:.2f}x"
    )
    print("\ntargets")
    for text, target, ok in checks:
        print(f"  {text:<52} {target:<20} {_verdict(ok)}")
    return all(ok for _text, _target, ok in checks)


def profile(tree: Tree, top: int = 25) -> None:
    """Run :func:`kagreport.grade` in-process under cProfile; print the top functions.

    The profiled call uses ``workers=1``: with worker processes, cProfile would only
    see the parent waiting on them. The default call is timed too, unprofiled.
    """
    import cProfile
    import io as _io
    import pstats
    import time

    from kagreport import grade

    io_floor(tree.root)  # warm the page cache
    start = time.perf_counter()
    grade(tree.datasets_path, tree.results_path)
    default = time.perf_counter() - start
    start = time.perf_counter()
    grade(tree.datasets_path, tree.results_path, workers=1)
    serial = time.perf_counter() - start
    profiler = cProfile.Profile()
    start = time.perf_counter()
    profiler.enable()
    report = grade(tree.datasets_path, tree.results_path, workers=1)
    profiler.disable()
    profiled = time.perf_counter() - start
    print(
        f"\nprofile of kagreport.grade(workers=1) in-process on {tree.result_files:,} result "
        f"files (page cache warm): {serial:.3f} s without the profiler ({default:.3f} s with "
        f"the default workers), {profiled:.3f} s under cProfile; {len(report.items):,} items, "
        f"{len(report.unparsable_files)} unparsable"
    )
    for key in ("cumulative", "tottime"):
        stream = _io.StringIO()
        stats = pstats.Stats(profiler, stream=stream)
        stats.sort_stats(key).print_stats(top)
        print(f"\n=== top {top} by {key} ===")
        text = stream.getvalue()
        # Drop pstats' preamble up to the column header.
        at = text.find("   ncalls")
        print((text[at:] if at >= 0 else text).rstrip())


def source_state() -> tuple[str, str]:
    """A digest of kagreport's sources, and a line saying where they are and their git state."""
    import hashlib
    import subprocess

    import kagreport

    package = os.path.dirname(os.path.abspath(kagreport.__file__))
    digest = hashlib.sha256()
    for folder, dirs, names in os.walk(package):
        dirs[:] = sorted(d for d in dirs if d != "__pycache__")
        for name in sorted(names):
            if name.endswith(".py"):
                path = os.path.join(folder, name)
                digest.update(os.path.relpath(path, package).encode() + b"\0")
                with open(path, "rb") as file:
                    digest.update(file.read() + b"\0")
    git = ""
    try:
        head = subprocess.run(
            ["git", "-C", package, "rev-parse", "--short", "HEAD"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
        dirty = subprocess.run(
            ["git", "-C", package, "status", "--porcelain", "--", "."],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.splitlines()
        git = f", git {head}" + (f" + {len(dirty)} uncommitted file(s)" if dirty else "")
    except (OSError, subprocess.CalledProcessError):
        pass
    short = digest.hexdigest()[:12]
    return short, f"{_rel(package)}{git}, sources sha256 {short}"


# --------------------------------------------------------------------------- main


def _parse_args(argv: Sequence[str] | None) -> Any:
    import argparse

    parser = argparse.ArgumentParser(
        description="Time kagreport stats against an I/O floor and a naive grader, "
        "with peak memory, on a simulated tree of KAG result files.",
    )
    parser.add_argument(
        "--files",
        type=int,
        default=DEFAULT_FILES,
        metavar="N",
        help=f"result files in the big tree (default: {DEFAULT_FILES:,}); the small tree has N/10",
    )
    parser.add_argument(
        "--data",
        metavar="DIR",
        help="folder of the big tree (default: benchmarks/_data/stats-N)",
    )
    parser.add_argument(
        "--small-data",
        metavar="DIR",
        help="folder of the small tree (default: benchmarks/_data/stats-<N/10>)",
    )
    parser.add_argument("--seed", type=int, default=0, help="simulation seed (default: 0)")
    parser.add_argument(
        "--repeats",
        type=int,
        default=REPEATS,
        metavar="K",
        help=f"timed repetitions of each measurement (default: {REPEATS})",
    )
    parser.add_argument(
        "--keep",
        action="store_true",
        help="keep the trees this run generates (a rerun then reuses them); "
        "trees that already existed are always reused and kept",
    )
    parser.add_argument(
        "--profile",
        action="store_true",
        help="instead of the measurements, profile kagreport.grade() on the big tree",
    )
    # Child modes (what the measurements run); not for people.
    parser.add_argument("--io-floor", metavar="ROOT", help=argparse.SUPPRESS)
    parser.add_argument("--naive", nargs=2, metavar=("DATASETS", "RESULTS"), help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.files < SETUPS * 10:
        parser.error(f"--files must be at least {SETUPS * 10}")
    return args


def main(argv: Sequence[str] | None = None) -> int:
    """Run the benchmark; return 0 when every target is met, 1 otherwise."""
    # The children run with as few imports as possible (see the module docstring).
    args_list = sys.argv[1:] if argv is None else list(argv)
    if len(args_list) >= 4 and args_list[0] == "--launch" and args_list[2] == "--":
        return launch(args_list[1], args_list[3:])
    if len(args_list) >= 5 and args_list[0] == "--launch" and args_list[2:4] == ["--sample", "--"]:
        return launch(args_list[1], args_list[4:], sample=True)
    if len(args_list) == 2 and args_list[0] == "--io-floor":
        counts = io_floor(args_list[1])
        print(f'{{"files": {counts["files"]}, "bytes": {counts["bytes"]}}}')
        return 0
    if len(args_list) == 3 and args_list[0] == "--grade-serial":
        from kagreport import grade

        sys.stdout.write(grade(args_list[1], args_list[2], workers=1).to_json())
        return 0
    if len(args_list) == 2 and args_list[0] == "--load-datasets":
        from kagreport import load_datasets

        print(load_datasets(args_list[1]).scorable_questions)
        return 0
    if len(args_list) == 3 and args_list[0] == "--naive":
        import json

        print(json.dumps(naive_grade(args_list[1], args_list[2])))
        return 0

    import shutil

    args = _parse_args(args_list)
    if args.io_floor is not None or args.naive is not None:
        raise SystemExit("bench_stats: --io-floor and --naive take their arguments alone")
    if not hasattr(os, "posix_spawn") or not hasattr(os, "wait4"):
        raise SystemExit("bench_stats: needs os.posix_spawn and os.wait4 (Linux or macOS)")
    files: int = args.files
    small_files = files // 10
    data_dir = os.path.join(HERE, "_data")
    big_root = args.data or os.path.join(data_dir, f"stats-{files}")
    small_root = args.small_data or os.path.join(data_dir, f"stats-{small_files}")

    print("kagreport stats benchmark (SIMULATED data: no model was run)")
    for line in _machine_info():
        print(line)
    digest, where = source_state()
    print(f"kagreport source: {where}")
    made: list[Tree] = []
    try:
        big = ensure_tree(big_root, files, args.seed)
        if big.generated:
            made.append(big)
        print(f"tree:       {big.describe()}")
        if args.profile:
            profile(big)
            return 0
        small = ensure_tree(small_root, small_files, args.seed)
        if small.generated:
            made.append(small)
        print(f"small tree: {small.describe()}")
        ok = benchmark(big, small, max(1, args.repeats))
        now, where = source_state()
        if now != digest:
            print(
                "\nWARNING: kagreport's sources changed during the run; the measurements may "
                f"mix versions (now: {where})"
            )
            ok = False
    finally:
        if not args.keep:
            for tree in made:
                shutil.rmtree(tree.root, ignore_errors=True)
                print(f"removed {_rel(tree.root)} (pass --keep to reuse it next time)")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
