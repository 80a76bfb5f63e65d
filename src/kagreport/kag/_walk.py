"""Walking a kag result tree: ``<results>/<dataset>/<question>/<prefix><setup>.json``.

The rules are kag's (``src/subcommand/stats/mod.rs``): levels one and two
hold directories only (symlinks are not followed) with valid component
names; level three holds regular files whose name, minus ``.json`` and
minus the prefix, is a valid setup name. Deeper levels are never visited.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from kagreport._errors import ResultTreeError
from kagreport.kag._names import is_component_name
from kagreport.kag._records import list_questions, list_results
from kagreport.kag._tree import DIR, FILE, LocalTree, RemoteTree, ResultTree, TreeEntry, open_tree

__all__ = [
    "QuestionDir",
    "ResultFile",
    "folder_result_files",
    "iter_find_candidates",
    "iter_find_entries",
    "iter_find_files",
    "iter_question_dirs",
    "iter_question_names",
    "iter_result_files",
    "setup_name",
    "tracing_entries",
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
    """A level-three result file: the setup it belongs to, its path and its identity.

    ``identity`` changes when the file does (see ``TreeEntry``);
    ``""`` when the listing did not ask for it.
    """

    setup: str
    path: str
    identity: str = ""


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


def _is_dir(entry: os.DirEntry[str]) -> bool:
    try:
        return entry.is_dir(follow_symlinks=False)
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


def _tree(
    root: str | os.PathLike[str] | ResultTree, storage_options: Mapping[str, Any] | None
) -> ResultTree:
    if isinstance(root, LocalTree | RemoteTree):
        return root
    return open_tree(root, storage_options)


def iter_question_dirs(
    root: str | os.PathLike[str] | ResultTree,
    *,
    storage_options: Mapping[str, Any] | None = None,
) -> Iterator[QuestionDir | str]:
    """Walk levels one and two of a result tree, in name order.

    Yields each valid dataset name (a ``str``) when its folder is entered,
    then one ``QuestionDir`` per valid question folder inside it.
    Invalid names are logged as warnings and skipped; anything that is not
    a directory (symlinks included) is skipped silently. ``root`` is a local
    path, an fsspec URL (``s3://bucket/run``) or a tree from
    ``open_tree``; on a remote tree the dataset folders are
    listed many at a time.

    Raises
    ------
    ResultTreeError
        If the root is missing or a folder cannot be read.
    """
    tree = _tree(root, storage_options)
    join = tree.join
    for dataset, folder, names in iter_question_names(tree):
        yield dataset
        for name in names:
            yield QuestionDir(dataset, name, join(folder, name))


def iter_question_names(tree: ResultTree) -> Iterator[tuple[str, str, list[str]]]:
    """:func:`iter_question_dirs` a dataset at a time: (dataset, its folder, the names of
    its valid question folders), in name order; a local dataset folder listed by the
    compiled lister where it gives the same (every folder's name valid).

    Raises
    ------
    ResultTreeError
        If the root is missing or a folder cannot be read.
    """
    tree.check()
    top = tree.root
    datasets = []
    for entry in tree.list_dir(top):
        if entry[1] != DIR:
            continue
        if not is_component_name(entry[0]):
            logger.warning("ignoring directory with invalid dataset name: %r", entry[0])
            continue
        datasets.append(entry[0])
    # A remote tree lists its dataset folders at once; a local one as it goes.
    listed = tree.list_dirs([tree.join(top, d) for d in datasets]) if tree.remote else None
    fast = list_questions if listed is None else None
    for index, dataset in enumerate(datasets):
        folder = tree.join(top, dataset)
        names = fast(folder) if fast is not None else None
        if names is None:
            entries = listed[index] if listed is not None else tree.list_dir(folder)
            names = []
            for name, kind, _ in entries:
                if kind != DIR:
                    continue
                if not is_component_name(name):
                    logger.warning(
                        "ignoring directory with invalid question name: %r (in %s)", name, folder
                    )
                    continue
                names.append(name)
        yield dataset, folder, names


#: Per prefix, each file name seen and its setup (None: not a result file).
_SETUPS: dict[str, dict[str, str | None]] = {}
_UNSEEN = ""  # no setup name is empty


def result_files(
    entries: Iterable[TreeEntry], folder: str, prefix: str, tree: ResultTree
) -> list[tuple[str, str, str]]:
    """The result files among one question folder's entries: ``(setup, path, identity)``
    tuples sorted by setup name (plain tuples: the grader makes one per file).

    Only regular files (not symlinks) whose name gives a valid setup (see
    ``setup_name``) are kept; others are logged at the trace level.
    """
    files = []
    join = tree.join
    known = _SETUPS.get(prefix)
    if known is None or len(known) > 4096:  # bounded: a long-lived caller sees many trees
        if len(_SETUPS) > 64:
            _SETUPS.clear()
        known = _SETUPS[prefix] = {}
    for name, kind, identity in entries:
        if kind != FILE:
            continue
        # Setup names repeat in every question folder: each is checked once.
        setup = known.get(name, _UNSEEN)
        if setup == _UNSEEN:
            setup = known[name] = setup_name(name, prefix)
        if setup is None:
            logger.log(5, "ignoring non-result entry: %r", join(folder, name))
            continue
        files.append((setup, join(folder, name), identity))
    files.sort()
    return files


def tracing_entries() -> bool:
    """Whether each skipped folder entry is logged (the trace level, ``-vvvv``): the
    compiled listers skip them silently, so they are not used then."""
    return logger.isEnabledFor(5)


def folder_result_files(
    tree: ResultTree, folder: str, prefix: str, identity: bool = False
) -> list[tuple[str, str, str]]:
    """:func:`result_files` of one folder as ``tree.list_dir`` lists it; a local folder by
    the compiled lister where it gives the same (no identities asked for, no trace-level
    logging of skipped entries, nothing unusual in the folder).

    Raises
    ------
    ResultTreeError
        If the folder or an entry's type cannot be read.
    """
    local = list_results is not None and not identity and not tree.remote
    if local and not tracing_entries():
        files = list_results(folder, prefix)  # type: ignore[misc]
        if files is not None:
            return files
    return result_files(tree.list_dir(folder, identity=identity), folder, prefix, tree)


def iter_result_files(
    question_dir: str,
    prefix: str = "",
    *,
    tree: ResultTree | None = None,
) -> Iterator[ResultFile]:
    """Yield the result files of one question folder (level three), sorted by setup name.

    Only regular files (not symlinks) whose name gives a valid setup (see
    ``setup_name``) are yielded; others are logged at the trace level.
    ``tree`` is the tree the folder belongs to (default: a local folder, or the
    URL's filesystem).

    Raises
    ------
    ResultTreeError
        If the folder cannot be read.
    """
    if tree is None:
        tree = open_tree(question_dir)
    for setup, path, identity in folder_result_files(tree, question_dir, prefix):
        yield ResultFile(setup, path, identity)


def iter_find_candidates(
    root: str | os.PathLike[str] | ResultTree,
    prefix: str = "",
    *,
    storage_options: Mapping[str, Any] | None = None,
) -> Iterator[str]:
    """Yield, at any depth, the files whose name starts with ``prefix`` and ends with ``.json``.

    This is ``kag stats find``'s notion of a result file: no name
    validation. Paths are ``root`` joined with the path relative to it.
    Symlinked folders are not followed. On a remote tree (an fsspec URL) the
    folders of each level are listed many at a time, in name order.

    Raises
    ------
    ResultTreeError
        If the root is missing or a folder cannot be read.
    """
    tree = _tree(root, storage_options)
    if not tree.remote:
        for entry in iter_find_entries(tree.root, prefix):
            yield entry.path
        return
    tree.check()
    level = [tree.root]
    while level:
        deeper = []
        for folder, entries in zip(level, tree.list_dirs(level), strict=True):
            for name, kind, _ in entries:
                if kind == DIR:
                    deeper.append(tree.join(folder, name))
                elif name.endswith(".json") and name.startswith(prefix):
                    yield tree.join(folder, name)
        level = deeper


def iter_find_entries(root: str | os.PathLike[str], prefix: str = "") -> Iterator[os.DirEntry[str]]:
    """``iter_find_candidates``, as the folder entries (their type costs no ``stat``).

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


def iter_find_files(root: str | os.PathLike[str], prefix: str = "") -> Iterator[tuple[str, bool]]:
    """``iter_find_entries`` as ``(path, regular)``: ``regular`` is True when the folder
    entry itself says "regular file" (no ``stat`` needed to know it), False otherwise
    (a symlink, or a type the entry does not tell). One loop: it runs once per file.

    Raises
    ------
    ResultTreeError
        If the root is missing or a folder or an entry's type cannot be read.
    """
    stack = [check_root(root)]
    while stack:
        for entry in _scandir(stack.pop()):
            try:
                is_dir = entry.is_dir(follow_symlinks=False)
            except OSError as exc:
                raise ResultTreeError(
                    f"cannot stat {entry.path}: {exc.strerror or exc}", path=entry.path
                ) from None
            if is_dir:
                stack.append(entry.path)
                continue
            name = entry.name
            if (
                name.endswith(".json")
                and name.startswith(prefix)
                and (name.isascii() or _utf8(name))
            ):
                try:
                    regular = entry.is_file(follow_symlinks=False)
                except OSError:  # no type in the entry and no lstat: the reader stats it
                    regular = False
                yield entry.path, regular
