"""Human labels correcting a judge's mean (PPI++): ``evaluate_answers(labels=...)``,
``kagreport evaluate --labels``, the report's round trip, the messages for bad labels.

The expected numbers were computed independently of kagreport, with ppi_py (the PPI++
authors' implementation) and scipy.stats, in a throwaway environment (ppi_python 0.2.3,
NumPy 2.4.6, SciPy 1.17.1)::

    import numpy as np, scipy.stats as st, ppi_py
    from ppi_py.ppi import _calc_lam_glm

    def ref(Y, Yhat, Yu):
        Y, Yhat, Yu = (np.asarray(a, float) for a in (Y, Yhat, Yu))
        est = ppi_py.ppi_mean_pointestimate(Y, Yhat, Yu)           # PPI++ (lam=None)
        lo, hi = ppi_py.ppi_mean_ci(Y, Yhat, Yu, alpha=0.05)
        p1 = ppi_py.ppi_mean_pointestimate(Y, Yhat, Yu, lam=1)      # lambda as ppi_mean_ci
        lam = _calc_lam_glm((Y - p1)[:, None], (Yhat - p1)[:, None],  # chooses it
                            (Yu - p1)[:, None], np.eye(1), clip=True)
        def t(x):                                                 # judge- and human-only
            return x.mean(), st.t.interval(0.95, x.size - 1, loc=x.mean(),
                                           scale=st.sem(x, ddof=1))
        return t(np.concatenate([Yhat, Yu])), t(Y), est, (lo, hi), lam

    em = [1, 0, 0, 1, 0] * 8
    f1 = [1, 0.5, 0, 1, 0.5] * 8
    ref([1, 1, 0, 1, 0, 1, 1, 0, 0, 0, 1, 1, 0], em[:13], em[13:])       # exact_match
    ref([1, 1, 0, 1, 0.5, 1, 0.75, 0, 1, 0.5, 1, 1], f1[:12], f1[12:])   # token_f1

The judges' scores (``em``, ``f1``) are SQuAD's exact match and token F1 of the five
answers below against "Paris", worked by hand ("the city of Paris" -> "city of paris":
precision 1/3, recall 1, F1 0.5).
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any, ClassVar

import pytest

from conftest import run_cli
from kagreport import FormatError, InputError, MissingExtraError
from kagreport.evaluation import AnswerEvaluation, AnswerItem, LabelCorrection, evaluate_answers
from kagreport.evaluation._text import render_evaluation
from kagreport.evaluation.judges import ExactMatch, Judgement, TokenF1

ANSWERS = ["Paris", "the city of Paris", "Rome", "paris.", "Paris or Rome"]
EM_LABELS = [1, 1, 0, 1, 0, 1, 1, 0, 0, 0, 1, 1, 0]  # q00..q12 (q08: a human says no)
F1_LABELS = [1, 1, 0, 1, 0.5, 1, 0.75, 0, 1, 0.5, 1, 1]  # q00..q11

# ppi_py 0.2.3 and scipy.stats 1.17.1 (the module's docstring).
EXPECTED = {
    "exact_match": {
        "judge_mean": 0.4,
        "judge_ci": (0.24132706967331713, 0.5586729303266829),
        "human_mean": 0.5384615384615384,
        "human_ci": (0.22490880313376077, 0.8520142737893162),
        "estimate": 0.5447485207100592,
        "ci": (0.28984895823464535, 0.7996480831854731),
        "lam": 0.27584134615384615,
        "n_labelled": 13,
        "n_unlabelled": 27,
    },
    "token_f1": {
        "judge_mean": 0.6,
        "judge_ci": (0.4788115476729202, 0.7211884523270797),
        "human_mean": 0.7291666666666666,
        "human_ci": (0.4806927558281715, 0.9776405775051618),
        "estimate": 0.7087634858630951,
        "ci": (0.5602419805010728, 0.8572849912251175),
        "lam": 0.5712890624999998,
        "n_labelled": 12,
        "n_unlabelled": 28,
    },
}
JUDGES = '[[judges]]\nkind = "exact_match"\n\n[[judges]]\nkind = "token_f1"\n'


def _items() -> list[AnswerItem]:
    """40 answers cycling through ANSWERS, and q40 without an answer (labelled: unused)."""
    items = [AnswerItem(f"q{i:02d}", "Capital?", ANSWERS[i % 5], "Paris") for i in range(40)]
    return [*items, AnswerItem("q40", "Capital?", None, "Paris")]


def _csv(path: Path) -> Path:
    lines = ["id,exact_match,token_f1"]
    for i, em in enumerate(EM_LABELS):
        f1 = F1_LABELS[i] if i < len(F1_LABELS) else ""
        lines.append(f"q{i:02d},{em},{f1}")
    lines.append("q40,0,")
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def _items_file(path: Path) -> Path:
    rows = [item.to_dict() for item in _items()]
    path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    return path


def _check(correction: LabelCorrection, expected: dict[str, Any]) -> None:
    for key, value in expected.items():
        got = getattr(correction, key)
        if isinstance(value, tuple):
            assert got == pytest.approx(value, rel=1e-12, abs=1e-14), key
        else:
            assert got == pytest.approx(value, rel=1e-12, abs=1e-14), key


def test_corrections_match_ppi_py_and_scipy(tmp_path: Path) -> None:
    report = evaluate_answers(_items(), [ExactMatch(), TokenF1()], labels=_csv(tmp_path / "l.csv"))
    # The judges scored as worked by hand (the reference's em and f1).
    assert list(report.per_item("exact_match")[:40]) == [1, 0, 0, 1, 0] * 8
    assert list(report.per_item("token_f1")[:40]) == [1, 0.5, 0, 1, 0.5] * 8
    assert list(report.label_corrections) == ["exact_match", "token_f1"]
    for metric, expected in EXPECTED.items():
        correction = report.label_corrections[metric]
        assert correction.metric == metric
        _check(correction, expected)
        assert correction.shift == pytest.approx(expected["estimate"] - expected["judge_mean"])
        assert correction.confidence == 0.95
        assert correction.note == ""
    # q40 has no answer: its label is counted, not used; token_f1 has none there.
    assert report.label_corrections["exact_match"].n_left_out == 1
    assert report.label_corrections["token_f1"].n_left_out == 0
    assert report.settings["labels"] == str(tmp_path / "l.csv")


def test_a_jsonl_file_and_a_mapping_give_the_same_corrections(tmp_path: Path) -> None:
    rows = [{"identifier": f"q{i:02d}", "exact_match": em} for i, em in enumerate(EM_LABELS)]
    for i, f1 in enumerate(F1_LABELS):
        rows[i]["token_f1"] = f1
    rows.append({"id": "q40", "exact_match": 0, "token_f1": None})
    path = tmp_path / "l.jsonl"
    path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    judges = [ExactMatch(), TokenF1()]
    from_file = evaluate_answers(_items(), judges, labels=path)
    mapping = {r.get("identifier", r.get("id")): {k: v for k, v in r.items() if "id" not in k}
               for r in rows}  # fmt: skip
    from_mapping = evaluate_answers(_items(), judges, labels=mapping)
    for report in (from_file, from_mapping):
        for metric, expected in EXPECTED.items():
            _check(report.label_corrections[metric], expected)
    assert from_mapping.settings["labels"] == "labels"


def test_without_labels_the_report_has_no_new_key() -> None:
    report = evaluate_answers(_items(), [ExactMatch()])
    data = report.to_dict()
    assert "label_corrections" not in data
    assert "labels" not in data["settings"]
    assert "PPI++" not in render_evaluation(report)


@pytest.mark.parametrize("suffix", [".json", ".jsonl", ".yaml", ".toml"])
def test_round_trip(tmp_path: Path, suffix: str) -> None:
    report = evaluate_answers(_items(), [ExactMatch(), TokenF1()], labels=_csv(tmp_path / "l.csv"))
    # And an undefined correction (NaN, a note): JSON writes null, TOML nan.
    undefined = LabelCorrection.from_dict("other", {"n_labelled": 1, "note": "why"})
    assert math.isnan(undefined.estimate)
    assert math.isnan(undefined.ci[0])
    both = AnswerEvaluation(**{**report.__dict__, "label_corrections": {
        **report.label_corrections, "other": undefined}})  # fmt: skip
    path = tmp_path / f"r{suffix}"
    both.write(path)
    again = AnswerEvaluation.read(path)
    assert again == both
    assert again.label_corrections["token_f1"] == both.label_corrections["token_f1"]
    assert again.label_corrections["other"].note == "why"
    if suffix == ".json":
        data = json.loads(path.read_text())
        assert data["label_corrections"]["other"]["estimate"] is None
        assert data["label_corrections"]["exact_match"]["method"] == "PPI++"
        assert data["label_corrections"]["exact_match"]["shift"] == pytest.approx(
            0.5447485207100592 - 0.4
        )


def test_a_bad_correction_in_a_document_names_its_field() -> None:
    report = evaluate_answers(_items()[:10], [ExactMatch()], labels={"q00": {"exact_match": 1},
                              "q01": {"exact_match": 1}})  # fmt: skip
    data = report.to_dict()
    data["label_corrections"]["exact_match"]["n_labelled"] = "many"
    with pytest.raises(ValueError, match=r"label_corrections.*n_labelled"):
        AnswerEvaluation.from_dict(data)


def test_failed_judgements_leave_a_correction_undefined_with_its_reason() -> None:
    # Labelled items without a reference: exact match fails on them after the checks.
    items = [AnswerItem(f"q{i}", "Q", "Paris", None if i < 2 else "Paris") for i in range(6)]
    report = evaluate_answers(
        items,
        [ExactMatch()],
        labels={"q0": {"exact_match": 1}, "q1": {"exact_match": 0}, "q2": {"exact_match": 1}},
    )
    correction = report.label_corrections["exact_match"]
    assert math.isnan(correction.estimate)
    assert math.isnan(correction.judge_mean)
    assert (correction.n_labelled, correction.n_unlabelled, correction.n_left_out) == (1, 3, 2)
    assert correction.note == "1 labelled item the judge scored; PPI++ needs at least 2"
    text = render_evaluation(report)
    assert "exact_match: no correction by the labels: 1 labelled item the judge scored" in text


def test_the_text_view_shows_the_three_numbers_and_the_shift(tmp_path: Path) -> None:
    report = evaluate_answers(_items(), [ExactMatch(), TokenF1()], labels=_csv(tmp_path / "l.csv"))
    text = render_evaluation(report)
    # Rounded from EXPECTED by hand: a proportion in percent, a score with 3 decimals.
    row = next(line for line in text.splitlines() if line.startswith("exact_match  13 of 40"))
    cells = [cell.strip() for cell in row.split("  ") if cell.strip()]
    assert cells == [
        "exact_match",
        "13 of 40",
        "40.0% [24.1%, 55.9%]",
        "53.8% [22.5%, 85.2%]",
        "54.5% [29.0%, 80.0%]",
        "+14.5 pp",
    ]
    f1 = next(line for line in text.splitlines() if line.startswith("token_f1     12 of 40"))
    for cell in ("0.600 [0.479, 0.721]", "0.729 [0.481, 0.978]", "0.709 [0.560, 0.857]", "+0.109"):
        assert cell in f1
    assert (
        "the judge's bias moved the mean of exact_match by +14.5 pp, from 40.0% (judge alone) "
        "to 54.5% [29.0%, 80.0%] (PPI++, 95%, 13 labelled of 40 items; 1 label on unscored "
        "items unused); the judge alone lies within that interval"
    ) in text
    html = report._repr_html_()
    assert "54.5% [29.0%, 80.0%]" in html
    assert "PPI++" in html


# ------------------------------------------------------------------ bad labels


@pytest.mark.parametrize(
    ("name", "text", "message"),
    [
        ("a.csv", "id,exact_match\nq00,1\nq99,0\n", r"a.csv:3: no item 'q99' in the evaluation"),
        ("a.csv", "id,exact_match\nq00,1\nq01,yes\n", r"a.csv:3: exact_match 'yes' is not a number"),
        ("a.csv", "id,exact_match\nq00,1\nq01,nan\n", r"a.csv:3: exact_match 'nan' is not a finite"),
        ("a.csv", "id,exact_match\nq00,1\n\nq00,0\n", r"a.csv:4: the identifier 'q00' repeats .*a.csv:2"),
        ("a.csv", "id,judge\nq00,1\nq01,0\n", r"a.csv:2: the evaluation has no metric 'judge' \(its metrics: 'exact_match'\)"),
        ("a.csv", "item,exact_match\nq00,1\n", r"a.csv:1: needs an 'identifier' \(or 'id'\) column"),
        ("a.csv", "id,exact_match\nq00,1,2\n", r"a.csv:2: 3 cells, but the header has 2"),
        ("a.csv", "id,exact_match,exact_match\nq00,1,1\n", r"a.csv:1: the column 'exact_match' repeats"),
        ("a.csv", "id,exact_match\nq00,\n", r"a.csv holds no labels"),
        ("a.csv", "id,exact_match\nq00,1\n", r"'exact_match' has 1 labelled item it can score .* at least 2"),
        ("a.jsonl", '{"id": "q00", "exact_match": 1}\n[1]\n', r"a.jsonl:2: not a JSON object"),
        ("a.jsonl", '{"id": "q00", "exact_match": true}\n', r"a.jsonl:1: exact_match True is not a number"),
        ("a.jsonl", '{"id": 3, "exact_match": 1}\n', r"a.jsonl:1: the identifier 3 is not a non-empty string"),
        ("a.jsonl", '{"id": "q00", "exact_match": 1\n', r"a.jsonl:1: not JSON"),
    ],
)  # fmt: skip
def test_bad_labels_are_one_line_naming_file_line_and_value(
    tmp_path: Path, name: str, text: str, message: str
) -> None:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    with pytest.raises(InputError, match=message) as caught:
        evaluate_answers(_items()[:10], [ExactMatch()], labels=path)
    assert "\n" not in str(caught.value)
    assert caught.value.path == str(path)


def test_a_label_off_the_judges_scale_is_refused(tmp_path: Path) -> None:
    # exact_match scores 0 or 1: a human score of 5 (or -3) is on no scale of the judge's.
    path = tmp_path / "a.csv"
    path.write_text("id,exact_match\nq00,1\nq01,5\nq02,0\n", encoding="utf-8")
    with pytest.raises(InputError, match=r"a\.csv:3: exact_match 5 is outside \[0, 1\]"):
        evaluate_answers(_items()[:10], [ExactMatch()], labels=path)
    (tmp_path / "judges.toml").write_text('[[judges]]\nkind = "exact_match"\n')
    items = _items_file(tmp_path / "items.jsonl")
    path.write_text("id,exact_match\nq00,1\nq01,-3\nq02,0\n", encoding="utf-8")
    done = run_cli("evaluate", "--items", items, "--judges", tmp_path / "judges.toml",
                   "-o", tmp_path / "ev.json", "--labels", path)  # fmt: skip
    assert done.returncode == 1
    assert done.stderr.splitlines() == [
        f"kagreport: error: {path}:3: exact_match -3 is outside [0, 1], the scale of the "
        "judge's exact_match scores"
    ]


def test_labels_on_every_scorable_item_are_refused() -> None:
    labels = {f"q{i:02d}": {"exact_match": 1} for i in range(3)}
    with pytest.raises(InputError, match=r"every item 'exact_match' can score is labelled \(3\)"):
        evaluate_answers(_items()[:3], [ExactMatch()], labels=labels)


def test_missing_file_suffix_and_kinds(tmp_path: Path) -> None:
    with pytest.raises(InputError, match=r"cannot read the labels file .*nope.csv: No such file"):
        evaluate_answers(_items()[:5], [ExactMatch()], labels=tmp_path / "nope.csv")
    with pytest.raises(FormatError, match=r"labels file .*l.txt is neither .csv nor .jsonl"):
        evaluate_answers(_items()[:5], [ExactMatch()], labels=tmp_path / "l.txt")
    with pytest.raises(TypeError, match="labels must be"):
        evaluate_answers(_items()[:5], [ExactMatch()], labels=[("q00", 1)])
    with pytest.raises(InputError, match=r"labels\['q00'\]: not a mapping"):
        evaluate_answers(_items()[:5], [ExactMatch()], labels={"q00": 1})
    bad = tmp_path / "bad.csv"
    bad.write_bytes(b"id,exact_match\nq\xff,1\n")
    with pytest.raises(InputError, match=r"the labels file .*bad.csv is not UTF-8 at byte 16"):
        evaluate_answers(_items()[:5], [ExactMatch()], labels=bad)


# ------------------------------------------------------------------ the command line


def test_evaluate_with_labels_end_to_end(tmp_path: Path) -> None:
    (tmp_path / "judges.toml").write_text(JUDGES)
    items = _items_file(tmp_path / "items.jsonl")
    labels = _csv(tmp_path / "labels.csv")
    done = run_cli("evaluate", "--items", items, "--judges", tmp_path / "judges.toml",
                   "-o", tmp_path / "ev.json", "--labels", labels)  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "54.5% [29.0%, 80.0%]" in done.stdout
    assert "the judge's bias moved the mean of exact_match by +14.5 pp" in done.stdout
    report = AnswerEvaluation.read(tmp_path / "ev.json")
    for metric, expected in EXPECTED.items():
        _check(report.label_corrections[metric], expected)
    # The same report, read and rendered again, says the same.
    assert render_evaluation(report) in done.stdout


@pytest.mark.parametrize(
    ("labels", "code", "message"),
    [
        ("id,exact_match\nq00,1\nq99,0\n", 1, "labels.csv:3: no item 'q99' in the evaluation"),
        ("id,exact_match\nq00,1\nq01,x\n", 1, "labels.csv:3: exact_match 'x' is not a number"),
        (None, 1, "cannot read the labels file"),
    ],
)
def test_evaluate_refuses_bad_labels_before_judging(
    tmp_path: Path, labels: str | None, code: int, message: str
) -> None:
    (tmp_path / "judges.toml").write_text('[[judges]]\nkind = "exact_match"\n')
    items = _items_file(tmp_path / "items.jsonl")
    if labels is not None:
        (tmp_path / "labels.csv").write_text(labels)
    done = run_cli("evaluate", "--items", items, "--judges", tmp_path / "judges.toml",
                   "-o", tmp_path / "ev.json", "--labels", tmp_path / "labels.csv")  # fmt: skip
    assert done.returncode == code
    assert done.stderr.splitlines()[-1].startswith("kagreport: error: ")
    assert message in done.stderr
    assert len(done.stderr.splitlines()) == 1
    assert not (tmp_path / "ev.json").exists()


def test_evaluate_usage_errors_for_labels(tmp_path: Path) -> None:
    (tmp_path / "judges.toml").write_text('[[judges]]\nkind = "exact_match"\n')
    items = _items_file(tmp_path / "items.jsonl")
    (tmp_path / "labels.txt").write_text("id,exact_match\n")
    base = ["evaluate", "--items", items, "--judges", tmp_path / "judges.toml"]
    suffix = run_cli(*base, "-o", tmp_path / "ev.json", "--labels", tmp_path / "labels.txt")
    assert suffix.returncode == 2
    assert "labels.txt is neither .csv nor .jsonl" in suffix.stderr
    # A .jsonl labels file is also a report's suffix: the report must not replace it.
    labels = tmp_path / "labels.jsonl"
    labels.write_text('{"id": "q00", "exact_match": 1}\n{"id": "q01", "exact_match": 0}\n')
    clobber = run_cli(*base, "-o", labels, "--labels", labels)
    assert clobber.returncode == 2
    assert f"the output {labels} would replace the input {labels}" in clobber.stderr
    assert labels.read_text().startswith('{"id": "q00"')
    empty = run_cli(*base, "-o", tmp_path / "ev.json", "--labels", "")
    assert empty.returncode == 2
    assert "--labels needs a file name" in empty.stderr


def test_bad_labels_are_refused_before_any_judgement(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[str] = []

    class Counting:
        name = "counting"
        criteria = ("score",)
        identity: ClassVar[dict[str, str]] = {"kind": "counting"}
        blocking = False

        def judge(self, item: AnswerItem) -> Judgement:
            calls.append(item.identifier)
            return Judgement({"score": 1.0})

    with pytest.raises(InputError, match="no item 'q99'"):
        evaluate_answers(_items()[:5], [Counting()], labels={"q99": {"counting": 1}})
    with pytest.raises(InputError, match="has no metric 'score'"):
        evaluate_answers(_items()[:5], [Counting()], labels={"q00": {"score": 1}})
    # Without SciPy (the t intervals), before any judgement too.
    import importlib.util

    find_spec = importlib.util.find_spec
    with monkeypatch.context() as patch:
        patch.setattr(
            importlib.util,
            "find_spec",
            lambda name, *a: None if name == "scipy" else find_spec(name, *a),
        )
        good = {"q00": {"counting": 1}, "q01": {"counting": 0}}
        with pytest.raises(MissingExtraError, match=r"pip install 'kagreport\[stats\]'"):
            evaluate_answers(_items()[:5], [Counting()], labels=good)
    assert calls == []
    # A score the items already carry (kag's "correct") can be corrected too.
    items = [AnswerItem(f"q{i}", "Q", "a", "a", scores={"correct": float(i % 2)}) for i in range(6)]
    report = evaluate_answers(
        items, [Counting()], labels={"q0": {"correct": 1}, "q1": {"correct": 1}}
    )
    assert report.label_corrections["correct"].n_labelled == 2
    assert len(calls) == 6
