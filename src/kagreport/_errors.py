"""The exceptions kagreport raises for problems a user can cause.

Every error carries a message fit to show as is, and, where one file or
value is at fault, that file (``path``). The command line catches
:class:`KagreportError` only: anything else is a bug and keeps its traceback.

The tree (all in this module; the public ones are re-exported where users import them)::

    KagreportError                     kagreport
    ├── UsageError                     kagreport (exit code 2)
    │   ├── FormatError                kagreport (also a ValueError)
    │   └── NoSharedItemsError         kagreport.evaluation (also a DifferentItemsError)
    ├── DatasetsError                  kagreport
    ├── ResultTreeError                kagreport
    ├── ResultFileError                kagreport
    ├── NotUTF8Error
    ├── WorkerDiedError                kagreport
    ├── StoreError                     kagreport.grading
    ├── MissingExtraError              kagreport._optional
    ├── ConfigError                    kagreport.evaluation
    ├── JudgeCacheError                kagreport.evaluation
    ├── ReportError                    kagreport.evaluation
    │   └── DocumentError              (also a ValueError: a document's field, by its path)
    ├── InputError                     kagreport, kagreport.evaluation (also a ValueError)
    │   └── DifferentItemsError        kagreport.evaluation
    ├── InputTypeError                 (also a TypeError: a value of a type a function cannot take)
    ├── MissingKeyError                (also a KeyError: a setup, column ... that is not there)
    ├── SiteError                      kagreport.site
    └── NotRegularFileError            (internal; also an OSError: a FIFO, socket or device
                                        named as a file)

Elsewhere, each also a KagreportError: ``JudgeFailure`` (kagreport.evaluation),
``JSONScanError`` (kagreport.kag._jsonscan, also a ValueError) and private ones of the modules
that raise and catch them.
"""

from __future__ import annotations

import codecs
import os

__all__ = [
    "ConfigError",
    "DatasetsError",
    "DifferentItemsError",
    "DocumentError",
    "FormatError",
    "InputError",
    "InputTypeError",
    "JudgeCacheError",
    "KagreportError",
    "MissingExtraError",
    "MissingKeyError",
    "NoSharedItemsError",
    "NotRegularFileError",
    "NotUTF8Error",
    "ReportError",
    "ResultFileError",
    "ResultTreeError",
    "SiteError",
    "StoreError",
    "UsageError",
    "WorkerDiedError",
    "decode_utf8",
]


class KagreportError(Exception):
    """Base class of the errors a user can cause.

    Parameters
    ----------
    message : str
        A complete sentence naming the file or value at fault.
    path : str or os.PathLike, optional
        The file or folder at fault, if any.
    """

    #: Process exit code the command line uses for this error.
    exit_code: int = 1

    def __init__(self, message: str, *, path: str | os.PathLike[str] | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.path = None if path is None else os.fspath(path)

    def __str__(self) -> str:
        return self.message


class UsageError(KagreportError):
    """A bad command-line value (an invalid regular expression, say); exit code 2."""

    exit_code = 2
    #: Whether the command line prints the command's usage before the message.
    show_usage = True


class FormatError(UsageError, ValueError):
    """A file name whose suffix names no format kagreport reads or writes (a ValueError too)."""


class DatasetsError(KagreportError):
    """The datasets (ground truth) file cannot be read or is not valid."""


class ResultTreeError(KagreportError):
    """The result tree cannot be walked: a missing root or an I/O error."""


class ResultFileError(KagreportError):
    """One result file does not parse as a kag result envelope.

    The grader does not raise it: such files are warned about and skipped,
    as ``kag stats`` does; reading one file as a record raises it.
    """


class NotUTF8Error(KagreportError):
    """A file a user passed is not UTF-8 text.

    Its message is ``"<what> <path> is not UTF-8 at byte <offset>"``, one line.

    Attributes
    ----------
    offset : int
        Offset in the file, in bytes counted from 0 (as ``xxd`` and ``od`` show them), of
        the first byte that is not part of a valid UTF-8 sequence.
    """

    def __init__(self, what: str, path: str | os.PathLike[str], offset: int) -> None:
        name = os.fspath(path)
        super().__init__(f"{what} {name} is not UTF-8 at byte {offset}".lstrip(), path=name)
        self.what = what
        self.offset = offset

    def __reduce__(self) -> tuple[type[NotUTF8Error], tuple[str, str, int]]:
        # Rebuilt from its three fields (a worker process can raise it).
        return type(self), (self.what, self.path or "", self.offset)


def decode_utf8(
    data: bytes, path: str | os.PathLike[str], what: str = "", *, bom: bool = False
) -> str:
    """The text of a file read as ``data``, strictly UTF-8.

    Parameters
    ----------
    data : bytes
        The whole file.
    path : str or os.PathLike
        The file, for the message.
    what : str, optional
        What the file is, for the message ("the judges file").
    bom : bool, optional
        Drop a leading UTF-8 byte-order mark.

    Raises
    ------
    NotUTF8Error
        If ``data`` is not UTF-8; its offset counts the byte-order mark too.
    """
    start = len(codecs.BOM_UTF8) if bom and data.startswith(codecs.BOM_UTF8) else 0
    try:
        return str(memoryview(data)[start:], "utf-8")
    except UnicodeDecodeError as exc:
        raise NotUTF8Error(what, path, start + exc.start) from None


class WorkerDiedError(KagreportError):
    """A grading worker process died (killed by a signal: the out-of-memory killer, say).

    The report is not written: a chunk of result files was never graded.
    """


class StoreError(KagreportError):
    """A grade store that cannot be used: another tree's, in use by another grade, damaged,
    or not writable."""


class MissingExtraError(KagreportError):
    """An optional dependency is not installed; the message names the extra to install."""


class ConfigError(KagreportError):
    """A judges file or items file that cannot be used."""


class JudgeCacheError(KagreportError):
    """A judge cache file that cannot be opened, read or written."""


class ReportError(KagreportError):
    """A stored evaluation report that cannot be read."""


class DocumentError(ReportError, ValueError):
    """A document that does not parse, or is not shaped like its kind.

    The message names the file when one was read, and the path of the field at fault:
    ``r.json: not a valid AnswerEvaluation: items[3].scores.correct: expected a number,
    got "x"``. A :class:`ValueError` too, as the documents' ``read`` and ``from_dict``
    are specified to raise.
    """


class SiteError(KagreportError):
    """A report site that cannot be built: its configuration, notebooks, figures or templates."""


class InputError(KagreportError, ValueError):
    """Values given to a public function that it cannot use (a ValueError too).

    Two evaluations that share no item or no metric, items or judges whose names repeat, a
    ``metrics`` list naming what the evaluations do not hold: the ``ValueError`` of
    ANSWER_EVALUATION_SPEC.md, with a message fit to show as is.
    """


class DifferentItemsError(InputError):
    """Two evaluations compared item by item do not hold the same items.

    A ValueError too, as ANSWER_EVALUATION_SPEC.md says ``compare`` raises.

    Attributes
    ----------
    only_candidate, only_baseline : int
        How many items only one of them holds.
    """

    def __init__(self, message: str, *, only_candidate: int, only_baseline: int) -> None:
        super().__init__(message)
        self.only_candidate = only_candidate
        self.only_baseline = only_baseline


class NoSharedItemsError(UsageError, DifferentItemsError):
    """Two runs or evaluations compared item by item share no item: nothing to pair.

    A usage error (exit code 2: the wrong two files were given; printed without the usage
    text) and a :class:`DifferentItemsError` (an InputError and a ValueError too), so
    callers of ``compare`` that catch either keep working.
    """

    show_usage = False


class InputTypeError(KagreportError, TypeError):
    """A value of a type a public function cannot take (a TypeError too): a value that
    cannot be written as JSON, say."""


class MissingKeyError(KagreportError, KeyError):
    """A name that an object looked up by name does not hold (a KeyError too): a setup of a
    report, a column of an item table; the message lists the names it holds."""


class NotRegularFileError(KagreportError, OSError):
    """A path to read is not a regular file when opened (a FIFO, socket or device swapped
    in since the walk saw it); an ``OSError`` too, handled where reads fail.

    Built as an ``OSError``: ``NotRegularFileError(errno, strerror, filename)``.
    """

    def __init__(self, errno: int, strerror: str, filename: str | None = None) -> None:
        OSError.__init__(self, errno, strerror, filename)
        self.message = strerror
        self.path = filename

    __str__ = OSError.__str__
