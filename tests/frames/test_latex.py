"""The LaTeX tables compile in a two-column paper and fit it (issue #14 item 6; PITFALLS B16).

Each table of :func:`kagreport.frames.to_latex` is set by pdflatex in a two-column
``article`` on A4 and on letter paper: the log must hold no ``Overfull \\hbox`` (TeX's
report of a line wider than its box), and each table's measured width (``\\wd`` of the
tabular in a box) must be at most ``\\columnwidth``, or ``\\textwidth`` for
``wide=True``. A control table that is too wide shows that the check fails when it should.
Skipped, saying why, where pdflatex or booktabs.sty is missing (``make tex`` installs them).
"""

from __future__ import annotations

import re
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pandas as pd
import pytest

from kagreport import StatsReport, grade
from kagreport.evaluation import AnswerItem, evaluate_answers, evaluation_from_stats
from kagreport.evaluation.judges import ExactMatch, TokenF1
from kagreport.examples import mmlu_pro_philosophy
from kagreport.frames import to_latex
from kagreport.kag import simulate_run
from kagreport.runs import Run, compare_setups

PAPERS = ("a4paper", "letterpaper")
#: \columnwidth and \textwidth of a 10 pt two-column article (LaTeX's article.cls):
#: A4 455 pt text less a 10 pt gap gives two 221 pt columns (after rounding to
#: whole points); letter 469 pt gives 229.5 pt. Checked against the log below.
WIDTHS = {"a4paper": (221.0, 452.0), "letterpaper": (229.5, 469.0)}


def _tex_tools() -> tuple[str, str]:
    pdflatex = shutil.which("pdflatex")
    kpsewhich = shutil.which("kpsewhich")
    if pdflatex is None or kpsewhich is None:
        pytest.skip("pdflatex is not installed (make tex installs TeX Live's base packages)")
    found = subprocess.run(
        [kpsewhich, "booktabs.sty"], capture_output=True, text=True, check=False
    ).stdout
    if not found.strip():
        pytest.skip("booktabs.sty is not installed (make tex installs texlive-latex-recommended)")
    return pdflatex, kpsewhich


@pytest.fixture(scope="module")
def pdflatex() -> str:
    return _tex_tools()[0]


@pytest.fixture(scope="module")
def tables(tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple[str, str, bool]]:
    """Name -> (to_latex in its float with a LaTeX caption, bare tabular, wide?): every kind
    of table, in both sizes."""
    example = mmlu_pro_philosophy()
    report = grade(example.datasets, example.results)
    made = simulate_run(tmp_path_factory.mktemp("sim"), questions=30, datasets=3)
    sim: StatsReport = grade(made.datasets_path, made.results_path)
    pro = evaluation_from_stats(report, "gemini-1-5-pro-002", answers=False)
    llama = evaluation_from_stats(report, "meta-llama-3-1-70b-instruct", answers=False)
    run = Run.from_stats(sim)
    pair = compare_setups(run, pairs="all-pairs", n_resamples=2000).comparisons[0]
    # A run of scores without outcomes: its leaderboard (token F1 is no proportion).
    references = ["Paris", "Lyon", "Nice", "Lille", "Brest", "Caen"] * 4
    said = {
        "retrieval-augmented-qwen3-8b_top_k_10": ["Paris", "Lyon x", "Nice", "no", "B", "Caen"],
        "native-qwen3-8b": ["Paris", "Lyon", "x", "no", "Brest", "y"],
    }
    evaluations = []
    for answers in said.values():
        items = [
            AnswerItem(f"q{i}", "?", answer, reference)
            for i, (answer, reference) in enumerate(zip(answers * 4, references, strict=True))
        ]
        evaluation = evaluate_answers(items, [ExactMatch(), TokenF1()])
        evaluations.append(evaluation)
    board = Run.from_evaluations(evaluations, labels=list(said))
    # PITFALLS B16's frame.
    b16 = pd.DataFrame(
        {"acc_%": ["85.0% ± 2.1", "R&D"], "recall@5": [0.5, 0.25], "judge_a": ["x", "y"]},
        index=pd.Index(["qwen35-9b-kag", "base"], name="setup_name"),
    )
    sources = {
        "stats": report,
        "stats_sim": sim,
        "comparison": pro.compare(llama, n_resamples=2000),
        "setup_comparison": pair,
        "evaluation": pro,
        "leaderboard_f1": (board, "token_f1"),
        "leaderboard_exact": (board, "exact_match"),
        "b16": b16,
    }
    out: dict[str, tuple[str, str, bool]] = {}
    for name, source in sources.items():
        table, metric = source if isinstance(source, tuple) else (source, None)
        for wide in (False, True):
            key = f"{name}{'_wide' if wide else ''}"
            floated = to_latex(
                table,  # type: ignore[arg-type]
                metric=metric,
                wide=wide,
                caption=rf"\texttt{{{key.replace('_', '-')}}}: $\alpha$",
                label=f"tab:{key}",
                escape_caption=False,
            )
            bare = to_latex(table, metric=metric, wide=wide)  # type: ignore[arg-type]
            out[key] = (floated, bare, wide)
    return out


def _measured(name: str, latex: str) -> str:
    """TeX that boxes the table's tabular in its font size and logs its width."""
    head = latex[: latex.index(r"\begin{tabular}")]
    setup = "".join(line for line in head.splitlines() if line != r"\begingroup")
    tabular = latex[latex.index(r"\begin{tabular}") : latex.index(r"\end{tabular}")]
    return (
        f"\\sbox\\kagbox{{{setup}{tabular}\\end{{tabular}}}}"
        f"\\typeout{{KAGWIDTH {name} \\the\\wd\\kagbox}}\n"
    )


def _compile(pdflatex: str, folder: Path, paper: str, body: str) -> str:
    """The log of pdflatex on a two-column article around ``body`` (the run must succeed)."""
    folder.mkdir(parents=True, exist_ok=True)
    source = folder / "paper.tex"
    source.write_text(
        f"\\documentclass[{paper},twocolumn]{{article}}\n"
        "\\usepackage{booktabs}\n\\newsavebox\\kagbox\n"
        "\\begin{document}\n"
        "\\typeout{KAGPAGE \\the\\columnwidth\\space\\the\\textwidth}\n"
        f"{body}\n\\end{{document}}\n",
        encoding="utf-8",
    )
    done = subprocess.run(
        [pdflatex, "-interaction=nonstopmode", "-halt-on-error", "paper.tex"],
        cwd=folder,
        capture_output=True,
        text=True,
        encoding="latin-1",  # TeX's log is bytes; any byte decodes
        check=False,
        timeout=300,
    )
    log = (folder / "paper.log").read_text(encoding="latin-1")
    assert done.returncode == 0, log[-3000:]
    assert (folder / "paper.pdf").stat().st_size > 0
    return log


def _widths(log: str) -> Iterator[tuple[str, float]]:
    for name, points in re.findall(r"KAGWIDTH (\S+) ([0-9.]+)pt", log):
        yield name, float(points)


def _page(log: str) -> tuple[float, float]:
    column, text = re.findall(r"KAGPAGE ([0-9.]+)pt ([0-9.]+)pt", log)[0]
    return float(column), float(text)


@pytest.mark.slow
@pytest.mark.parametrize("paper", PAPERS)
def test_every_table_compiles_and_fits_a_two_column_paper(
    pdflatex: str, tables: dict[str, tuple[str, str, bool]], paper: str, tmp_path: Path
) -> None:
    body = []
    for k, (name, (floated, bare, _)) in enumerate(tables.items()):
        # In its float with a caption, as a paper has it; then the bare tabular, measured.
        body += [floated, _measured(name, bare), "Text.\n"]
        if k % 4 == 3:
            body.append("\\clearpage\n")  # no pile of floats waiting
    log = _compile(pdflatex, tmp_path / paper, paper, "\n".join(body))
    column, text = _page(log)
    assert (column, text) == WIDTHS[paper]
    assert "Overfull \\hbox" not in log, re.findall(r"Overfull \\hbox.*", log)
    widths = dict(_widths(log))
    assert set(widths) == set(tables)
    for name, width in widths.items():
        room = text if tables[name][2] else column
        assert 0 < width <= room, f"{name}: {width} pt in {room} pt"
    print(f"\n{paper}: \\columnwidth {column} pt, \\textwidth {text} pt")
    for name, width in widths.items():
        print(f"  {name:24} {width:7.1f} pt")


@pytest.mark.slow
def test_to_latex_captions_and_floats_compile(pdflatex: str, tmp_path: Path) -> None:
    frame = pd.DataFrame({"accuracy": [0.619, 0.5], "score": [-1.5, 2.0]}, index=["a", "b"])
    narrow = to_latex(
        frame, caption=r"Accuracy $\pm$ Wilson, see~\S2", label="tab:a", escape_caption=False
    )
    wide = to_latex(frame, caption="50% of R&D_x", label="tab:b", wide=True)
    assert narrow.startswith("\\begin{table}\n")
    assert "\\begin{table*}" in wide
    assert r"\caption{Accuracy $\pm$ Wilson, see~\S2}" in narrow
    assert r"\caption{50\% of R\&D\_x}" in wide
    assert " & accuracy & \\\\\n & (\\%) & score \\\\\n" in narrow  # the unit beneath
    assert r"a & 61.9 & $-$1.50 \\" in narrow  # 0.619 in percent; a real minus, 3 digits
    log = _compile(pdflatex, tmp_path, "a4paper", narrow + wide + "See Table~\\ref{tab:a}.")
    assert "Overfull \\hbox" not in log


@pytest.mark.slow
def test_the_check_fails_on_a_table_too_wide(pdflatex: str, tmp_path: Path) -> None:
    # Control: twelve columns of 20 characters (~600 pt at \footnotesize) in one column.
    frame = pd.DataFrame({f"column {i}": ["a cell of twenty chr"] for i in range(12)})
    latex = to_latex(frame, caption="too wide")
    measured = _measured("control", to_latex(frame))
    log = _compile(pdflatex, tmp_path, "a4paper", latex + measured)
    assert "Overfull \\hbox" in log
    ((_, width),) = _widths(log)
    assert width > _page(log)[0]


def test_names_are_cut_after_a_separator() -> None:
    from kagreport.frames._booktabs import name_lines

    assert name_lines("meta-llama-3-1-70b-instruct", 12) == ("meta-llama-", "3-1-70b-", "instruct")
    assert name_lines("llama-2-7b-hf", 12) == ("llama-2-7b-hf",)  # a tail of 3 stays
    assert name_lines("a" * 30, 12) == ("a" * 12, "a" * 12, "a" * 6)  # no separator: cut
    assert name_lines("rag_top_k_10", 12) == ("rag_top_k_10",)
    assert name_lines("", 12) == ("",)


def test_to_latex_refuses_what_it_cannot_show() -> None:
    frame = pd.DataFrame({"x": [1.0]})
    with pytest.raises(TypeError, match="`metric` ranks a Run"):
        to_latex(frame, metric="correct")
    with pytest.raises(TypeError, match="from list"):
        to_latex([1, 2])  # type: ignore[arg-type]


def test_a_metric_outside_holms_family_has_no_mark() -> None:
    from kagreport.evaluation import EvaluationComparison

    data = Path(__file__).parents[1] / "data" / "v1" / "comparison-v2.json"
    latex = to_latex(EvaluationComparison.read(data))
    assert r"complete@1 & 8 & 0.000 & 0.000 & 0.000 & --- \\" in latex  # no Holm p, no mark
    assert r"$-$0.125" in latex  # 0.5 - 0.625, a real minus


@pytest.mark.slow
def test_hostile_text_compiles(pdflatex: str, tmp_path: Path) -> None:
    """What a model or a user may put in names and cells (the adversarial trial of #14): a
    blank line, control characters, and the characters OT1 would set as other glyphs."""
    hostile = 'l1\n\nl2 <a> |b| "c" \x00\x1b\x0b\x7f \\ & % $ # _ { } ~ ^'
    frame = pd.DataFrame({hostile: [0.5], "x": [hostile]}, index=[hostile])
    latex = to_latex(frame, caption=hostile, label="tab:hostile")
    assert r"\textless{}a\textgreater{} \textbar{}b\textbar{} ''c''" in latex
    assert not any(ch in latex for ch in "\x00\x1b\x0b\x7f")
    assert "\n\n" not in latex
    _compile(pdflatex, tmp_path, "a4paper", latex)  # fails the test if pdflatex stops


@pytest.mark.slow
def test_direction_controls_in_names_are_shown_and_compile(pdflatex: str, tmp_path: Path) -> None:
    """A right-to-left override (U+202E) or an isolate in a system or metric name stopped
    pdflatex ("Unicode character not set up"), and TeX has no bidirectional algorithm to
    obey it: it is shown as its escape, like a control character (issue 27, item 8)."""
    import numpy as np

    names = ("sys\u202eabc", "b\u2066x\u2069\u200f", "c\x1bd")
    metric = "acc\u202e\x01"
    run = Run(
        kind="answers",
        systems=names,
        dataset_names=("ds",),
        question_names=("q1", "q2"),
        system=np.repeat(np.arange(3, dtype=np.int32), 2),
        dataset=np.zeros(6, dtype=np.int32),
        question=np.tile(np.arange(2, dtype=np.int32), 3),
        outcome=np.full(6, -1, dtype=np.int8),
        metrics={metric: np.array([1.0, 0.0, 0.5, 0.5, 0.0, 0.25])},
    )
    latex = to_latex(run, caption="Run \u202eabc", label="tab:bidi", wide=True)
    assert not any(ch in latex for ch in "\u202e\u2066\u2069\u200f\x1b\x01")
    assert r"sys\textbackslash{}u202eabc" in latex
    assert r"\textbackslash{}u2066x\textbackslash{}u2069" in latex
    assert r"acc\textbackslash{}u202e\textbackslash{}x01" in latex
    assert r"Run \textbackslash{}u202eabc" in latex
    _compile(pdflatex, tmp_path, "a4paper", latex)  # fails the test if pdflatex stops


def test_a_label_that_is_not_a_latex_key_is_refused() -> None:
    frame = pd.DataFrame({"x": [1.0]})
    for label in ("a_b & c % d", "tab a", "x{y}", "a#1"):
        with pytest.raises(ValueError, match="`label` must be"):
            to_latex(frame, label=label)
    assert r"\label{tab:a_b-1.x/y}" in to_latex(frame, label="tab:a_b-1.x/y")


def test_a_frame_count_is_no_percentage() -> None:
    """kag's ``correct`` is a count in a frame (87 of 120), not 8,700 %."""
    frame = pd.DataFrame({"setup": ["a"], "correct": [87], "total": [1234]})
    latex = to_latex(frame)
    assert r"0 & a & 87 & 1,234 \\" in latex
    assert r"(\%)" not in latex


def test_a_stats_frame_reads_as_the_run_table(tmp_path: Path) -> None:
    """Every number of a stats frame in its unit: percentages with their Wilson bounds
    beneath in percent, counts in full, times and sizes with three significant digits."""
    from kagreport.frames import stats_frame

    made = simulate_run(tmp_path / "sim", questions=30, datasets=2, seed=0)
    report = grade(made.datasets_path, made.results_path)
    frame = stats_frame(report, per_dataset=False)
    latex = to_latex(frame)
    first = frame.iloc[0]
    # Independent of kagreport's formatters: the counts, the ratio and the bounds by hand.
    correct, total = int(first["correct"]), int(first["total"])
    accuracy = f"{100 * correct / total:.1f}"
    low, high = (f"{100 * first[f'accuracy_{e}']:.1f}" for e in ("low", "high"))
    row = next(line for line in latex.splitlines() if line.startswith(f"0 & {first['setup']} &"))
    cells = [c.strip() for c in row.removesuffix(r"\\").split("&")]
    names = [
        "",
        *frame.columns.drop(
            [f"{m}_{e}" for m in ("accuracy", "precision", "coverage") for e in ("low", "high")]
        ),
    ]
    by_name = dict(zip(names, cells, strict=True))
    assert by_name["correct"] == str(correct)
    assert by_name["accuracy"] == accuracy
    assert f"{{\\scriptsize [{low}, {high}]}}" in latex
    assert "accuracy\\_low" not in latex  # joined to accuracy as its interval
    context = float(first["avg_context_length"])
    assert context >= 1000
    assert by_name["avg_context_length"] == f"{round(context):,}"
    seconds = float(first["avg_generation_secs"])
    assert 1 <= seconds < 10
    assert by_name["avg_generation_secs"] == f"{seconds:.2f}"
