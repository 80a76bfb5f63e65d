"""promptfoo's eval output: ``promptfoo eval -o results.json`` (results version 3) and
its JSONL output (one result per line).

The shapes follow promptfoo's ``EvaluateSummaryV3`` and ``EvaluateResult``
(``src/types/index.ts`` of github.com/promptfoo/promptfoo); only the fields read here
are declared. A system is the provider (its label, else its id), joined with the
prompt's label when the file holds several prompt labels; an item is the test index
``testIdx`` (dataset ``""``, question ``"test <testIdx>"``). Metrics: ``correct``
(``success`` as 1/0), ``score`` and each ``namedScores`` key; the outcome is
``error`` for ``failureReason`` 2 (promptfoo's ``ResultFailureReason.ERROR``),
else correct/incorrect from ``success``. Costs: ``generation_secs``
(``latencyMs``/1000), ``input_tokens``/``output_tokens`` (``response.tokenUsage``
``prompt``/``completion``), ``cost_usd`` (``cost``). Texts: the rendered prompt
(``prompt.raw``, else the test's vars), the response's ``output``, the expected output
of the test's assertions (``testCase.assert``: ``equals: 4``), the explanation (the
grading reason, ``gradingResult.reason``: why an assertion failed or passed) and the
error, only for an error outcome (a provider or harness failure: promptfoo also writes a
failed assertion's reason into ``error``, which is an incorrect item, not an error).

Repeats (``repeat: n``, or ``--repeat n``): promptfoo runs each test n times under n
consecutive ``testIdx`` values with one test case; each run stays an item, as promptfoo
counts it (its pass rate is passes over all runs), and ``metadata["repeat_of"]`` maps
every item of a repeated test to the test's first item (``{"test 4": "test 3"}``), so
that the runs of one test can be treated as one cluster; ``metadata["repeat"]`` is the
config's ``evaluateOptions.repeat`` where results.json records it.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import TYPE_CHECKING, Any

import msgspec
import numpy as np

from kagreport._errors import DocumentError, decode_utf8
from kagreport.sources._common import file_head, json_lines
from kagreport.sources._load import decode, read_document

if TYPE_CHECKING:
    from kagreport.runs import Run

__all__ = ["is_promptfoo", "read_promptfoo"]

#: promptfoo's ResultFailureReason.ERROR.
_FAILURE_ERROR = 2


_CONVENTION = (
    "one system per provider (and prompt, when the file holds several); an item per test "
    "(testIdx); correct is success; an error is failureReason 2, as promptfoo counts errors"
)


class _Provider(msgspec.Struct):
    id: str
    label: str | None = None


class _Prompt(msgspec.Struct):
    raw: str = ""
    label: str = ""


class _Usage(msgspec.Struct):
    prompt: float | None = None
    completion: float | None = None


class _Response(msgspec.Struct):
    output: Any = None
    tokenUsage: _Usage | None = None
    error: str | None = None


class _Grading(msgspec.Struct):
    reason: str | None = None


class _Result(msgspec.Struct):
    provider: _Provider
    testIdx: int
    promptIdx: int = 0
    prompt: _Prompt | None = None
    success: bool = False
    score: float | None = None
    namedScores: dict[str, float | None] = {}
    latencyMs: float | None = None
    cost: float | None = None
    error: str | None = None
    failureReason: int = 0
    response: _Response | None = None
    gradingResult: _Grading | None = None
    vars: dict[str, Any] = {}
    testCase: dict[str, Any] | None = None


class _Summary(msgspec.Struct):
    version: int
    results: list[_Result]
    timestamp: str | None = None


class _EvaluateOptions(msgspec.Struct):
    repeat: int | None = None


class _Config(msgspec.Struct):
    evaluateOptions: _EvaluateOptions | None = None


class _Output(msgspec.Struct):
    results: _Summary
    evalId: str | None = None
    metadata: dict[str, Any] = {}
    config: _Config | None = None


def is_promptfoo(path: Path) -> bool:
    """Whether ``path`` looks like promptfoo's JSON or JSONL eval output."""
    if path.suffix == ".json":
        head = file_head(path, (".json",))
        return head is not None and b'"evalId"' in head and b'"version"' in head
    # A JSONL line's keys follow its response, which can run to many kilobytes: look at
    # the whole first line (up to a mebibyte), not its first 4 KiB.
    head = file_head(path, (".jsonl",), size=1 << 20)
    if head is None:
        return False
    line = head.split(b"\n", 1)[0]
    return b'"testIdx"' in line and b'"provider"' in line and b'"promptIdx"' in line


def read_promptfoo(path: Path) -> Run:
    """Read promptfoo's ``results.json`` (version 3) or JSONL output into a :class:`Run`.

    Raises
    ------
    DocumentError
        For a file that does not parse or is not shaped like promptfoo's output (one
        line naming the file and the field), an unknown results version, or a
        (provider, prompt, test) in two results.
    """
    data = read_document(path)
    decode_utf8(data, path, "promptfoo output")  # the offset of a byte that is not UTF-8
    meta: dict[str, Any] = {"tool": "promptfoo", "convention": _CONVENTION}
    results: list[_Result] = []
    if path.suffix == ".jsonl":
        for number, line in json_lines(data):
            results.append(decode(line, _Result, f"{path}: line {number}", path=path))
    else:
        output: _Output = decode(data, _Output, str(path), path=path)
        if output.results.version != 3:
            raise DocumentError(
                f"{path}: results.version is {output.results.version}; kagreport reads "
                "promptfoo results version 3",
                path=path,
            )
        results = output.results.results
        meta.update(
            {
                "eval_id": output.evalId,
                "timestamp": output.results.timestamp,
                "version": output.metadata.get("promptfooVersion"),
                "results_version": 3,
            }
        )
        from kagreport.runs._times import recorded_time

        created = recorded_time(output.results.timestamp)
        if created is not None:
            meta["created"] = created
        options = output.config.evaluateOptions if output.config is not None else None
        if options is not None and options.repeat is not None:
            meta["repeat"] = options.repeat
    return _to_run(path, results, meta)


def _system_name(result: _Result, several_prompts: bool) -> str:
    name = result.provider.label or result.provider.id
    if several_prompts and result.prompt is not None:
        name = f"{name} / {result.prompt.label or result.prompt.raw}"
    return name


def _number(value: float | None) -> float:
    return math.nan if value is None else float(value)


def _to_run(path: Path, results: list[_Result], meta: dict[str, Any]) -> Run:
    from kagreport.runs import Run

    labels = {r.prompt.label or r.prompt.raw for r in results if r.prompt is not None}
    several = len(labels) > 1
    systems: dict[str, int] = {}
    questions: dict[int, int] = {}
    prompt_index: dict[str, int] = {}
    seen: set[tuple[int, int]] = set()
    names = sorted({key for r in results for key in r.namedScores if key not in ("correct",)})
    n = len(results)
    system = np.empty(n, dtype=np.int32)
    question = np.empty(n, dtype=np.int32)
    outcome = np.empty(n, dtype=np.int8)
    columns = ("correct", "score", *(k for k in names if k != "score"))
    metrics = {name: np.full(n, math.nan) for name in columns}
    costs = {
        name: np.full(n, math.nan)
        for name in ("generation_secs", "input_tokens", "output_tokens", "cost_usd")
    }
    responses: list[str | None] = []
    errors: list[str | None] = []
    prompts: list[str | None] = []
    reasons: list[str | None] = []
    targets: list[str | None] = []
    for row, result in enumerate(results):
        name = _system_name(result, several)
        code = systems.setdefault(name, len(systems))
        prompt_index.setdefault(name, result.promptIdx)
        item = questions.setdefault(result.testIdx, len(questions))
        if (code, item) in seen:
            raise DocumentError(
                f"{path}: results[{row}]: system {name!r} holds testIdx {result.testIdx} twice",
                path=path,
            )
        seen.add((code, item))
        system[row] = code
        question[row] = item
        failed = result.failureReason == _FAILURE_ERROR
        outcome[row] = 2 if failed else (0 if result.success else 1)
        metrics["correct"][row] = 1.0 if result.success else 0.0
        metrics["score"][row] = _number(result.score)
        for key in names:
            if key != "score":
                metrics[key][row] = _number(result.namedScores.get(key))
        costs["generation_secs"][row] = _number(result.latencyMs) / 1000.0
        response = result.response
        usage = response.tokenUsage if response is not None else None
        if usage is not None:
            costs["input_tokens"][row] = _number(usage.prompt)
            costs["output_tokens"][row] = _number(usage.completion)
        costs["cost_usd"][row] = _number(result.cost)
        output = None if response is None else response.output
        if output is not None and not isinstance(output, str):
            output = json.dumps(output, ensure_ascii=False)
        responses.append(output)
        prompts.append(_prompt_text(result))
        targets.append(_target(result.testCase))
        # promptfoo writes a failed assertion's reason into ``error`` too: only a provider or
        # harness failure (failureReason 2) is an error; a failed assertion is an incorrect
        # item whose reason is its explanation.
        reason = None if result.gradingResult is None else result.gradingResult.reason
        if failed:
            errors.append(result.error or (response.error if response is not None else None))
            reasons.append(reason)
        else:
            errors.append(None)
            reasons.append(reason or (None if result.success else result.error))
    meta["item_identity"] = "testIdx"
    meta["prompt_index"] = prompt_index
    clusters = _repeats(results, meta.get("repeat"))
    if clusters:
        meta["repeat_of"] = {f"test {t}": f"test {first}" for t, first in clusters.items()}
    return Run(
        kind="answers",
        systems=tuple(systems),
        dataset_names=("",),
        question_names=tuple(f"test {t}" for t in questions),
        system=system,
        dataset=np.zeros(n, dtype=np.int32),
        question=question,
        outcome=outcome,
        metrics=metrics,
        costs={k: v for k, v in costs.items() if not np.isnan(v).all()},
        responses=tuple(responses),
        references=tuple(targets) if any(targets) else None,
        errors=tuple(errors),
        metadata={k: v for k, v in meta.items() if v is not None},
        question_texts=tuple(prompts) if any(prompts) else None,
        explanations=tuple(reasons) if any(reasons) else None,
    )


def _repeats(results: list[_Result], repeat: int | None = None) -> dict[int, int]:
    """The repeats of each test (``repeat: n``): promptfoo gives the n runs of a test
    consecutive ``testIdx`` values and the same test case. Maps each repeat's ``testIdx``
    to its test's first ``testIdx``; empty when no test is repeated.

    With ``repeat`` (the config's, where results.json records it) test ``t``'s runs are
    ``t * n`` to ``t * n + n - 1``: each index maps to the first of its block whether or not
    the run holds that first repeat, so the test has the same key in every run; this holds
    when each block's runs share one test case. Otherwise (results.jsonl, or blocks that
    do not) a run of consecutive indices holding one test case is one test."""
    keys: dict[int, str] = {}
    for result in results:
        case = result.testCase if result.testCase is not None else {"vars": result.vars}
        keys.setdefault(result.testIdx, json.dumps(case, sort_keys=True, default=str))
    if isinstance(repeat, int) and not isinstance(repeat, bool) and repeat > 1:
        blocks = {index: index - index % repeat for index in keys}
        cases: dict[int, str] = {}
        if all(cases.setdefault(blocks[i], keys[i]) == keys[i] for i in sorted(keys)):
            return blocks
    first: dict[int, int] = {}
    previous: int | None = None
    for index in sorted(keys):
        same = previous is not None and previous == index - 1 and keys[previous] == keys[index]
        first[index] = first[previous] if same and previous is not None else index
        previous = index
    return first if any(f != t for t, f in first.items()) else {}


def _prompt_text(result: _Result) -> str | None:
    """The prompt the provider was given (rendered with the test's vars), else the vars."""
    if result.prompt is not None and result.prompt.raw:
        return result.prompt.raw
    if result.vars:
        return "\n".join(f"{k}: {v}" for k, v in result.vars.items())
    return None


#: Assertion types whose ``value`` is the expected output (or a text it is compared
#: with), as promptfoo's docs list them (configuration/expected-outputs); each may be
#: negated with ``not-``.
_EXPECTED = frozenset(
    (
        "equals",
        "contains",
        "icontains",
        "contains-all",
        "contains-any",
        "icontains-all",
        "icontains-any",
        "starts-with",
        "regex",
        "similar",
        "levenshtein",
        "rouge-n",
        "bleu",
        "gleu",
        "meteor",
        "factuality",
        "llm-rubric",
        "model-graded-closedqa",
    )
)


def _target(test_case: dict[str, Any] | None) -> str | None:
    """The test's expected output: each of its assertions that compares the output with a
    text, as ``type: value`` lines (``contains: 4``); None when it has none."""
    asserts = (test_case or {}).get("assert")
    if not isinstance(asserts, list):
        return None
    lines = []
    for check in asserts:
        if not isinstance(check, dict) or not isinstance(check.get("type"), str):
            continue
        kind, value = check["type"], check.get("value")
        if kind.removeprefix("not-") not in _EXPECTED:
            continue
        if isinstance(value, str):
            lines.append(f"{kind}: {value}")
        elif isinstance(value, list) and value and all(isinstance(v, str) for v in value):
            lines.append(f"{kind}: {json.dumps(value, ensure_ascii=False)}")
    return "\n".join(lines) or None
