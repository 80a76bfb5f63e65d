"""Golden ``kag stats`` outputs, written by hand from KAG_STATS_SPEC.md sections 2.2 and 2.3.

The run: datasets ``alpha`` (q1, q2; answer A) and ``beta`` (q1; answer B).

- setup ``kag``: alpha/q1 "A" (2 s, prompt "hello" = 5 B, retrieval 0.5 s, 3/2/5),
  alpha/q2 "C" (1.5 s, "h\u00e9llo" = 6 B, retrieval 1 s, 4/1/0), beta/q1 "b" (1 s, "pp" = 2 B,
  no retrieval).
- setup ``base``: alpha/q1 error, alpha/q2 "A" (3 s, "abc" = 3 B), beta/q1 " B " (0.25 s, "" = 0 B).

Hand computation: both setups have accuracy 2/3, so ``base`` ranks first by name.
kag: GEN 4.5 s / 3 = 1.5; CTX 13 B / 3 = 4.333...; retrieval 1.5 s / 2 = 0.75, means 3.5/1.5/2.5.
base: GEN 3.25 s / 2 = 1.625; CTX 3 B / 2 = 1.5; beta's CTX is null (all prompts empty).
"""

from __future__ import annotations

import pytest

from conftest import Tree, mcq, run_cli
from kagreport import grade


@pytest.fixture
def run(tree: Tree) -> Tree:
    tree.question("alpha", "q1", mcq("A"))
    tree.question("alpha", "q2", mcq("A"))
    tree.question("beta", "q1", mcq("B"))
    tree.ok("alpha", "q1", "kag", "A", secs=2, prompt="hello", retrieval=(0, 500_000_000, 3, 2, 5))
    tree.ok("alpha", "q2", "kag", "C", secs=1, nanos=500_000_000, prompt="h\u00e9llo",
            retrieval=(1, 0, 4, 1, 0))  # fmt: skip
    tree.ok("beta", "q1", "kag", "b", secs=1, prompt="pp")
    tree.error("alpha", "q1", "base", "timeout")
    tree.ok("alpha", "q2", "base", "A", secs=3, prompt="abc")
    tree.ok("beta", "q1", "base", " B ", secs=0, nanos=250_000_000, prompt="")
    return tree


# Columns: SETUP<w=5>, ACC% 7, PREC% 7, COVER% 8, OK 5, WRONG 5, ERR 4, TOT 3, GEN(s) 8,
# CTX_LEN 10, then RET(s) 8, VERTICE 7, RELATION 8, PROPERTY 8; two spaces between.
GOLDEN_TEXT = (
    "Datasets: 2 | Scorable questions: 3 | Skipped files: 0\n"
    "\n"
    "SETUP     ACC%    PREC%    COVER%     OK  WRONG   ERR  TOT    GEN(s)     CTX_LEN"
    "    RET(s)  VERTICE  RELATION  PROPERTY\n"
    "base     66.67   100.00     66.67      2      0     1    3     1.625       1.500\n"
    "  └ alpha    50.00   100.00     50.00      1      0     1    2     3.000       3.000\n"
    "  └ beta   100.00   100.00    100.00      1      0     0    1     0.250           -\n"
    "kag      66.67    66.67    100.00      2      1     0    3     1.500       4.333"
    "     0.750     3.50      1.50      2.50\n"
    "  └ alpha    50.00    50.00    100.00      1      1     0    2     1.750       5.500"
    "     0.750     3.50      1.50      2.50\n"
    "  └ beta   100.00   100.00    100.00      1      0     0    1     1.000       2.000\n"
    "\n"
    "ACC% = correct / scored, PREC% = correct / committed, COVER% = committed / scored\n"
    "GEN(s)/RET(s) = mean generation/retrieval time per question, in seconds\n"
    "CTX_LEN = average context length\n"
)

GOLDEN_JSON = """\
{
  "datasets": 2,
  "scorable_questions": 3,
  "skipped_files": 0,
  "setups": [
    {
      "setup": "base",
      "overall": {
        "total": 3,
        "correct": 2,
        "incorrect": 0,
        "errors": 1,
        "parsed": 2,
        "accuracy": 0.6666666666666666,
        "precision": 1.0,
        "coverage": 0.6666666666666666,
        "avg_generation_secs": 1.625,
        "total_generation_secs": 3.25,
        "avg_context_length": 1.5,
        "retrieval": null
      },
      "per_dataset": {
        "alpha": {
          "total": 2,
          "correct": 1,
          "incorrect": 0,
          "errors": 1,
          "parsed": 1,
          "accuracy": 0.5,
          "precision": 1.0,
          "coverage": 0.5,
          "avg_generation_secs": 3.0,
          "total_generation_secs": 3.0,
          "avg_context_length": 3.0,
          "retrieval": null
        },
        "beta": {
          "total": 1,
          "correct": 1,
          "incorrect": 0,
          "errors": 0,
          "parsed": 1,
          "accuracy": 1.0,
          "precision": 1.0,
          "coverage": 1.0,
          "avg_generation_secs": 0.25,
          "total_generation_secs": 0.25,
          "avg_context_length": null,
          "retrieval": null
        }
      }
    },
    {
      "setup": "kag",
      "overall": {
        "total": 3,
        "correct": 2,
        "incorrect": 1,
        "errors": 0,
        "parsed": 3,
        "accuracy": 0.6666666666666666,
        "precision": 0.6666666666666666,
        "coverage": 1.0,
        "avg_generation_secs": 1.5,
        "total_generation_secs": 4.5,
        "avg_context_length": 4.333333333333333,
        "retrieval": {
          "time_secs": 1.5,
          "vertices": 7,
          "relationships": 3,
          "properties": 5,
          "samples": 2,
          "avg_time_secs": 0.75,
          "avg_vertices": 3.5,
          "avg_relationships": 1.5,
          "avg_properties": 2.5
        }
      },
      "per_dataset": {
        "alpha": {
          "total": 2,
          "correct": 1,
          "incorrect": 1,
          "errors": 0,
          "parsed": 2,
          "accuracy": 0.5,
          "precision": 0.5,
          "coverage": 1.0,
          "avg_generation_secs": 1.75,
          "total_generation_secs": 3.5,
          "avg_context_length": 5.5,
          "retrieval": {
            "time_secs": 1.5,
            "vertices": 7,
            "relationships": 3,
            "properties": 5,
            "samples": 2,
            "avg_time_secs": 0.75,
            "avg_vertices": 3.5,
            "avg_relationships": 1.5,
            "avg_properties": 2.5
          }
        },
        "beta": {
          "total": 1,
          "correct": 1,
          "incorrect": 0,
          "errors": 0,
          "parsed": 1,
          "accuracy": 1.0,
          "precision": 1.0,
          "coverage": 1.0,
          "avg_generation_secs": 1.0,
          "total_generation_secs": 1.0,
          "avg_context_length": 2.0,
          "retrieval": null
        }
      }
    }
  ]
}
"""

EMPTY_TEXT = (
    "Datasets: 0 | Scorable questions: 1 | Skipped files: 0\n\nNo scorable results were found.\n"
)
EMPTY_JSON = (
    '{\n  "datasets": 0,\n  "scorable_questions": 1,\n  "skipped_files": 0,\n  "setups": []\n}\n'
)


def test_text_matches_the_hand_written_table(run: Tree) -> None:
    assert grade(run.datasets_path, run.results).to_text() == GOLDEN_TEXT


def test_json_matches_the_hand_written_document(run: Tree) -> None:
    assert grade(run.datasets_path, run.results).to_json() == GOLDEN_JSON


def test_cli_prints_the_golden_outputs(run: Tree) -> None:
    text = run_cli("stats", "-d", str(run.datasets_path), "-r", str(run.results))
    assert (text.returncode, text.stdout, text.stderr) == (0, GOLDEN_TEXT, "")
    js = run_cli("stats", "--datasets", str(run.datasets_path), "--results", str(run.results),
                 "--format", "json")  # fmt: skip
    assert (js.returncode, js.stdout, js.stderr) == (0, GOLDEN_JSON, "")


def test_empty_results_root(tree: Tree) -> None:
    tree.question("ds", "q1", mcq("A"))
    report = grade(tree.datasets_path, tree.results)
    assert report.to_text() == EMPTY_TEXT
    assert report.to_json() == EMPTY_JSON


def test_sub_rows_show_each_datasets_own_context_length(run: Tree) -> None:
    # kag prints the setup's overall CTX_LEN (4.333) on every sub-row; the spec's decision fixes it.
    lines = grade(run.datasets_path, run.results).to_text().splitlines()
    kag_alpha = lines[lines.index(next(x for x in lines if x.startswith("kag"))) + 1]
    assert kag_alpha.split()[10] == "5.500"


def test_setup_column_widens_to_the_longest_name(tree: Tree) -> None:
    tree.question("ds", "q1", mcq("A"))
    tree.ok("ds", "q1", "a-very-long-setup-name", "A", prompt="")
    tree.ok("ds", "q1", "s", "x", prompt="")
    lines = grade(tree.datasets_path, tree.results).to_text().splitlines()
    assert lines[2].startswith("SETUP" + " " * 17 + "     ACC%")
    assert lines[3] == (
        "a-very-long-setup-name   100.00   100.00    100.00      1      0     0    1"
        "     1.000           -"
    )
    # Sub-row names are padded to w - 4 = 18.
    assert lines[4].startswith("  └ ds" + " " * 16 + "   100.00")
    assert lines[5].startswith("s" + " " * 21 + "     0.00")
