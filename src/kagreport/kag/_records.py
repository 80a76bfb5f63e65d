"""Result files: the envelope ``kag benchmark`` writes for each (question, setup).

A file holds exactly one of ``{"ok": {"result": str, "stats": {...}}}`` and
``{"error": str}`` (kag ``src/subcommand/benchmark/result.rs``,
``src/generation/config.rs``, ``src/retrieval/``). Decoding is strict about
required keys and lenient about unknown ones, like kag's serde types, and it
never builds the embedding vector (``vec`` is kept as raw JSON bytes).

The serde types are in :mod:`kagreport.kag._envelope`, the duplicate-key check in
:mod:`kagreport.kag._duplicate_keys`; this module decodes and reads.
"""

from __future__ import annotations

import codecs
import os
import stat
from collections.abc import Callable
from typing import Any, NamedTuple

import msgspec

from kagreport._errors import NotRegularFileError, ResultFileError
from kagreport.kag._checks import check_ok
from kagreport.kag._duplicate_keys import _check_unique_keys
from kagreport.kag._envelope import (
    _U64_MAX,
    _UNSET,
    _decoder,
    _Envelope,
    _Invalid,
    _nanos,
    _Ok,
    _Retrieval,
)
from kagreport.kag._jsonscan import (
    ANY,
    DURATION,
    INT,
    SURROGATE_ESCAPE,
    JSONScanError,
    Schema,
    is_utf8,
    strip_ignored,
)

__all__ = [
    "ResultRecord",
    "RetrievalSample",
    "datasets_structure",
    "decode_python",
    "decode_result",
    "grade_folder",
    "list_questions",
    "list_results",
    "read_bytes",
    "read_result",
    "scan_file",
]


def _compiled_scanner() -> Any:
    """The compiled fast path (kagreport/kag/_scan.c), or None: not built, or
    ``KAGREPORT_DECODER=python`` (the pure-Python decoder alone, as tests compare)."""
    if os.environ.get("KAGREPORT_DECODER", "").lower() == "python":
        return None
    try:
        import kagreport.kag._scan as scanner  # type: ignore[import-not-found]
    except ImportError:
        return None
    return scanner


# Non-blocking: opening a FIFO must not wait for a writer (read_bytes then refuses it).
_OPEN_FLAGS = os.O_RDONLY | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_NONBLOCK", 0)


class RetrievalSample(NamedTuple):
    """What one KAG result reports about its retrieval.

    Attributes
    ----------
    time_ns : int
        Wall time of the whole retrieval (``retrieval.stats.embedder.time``), ns.
    vertices, relationships, properties : int
        Graph elements rendered into the context (neo4j counts).
    """

    time_ns: int
    vertices: int
    relationships: int
    properties: int


class ResultRecord(NamedTuple):
    """One decoded result file, reduced to what grading and search need.

    Attributes
    ----------
    result : str or None
        The raw model response (``ok.result``); ``None`` for an error record.
    error : str or None
        The benchmark error message; ``None`` for a success record.
    generation_ns : int or None
        Wall time of the generation call (it includes retrieval), ns.
    context_bytes : int or None
        UTF-8 length of the rendered prompt, bytes.
    retrieval : RetrievalSample or None
        Present for KAG setups (setups with a retriever).
    provider, model : str or None
        The generation configuration.
    context : str or None
        The retrieved context rendered into the prompt (``retrieval.result``).
    """

    result: str | None
    error: str | None
    generation_ns: int | None = None
    context_bytes: int | None = None
    retrieval: RetrievalSample | None = None
    provider: str | None = None
    model: str | None = None
    context: str | None = None

    @property
    def is_error(self) -> bool:
        """Whether this file records a benchmark execution error."""
        return self.error is not None


# What kag's serde types read in a result file, for the non-recursive walk (unknown
# fields are skipped there, at any depth, as serde's IgnoredAny skips them).
_RESULT_SCHEMA: Schema = {
    "ok": {
        "result": ANY,
        "stats": {
            "prompt": ANY,
            "time": DURATION,
            "config": {
                "provider": ANY,
                "model": ANY,
                "temperature": ANY,
                "tokens": INT,
                "augmented_generation": {"retriever": ANY, "database": ANY},
            },
            "retrieval": {
                "result": ANY,
                "stats": {
                    "embedder": {
                        "embedding": {"document": ANY, "vec": ANY},
                        "database": {
                            "neo4j": {
                                "vertices": INT,
                                "relationships": INT,
                                "properties": INT,
                                "time": DURATION,
                            }
                        },
                        "time": DURATION,
                    }
                },
            },
        },
    },
    "error": ANY,
}


def _strip_ignored(data: bytes | memoryview | str) -> bytes:
    try:
        return strip_ignored(data if isinstance(data, bytes) else _as_bytes(data), _RESULT_SCHEMA)
    except JSONScanError as exc:
        raise _Invalid(str(exc)) from None


def _decode_shallow(data: bytes) -> _Envelope:
    try:
        return _decoder.decode(data)
    except msgspec.DecodeError as exc:
        raise _Invalid(str(exc)) from None
    except RecursionError:  # nested where a type reads: serde refuses it too
        raise _Invalid("JSON nested too deeply") from None


_SCANNER = _compiled_scanner()
if _SCANNER is not None:
    _SCANNER.configure(ResultRecord, RetrievalSample)
    _scan_decode = _SCANNER.decode

#: ``scan_file(path)``: the record of a regular file in kag's common shape, read and
#: decoded in one compiled call, or None for anything else (an error included): then
#: :func:`read_bytes` and :func:`decode_result` read it and raise what they must. None
#: itself without the compiled scanner.
scan_file: Callable[[str], ResultRecord | None] | None = (
    None if _SCANNER is None else _SCANNER.read_record
)

#: ``list_results(folder, prefix)``: a local question folder's result files, as
#: :func:`kagreport.kag._walk.result_files` gives them from ``LocalTree.list_dir`` (no
#: identities), or None for anything unusual (then Python lists it); None itself without
#: the compiled scanner.
list_results: Callable[[str, str], list[tuple[str, str, str]] | None] | None = (
    None if _SCANNER is None else _SCANNER.list_results
)


#: ``list_questions(folder)``: a local dataset folder's question folders (names, sorted), as
#: :func:`kagreport.kag._walk.iter_question_names` takes them, or None for anything unusual
#: (then Python lists it); None itself without the compiled scanner.
list_questions: Callable[[str], list[str] | None] | None = (
    None if _SCANNER is None else _SCANNER.list_questions
)

#: ``grade_folder(folder, prefix, answer, dataset, index, state)``: one local question folder
#: listed, read, decoded and graded into ``state`` in one compiled call, True; or False with
#: nothing added where any part is unusual (:func:`kagreport.grading._chunk.grade_chunk`
#: then does the folder in Python). None itself without the compiled scanner.
grade_folder: Callable[[str, str, bytes, int, int, tuple[Any, ...]], bool] | None = (
    None if _SCANNER is None else _SCANNER.grade_folder
)

#: ``datasets_structure(data)``: a datasets file's deepest nesting, whether no entry or MCQ
#: output gives a field twice, whether every dataset and question name is valid and whether
#: every number is surely a finite f64 (False: not sure), in one compiled pass, or None where
#: it declines (see ``kag/_scan_datasets.c``); None itself without the compiled scanner.
datasets_structure: Callable[[bytes], tuple[int, bool, bool, bool] | None] | None = (
    None if _SCANNER is None else _SCANNER.datasets_structure
)


def decode_result(data: bytes | memoryview | str) -> ResultRecord:
    """Decode the bytes of one result file.

    Parameters
    ----------
    data : bytes
        The file's content (UTF-8 JSON).

    Returns
    -------
    ResultRecord

    Raises
    ------
    ValueError
        If the content is not a valid kag result envelope (the message says why),
        including, as kag's serde decides, a UTF-8 BOM and a field given twice
        (``duplicate field `result` in ok``).
    """
    # The compiled scanner reads the common shape and gives None for anything else.
    if _SCANNER is not None and (record := _scan_decode(data)) is not None:
        return record  # type: ignore[no-any-return]
    return decode_python(data)


# Over 80 lines; the checks stay inline: it runs once per result file.
def decode_python(data: bytes | memoryview | str) -> ResultRecord:
    """:func:`decode_result` in pure Python: the reference the compiled scanner is tested
    against, and what decodes any file that scanner leaves (its docstring: ``_scan.c``)."""
    try:
        envelope = _decoder.decode(data)
    except msgspec.DecodeError as exc:
        if starts_with_bom(data):
            raise _Invalid(f"the file {BOM_MESSAGE}") from None
        text = data if isinstance(data, bytes) else _as_bytes(data)
        if not SURROGATE_ESCAPE.search(text):
            raise _Invalid(str(exc)) from None
        # A lone surrogate (\ud800) kag may ignore (see SURROGATE_ESCAPE); one in a
        # typed string still fails the retry.
        data = _strip_ignored(data)
        envelope = _decode_shallow(data)
    except RecursionError:
        data = _strip_ignored(data)
        envelope = _decode_shallow(data)
    ok, error = envelope.ok, envelope.error
    if ok is _UNSET:
        if error is _UNSET:
            raise _Invalid("the envelope has neither 'ok' nor 'error'")
        assert isinstance(error, str)
        text = data if isinstance(data, bytes) else _as_bytes(data)
        _check_unique_keys(text, 1, error.count(":"), None, None)
        return ResultRecord(None, error)
    if error is not _UNSET:
        raise _Invalid("the envelope has both 'ok' and 'error'")
    assert isinstance(ok, _Ok)
    text = data if isinstance(data, bytes) else _as_bytes(data)
    check_ok(text, ok, _RESULT_SCHEMA)
    # msgspec skips an unknown key's bytes; serde_json reads each key of a struct as a str.
    if not is_utf8(text):
        _strip_ignored(text)
    stats = ok.stats
    config = stats.config
    prompt = stats.prompt
    context = len(prompt) if prompt.isascii() else len(prompt.encode("utf-8", "surrogatepass"))
    retrieval = context_text = None
    if isinstance(stats.retrieval, _Retrieval):
        context_text = stats.retrieval.result
        embedder = stats.retrieval.stats.embedder
        neo4j = embedder.database.neo4j
        _nanos(neo4j.time)  # validated as kag does (overflow), though not reported
        if max(neo4j.vertices, neo4j.relationships, neo4j.properties) > _U64_MAX:
            raise _Invalid("a neo4j count does not fit in 64 bits")
        retrieval = RetrievalSample(
            _nanos(embedder.time), neo4j.vertices, neo4j.relationships, neo4j.properties
        )
    return ResultRecord(
        ok.result,
        None,
        _nanos(stats.time),
        context,
        retrieval,
        config.provider,
        config.model,
        context_text,
    )


def _as_bytes(data: memoryview | bytearray | str) -> bytes:
    return data.encode("utf-8", "surrogatepass") if isinstance(data, str) else bytes(data)


#: Why a file that starts with a byte order mark is refused (kag's serde_json refuses it).
BOM_MESSAGE = (
    "starts with a UTF-8 BOM (byte order mark), which kag does not accept; "
    "save it as UTF-8 without a BOM"
)


def starts_with_bom(data: bytes | bytearray | memoryview | str) -> bool:
    """Whether JSON text starts with a UTF-8 byte order mark (U+FEFF for a ``str``)."""
    if isinstance(data, str):
        return data.startswith("\ufeff")
    return bytes(data[:3]) == codecs.BOM_UTF8


def read_bytes(path: str) -> bytes:
    """Read a whole regular file with one ``read`` of its size (``fstat`` first).

    It is opened non-blocking, so that a FIFO put in place of a file since the
    walk saw it cannot block the open, and refused unless ``fstat`` says it is a
    regular file. One read of one byte more than its size takes all of it into a
    buffer of about its size (chunks joined would cost twice the memory); a file
    that grew (or a read capped by the system, 2 GiB on Linux) is read on.

    Raises
    ------
    NotRegularFileError
        If the path is not a regular file (``strerror``: "not a regular file").
    OSError
        As :func:`os.open` and :func:`os.read` do.
    """
    fd = os.open(path, _OPEN_FLAGS)
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise NotRegularFileError(0, "not a regular file", path)
        size = info.st_size
        data = os.read(fd, size + 1)
        if len(data) == size:
            return data
        chunks = [data]  # rare: the file changed size since fstat, or a capped read
        while chunk := os.read(fd, 1 << 20):
            chunks.append(chunk)
        return b"".join(chunks)
    finally:
        os.close(fd)


def read_result(path: str | os.PathLike[str]) -> ResultRecord:
    """Read and decode one result file.

    Raises
    ------
    ResultFileError
        If the file cannot be read or is not a kag result envelope; the
        message names the file.
    """
    name = os.fspath(path)
    try:
        data = read_bytes(name)
    except OSError as exc:
        raise ResultFileError(f"cannot read {name}: {exc.strerror or exc}", path=name) from None
    try:
        return decode_result(data)
    except ValueError as exc:
        raise ResultFileError(f"{name} is not a kag result file: {exc}", path=name) from None
