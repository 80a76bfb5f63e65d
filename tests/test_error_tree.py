"""Every error the package raises is a KagreportError; where callers catch a builtin
(``except ValueError``, ``KeyError``, ``TypeError``, ``OSError``), it is that builtin too."""

from __future__ import annotations

import math
import pickle
from pathlib import Path

import pytest

from kagreport import InputError, KagreportError, grade
from kagreport._errors import InputTypeError, MissingKeyError, NotRegularFileError
from kagreport.evaluation.judges import JudgeFailure
from kagreport.kag import simulate_run
from kagreport.kag._jsonfmt import dumps_pretty, format_float
from kagreport.kag._jsonscan import JSONScanError
from kagreport.kag._names import to_component_name
from kagreport.kag._records import decode_result


@pytest.fixture(scope="module")
def report(tmp_path_factory: pytest.TempPathFactory):  # type: ignore[no-untyped-def]
    run = simulate_run(tmp_path_factory.mktemp("errors") / "sim", questions=3, datasets=1,
                       vector_dim=4, seed=1)  # fmt: skip
    return grade(run.datasets_path, run.results_path)


def test_a_missing_setup_or_column_is_a_key_error_said_plainly(report) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(MissingKeyError) as raised:
        report["no-such-setup"]
    assert isinstance(raised.value, KeyError)
    assert isinstance(raised.value, KagreportError)
    # Not KeyError's repr of its message (quoted): the sentence, as every KagreportError.
    setups = ", ".join(report.setup_names)
    assert str(raised.value) == f"no setup 'no-such-setup' in this report (setups: {setups})"
    with pytest.raises(MissingKeyError, match="unknown column 'speed'; columns: setup"):
        report.items.column("speed")


@pytest.mark.parametrize(
    ("call", "kind", "builtin"),
    [
        (lambda: format_float(math.nan), InputError, ValueError),
        (lambda: dumps_pretty({"a": object()}), InputTypeError, TypeError),
        (lambda: to_component_name("!!!"), InputError, ValueError),
        (lambda: simulate_run("unused", datasets=0), InputError, ValueError),
        (lambda: decode_result(b"[1,"), KagreportError, ValueError),
        (
            lambda: decode_result(b'{"ok": {"result": "x", "stats": {}, "result": "y"}}'),
            KagreportError,
            ValueError,
        ),
    ],
)
def test_bad_values_raise_a_kagreport_error_that_is_the_builtin_too(
    call: object, kind: type[Exception], builtin: type[Exception]
) -> None:
    with pytest.raises(kind) as raised:
        call()  # type: ignore[operator]
    assert isinstance(raised.value, builtin)
    assert isinstance(raised.value, KagreportError)


def test_the_errors_defined_outside_errors_py_are_kagreport_errors() -> None:
    assert issubclass(JudgeFailure, KagreportError)
    assert str(JudgeFailure("HTTP 500", verdict="x")) == "HTTP 500"
    assert issubclass(JSONScanError, KagreportError)
    assert issubclass(JSONScanError, ValueError)


def test_a_file_that_is_not_regular_is_an_os_error_too(tmp_path: Path) -> None:
    error = NotRegularFileError(0, "not a regular file", str(tmp_path / "fifo"))
    assert isinstance(error, OSError)
    assert isinstance(error, KagreportError)
    assert (error.errno, error.strerror, error.path) == (0, "not a regular file", error.filename)
    assert str(error) == f"[Errno 0] not a regular file: '{tmp_path / 'fifo'}'"
    again = pickle.loads(pickle.dumps(error))  # a worker process raises it
    assert (type(again), str(again), again.message) == (type(error), str(error), error.message)
