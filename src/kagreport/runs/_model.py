"""The format-neutral run: systems (setups) x items, held in columns.

One row per (system, item) graded, like :class:`kagreport.grading.ItemTable`: small
integer codes into name tuples and float64 columns, so a million rows take about
70 bytes each (texts aside). A system may lack some items (a result file that did not
parse); the comparisons pair the items both systems hold.
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np
import numpy.typing as npt

from kagreport._document import Document
from kagreport._errors import DocumentError, KagreportError, ReportError
from kagreport._format import json_safe
from kagreport.runs._document import SCHEMA, VERSION, fields_of, to_dict

if TYPE_CHECKING:
    from kagreport.evaluation import AnswerEvaluation, RetrievalEvaluation
    from kagreport.grading import StatsReport

__all__ = ["OUTCOMES", "Run"]

#: Outcome labels by code; code -1 is an unknown outcome.
OUTCOMES = ("correct", "incorrect", "error")
#: Cost columns a kag run records (seconds, element counts, bytes).
_KAG_COSTS = (
    "generation_secs",
    "retrieval_secs",
    "vertices",
    "relationships",
    "properties",
    "context_bytes",
)
#: Per-item costs :meth:`Run.from_evaluations` takes from an item's metadata when it
#: records them (the kag bridge records the retrieval ones; other sources tokens, money).
_ITEM_COSTS = (*_KAG_COSTS[1:], "input_tokens", "output_tokens", "cost_usd")


@dataclass(frozen=True, eq=False)
class Run(Document):
    """Systems x items with per-item metrics, outcomes, costs and texts.

    Attributes
    ----------
    kind : {"answers", "retrieval"}
        What the systems were scored on.
    systems : tuple of str
        System (setup) names, in rank order (the leaderboard's default order).
    dataset_names, question_names : tuple of str
        Names the ``dataset`` and ``question`` codes index. An item is identified by
        (dataset, question); the dataset is ``""`` when a source has none.
    system, dataset, question : ndarray of int32, shape (n,)
        Codes of each row.
    outcome : ndarray of int8, shape (n,)
        Index into :data:`OUTCOMES`; -1 when unknown.
    metrics : mapping of str to ndarray of float64, each shape (n,)
        Per-item metric values (``correct`` in {0, 1}, judge scores, retrieval
        metrics in [0, 1]); NaN where undefined.
    costs : mapping of str to ndarray of float64, each shape (n,)
        Per-item costs: ``generation_secs``, ``retrieval_secs`` (seconds),
        ``context_bytes`` (bytes), ``vertices``/``relationships``/``properties``
        (graph elements), ``input_tokens``/``output_tokens``, ``cost_usd``; only the
        columns a source records; NaN where unknown.
    responses, references, errors : tuple of (str or None), length n, or None
        Row texts for the views; None when the source kept none.
    metadata : mapping
        JSON-compatible run metadata.

    Raises
    ------
    KagreportError
        If the columns differ in length, a code lies outside its names, the systems,
        dataset names or question names repeat, a system holds an item (dataset,
        question) in two rows, or the metadata is not JSON-compatible.

    Notes
    -----
    Serialised as compact JSON, ``{"schema": "kagreport.run", "version": 1, ...}`` with
    NaN as ``null`` (:meth:`dumps`, :meth:`write`, :meth:`read`, :meth:`loads`,
    :meth:`from_dict`); equality is NaN-aware, so ``Run.read(path) == run`` after
    ``run.write(path)``.
    """

    kind: str
    systems: tuple[str, ...]
    dataset_names: tuple[str, ...]
    question_names: tuple[str, ...]
    system: npt.NDArray[np.int32]
    dataset: npt.NDArray[np.int32]
    question: npt.NDArray[np.int32]
    outcome: npt.NDArray[np.int8]
    metrics: Mapping[str, npt.NDArray[np.float64]]
    costs: Mapping[str, npt.NDArray[np.float64]] = field(default_factory=dict)
    responses: tuple[str | None, ...] | None = None
    references: tuple[str | None, ...] | None = None
    errors: tuple[str | None, ...] | None = None
    metadata: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        n = len(self.system)
        for name in ("dataset", "question", "outcome"):
            if len(getattr(self, name)) != n:
                raise KagreportError(
                    f"run column {name!r} has {len(getattr(self, name))} rows, not {n}"
                )
        for group in ("metrics", "costs"):
            for name, values in getattr(self, group).items():
                if values.shape != (n,):
                    raise KagreportError(
                        f"run column {group}.{name} has shape {values.shape}, not ({n},)"
                    )
        for name in ("responses", "references", "errors"):
            texts = getattr(self, name)
            if texts is not None and len(texts) != n:
                raise KagreportError(f"run texts {name!r} hold {len(texts)} rows, not {n}")
        if len(set(self.systems)) != len(self.systems):
            raise KagreportError(f"run systems are not unique: {', '.join(self.systems)}")
        for name, names in (("dataset", self.dataset_names), ("question", self.question_names)):
            if len(set(names)) != len(names):
                twice = next(x for i, x in enumerate(names) if x in names[:i])
                raise KagreportError(f"run {name} names hold {twice!r} twice")
        for name, codes, names in (
            ("system", self.system, self.systems),
            ("dataset", self.dataset, self.dataset_names),
            ("question", self.question, self.question_names),
        ):
            if n and (codes.min() < 0 or codes.max() >= len(names)):
                raise KagreportError(f"run column {name!r} holds a code outside its names")
        if n and (self.outcome.min() < -1 or self.outcome.max() >= len(OUTCOMES)):
            raise KagreportError("run column 'outcome' holds a code outside -1..2")
        if n:
            self._check_rows_unique()
        try:
            json.dumps(json_safe(self.metadata), allow_nan=False)
        except (TypeError, ValueError) as exc:
            raise KagreportError(f"run metadata is not JSON-compatible: {exc}") from None

    def _check_rows_unique(self) -> None:
        """Raise if a system holds one item (dataset, question) in two rows: every view
        pairs rows by item, and a repeated one would be counted twice or misaligned."""
        codes = (self.system, self.dataset, self.question)
        order = np.lexsort(codes[::-1])
        same = np.ones(len(order) - 1, dtype=bool)
        for column in codes:
            sorted_column = column[order]
            same &= sorted_column[1:] == sorted_column[:-1]
        if same.any():
            row = int(order[int(np.flatnonzero(same)[0])])
            raise KagreportError(
                f"run system {self.systems[self.system[row]]!r} holds item "
                f"{self.item_label(row)!r} in two rows"
            )

    def __len__(self) -> int:
        return len(self.system)

    def __repr__(self) -> str:
        metrics = ", ".join(self.metrics)
        return f"<Run: {len(self.systems)} systems, {len(self)} rows, metrics {metrics}>"

    @property
    def nbytes(self) -> int:
        """Memory held by the columns, bytes (names and texts not counted)."""
        arrays: list[np.ndarray[Any, Any]] = [self.system, self.dataset, self.question]
        arrays.append(self.outcome)
        arrays += [*self.metrics.values(), *self.costs.values()]
        return sum(a.nbytes for a in arrays)

    def item_label(self, row: int) -> str:
        """``"dataset/question"`` of row ``row`` (the question alone without a dataset)."""
        dataset = self.dataset_names[self.dataset[row]]
        question = self.question_names[self.question[row]]
        return f"{dataset}/{question}" if dataset else question

    def rows_of(self, system: str) -> tuple[npt.NDArray[np.intp], npt.NDArray[np.int64]]:
        """The rows of ``system`` ordered by (dataset name, question name), and their keys.

        Returns
        -------
        rows : ndarray of intp, shape (k,)
        keys : ndarray of int64, shape (k,), ascending
            ``dataset rank * n_questions + question rank`` by name, the same for the
            same item in every system.

        Raises
        ------
        KeyError
            If the run holds no such system.
        """
        if system not in self.systems:
            raise KeyError(f"no system {system!r}; systems: {', '.join(self.systems)}")
        keys = _item_keys(self)
        rows = np.flatnonzero(self.system == self.systems.index(system))
        order = np.argsort(keys[rows], kind="stable")
        return rows[order], keys[rows][order]

    # ------------------------------------------------------------------ constructors

    @classmethod
    def from_stats(cls, report: StatsReport) -> Run:
        """The run of a graded kag tree, from ``report.items`` (no file is read again).

        Metric ``correct`` is 1 for a correct record and 0 otherwise (errors count as
        wrong, as kag's accuracy does); the costs are the item table's; responses and
        errors are kept when the report was graded with ``keep_text``; references are
        the datasets file's answer keys (as :func:`kagreport.evaluation.evaluation_from_stats`
        gives them), None without a datasets file.
        """
        table = report.items
        setup_codes = table.codes("setup").astype(np.int32)
        # Rank order of the report, not first appearance.
        remap = np.array(
            [
                report.setup_names.index(s) if s in report.setup_names else -1
                for s in table.setup_names
            ]
            or [0],
            dtype=np.int32,
        )
        outcome = table.codes("outcome").astype(np.int8)
        texts = table.texts
        return cls(
            kind="answers",
            systems=tuple(report.setup_names),
            dataset_names=tuple(table.dataset_names),
            question_names=tuple(table.question_names),
            system=remap[setup_codes] if len(setup_codes) else setup_codes,
            dataset=table.codes("dataset").astype(np.int32),
            question=table.codes("question").astype(np.int32),
            outcome=outcome,
            metrics={"correct": (outcome == 0).astype(np.float64)},
            costs={name: table.column(name) for name in _KAG_COSTS},
            responses=None if texts is None else tuple(texts.responses),
            references=_references(report),
            errors=None if texts is None else tuple(texts.errors),
            metadata={"source": "kag", "prefix": table.prefix},
        )

    # Over 80 lines with its docstring: one pass over the items fills every column.
    @classmethod
    def from_evaluations(
        cls,
        evaluations: Sequence[AnswerEvaluation | RetrievalEvaluation],
        labels: Sequence[str] | None = None,
        metadata: Mapping[str, Any] | None = None,
        *,
        same_items: bool = True,
    ) -> Run:
        """The run of several evaluations of the same items, one system each.

        Parameters
        ----------
        evaluations : sequence of AnswerEvaluation or RetrievalEvaluation
            All of one kind, each holding the same item identifiers.
        labels : sequence of str, optional
            System names; default each evaluation's ``metadata["name"]``, else
            ``system-1``, ``system-2``, ...
        metadata : mapping, optional
            Run metadata (JSON-compatible).
        same_items : bool
            Require every evaluation to hold the same items (default); False accepts
            systems that lack some items (a kag result file that did not parse), as
            :meth:`from_stats` does: the comparisons pair the items both systems hold.

        Raises
        ------
        DifferentItemsError
            If two evaluations do not hold the same items (with ``same_items``).
        KagreportError
            If there is no evaluation, they mix kinds, labels repeat or do not match,
            or one evaluation holds an item twice.
        """
        kind, names = _check_evaluations(evaluations, labels, same_items=same_items)
        datasets: dict[str, int] = {}
        questions: dict[str, int] = {}
        metric_names = sorted({m for e in evaluations for m in e.metrics})
        rows: list[tuple[int, int, int, int]] = []
        values: dict[str, list[float]] = {m: [] for m in metric_names}
        latency: list[float] = []
        item_costs: dict[str, list[float]] = {c: [] for c in _ITEM_COSTS}
        recorded: set[str] = set()  # the costs some item's metadata names (None: unknown)
        responses: list[str | None] = []
        references: list[str | None] = []
        errors: list[str | None] = []
        for s, evaluation in enumerate(evaluations):
            for item in evaluation.items:
                dataset, question = _identity(item)
                d = datasets.setdefault(dataset, len(datasets))
                q = questions.setdefault(question, len(questions))
                correct = item.scores.get("correct")
                outcome = (
                    2
                    if item.error is not None
                    else -1
                    if correct is None or math.isnan(correct)
                    else 0
                    if correct == 1
                    else 1
                )
                rows.append((s, d, q, outcome))
                for m in metric_names:
                    values[m].append(item.scores.get(m, math.nan))
                latency.append(math.nan if item.latency is None else item.latency)
                for name, column in item_costs.items():
                    column.append(_number(item.metadata.get(name)))
                recorded.update(name for name in _ITEM_COSTS if name in item.metadata)
                responses.append(getattr(item, "answer", None))
                references.append(getattr(item, "reference", None))
                errors.append(item.error)
        codes = np.array(rows, dtype=np.int64).reshape(-1, 4)
        return cls(
            kind=kind,
            systems=tuple(names),
            dataset_names=tuple(datasets),
            question_names=tuple(questions),
            system=codes[:, 0].astype(np.int32),
            dataset=codes[:, 1].astype(np.int32),
            question=codes[:, 2].astype(np.int32),
            outcome=codes[:, 3].astype(np.int8),
            metrics={m: np.array(v, dtype=np.float64) for m, v in values.items()},
            costs={
                "generation_secs": np.array(latency, dtype=np.float64),
                **{
                    name: np.array(column, dtype=np.float64)
                    for name, column in item_costs.items()
                    if name in recorded
                },
            },
            responses=tuple(responses),
            references=tuple(references),
            errors=tuple(errors),
            metadata={"source": "evaluations", **(metadata or {})},
        )

    # ------------------------------------------------------------------ serialisation
    # The Document base gives dumps(), write(path), read(path), from_dict and equality.

    SCHEMA: ClassVar[str] = SCHEMA
    SCHEMA_VERSION: ClassVar[int] = VERSION
    VERSION_KEY: ClassVar[str] = "version"
    WRITES: ClassVar[tuple[str, ...]] = ("json",)  # columns: one line of JSON, embedded as is
    COMPACT: ClassVar[bool] = True
    NOUN: ClassVar[str] = "document"

    def to_dict(self) -> dict[str, Any]:
        """The run as a ``kagreport.run`` version-1 mapping (NaN kept; :meth:`dumps` writes
        it as ``null``): names, then the code columns, metrics and costs by column name,
        the texts (or None) and the metadata."""
        return to_dict(self)

    def _plain(self) -> dict[str, Any]:
        return to_dict(self, plain=True)

    @classmethod
    def _from_checked(cls, data: Mapping[str, Any]) -> Run:
        fields = fields_of(data)
        try:
            return cls(**fields)
        except KagreportError as exc:
            raise DocumentError(f"not a valid Run: {exc.message}") from None

    @classmethod
    def loads(cls, text: str, source: str = "<string>") -> Run:
        """A run from a JSON document.

        Raises
        ------
        DocumentError
            A :class:`KagreportError` and ValueError: if ``text`` is not JSON, not a
            ``kagreport.run`` document of version 1, or a field is missing or malformed
            (the message names ``source`` and the path of the field).
        """
        return cls._from_text(text, "json", None if source == "<string>" else source)

    @classmethod
    def _read_text(cls, path: str | os.PathLike[str]) -> str:
        # Not open(): a FIFO with no writer would hang the reader.
        from kagreport._errors import decode_utf8
        from kagreport._io import read_regular_file

        try:
            data = read_regular_file(path)
        except OSError as exc:
            raise ReportError(
                f"cannot read run document {os.fspath(path)}: {exc.strerror or exc}", path=path
            ) from None
        return decode_utf8(data, path, "the run document", bom=True)


def _references(report: StatsReport) -> tuple[str | None, ...] | None:
    """Each row's answer key from the datasets file, looked up once per question."""
    truth = report.ground_truth
    if truth is None:
        return None
    table = report.items
    keys: dict[tuple[int, int], str | None] = {}
    found = []
    for d, q in zip(table.codes("dataset").tolist(), table.codes("question").tolist(), strict=True):
        if (d, q) not in keys:
            entry = truth.get(table.dataset_names[d], table.question_names[q])
            answer = None if entry is None else entry.answer
            keys[d, q] = None if answer is None else str(answer)
        found.append(keys[d, q])
    return tuple(found)


def _item_keys(run: Run) -> npt.NDArray[np.int64]:
    n_questions = max(1, len(run.question_names))
    dataset_rank = _name_ranks(run.dataset_names)
    question_rank = _name_ranks(run.question_names)
    if not len(run):
        return np.zeros(0, dtype=np.int64)
    return dataset_rank[run.dataset] * n_questions + question_rank[run.question]


def _name_ranks(names: tuple[str, ...]) -> npt.NDArray[np.int64]:
    ranks = np.empty(len(names), dtype=np.int64)
    ranks[sorted(range(len(names)), key=names.__getitem__)] = np.arange(len(names))
    return ranks


def _number(value: Any) -> float:
    """A cost from item metadata as a float; NaN when absent or not a finite number."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return math.nan
    number = float(value)
    return number if math.isfinite(number) else math.nan


def _name(evaluation: Any, index: int) -> str:
    name = evaluation.metadata.get("name")
    return name if isinstance(name, str) and name else f"system-{index + 1}"


def _identity(item: Any) -> tuple[str, str]:
    """(dataset, question) of an item: the kag bridge's metadata, else ("", identifier)."""
    dataset, question = item.metadata.get("dataset"), item.metadata.get("question")
    if (
        isinstance(dataset, str)
        and isinstance(question, str)
        and item.identifier == f"{dataset}/{question}"
    ):
        return dataset, question
    return "", item.identifier


def _identifiers(evaluation: Any, name: str) -> list[str]:
    seen: set[str] = set()
    for item in evaluation.items:
        if item.identifier in seen:
            raise KagreportError(f"{name} holds item {item.identifier!r} twice")
        seen.add(item.identifier)
    return [item.identifier for item in evaluation.items]


def _check_evaluations(
    evaluations: Sequence[AnswerEvaluation | RetrievalEvaluation],
    labels: Sequence[str] | None,
    *,
    same_items: bool,
) -> tuple[str, list[str]]:
    """The kind and the system names of :meth:`Run.from_evaluations`' evaluations, checked
    (one kind, unique labels, the same items); the errors it documents."""
    from kagreport.evaluation import AnswerEvaluation, DifferentItemsError

    if not evaluations:
        raise KagreportError("a run needs at least one evaluation")
    kinds = {"answers" if isinstance(e, AnswerEvaluation) else "retrieval" for e in evaluations}
    if len(kinds) > 1:
        raise KagreportError("a run's evaluations must all be answer or all retrieval evaluations")
    if labels is not None and len(labels) != len(evaluations):
        raise KagreportError(f"{len(labels)} label(s) for {len(evaluations)} evaluation(s)")
    names = list(labels) if labels is not None else [_name(e, i) for i, e in enumerate(evaluations)]
    if len(set(names)) != len(names):
        raise KagreportError(f"system labels repeat: {', '.join(names)}; pass labels=")
    first = _identifiers(evaluations[0], names[0])
    for evaluation, name in zip(evaluations[1:], names[1:], strict=True):
        other = _identifiers(evaluation, name)
        if same_items and set(other) != set(first):
            only_c, only_b = set(other) - set(first), set(first) - set(other)
            raise DifferentItemsError(
                f"{name} and {names[0]} do not hold the same items "
                f"({len(only_c)} only in {name}, {len(only_b)} only in {names[0]})",
                only_candidate=len(only_c),
                only_baseline=len(only_b),
            )
    return kinds.pop(), names
