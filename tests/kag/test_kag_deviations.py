"""Where kagreport deliberately differs from kag (KAG_STATS_SPEC.md section 5; issue #11 items 10-14).

Each test builds the smallest input for one deviation. What kag does was seen with the real kag
(``../shared/kag-real``, commit 12389ee) and is quoted in the spec.
"""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import Tree, mcq, run_cli, stats
from kagreport import find, grade

U64_MAX = 2**64 - 1


# --- 10. Huge generation times and graph sizes: exact, where kag panics or wraps ----------------


def test_generation_time_beyond_durations_range_is_printed(tree: Tree) -> None:
    # kag: `Duration::div_f64` -> `from_secs_f64(2**64)` panics ("value is either too big").
    tree.question("ds", "q1", mcq("A"))
    tree.ok("ds", "q1", "s", "A", secs=U64_MAX - 10)
    report = grade(tree.datasets_path, tree.results)
    overall = report.to_dict()["setups"][0]["overall"]
    # 2**64 - 11 is nearer to 2**64 than to the double below it (2**64 - 4096).
    assert overall["avg_generation_secs"] == overall["total_generation_secs"] == 2.0**64
    assert '"avg_generation_secs": 1.8446744073709552e+19' in report.to_json()
    assert "  18446744073709551616.000  " in report.to_text()


def test_two_generation_times_of_2_63_seconds_sum_exactly(tree: Tree) -> None:
    # kag: `Duration + Duration` overflows u64 seconds and panics.
    for question in ("q1", "q2"):
        tree.question("ds", question, mcq("A"))
        tree.ok("ds", question, "s", "A", secs=2**63)
    overall = grade(tree.datasets_path, tree.results).to_dict()["setups"][0]["overall"]
    assert overall["total_generation_secs"] == 2.0**64  # 2 x 2**63
    assert overall["avg_generation_secs"] == 2.0**63


def test_vertices_sum_beyond_u64_does_not_wrap(tree: Tree) -> None:
    # kag's release build: u64 addition wraps, 2**64 - 1 + 1 = 0 vertices.
    for question, vertices in (("q1", U64_MAX), ("q2", 1)):
        tree.question("ds", question, mcq("A"))
        tree.ok("ds", question, "s", "A", retrieval=(0, 1, vertices, 0, 0))
    report = grade(tree.datasets_path, tree.results)
    retrieval = report.to_dict()["setups"][0]["overall"]["retrieval"]
    assert retrieval["vertices"] == 2**64
    assert retrieval["avg_vertices"] == 2.0**63
    assert '"vertices": 18446744073709551616,' in report.to_json()


# --- 11. A FIFO named *.json: kag's `find` blocks on it forever -----------------------------------


def _run(*args: str, cwd: str | os.PathLike[str] | None = None) -> subprocess.CompletedProcess[str]:
    # Bounded: a blocked read would otherwise hang the suite.
    return subprocess.run(
        [sys.executable, "-m", "kagreport", *args],
        capture_output=True, text=True, encoding="utf-8", cwd=cwd, timeout=120, check=False,
    )  # fmt: skip


def test_fifo_does_not_block_find(tree: Tree) -> None:
    tree.ok("ds", "q1", "s", "hello")
    fifo = tree.results / "ds" / "q1" / "t.json"
    os.mkfifo(fifo)
    assert stat.S_ISFIFO(os.stat(fifo).st_mode)
    done = _run("stats", "-v", "-r", str(tree.results), "find", "hello", "--format", "json")
    assert done.returncode == 0
    assert json.loads(done.stdout) == {
        "matches": 1,
        "total": 2,
        "paths": [str(tree.results / "ds" / "q1" / "s.json")],
    }
    assert f"failed to read result file {fifo}: not a regular file" in done.stderr
    text = _run("stats", "-r", str(tree.results), "find", "hello")
    assert text.returncode == 0
    assert "1 result file could not be read or parsed" in text.stderr


def test_fifo_is_not_a_result_file_for_stats(tree: Tree) -> None:
    # kag's `stats` already ignores it (not a regular file); kagreport's too.
    tree.question("ds", "q1", mcq("A"))
    (tree.results / "ds" / "q1").mkdir(parents=True)
    os.mkfifo(tree.results / "ds" / "q1" / "s.json")
    done = _run("stats", "-d", str(tree.datasets_path), "-r", str(tree.results))
    assert done.returncode == 0
    assert done.stdout.endswith("No scorable results were found.\n")


# --- 12. A match under a folder whose name is not UTF-8 -----------------------------------------


def test_non_utf8_folder_is_printed_with_replacement_character(tree: Tree) -> None:
    # kag: serde_json refuses the PathBuf ("path contains invalid UTF-8 characters"), exit 1.
    folder = os.path.join(os.fsencode(tree.results), b"d\xffs")
    os.makedirs(os.path.join(folder, b"q1"))
    body = {"ok": {"result": "hello", "stats": stats()}}
    with open(os.path.join(folder, b"q1", b"s.json"), "w", encoding="utf-8") as file:
        json.dump(body, file)
    done = subprocess.run(
        [sys.executable, "-m", "kagreport", "stats", "-r", str(tree.results), "find", "hello",
         "--format", "json"],
        capture_output=True, timeout=120, check=False,
        env={**os.environ, "PYTHONIOENCODING": "utf-8"},
    )  # fmt: skip
    assert done.returncode == 0
    path = f"{tree.results}/d\ufffds/q1/s.json"
    assert json.loads(done.stdout.decode("utf-8")) == {"matches": 1, "total": 1, "paths": [path]}
    assert find("hello", tree.results).to_dict()["paths"] == [path]


# --- 13. -q still prints the one error line ------------------------------------------------------


@pytest.mark.parametrize("where", ["top", "stats"])
def test_quiet_still_prints_the_error(tmp_path: Path, where: str) -> None:
    # kag -q: exit 1 and nothing at all on stderr (its errors are log records).
    missing = str(tmp_path / "missing.json")
    args = ["-q", "stats", "-d", missing] if where == "top" else ["stats", "-q", "-d", missing]
    done = run_cli(*args)
    assert done.returncode == 1
    assert done.stdout == ""
    assert done.stderr == (
        f"kagreport: error: cannot read the datasets file {missing}: No such file or directory\n"
    )


# --- 14. find's text mode prints the lines; --fzf runs fzf with kag's options ---------------------


def _fake_fzf(folder: Path) -> Path:
    # Records its arguments and its input, then exits as fzf does when the user quits (130).
    script = folder / "fzf"
    script.write_text(
        f"#!{sys.executable}\n"
        "import json, sys\n"
        f"log = {str(folder / 'fzf.json')!r}\n"
        "data = sys.stdin.buffer.read().decode('utf-8')\n"
        "json.dump({'argv': sys.argv[1:], 'stdin': data}, open(log, 'w'))\n"
        "sys.exit(130)\n",
        encoding="utf-8",
    )
    script.chmod(0o755)
    return folder / "fzf.json"


def test_fzf_gets_kags_options_including_multi(tree: Tree, tmp_path: Path) -> None:
    tree.ok("ds", "q1", "s", "line one\nline two")
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    log = _fake_fzf(bin_dir)
    env = {**os.environ, "PATH": f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}"}
    done = subprocess.run(
        [sys.executable, "-m", "kagreport", "stats", "-r", str(tree.results), "find", "line",
         "--fzf"],
        capture_output=True, text=True, encoding="utf-8", env=env, timeout=120, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert done.stdout == ""
    assert done.stderr == "\n1 occurrence(s) out of 1 result file(s) matched the pattern.\n"
    seen = json.loads(log.read_text(encoding="utf-8"))
    # kag src/subcommand/stats/subcommand/find/mod.rs, run_fzf (commit a6fa0e5 added --multi).
    assert seen["argv"] == [
        "--delimiter", "\t", "--with-nth", "2..", "--multi", "--preview", "cat {1}",
    ]  # fmt: skip
    assert seen["stdin"] == f"{tree.results}/ds/q1/s.json\tline one \u23ce line two\n"


def test_text_mode_without_fzf_prints_the_lines(tree: Tree) -> None:
    # kag always pipes into fzf (exit 1 "Failed to run `fzf`" when it is missing).
    tree.ok("ds", "q1", "s", "hello")
    done = run_cli("stats", "-r", str(tree.results), "find", "hello")
    assert done.returncode == 0
    assert done.stdout == f"{tree.results}/ds/q1/s.json\thello\n"
    assert done.stderr == "\n1 occurrence(s) out of 1 result file(s) matched the pattern.\n"
