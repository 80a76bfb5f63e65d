"""The grading of one chunk of question folders: list their result files, read, decode and
grade each, and give back compact columns and group sums (:func:`grade_chunk`).

The same function runs in this process, in a worker of the local pool
(:mod:`kagreport.grading.engine._pool`) or in a Dask task
(:mod:`kagreport.grading.engine._dask`): what it returns (:class:`GradedChunk`) is small and
picklable, and is merged in submission order, so the report is the same whatever runs it.
With a grade store, a chunk carries what the store holds for its folders
(:class:`ChunkKnown`): a file whose identity is unchanged is not read again.
"""

from __future__ import annotations

import re
from array import array
from typing import TYPE_CHECKING, Any, NamedTuple

from kagreport._errors import NotRegularFileError, ResultTreeError
from kagreport.grading._rule import grade_response
from kagreport.kag._records import ResultRecord, decode_result, grade_folder
from kagreport.kag._tree import LocalTree, ResultTree
from kagreport.kag._walk import folder_result_files, result_files, tracing_entries

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

__all__ = [
    "CHUNK_QUESTIONS",
    "ChunkKnown",
    "GradedChunk",
    "PendingChunk",
    "chunk_arguments",
    "grade_chunk",
    "identity_hash",
    "parse_reason",
]

#: Question folders per chunk (a few result files each).
CHUNK_QUESTIONS = 64
_INT64_MAX = 2**63 - 1


def identity_hash(identity: str) -> int:
    """A file identity as a signed 64-bit integer (BLAKE2b, 8 bytes), as the store keeps it."""
    import hashlib  # here: OpenSSL's start-up is no cost of a run without a store

    digest = hashlib.blake2b(identity.encode("utf-8", "surrogateescape"), digest_size=8)
    return int.from_bytes(digest.digest(), "little", signed=True)


class ChunkKnown(NamedTuple):
    """What the store holds for the question folders of one chunk (sent to its task).

    Folder ``i`` owns entries ``bounds[i]:bounds[i + 1]`` of ``setups`` (codes into
    ``setup_names``) and ``identities`` (:func:`identity_hash` of each file's identity
    when it was graded).
    """

    setup_names: list[str]
    setups: npt.NDArray[np.int32]
    identities: npt.NDArray[np.int64]
    bounds: npt.NDArray[np.int64]


class PendingChunk:
    """Question folders waiting to be graded, with their answers and name codes.

    ``store``: a grade store takes the result: each file's identity is listed and
    returned. ``known``: what the store holds for these folders (set just before the
    chunk is submitted); a file whose identity is unchanged is not read again.
    """

    __slots__ = ("answers", "datasets", "known", "paths", "questions", "store")

    def __init__(self, store: bool = False) -> None:
        self.paths: list[str] = []
        self.answers: list[str] = []
        self.datasets: list[int] = []
        self.questions: list[int] = []
        self.store = store
        self.known: ChunkKnown | None = None

    def add(self, path: str, answer: str, dataset: int, question: int) -> None:
        self.paths.append(path)
        self.answers.append(answer)
        self.datasets.append(dataset)
        self.questions.append(question)

    @property
    def full(self) -> bool:
        return len(self.paths) >= CHUNK_QUESTIONS


#: Responses cut to the limit, their full lengths (-1: none), error messages cut.
ChunkTexts = tuple[list[str | None], "array[int]", list[str | None]]


class GradedChunk(NamedTuple):
    """What grading a chunk gives back (small and picklable).

    ``rows``: for each parsed result file, the index of its question folder in
    the chunk and the index of its setup in ``setups``. ``texts``: when asked
    for, each row's response cut to the limit, its full length (-1: none) and
    its error message cut to the limit. ``columns``: outcome,
    generation ns, retrieval ns, vertices, relationships, properties, context
    bytes, one entry per row (-1 = absent). ``sums``: per (setup index,
    dataset code), the 11 group sums (as
    :func:`~kagreport.grading._report.setup_reports` takes them). ``unparsable``: (path, the
    parser's message, the reason shown to people: the message with the line and column
    of a byte offset it names). ``io_error``: (path, message) of the first folder or
    file that could not be read; grading stops there.

    With identities asked for (a grade store): ``identities`` holds each row's file
    identity (:func:`identity_hash`); ``unparsable_keys`` (question
    index, setup, identity) of each unparsable file; ``kept``, per folder with known
    files, a byte per known setup, 1 where the file is still there with the same
    identity (it was not read); ``exact``, the exact six measurements of a row (by
    index) where one is beyond int64 (clamped in ``columns``).
    """

    rows: tuple[array[int], array[int]]
    setups: list[str]
    columns: tuple[array[int], ...]
    sums: dict[tuple[int, int], list[int]]
    unparsable: list[tuple[str, str, str]]
    io_error: tuple[str, str] | None
    texts: ChunkTexts | None = None
    identities: array[int] | None = None
    unparsable_keys: list[tuple[int, str, int]] | None = None
    kept: list[bytes | None] | None = None
    exact: dict[int, tuple[int, ...]] | None = None


_BYTE_OFFSET = re.compile(r"\(byte (\d+)\)$")
# A lone-surrogate escape makes the decoder retry on a rewritten text: its offsets are not
# the file's then.
_SURROGATE = re.compile(rb"\\u[dD][89a-fA-F]")


def parse_reason(data: bytes, message: str) -> str:
    """``message`` (a decoder's, about ``data``) with the line and column (1-based, the
    column in bytes) of the byte offset it ends with, e.g. ``JSON is malformed: invalid
    character (byte 10)`` -> ``... (byte 10, line 2, column 9)``; unchanged otherwise."""
    found = _BYTE_OFFSET.search(message)
    if found is None or _SURROGATE.search(data):
        return message
    offset = int(found.group(1))
    if offset > len(data):
        return message
    line = data.count(b"\n", 0, offset) + 1
    column = offset - (data.rfind(b"\n", 0, offset) + 1) + 1
    return f"{message[: found.start()]}(byte {offset}, line {line}, column {column})"


def _cut(text: str | None, limit: int | None) -> str | None:
    return text if text is None or limit is None else text[:limit]


def _listed(
    tree: ResultTree,
    paths: list[str],
    prefix: str,
    identities: bool,
) -> tuple[list[list[tuple[str, str, str]]], tuple[str, str] | None]:
    """Each folder's result files, up to the first folder that cannot be listed (and that
    folder's error). A remote tree lists the chunk's folders at once."""
    try:
        if tree.remote:
            listings = tree.list_dirs(paths, identity=identities)
            return [
                result_files(e, p, prefix, tree) for e, p in zip(listings, paths, strict=True)
            ], None
    except ResultTreeError:
        pass  # one at a time below, to find the first folder that fails
    out: list[list[tuple[str, str, str]]] = []
    for folder in paths:
        try:
            out.append(folder_result_files(tree, folder, prefix, identities))
        except ResultTreeError as exc:
            return out, (exc.path or folder, exc.message)
    return out, None


def _unchanged(
    files: list[tuple[str, str, int]], known: ChunkKnown, folder: int, codes: dict[str, int]
) -> tuple[list[tuple[str, str, int]], bytes]:
    """The files of folder ``folder`` to read (new or changed) and, per stored entry of
    the folder, 1 if its file is still there with the same identity."""
    start, end = int(known.bounds[folder]), int(known.bounds[folder + 1])
    stored = dict(
        zip(known.setups[start:end].tolist(), known.identities[start:end].tolist(), strict=True)
    )
    position = {int(code): k for k, code in enumerate(known.setups[start:end].tolist())}
    kept = bytearray(end - start)
    fresh = []
    for result_file in files:
        code = codes.get(result_file[0], -1)
        if stored.get(code) == result_file[2]:
            kept[position[code]] = 1
        else:
            fresh.append(result_file)
    return fresh, bytes(kept)


# Long (over 80 lines): the per-file loop is the hot path of `kagreport stats` without the
# compiled scanner, kept inline (no function call per result file).
def grade_chunk(
    paths: list[str],
    answers: list[str],
    datasets: list[int],
    prefix: str,
    keep_text: bool | int = False,
    tree: ResultTree | None = None,
    known: ChunkKnown | None = None,
    with_identity: bool = False,
) -> GradedChunk:
    """List each question folder's result files, read, decode and grade them.

    ``keep_text``: False keeps no text; True keeps each response and error message
    whole; a positive int keeps that many characters of each. ``tree``: where the
    folders are (default: local paths). ``with_identity``: list and return each
    file's identity (for a grade store); ``known``: what the store holds for these
    folders: unchanged files are not read.
    """
    tree = _LOCAL if tree is None else tree
    question_index, setup_index = rows = (array("I"), array("I"))
    outcome, gen, ret, vertices, relationships, properties, context = columns = (
        array("B"),
        *(array("q") for _ in range(6)),
    )
    setups: list[str] = []
    setup_codes: dict[str, int] = {}
    sums: dict[tuple[int, int], list[int]] = {}
    unparsable: list[tuple[str, str, str]] = []
    texts: ChunkTexts | None = None
    if keep_text is not False:
        texts = ([], array("q"), [])
    limit = None if keep_text is True else int(keep_text)
    identities: array[int] | None = array("q") if with_identity else None
    unparsable_keys: list[tuple[int, str, int]] | None = [] if with_identity else None
    kept: list[bytes | None] | None = [] if with_identity else None
    exact: dict[int, tuple[int, ...]] | None = {} if with_identity else None

    def done(error: tuple[str, str] | None = None) -> GradedChunk:
        return GradedChunk(
            rows, setups, columns, sums, unparsable, error, texts,
            identities, unparsable_keys, kept, exact,
        )  # fmt: skip

    def grade_files(jobs: list[tuple[int, tuple[str, str, Any]]]) -> tuple[str, str] | None:
        """Read, decode and grade each file; the first file that cannot be read stops it."""
        datas = tree.iter_records([path for _, (_, path, _) in jobs])
        for (index, (setup_name, path, identity)), data in zip(jobs, datas, strict=True):
            if isinstance(data, ResultRecord):  # read and decoded by the compiled scanner
                record = data
            elif isinstance(data, OSError):
                if isinstance(data, NotRegularFileError):  # swapped for a FIFO since the walk
                    continue  # skipped, as the walk skips what is not a regular file
                reason = data.strerror or str(data)
                if isinstance(data, FileNotFoundError):  # listed a moment ago
                    reason += " (it vanished after its folder was listed)"
                return path, f"cannot read the result file {path}: {reason}"
            else:
                try:
                    record = decode_result(data)
                except ValueError as exc:
                    unparsable.append((path, str(exc), parse_reason(data, str(exc))))
                    if unparsable_keys is not None:
                        unparsable_keys.append((index, setup_name, identity))
                    continue
            setup = setup_codes.get(setup_name)
            if setup is None:
                setup = setup_codes[setup_name] = len(setups)
                setups.append(setup_name)
            key = (setup, datasets[index])
            total = sums.get(key)
            if total is None:
                total = sums[key] = [0] * 11
            question_index.append(index)
            setup_index.append(setup)
            if identities is not None:
                identities.append(identity)
            if texts is not None:
                texts[0].append(_cut(record.result, limit))
                texts[1].append(-1 if record.result is None else len(record.result))
                texts[2].append(_cut(record.error, limit))
            if record.result is None:
                total[2] += 1
                outcome.append(2)
                gen.append(-1)
                ret.append(-1)
                vertices.append(-1)
                relationships.append(-1)
                properties.append(-1)
                context.append(-1)
                continue
            if grade_response(record.result, answers[index]):
                total[0] += 1
                outcome.append(0)
            else:
                total[1] += 1
                outcome.append(1)
            gen_ns = record.generation_ns or 0
            size = record.context_bytes or 0
            total[3] += gen_ns
            total[4] += 1
            total[5] += size
            # Values beyond int64 cannot be real; clamp in the table, keep exact sums (a
            # comparison, not min(): this runs for every file).
            gen.append(gen_ns if gen_ns <= _INT64_MAX else _INT64_MAX)
            context.append(size if size <= _INT64_MAX else _INT64_MAX)
            sample = record.retrieval
            if sample is None:
                ret.append(-1)
                vertices.append(-1)
                relationships.append(-1)
                properties.append(-1)
                if exact is not None and max(gen_ns, size) > _INT64_MAX:
                    exact[len(outcome) - 1] = (gen_ns, -1, -1, -1, -1, size)
                continue
            time_ns, v, r, p = sample
            total[6] += time_ns
            total[7] += v
            total[8] += r
            total[9] += p
            total[10] += 1
            if max(gen_ns, time_ns, v, r, p, size) <= _INT64_MAX:
                ret.append(time_ns)
                vertices.append(v)
                relationships.append(r)
                properties.append(p)
                continue
            ret.append(min(time_ns, _INT64_MAX))
            vertices.append(min(v, _INT64_MAX))
            relationships.append(min(r, _INT64_MAX))
            properties.append(min(p, _INT64_MAX))
            if exact is not None:
                exact[len(outcome) - 1] = (gen_ns, time_ns, v, r, p, size)
        return None

    if (
        grade_folder is not None
        and not tree.remote
        and texts is None
        and not with_identity
        and known is None
        and not tracing_entries()
    ):
        # The compiled path: a folder at a time, in place (no Python object per file), into
        # bytearrays moved to the arrays before Python does a folder it declines, and at the
        # end, so the rows stay in order.
        pending = tuple(bytearray() for _ in range(9))
        state = (setups, setup_codes, sums, *pending)
        for index, folder in enumerate(paths):
            answer = answers[index].encode("utf-8", "surrogatepass")
            if grade_folder(folder, prefix, answer, datasets[index], index, state):
                continue
            _move(pending, (*rows, *columns))
            listed, error = _listed(tree, [folder], prefix, False)
            error = grade_files([(index, f) for f in (listed[0] if listed else [])]) or error
            if error is not None:
                return done(error)
        _move(pending, (*rows, *columns))
        return done()

    listed, list_error = _listed(tree, paths, prefix, with_identity)
    jobs: list[tuple[int, tuple[str, str, Any]]] = []
    codes = {name: code for code, name in enumerate(known.setup_names)} if known else {}
    for index, listing in enumerate(listed):
        files: list[tuple[str, str, Any]] = listing
        if with_identity:
            files = [(setup, path, identity_hash(ident)) for setup, path, ident in listing]
        if known is not None:
            files, mask = _unchanged(files, known, index, codes)
            kept.append(mask)  # type: ignore[union-attr]
        elif kept is not None:
            kept.append(None)
        jobs.extend((index, result_file) for result_file in files)
    return done(grade_files(jobs) or list_error)


def _move(pending: tuple[bytearray, ...], arrays: tuple[array[int], ...]) -> None:
    """Append each bytearray's values (native byte order) to its array, and empty it."""
    for values, target in zip(pending, arrays, strict=True):
        if values:
            target.frombytes(values)
            del values[:]


_LOCAL = LocalTree("")


def chunk_arguments(
    chunk: PendingChunk, prefix: str, keep_text: bool | int, tree: ResultTree | None
) -> tuple[Any, ...]:
    """The arguments of :func:`grade_chunk` for ``chunk``."""
    return (
        chunk.paths, chunk.answers, chunk.datasets, prefix, keep_text, tree, chunk.known,
        chunk.store,
    )  # fmt: skip
