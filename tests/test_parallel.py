"""The report does not depend on how many processes read the tree."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pytest

from kagreport import ResultTreeError, grade
from kagreport.grading import _engine
from kagreport.kag import simulate_run


@pytest.fixture(scope="module")
def big_run(tmp_path_factory: pytest.TempPathFactory):  # type: ignore[no-untyped-def]
    root = tmp_path_factory.mktemp("parallel") / "sim"
    # 3 x 120 scorable question folders: more than PARALLEL_AFTER, so a pool is used.
    run = simulate_run(root, questions=120, datasets=3, seed=5, unparsable_files=7)
    assert _engine.PARALLEL_AFTER < 3 * 120
    return run


def test_workers_give_identical_reports(big_run) -> None:  # type: ignore[no-untyped-def]
    serial = grade(big_run.datasets_path, big_run.results_path, workers=1)
    pooled = grade(big_run.datasets_path, big_run.results_path, workers=2)
    assert pooled.to_json() == serial.to_json()
    assert pooled.to_text() == serial.to_text()
    assert pooled.unparsable_files == serial.unparsable_files
    assert len(serial.unparsable_files) == 7
    a, b = serial.items.to_columns(), pooled.items.to_columns()
    for name in a:
        if a[name].dtype == object:
            assert list(a[name]) == list(b[name]), name
        else:
            np.testing.assert_array_equal(a[name], b[name], err_msg=name)


def test_io_error_in_a_worker_is_reported(big_run, monkeypatch: pytest.MonkeyPatch) -> None:  # type: ignore[no-untyped-def]
    victim = os.path.join(big_run.results_path, "sim-biology", "q00100", "kag-large.json")
    assert Path(victim).is_file()
    real_open = os.open

    def failing_open(path: str, flags: int, *args: int) -> int:
        if os.fspath(path) == victim:
            raise PermissionError(13, "Permission denied")
        return real_open(path, flags, *args)

    # Forked workers inherit the patched function (tests run as root: chmod cannot do this).
    monkeypatch.setattr(os, "open", failing_open)
    with pytest.raises(ResultTreeError, match=r"cannot read the result file .*Permission denied"):
        grade(big_run.datasets_path, big_run.results_path, workers=2)


def test_invalid_worker_count(big_run) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(ValueError, match="workers"):
        grade(big_run.datasets_path, big_run.results_path, workers=0)


def test_kept_texts_are_the_result_files_and_do_not_depend_on_workers(big_run) -> None:  # type: ignore[no-untyped-def]
    from kagreport.kag import read_result

    whole = grade(big_run.datasets_path, big_run.results_path, workers=1, keep_text=True)
    cut = grade(big_run.datasets_path, big_run.results_path, workers=2, keep_text=np.int64(7))
    plain = grade(big_run.datasets_path, big_run.results_path, workers=2)
    assert plain.items.texts is None
    assert whole.to_json() == cut.to_json() == plain.to_json()
    texts, short = whole.items.texts, cut.items.texts
    assert texts is not None
    assert short is not None
    assert (texts.limit, short.limit) == (None, 7)
    assert len(texts) == len(short) == len(whole.items) > 1000
    errors = 0
    for i, row in enumerate(whole.items):
        record = read_result(whole.items.path(row))  # read again, independently
        assert texts.responses[i] == record.result
        assert texts.errors[i] == record.error
        expected_length = -1 if record.result is None else len(record.result)
        assert texts.response_lengths[i] == short.response_lengths[i] == expected_length
        assert short.responses[i] == (None if record.result is None else record.result[:7])
        assert short.errors[i] == (None if record.error is None else record.error[:7])
        errors += record.error is not None
    assert errors > 0  # error records were among them


@pytest.mark.parametrize("keep_text", [0, -1, 1.5, "yes", None])
def test_invalid_keep_text(big_run, keep_text: object) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(ValueError, match="`keep_text` must be a bool or a positive int"):
        grade(big_run.datasets_path, big_run.results_path, keep_text=keep_text)  # type: ignore[arg-type]
