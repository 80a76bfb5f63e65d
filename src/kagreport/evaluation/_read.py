"""``read_report``: an evaluation document of any kind, told apart by its ``schema``."""

from __future__ import annotations

import errno
import os
from collections.abc import Sequence
from typing import Any

from kagreport._document import format_for, loads_document
from kagreport._errors import DocumentError, FormatError, ReportError, decode_utf8
from kagreport._io import read_regular_file
from kagreport.evaluation._comparison import SCHEMA as COMPARISON_SCHEMA
from kagreport.evaluation._comparison import EvaluationComparison
from kagreport.evaluation._report import AnswerEvaluation, RetrievalEvaluation

__all__ = ["read_report"]

Report = AnswerEvaluation | RetrievalEvaluation | EvaluationComparison


def read_report(path: str | os.PathLike[str], kinds: Sequence[type[Any]] | None = None) -> Report:
    """Read an AnswerEvaluation, RetrievalEvaluation or EvaluationComparison file.

    Parameters
    ----------
    path : path
        A file written by the reports' ``write`` (JSON, JSONL, YAML or TOML, by suffix; a
        UTF-8 byte-order mark is accepted).
    kinds : sequence of report classes, optional
        The classes accepted (default: all three).

    Returns
    -------
    AnswerEvaluation, RetrievalEvaluation or EvaluationComparison
        The class its ``schema`` field names.

    Raises
    ------
    FormatError
        If the suffix names no format (a ValueError and a UsageError) and the file exists.
    ReportError
        If the file cannot be read or parsed, holds a report of another kind, or is not a
        valid report (one line naming the file); ``NotUTF8Error``
        if it is not UTF-8 (the message gives the offset of the first bad byte).
    """
    accepted = tuple(kinds or (AnswerEvaluation, RetrievalEvaluation, EvaluationComparison))
    name = os.fspath(path)
    try:
        kind = format_for(name, None)
    except ValueError as exc:
        if not os.path.lexists(name):  # the missing file is the problem, not its name
            reason = os.strerror(errno.ENOENT)
            raise ReportError(f"cannot read {name}: {reason}", path=name) from None
        raise FormatError(str(exc), path=name) from None
    try:
        data = read_regular_file(name)
    except OSError as exc:
        raise ReportError(f"cannot read {name}: {exc.strerror or exc}", path=name) from None
    text = decode_utf8(data, name, "the evaluation report", bom=True)
    try:
        document = loads_document(text, kind)
        schema = document.get("schema")
        if schema == COMPARISON_SCHEMA and kind == "jsonl":  # its rows are its metrics
            document = loads_document(text, kind, items_key="metrics")
    except (ValueError, UnicodeDecodeError, RecursionError) as exc:
        reason = " ".join(str(exc).split())  # one line, whatever the parser printed
        raise ReportError(f"{name} is not a readable report: {reason}", path=name) from None
    classes: dict[str, Any] = {_schema(cls): cls for cls in accepted}
    cls = classes.get(schema) if isinstance(schema, str) else None
    if cls is None:
        raise ReportError(
            f"{name} is not an evaluation report kagreport can read here (schema {schema!r}; "
            f"expected {', '.join(sorted(classes))})",
            path=name,
        )
    try:
        report: Report = cls.from_dict(document)
    except DocumentError as exc:  # it names the field at fault
        raise ReportError(f"{name}: {exc.message}", path=name) from None
    except (KeyError, TypeError, ValueError, AttributeError, OverflowError) as exc:
        raise ReportError(f"{name} is not a valid {cls.__name__}: {exc}", path=name) from None
    return report


def _schema(cls: type[Any]) -> str:
    return COMPARISON_SCHEMA if cls is EvaluationComparison else str(cls.SCHEMA)
