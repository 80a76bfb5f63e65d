"""The datasets file: the ground truth of a kag benchmark.

Format (kag ``src/subcommand/benchmark/dataset.rs``)::

    { <dataset>: { <question>: { "input": str, "output": null | MCQ } } }
    MCQ = {"type": "MCQ", "options": {<key>: <text>, ...}, "answer": <key> | null}

An absent or null ``output`` is a free-form question.
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

import msgspec

from kagreport._errors import DatasetsError
from kagreport.kag._names import is_component_name

__all__ = ["MCQ", "Datasets", "Question", "load_datasets", "parse_datasets"]


@dataclass(frozen=True, slots=True)
class MCQ:
    """A multiple-choice question's expected output.

    Attributes
    ----------
    options : Mapping[str, str]
        Option key to option text, in file order.
    answer : str or None
        The key of the right option; ``None`` when the file gives none
        (such a question cannot be scored).
    """

    options: Mapping[str, str]
    answer: str | None


@dataclass(frozen=True, slots=True)
class Question:
    """One entry of the datasets file.

    Attributes
    ----------
    input : str
        The question text given to the model.
    output : MCQ or None
        The expected output; ``None`` for a free-form question.
    """

    input: str
    output: MCQ | None

    @property
    def answer(self) -> str | None:
        """The right option key when this is a scorable MCQ, else ``None``."""
        return None if self.output is None else self.output.answer


@dataclass(frozen=True, slots=True)
class Datasets:
    """The parsed datasets file: dataset name -> question name -> :class:`Question`.

    Attributes
    ----------
    questions : Mapping[str, Mapping[str, Question]]
        The entries, in file order.
    path : str or None
        The file they were read from, if any.
    """

    questions: Mapping[str, Mapping[str, Question]]
    path: str | None = None

    def get(self, dataset: str, question: str) -> Question | None:
        """Return the entry of ``dataset``/``question``, or ``None`` if unknown."""
        entries = self.questions.get(dataset)
        return None if entries is None else entries.get(question)

    def __iter__(self) -> Iterator[tuple[str, str, Question]]:
        for dataset, entries in self.questions.items():
            for question, entry in entries.items():
                yield dataset, question, entry

    def __len__(self) -> int:
        return sum(len(entries) for entries in self.questions.values())

    @property
    def scorable_questions(self) -> int:
        """Number of MCQ entries with an answer, over all datasets (kag's count)."""
        return sum(1 for _, _, entry in self if entry.answer is not None)


def load_datasets(path: str | os.PathLike[str]) -> Datasets:
    """Read and validate a kag datasets file.

    Parameters
    ----------
    path : str or os.PathLike
        The JSON datasets file.

    Returns
    -------
    Datasets

    Raises
    ------
    DatasetsError
        If the file cannot be read, is not JSON, or breaks the format: an
        invalid dataset or question name, a missing ``input``, an ``output``
        whose ``type`` is not ``"MCQ"``, or options that are not strings.
    """
    name = os.fspath(path)
    try:
        with open(name, "rb") as file:
            data = file.read()
    except OSError as exc:
        raise DatasetsError(
            f"cannot read the datasets file {name}: {exc.strerror or exc}", path=name
        ) from None
    return parse_datasets(data, path=name)


def parse_datasets(data: bytes | str, *, path: str | None = None) -> Datasets:
    """Validate the JSON text of a datasets file; see :func:`load_datasets`."""
    where = path if path is not None else "<datasets>"
    try:
        raw = msgspec.json.decode(data)
    except msgspec.DecodeError as exc:
        raise DatasetsError(
            f"the datasets file {where} is not valid JSON: {exc}", path=path
        ) from None

    def fail(message: str) -> DatasetsError:
        return DatasetsError(f"invalid datasets file {where}: {message}", path=path)

    if not isinstance(raw, dict):
        raise fail("the top level must be an object of datasets")
    datasets: dict[str, dict[str, Question]] = {}
    for dataset, entries in raw.items():
        if not is_component_name(dataset):
            raise fail(f"dataset name {dataset!r} is not a valid name (only a-z, 0-9 and '-')")
        if not isinstance(entries, dict):
            raise fail(f"dataset {dataset!r} must be an object of questions")
        questions: dict[str, Question] = {}
        for question, entry in entries.items():
            if not is_component_name(question):
                raise fail(
                    f"question name {question!r} in dataset {dataset!r} is not a valid name "
                    "(only a-z, 0-9 and '-')"
                )
            try:
                questions[question] = _question(entry)
            except _Invalid as exc:
                raise fail(f"{dataset}/{question}: {exc}") from None
        datasets[dataset] = questions
    return Datasets(datasets, path=path)


class _Invalid(ValueError):
    pass


def _question(entry: Any) -> Question:
    fail = _Invalid
    if not isinstance(entry, dict):
        raise fail("the entry must be an object")
    text = entry.get("input")
    if not isinstance(text, str):
        raise fail("'input' is missing or not a string")
    output = entry.get("output")
    if output is None:
        return Question(text, None)
    if not isinstance(output, dict):
        raise fail("'output' must be null or an object")
    kind = output.get("type")
    if kind != "MCQ":
        raise fail(f"unknown output type {kind!r} (only 'MCQ' is known)")
    options = output.get("options")
    if not isinstance(options, dict) or not all(isinstance(v, str) for v in options.values()):
        raise fail("'options' must be an object of option texts")
    answer = output.get("answer")
    if answer is not None and not isinstance(answer, str):
        raise fail("'answer' must be an option key or null")
    return Question(text, MCQ(options, answer))
