"""kagreport._optional: a missing optional dependency is one line naming the extra."""

from __future__ import annotations

import subprocess
import sys

import pytest

from kagreport import KagreportError, MissingExtraError
from kagreport._optional import EXTRAS, need, optional


def _run(code: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=False
    )


def test_optional_names_the_extra() -> None:
    with pytest.raises(MissingExtraError) as info, optional("yaml"):
        raise ModuleNotFoundError("No module named 'yaml'", name="yaml")
    assert (
        str(info.value)
        == "yaml is not installed; install it with: pip install 'kagreport[formats]'"
    )
    assert isinstance(info.value, KagreportError)
    assert info.value.exit_code == 1


def test_other_import_errors_keep_their_traceback() -> None:
    with pytest.raises(ModuleNotFoundError), optional("yaml"):
        raise ModuleNotFoundError("No module named 'yamlx'", name="yamlx")


def test_need_checks_without_importing() -> None:
    out = _run(
        "import sys; from kagreport._optional import need; need('pandas', 'altair');"
        "print('pandas' in sys.modules, 'altair' in sys.modules)"
    )
    assert out.stdout.strip() == "False False", out.stderr


@pytest.mark.parametrize(
    ("blocked", "code", "extra"),
    [
        ("pandas", "import kagreport.frames", "notebook"),
        ("altair", "import kagreport.charts", "notebook"),
        ("ipywidgets", "import kagreport.widgets", "notebook"),
        ("nbclient", "import kagreport.site", "site"),
        (
            "yaml",
            "from kagreport._document import dumps_document as d; d({}, 'yaml')",
            "formats",
        ),
        (
            "openai",
            "from kagreport.evaluation.judges import LLMJudge as J; J('j', model='m', base_url='http://127.0.0.1:9', prompt='Q: {{ item.question }}')._get_client()",
            "llm",
        ),
        ("scipy", "from kagreport.stats import clustered_mean as c; c([1.0, 2.0])", "stats"),
    ],
)
def test_a_missing_extra_is_one_line(blocked: str, code: str, extra: str) -> None:
    # sys.modules[name] = None makes `import name` fail as if it were not installed.
    out = _run(
        f"import sys; sys.modules[{blocked!r}] = None\n"
        "from kagreport._errors import KagreportError\n"
        f"try:\n    {code}\nexcept KagreportError as exc:\n    print(exc)\n"
    )
    assert out.returncode == 0, out.stderr
    assert (
        out.stdout
        == f"{blocked} is not installed; install it with: pip install 'kagreport[{extra}]'\n"
    )


def test_core_grades_without_any_extra() -> None:
    blocked = sorted(EXTRAS)
    out = _run(
        f"import sys\nfor m in {blocked!r}: sys.modules[m] = None\n"
        "import kagreport, kagreport.kag, kagreport.grading\nprint(kagreport.grade.__name__)"
    )
    assert out.stdout.strip() == "grade", out.stderr
    need("msgspec", "numpy")  # core: installed
