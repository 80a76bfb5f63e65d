"""The per-item outcome table: one row per graded result file, held in columns.

``kag stats`` keeps only aggregates; later layers (paired tests, item
browsers, charts of latency) need the items. The table holds no prompts or
vectors, and responses only when asked for: small integer codes and 64-bit
numbers, about 60 bytes a row, so a million results fit in memory comfortably.
"""

from __future__ import annotations

import enum
import os
from array import array
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from kagreport._errors import InputError, MissingKeyError

if TYPE_CHECKING:
    import numpy.typing as npt

__all__ = ["ItemRow", "ItemTable", "ItemTexts", "Outcome"]

_MISSING = -1
_DTYPES = {"I": "uint32", "B": "uint8", "q": "int64"}


class Outcome(enum.IntEnum):
    """The grade of one result file (kag ``metric.rs``)."""

    CORRECT = 0
    INCORRECT = 1
    ERROR = 2

    @property
    def label(self) -> str:
        """``"correct"``, ``"incorrect"`` or ``"error"``."""
        return self.name.lower()


@dataclass(frozen=True, slots=True)
class ItemRow:
    """One row of ``ItemTable``; times in seconds, sizes in bytes, ``None`` when absent."""

    setup: str
    dataset: str
    question: str
    outcome: Outcome
    generation_secs: float | None
    retrieval_secs: float | None
    vertices: int | None
    relationships: int | None
    properties: int | None
    context_bytes: int | None


@dataclass(frozen=True, slots=True, eq=False)
class ItemTexts:
    """The response and error message of every row of an ``ItemTable``.

    Kept only when asked for (``grade(..., keep_text=...)``): texts can be large,
    the table itself stays small. Row ``i`` of each sequence belongs to row ``i``
    of the table.

    Attributes
    ----------
    limit : int or None
        Characters kept of each text; None when they are kept whole.
    responses : sequence of str or None, length n
        The model response (``ok.result``), cut to ``limit``; None for error records.
    response_lengths : sequence of int, length n
        The full length of each response in characters (code points); -1 for error
        records.
    errors : sequence of str or None, length n
        The benchmark error message (``err``), cut to ``limit``; None for success records.
    """

    limit: int | None
    responses: Sequence[str | None]
    response_lengths: Sequence[int]
    errors: Sequence[str | None]

    def __len__(self) -> int:
        return len(self.responses)


class _Interner:
    __slots__ = ("codes", "names")

    def __init__(self) -> None:
        self.codes: dict[str, int] = {}
        self.names: list[str] = []

    def code(self, name: str) -> int:
        code = self.codes.get(name)
        if code is None:
            code = self.codes[name] = len(self.names)
            self.names.append(name)
        return code


class ItemTableBuilder:
    """Collects rows in bulk while grading; :meth:`build` freezes them into an ``ItemTable``.

    Codes (setup, dataset, question) and measurements arrive in chunks of
    the same length; measurements use -1 for absent.
    """

    __slots__ = (
        "columns",
        "datasets",
        "errors",
        "keep_text",
        "lengths",
        "limit",
        "questions",
        "responses",
        "setups",
    )

    def __init__(self, keep_text: bool | int = False) -> None:
        self.setups = _Interner()
        self.datasets = _Interner()
        self.questions = _Interner()
        # setup, dataset, question codes; outcome; then int64 measurements (-1 = absent).
        self.columns: tuple[array[int], ...] = (
            array("I"),
            array("I"),
            array("I"),
            array("B"),
            *(array("q") for _ in range(6)),
        )
        # Texts (only when kept): responses, their full lengths, error messages.
        self.keep_text = keep_text is not False
        self.limit = None if isinstance(keep_text, bool) else int(keep_text)
        self.responses: list[str | None] = []
        self.lengths: array[int] = array("q")
        self.errors: list[str | None] = []

    def extend(
        self,
        codes: Sequence[array[int]],
        measures: Sequence[array[int]],
        texts: tuple[Sequence[str | None], Sequence[int], Sequence[str | None]] | None = None,
    ) -> None:
        """Append rows: three code arrays, then outcome and six measurement arrays.

        ``texts`` (responses, response lengths, errors) is required when texts are kept.
        """
        for column, values in zip(self.columns, (*codes, *measures), strict=True):
            column.extend(values)
        if self.keep_text:
            if texts is None:
                raise InputError("this builder keeps texts: pass them with the rows")
            responses, lengths, errors = texts
            self.responses.extend(responses)
            self.lengths.extend(lengths)
            self.errors.extend(errors)

    def extend_arrays(
        self,
        codes: Sequence[npt.NDArray[Any]],
        measures: Sequence[npt.NDArray[Any]],
        texts: tuple[Sequence[str | None], Sequence[int], Sequence[str | None]] | None = None,
    ) -> None:
        """:meth:`extend` from NumPy arrays, copied in bulk (a grade store's rows)."""
        import numpy as np

        for column, values in zip(self.columns, (*codes, *measures), strict=True):
            column.frombytes(values.astype(_DTYPES[column.typecode]).tobytes())
        if self.keep_text:
            if texts is None:
                raise InputError("this builder keeps texts: pass them with the rows")
            responses, lengths, errors = texts
            self.responses.extend(responses)
            self.lengths.frombytes(np.asarray(lengths, dtype=np.int64).tobytes())
            self.errors.extend(errors)

    def sort(self) -> None:
        """Put the rows in (dataset, question, setup) name order, the walk's order."""
        import numpy as np

        if not len(self.columns[0]):
            return
        ranks = []
        for interner, column in zip(
            (self.setups, self.questions, self.datasets),
            (self.columns[0], self.columns[2], self.columns[1]),
            strict=True,
        ):
            names = interner.names
            rank = np.empty(len(names), dtype=np.int64)
            rank[sorted(range(len(names)), key=names.__getitem__)] = np.arange(len(names))
            ranks.append(rank[np.frombuffer(column, dtype=_DTYPES[column.typecode])])
        order = np.lexsort(ranks)
        if np.all(order[1:] > order[:-1]):
            return
        columns = []
        for column in self.columns:
            values = np.frombuffer(column, dtype=_DTYPES[column.typecode])[order]
            columns.append(array(column.typecode, values.tobytes()))
        self.columns = tuple(columns)
        if self.keep_text:
            positions = order.tolist()
            self.responses = [self.responses[i] for i in positions]
            self.lengths = array("q", np.frombuffer(self.lengths, dtype=np.int64)[order].tobytes())
            self.errors = [self.errors[i] for i in positions]

    def build(self, results: str | None = None, prefix: str = "") -> ItemTable:
        return ItemTable(
            tuple(self.setups.names),
            tuple(self.datasets.names),
            tuple(self.questions.names),
            self.columns,
            results=results,
            prefix=prefix,
            texts=ItemTexts(self.limit, self.responses, self.lengths, self.errors)
            if self.keep_text
            else None,
        )


class ItemTable:
    """Per-item outcomes of a graded result tree, in columns.

    Rows come in walk order. Names are stored once and referenced by code.

    Attributes
    ----------
    setup_names, dataset_names, question_names : tuple of str
        The distinct names; the code columns index into them.
    results : str or None
        The results root, so a row's file is
        ``results/<dataset>/<question>/<prefix><setup>.json``.
    prefix : str
        The file-name prefix of the graded run.
    texts : ItemTexts or None
        Each row's response and error message, when grading kept them
        (``grade(..., keep_text=...)``); else None.
    """

    COLUMNS = (
        "setup",
        "dataset",
        "question",
        "outcome",
        "generation_secs",
        "retrieval_secs",
        "vertices",
        "relationships",
        "properties",
        "context_bytes",
    )

    def __init__(
        self,
        setup_names: Sequence[str],
        dataset_names: Sequence[str],
        question_names: Sequence[str],
        columns: tuple[array[int], ...],
        *,
        results: str | None = None,
        prefix: str = "",
        texts: ItemTexts | None = None,
    ) -> None:
        if texts is not None and len(texts) != len(columns[0]):
            raise InputError(f"texts hold {len(texts)} rows, the columns {len(columns[0])}")
        self.setup_names = tuple(setup_names)
        self.dataset_names = tuple(dataset_names)
        self.question_names = tuple(question_names)
        self._columns = columns
        self.results = results
        self.prefix = prefix
        self.texts = texts

    def __len__(self) -> int:
        return len(self._columns[0])

    def __repr__(self) -> str:
        return f"<ItemTable: {len(self)} items, {len(self.setup_names)} setups>"

    @property
    def nbytes(self) -> int:
        """Memory held by the columns, bytes (names not counted)."""
        return sum(column.itemsize * len(column) for column in self._columns)

    def codes(self, name: str) -> npt.NDArray[Any]:
        """Raw column as a NumPy array (a copy-free view where NumPy allows).

        ``setup``/``dataset``/``question`` give codes into the ``*_names``
        tuples, ``outcome`` gives :class:`Outcome` values, the others give
        int64 with -1 for absent (``generation_secs`` and ``retrieval_secs``
        are then nanoseconds).

        Raises
        ------
        MissingKeyError
            A KeyError too: for an unknown column name.
        """
        import numpy as np

        try:
            index = self.COLUMNS.index(name)
        except ValueError:
            raise MissingKeyError(
                f"unknown column {name!r}; columns: {', '.join(self.COLUMNS)}"
            ) from None
        column = self._columns[index]
        dtype = _DTYPES[column.typecode]
        return np.frombuffer(column, dtype=dtype) if len(column) else np.zeros(0, dtype=dtype)

    def column(self, name: str) -> npt.NDArray[Any]:
        """One column in user units, as a NumPy array of length ``len(self)``.

        Names are decoded to ``object`` arrays of ``str``; ``outcome`` to its
        labels (``"correct"``, ``"incorrect"``, ``"error"``); times to float
        seconds and counts to float, with NaN where absent (error records,
        results without retrieval).

        Raises
        ------
        MissingKeyError
            A KeyError too: for an unknown column name.
        """
        import numpy as np

        raw = self.codes(name)
        if name in ("setup", "dataset", "question"):
            names = np.array(getattr(self, f"{name}_names") or ("",), dtype=object)
            return names[raw] if len(raw) else np.zeros(0, dtype=object)
        if name == "outcome":
            labels = np.array([o.label for o in Outcome], dtype=object)
            return labels[raw] if len(raw) else np.zeros(0, dtype=object)
        values = raw.astype(np.float64)
        values[raw < 0] = np.nan
        if name in ("generation_secs", "retrieval_secs"):
            values /= 1e9
        return values

    def to_columns(self) -> dict[str, npt.NDArray[Any]]:
        """Every column by :meth:`column`, keyed by name (ready for ``pandas.DataFrame``)."""
        return {name: self.column(name) for name in self.COLUMNS}

    def __iter__(self) -> Iterator[ItemRow]:
        c = self._columns
        for i in range(len(self)):
            values = [None if c[k][i] < 0 else c[k][i] for k in range(4, 10)]
            gen, ret = values[0], values[1]
            yield ItemRow(
                self.setup_names[c[0][i]],
                self.dataset_names[c[1][i]],
                self.question_names[c[2][i]],
                Outcome(c[3][i]),
                None if gen is None else gen / 1e9,
                None if ret is None else ret / 1e9,
                values[2],
                values[3],
                values[4],
                values[5],
            )

    def path(self, row: ItemRow) -> str:
        """The result file a row was graded from.

        Raises
        ------
        InputError
            A ValueError too: if the table does not know its results root.
        """
        if self.results is None:
            raise InputError("this item table does not know its results folder")
        name = f"{self.prefix}{row.setup}.json"
        if "://" in self.results:  # a URL (s3://bucket/run): joined by "/"
            return "/".join((self.results.rstrip("/"), row.dataset, row.question, name))
        return os.path.join(self.results, row.dataset, row.question, name)
