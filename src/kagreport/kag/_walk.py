"""Walking a kag result tree: ``<results>/<dataset>/<question>/<prefix><setup>.json``.

The rules are kag's (``src/subcommand/stats/mod.rs``): levels one and two
hold directories only (symlinks are not followed) with valid component
names; level three holds regular files whose name, minus ``.json`` and
minus the prefix, is a valid setup name. Deeper levels are never visited.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Iterator
from dataclasses import dataclass

from kagreport._errors import ResultTreeError
from kagreport.kag._names import is_component_name

__all__ = [
    "QuestionDir",
    "ResultFile",
    "iter_find_candidates",
    "iter_find_entries",
    "iter_question_dirs",
    "iter_result_files",
    "setup_name",
]

logger = logging.getLogger("kagreport.kag")


@dataclass(frozen=True, slots=True)
class QuestionDir:
    """A level-two folder of a result tree.

    Attributes
    ----------
    dataset, question : str
        Valid component names.
    path : str
        The folder's path (the results root joined with both names).
    """

    dataset: str
    question: str
    path: str


@dataclass(frozen=True, slots=True)
class ResultFile:
    """A level-three result file: the setup it belongs to and its path."""

    setup: str
    path: str


def setup_name(file_name: str, prefix: str = "") -> str | None:
    """Return the setup a result file name belongs to, or ``None`` if it is not one.

    The name must end with ``.json``; what is left must start with
    ``prefix``; what is left then must be a valid component name.
    ``x.json.tmp`` (a file ``kag benchmark`` is still writing) is never a result.
    """
    if not file_name.endswith(".json"):
        return None
    stem = file_name[: -len(".json")]
    if not stem.startswith(prefix):
        return None
    setup = stem[len(prefix) :]
    return setup if is_component_name(setup) else None


def _scandir(path: str) -> list[os.DirEntry[str]]:
    try:
        with os.scandir(path) as entries:
            return list(entries)
    except OSError as exc:
        raise ResultTreeError(
            f"cannot read the folder {path}: {exc.strerror or exc}", path=path
        ) from None


def _stat_error(entry: os.DirEntry[str], exc: OSError) -> ResultTreeError:
    return ResultTreeError(f"cannot stat {entry.path}: {exc.strerror or exc}", path=entry.path)


def _is_dir(entry: os.DirEntry[str]) -> bool:
    try:
        return entry.is_dir(follow_symlinks=False)
    except OSError as exc:
        raise ResultTreeError(
            f"cannot stat {entry.path}: {exc.strerror or exc}", path=entry.path
        ) from None


def _is_file(entry: os.DirEntry[str]) -> bool:
    try:
        return entry.is_file(follow_symlinks=False)
    except OSError as exc:
        raise ResultTreeError(
            f"cannot stat {entry.path}: {exc.strerror or exc}", path=entry.path
        ) from None


def _utf8(name: str) -> bool:
    try:
        name.encode("utf-8")
    except UnicodeEncodeError:  # undecodable bytes come back as lone surrogates
        return False
    return True


def check_root(root: str | os.PathLike[str]) -> str:
    """Return ``root`` as a string if it is a readable folder.

    Raises
    ------
    ResultTreeError
        If ``root`` does not exist or is not a folder.
    """
    name = os.fspath(root)
    if not os.path.isdir(name):
        what = "does not exist" if not os.path.exists(name) else "is not a folder"
        raise ResultTreeError(f"the results folder {name} {what}", path=name)
    return name


def iter_question_dirs(root: str | os.PathLike[str]) -> Iterator[QuestionDir | str]:
    """Walk levels one and two of a result tree.

    Yields each valid dataset name (a ``str``) when its folder is entered,
    then one :class:`QuestionDir` per valid question folder inside it.
    Invalid names are logged as warnings and skipped; anything that is not
    a directory (symlinks included) is skipped silently.

    Raises
    ------
    ResultTreeError
        If the root is missing or a folder cannot be read.
    """
    top = check_root(root)
    for dataset_entry in _scandir(top):
        if not _is_dir(dataset_entry):
            continue
        dataset = dataset_entry.name
        if not is_component_name(dataset):
            logger.warning("ignoring directory with invalid dataset name: %r", dataset)
            continue
        yield dataset
        for question_entry in _scandir(dataset_entry.path):
            if not _is_dir(question_entry):
                continue
            question = question_entry.name
            if not is_component_name(question):
                logger.warning(
                    "ignoring directory with invalid question name: %r (in %s)",
                    question,
                    dataset_entry.path,
                )
                continue
            yield QuestionDir(dataset, question, question_entry.path)


def iter_result_files(question_dir: str, prefix: str = "") -> Iterator[ResultFile]:
    """Yield the result files of one question folder (level three).

    Only regular files (not symlinks) whose name gives a valid setup (see
    :func:`setup_name`) are yielded; others are logged at the trace level.

    Raises
    ------
    ResultTreeError
        If the folder cannot be read.
    """
    for entry in _scandir(question_dir):
        if not _is_file(entry):
            continue
        setup = setup_name(entry.name, prefix)
        if setup is None:
            logger.log(5, "ignoring non-result entry: %r", entry.path)
            continue
        yield ResultFile(setup, entry.path)


def iter_find_candidates(root: str | os.PathLike[str], prefix: str = "") -> Iterator[str]:
    """Yield, at any depth, the files whose name starts with ``prefix`` and ends with ``.json``.

    This is ``kag stats find``'s notion of a result file: no name
    validation. Paths are ``root`` joined with the path relative to it.
    Symlinked folders are not followed.

    Raises
    ------
    ResultTreeError
        If the root is missing or a folder cannot be read.
    """
    for entry in iter_find_entries(root, prefix):
        yield entry.path


def iter_find_entries(root: str | os.PathLike[str], prefix: str = "") -> Iterator[os.DirEntry[str]]:
    """:func:`iter_find_candidates`, as the folder entries (their type costs no ``stat``).

    Raises
    ------
    ResultTreeError
        If the root is missing or a folder cannot be read.
    """
    top = check_root(root)
    stack = [top]
    while stack:
        folder = stack.pop()
        for entry in _scandir(folder):
            name = entry.name
            if (
                name.endswith(".json")
                and name.startswith(prefix)
                and not _is_dir(entry)
                and (name.isascii() or _utf8(name))
            ):
                # kag's walker yields non-directory entries (names that are not
                # UTF-8 skipped); a symlink to a file is read through, a dangling
                # one fails to read.
                yield entry
            elif _is_dir(entry):
                stack.append(entry.path)
