"""The judges file (TOML) decoded through its msgspec shape: every message one line naming
the file and the key path; the shape's keys are exactly the judges' constructor options."""

from __future__ import annotations

import dataclasses
import inspect
from pathlib import Path

import pytest

from kagreport.evaluation import ConfigError
from kagreport.evaluation.judges import (
    Contains,
    ExactMatch,
    LLMJudge,
    OptionExtraction,
    OptionMatch,
    RegexMatch,
    TokenF1,
    load_judges,
)
from kagreport.evaluation.judges._config import _KINDS, _LLM, prompt_files

LLM = '[[judges]]\nkind = "llm"\nname = "j"\nmodel = "m"\nbase_url = "http://127.0.0.1:9/v1"\n'


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('[[judges]]\nkind = "magic"\n', '`judges[0].kind` must be one of option_match, exact_match, token_f1, regex, contains, option_extraction, llm, not "magic"'),
        ("judges = [1]\n", "`judges[0]` must be a table, not 1"),
        ("judges = []\n", "`judges` must not be empty"),
        ('[[judges]]\nkind = "regex"\nignore_case = "yes"\n', '`judges[0].ignore_case` must be true or false, not "yes"'),
        ('[[judges]]\nkind = "option_match"\n[[judges]]\nkind = "token_f1"\nname = " "\n', "`judges[1].name` must not be empty"),
        (LLM + 'prompt = "p"\ntimeout = "5"\n', '`judges[0].timeout` must be a number, not "5"'),
        (LLM + 'prompt = "p"\nscale = "1-7"\n', '`judges[0].scale` must be one of binary, 1-5, 1-10, json, not "1-7"'),
        (LLM + 'prompt = "p"\ncriteria = ["a", 2]\n', "`judges[0].criteria[1]` must be a string, not 2"),
        (LLM + 'prompt = "p"\nscore_range = [1]\n', "`judges[0].score_range` must be a list of length 2, not [1]"),
        (LLM + 'prompt = "p"\nmax_retries = 1.5\n', "`judges[0].max_retries` must be an integer, not 1.5"),
        (LLM + 'prompt = "p"\ntimeout = -5\n', "`judges[0]` (llm): `timeout` must be a number of seconds"),
        (LLM, "`judges[0]`: `prompt` or `prompt_file` is required"),
        (LLM.replace('name = "j"\n', "") + 'prompt = "p"\n', "`judges[0].name` is required"),
        (LLM + 'prompt = "p"\nprompt_file = "p.j2"\n', "`judges[0]`: `prompt` and `prompt_file` both given"),
        (LLM + 'prompt = "p"\napi_key = "sk-x"\n', "`judges[0].api_key`: do not write API keys"),
    ],
)  # fmt: skip
def test_a_bad_judges_file_names_the_file_and_key(tmp_path: Path, text: str, message: str) -> None:
    path = tmp_path / "judges.toml"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(ConfigError) as caught:
        load_judges(path)
    shown = str(caught.value)
    assert shown.startswith(f"{path}: ")
    assert message in shown
    assert "\n" not in shown
    # The key never reaches a message.
    assert "sk-x" not in shown


def test_a_judges_file_builds_the_judges_it_names(tmp_path: Path) -> None:
    (tmp_path / "p.j2").write_text("Q: {{ item.question }}", encoding="utf-8")
    path = tmp_path / "judges.toml"
    path.write_text(
        '[[judges]]\nkind = "regex"\npattern = "^A"\nignore_case = true\n'
        '[[judges]]\nkind = "contains"\ntext = "paris"\nname = "has-paris"\n'
        + LLM
        + 'prompt_file = "p.j2"\nscale = "1-5"\ntimeout = 5\nmax_tokens = 9\n',
        encoding="utf-8",
    )
    regex, contains, llm = load_judges(path)
    assert regex == RegexMatch(pattern="^A", ignore_case=True)
    assert contains == Contains(text="paris", name="has-paris")
    expected = LLMJudge(
        "j",
        model="m",
        base_url="http://127.0.0.1:9/v1",
        prompt="Q: {{ item.question }}",
        scale="1-5",
        timeout=5,
        max_tokens=9,
    )
    assert isinstance(llm, LLMJudge)
    assert llm.identity == expected.identity
    assert prompt_files(path) == [str((tmp_path / "p.j2").resolve())]


def test_the_file_shape_has_exactly_the_constructors_options() -> None:
    """A judge option added to a constructor and not to the file's shape (or the reverse)
    fails here, not in a user's file."""
    for table, build in _KINDS.items():
        keys = set(table.__struct_fields__)
        if table is _LLM:
            options = set(inspect.signature(LLMJudge.__init__).parameters) - {"self", "api_key"}
            keys = keys - {"prompt_file", "system_prompt_file", "api_key_env"}
        else:
            assert build in (
                OptionMatch,
                ExactMatch,
                TokenF1,
                RegexMatch,
                Contains,
                OptionExtraction,
            )
            options = {f.name for f in dataclasses.fields(build)}  # type: ignore[arg-type]
            assert table.__struct_config__.tag == build.kind  # type: ignore[attr-defined]
        assert keys == options, table
