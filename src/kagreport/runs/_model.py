"""The format-neutral run: systems (setups) x items, held in columns.

One row per (system, item) graded, like ``kagreport.grading.ItemTable``: small
integer codes into name tuples and float64 columns, so a million rows take about
70 bytes each (texts aside). A system may lack some items (a result file that did not
parse); the comparisons pair the items both systems hold.
"""

from __future__ import annotations

import dataclasses
import json
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np
import numpy.typing as npt

from kagreport._document import Document
from kagreport._errors import DocumentError, KagreportError, ReportError
from kagreport._format import json_safe
from kagreport.runs._columns import OUTCOMES, TEXTS
from kagreport.runs._document import READABLE, SCHEMA, VERSION, fields_of, to_dict
from kagreport.runs._evaluations import evaluation_fields
from kagreport.runs._kag import stats_fields
from kagreport.runs._texts import take_texts

if TYPE_CHECKING:
    from kagreport.evaluation import AnswerEvaluation, RetrievalEvaluation
    from kagreport.grading import StatsReport

__all__ = ["OUTCOMES", "Run"]

#: A text column: a tuple, or a lazy column (runs._texts.LazyTexts).
Texts = Sequence[str | None]


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
        Index into ``("correct", "incorrect", "error")``; -1 when unknown.
    metrics : mapping of str to ndarray of float64, each shape (n,)
        Per-item metric values (``correct`` in {0, 1}, judge scores, retrieval
        metrics in [0, 1]); NaN where undefined.
    costs : mapping of str to ndarray of float64, each shape (n,)
        Per-item costs: ``generation_secs``, ``retrieval_secs`` (seconds),
        ``context_bytes`` (bytes), ``vertices``/``relationships``/``properties``
        (graph elements), ``input_tokens``/``output_tokens``, ``cost_usd``; only the
        columns a source records; NaN where unknown.
    question_texts : sequence of (str or None), length n, or None
        The question (or input) text of each row's item, the same on every system's row
        of it.
    options : sequence of (tuple of (str, str) or None), length n, or None
        The multiple-choice options of each row's item as (key, text) pairs, in the
        question's order; None for an item that has none.
    responses : sequence of (str or None), length n, or None
        What the system answered.
    references : sequence of (str or None), length n, or None
        The gold answer (target) of the row's item: an option key for a multiple-choice
        question, else the reference text.
    explanations : sequence of (str or None), length n, or None
        How the row was scored, where the tool recorded it (a scorer's explanation, a
        judge's verdict, a failed assertion's reason).
    errors : sequence of (str or None), length n, or None
        The system's error message where it failed.
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
    Each text column is None when the source kept none. It may be a tuple or any
    ``Sequence``, such as a lazy column read on demand (a kag tree's responses are read
    from its result files only when shown); :meth:`select` keeps a lazy column lazy.

    Serialised as compact JSON, ``{"schema": "kagreport.run", "version": 2, ...}`` with
    NaN as ``null``; a text column that is the same on every system's row of an item
    (question texts, options, gold answers) is stored once per item (:meth:`dumps`,
    :meth:`write`, :meth:`read`, :meth:`loads`, :meth:`from_dict`; version 1 still
    reads). Equality is NaN-aware and compares the text columns' values (a lazy column
    is read whole), so ``Run.read(path) == run`` after ``run.write(path)``.
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
    responses: Texts | None = None
    references: Texts | None = None
    errors: Texts | None = None
    metadata: Mapping[str, Any] = field(default_factory=dict)
    question_texts: Texts | None = None
    options: Sequence[tuple[tuple[str, str], ...] | None] | None = None
    explanations: Texts | None = None

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
        for name in TEXTS:
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

    @property
    def headline(self) -> str:
        """The metric a view shows when none is named: the tool's own headline
        (``metadata["headline"]``, e.g. an Inspect log's first scorer) when the run has it,
        else ``correct``, else the first metric.

        Raises
        ------
        KagreportError
            If the run has no metric at all.
        """
        named = self.metadata.get("headline")
        if isinstance(named, str) and named in self.metrics:
            return named
        if "correct" in self.metrics:
            return "correct"
        if not self.metrics:
            raise KagreportError("the run has no metric")
        return next(iter(self.metrics))

    def metric(self, name: str) -> npt.NDArray[np.float64]:
        """The values of metric ``name``, one per row (NaN where unscored).

        Raises
        ------
        KagreportError
            If the run has no such metric (the message lists the ones it has).
        """
        try:
            return self.metrics[name]
        except KeyError:
            known = ", ".join(self.metrics) or "none"
            raise KagreportError(f"the run has no metric {name!r}; metrics: {known}") from None

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
    def from_stats(
        cls, report: StatsReport, *, storage_options: Mapping[str, Any] | None = None
    ) -> Run:
        """The run of a graded kag tree: its numbers from ``report.items`` (building it
        reads no file), its texts on demand.

        Metric ``correct`` is 1 for a correct record and 0 otherwise (errors count as
        wrong, as kag's accuracy does); the costs are the item table's. Texts: the
        question text, options and answer key (``references``) of each item from the
        datasets file the tree was graded against; responses and errors as grading kept
        them (``keep_text``), else read lazily from the result files when a view shows
        them (``storage_options`` for a tree on object storage). Metadata: ``source``
        ``"kag"``, ``tool``, ``convention``, ``prefix``, ``simulated`` (True) for a run
        ``kagreport simulate`` wrote, and ``unparsable``: ``[file, reason]`` of each result
        file that did not parse (the file relative to the results root: no local path, as
        a run's document may be published).
        """
        return cls(**stats_fields(report, storage_options))

    def select(self, systems: Sequence[str], datasets: Sequence[str] | None = None) -> Run:
        """The rows of this run whose system is one of ``systems`` (in that order, which
        becomes the new run's system order) and, when given, whose dataset is one of
        ``datasets``; it selects rows and computes nothing.

        Names and codes of datasets and questions are kept, so an item keeps its identity (and
        :func:`kagreport.runs.compare_setups` pairs the same items as on the whole run).

        Raises
        ------
        KagreportError
            For a system the run does not hold.
        """
        unknown = [s for s in systems if s not in self.systems]
        if unknown:
            raise KagreportError(
                f"the run holds no system {', '.join(map(repr, unknown))}; "
                f"systems: {', '.join(self.systems)}"
            )
        remap = np.full(max(1, len(self.systems)), -1, dtype=np.int32)
        for new, name in enumerate(systems):
            remap[self.systems.index(name)] = new
        keep = remap[self.system] >= 0 if len(self) else np.zeros(0, dtype=bool)
        if datasets is not None:
            wanted = [k for k, name in enumerate(self.dataset_names) if name in set(datasets)]
            keep &= np.isin(self.dataset, wanted)
        rows = np.flatnonzero(keep)

        texts: dict[str, Any] = {name: take_texts(getattr(self, name), rows) for name in TEXTS}
        return dataclasses.replace(
            self,
            systems=tuple(systems),
            system=remap[self.system[rows]] if len(rows) else np.zeros(0, dtype=np.int32),
            dataset=self.dataset[rows],
            question=self.question[rows],
            outcome=self.outcome[rows],
            metrics={name: values[rows] for name, values in self.metrics.items()},
            costs={name: values[rows] for name, values in self.costs.items()},
            **texts,
        )

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

        Texts of each row: the item's question, answer (``responses``), reference,
        error, and its judges' verdicts (``explanations``, where the evaluation kept
        them: a lone judge's verdict as it is, several as ``judge: verdict`` lines).

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
        return cls(**evaluation_fields(evaluations, labels, metadata, same_items=same_items))

    # ------------------------------------------------------------------ serialisation
    # The Document base gives dumps(), write(path), read(path), from_dict and equality.

    SCHEMA: ClassVar[str] = SCHEMA
    SCHEMA_VERSION: ClassVar[int] = VERSION
    READABLE_VERSIONS: ClassVar[tuple[int, ...]] = READABLE
    VERSION_KEY: ClassVar[str] = "version"
    WRITES: ClassVar[tuple[str, ...]] = ("json",)  # columns: one line of JSON, embedded as is
    COMPACT: ClassVar[bool] = True
    NOUN: ClassVar[str] = "document"

    def to_dict(self) -> dict[str, Any]:
        """The run as a ``kagreport.run`` version-2 mapping (NaN kept; :meth:`dumps` writes
        it as ``null``): names, then the code columns, metrics and costs by column name,
        the row texts (or None), the metadata and the item texts (once per item)."""
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
            ``kagreport.run`` document of version 1 or 2, or a field is missing or
            malformed (the message names ``source`` and the path of the field).
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
