"""Listing, reading, decoding and grading question folders in chunks, in one process or a few.

Reading and decoding dominate ``kag stats`` on a large tree (each KAG file
carries an embedding vector that must be scanned to be skipped), and both are
CPU-bound under the GIL. Chunks of question folders therefore go to a small
pool of forked worker processes; results come back in submission order, so
the report is the same, byte for byte, whatever the number of workers.
"""

from __future__ import annotations

import logging
import multiprocessing
import os
import sys
import threading
from array import array
from collections import deque
from collections.abc import Callable
from multiprocessing.pool import AsyncResult, Pool
from typing import NamedTuple

from kagreport.grading._rule import grade_response
from kagreport.kag import decode_result, iter_result_files, read_bytes

__all__ = ["ChunkRunner", "GradedChunk", "PendingChunk", "grade_chunk"]

#: Question folders per chunk (a few result files each).
CHUNK_QUESTIONS = 64
#: Below this many question folders a pool costs more than it saves (fork, pickling).
PARALLEL_AFTER = 4 * CHUNK_QUESTIONS
_INT64_MAX = 2**63 - 1


class PendingChunk:
    """Question folders waiting to be graded, with their answers and name codes."""

    __slots__ = ("answers", "datasets", "paths", "questions")

    def __init__(self) -> None:
        self.paths: list[str] = []
        self.answers: list[str] = []
        self.datasets: list[int] = []
        self.questions: list[int] = []

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
    dataset code), the 11 group sums of ``_grade``. ``unparsable``:
    (path, reason). ``io_error``: (path, message) of the first folder or file
    that could not be read; grading stops there.
    """

    rows: tuple[array[int], array[int]]
    setups: list[str]
    columns: tuple[array[int], ...]
    sums: dict[tuple[int, int], list[int]]
    unparsable: list[tuple[str, str]]
    io_error: tuple[str, str] | None
    texts: ChunkTexts | None = None


def _cut(text: str | None, limit: int | None) -> str | None:
    return text if text is None or limit is None else text[:limit]


def grade_chunk(
    paths: list[str],
    answers: list[str],
    datasets: list[int],
    prefix: str,
    keep_text: bool | int = False,
) -> GradedChunk:
    """List each question folder's result files, read, decode and grade them.

    ``keep_text``: False keeps no text; True keeps each response and error message
    whole; a positive int keeps that many characters of each.
    """
    from kagreport._errors import ResultTreeError

    question_index, setup_index = rows = (array("I"), array("I"))
    outcome, gen, ret, vertices, relationships, properties, context = columns = (
        array("B"),
        *(array("q") for _ in range(6)),
    )
    setups: list[str] = []
    setup_codes: dict[str, int] = {}
    sums: dict[tuple[int, int], list[int]] = {}
    unparsable: list[tuple[str, str]] = []
    texts: ChunkTexts | None = None
    if keep_text is not False:
        texts = ([], array("q"), [])
    limit = None if keep_text is True else int(keep_text)

    def done(error: tuple[str, str] | None = None) -> GradedChunk:
        return GradedChunk(rows, setups, columns, sums, unparsable, error, texts)

    for index, folder in enumerate(paths):
        answer = answers[index]
        try:
            files = list(iter_result_files(folder, prefix))
        except ResultTreeError as exc:
            return done((exc.path or folder, exc.message))
        for result_file in files:
            path = result_file.path
            try:
                data = read_bytes(path)
            except OSError as exc:
                return done((path, f"cannot read the result file {path}: {exc.strerror or exc}"))
            try:
                record = decode_result(data)
            except ValueError as exc:
                unparsable.append((path, str(exc)))
                continue
            setup = setup_codes.get(result_file.setup)
            if setup is None:
                setup = setup_codes[result_file.setup] = len(setups)
                setups.append(result_file.setup)
            key = (setup, datasets[index])
            total = sums.get(key)
            if total is None:
                total = sums[key] = [0] * 11
            question_index.append(index)
            setup_index.append(setup)
            if texts is not None:
                texts[0].append(_cut(record.result, limit))
                texts[1].append(-1 if record.result is None else len(record.result))
                texts[2].append(_cut(record.error, limit))
            if record.result is None:
                total[2] += 1
                outcome.append(2)
                for column in (gen, ret, vertices, relationships, properties, context):
                    column.append(-1)
                continue
            if grade_response(record.result, answer):
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
            gen.append(min(gen_ns, _INT64_MAX))
            context.append(size)
            sample = record.retrieval
            if sample is None:
                for column in (ret, vertices, relationships, properties):
                    column.append(-1)
            else:
                total[6] += sample.time_ns
                total[7] += sample.vertices
                total[8] += sample.relationships
                total[9] += sample.properties
                total[10] += 1
                # Values beyond int64 cannot be real; clamp in the table, keep exact sums.
                ret.append(min(sample.time_ns, _INT64_MAX))
                vertices.append(min(sample.vertices, _INT64_MAX))
                relationships.append(min(sample.relationships, _INT64_MAX))
                properties.append(min(sample.properties, _INT64_MAX))
    return done()


def _default_workers() -> int:
    return max(1, min(os.cpu_count() or 1, 8))


def _fork_is_safe() -> bool:
    # fork() copies one thread only: with other threads alive (a Jupyter kernel),
    # a lock held elsewhere could deadlock the child.
    return sys.platform.startswith("linux") and threading.active_count() == 1


class ChunkRunner:
    """Grades submitted chunks in order and hands each result to ``merge``.

    Starts in-process; once :data:`PARALLEL_AFTER` question folders have been
    submitted, and if allowed, moves to a pool of forked workers with a bounded
    number of chunks in flight (memory stays bounded on any tree size).
    """

    def __init__(
        self,
        workers: int | None,
        prefix: str,
        merge: Callable[[PendingChunk, GradedChunk], None],
        keep_text: bool | int = False,
    ) -> None:
        if workers is not None and workers < 1:
            raise ValueError(f"workers must be >= 1, not {workers}")
        self._workers = _default_workers() if workers is None else workers
        self._prefix = prefix
        self._keep_text = keep_text
        self._merge = merge
        self._submitted = 0
        self._pool: Pool | None = None
        self._pending: deque[tuple[PendingChunk, AsyncResult[GradedChunk]]] = deque()

    def submit(self, chunk: PendingChunk) -> None:
        self._submitted += len(chunk.paths)
        args = (chunk.paths, chunk.answers, chunk.datasets, self._prefix, self._keep_text)
        if (
            self._pool is None
            and self._workers > 1
            and self._submitted > PARALLEL_AFTER
            and _fork_is_safe()
        ):
            logging.getLogger("kagreport.grading").debug(
                "large tree: reading with %d worker processes", self._workers
            )
            self._pool = multiprocessing.get_context("fork").Pool(self._workers)
        if self._pool is None:
            self._merge(chunk, grade_chunk(*args))
            return
        while len(self._pending) >= 4 * self._workers:
            self._merge_oldest()
        self._pending.append((chunk, self._pool.apply_async(grade_chunk, args)))

    def _merge_oldest(self) -> None:
        chunk, result = self._pending.popleft()
        self._merge(chunk, result.get())

    def finish(self) -> None:
        """Merge every chunk still in flight."""
        while self._pending:
            self._merge_oldest()

    def close(self) -> None:
        """Stop the workers (also after an error)."""
        if self._pool is not None:
            self._pool.terminate()
            self._pool.join()
            self._pool = None
        self._pending.clear()
