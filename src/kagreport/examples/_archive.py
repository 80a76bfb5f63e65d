"""A bundled example shipped as one archive, unpacked on first use into a per-user cache.

The MMLU-Pro philosophy run is 2,988 small files; the wheel holds them as one
``.tar.xz`` (a few hundred kilobytes) and :func:`unpacked` writes them out once, into
``<cache>/examples/<name>-<hash>/``, where ``<cache>`` is ``$KAGREPORT_CACHE``, else
``$XDG_CACHE_HOME/kagreport``, else ``~/.cache/kagreport`` (XDG Base Directory
Specification 0.8), and ``<hash>`` the start of the archive's SHA-256, so an upgraded archive
is unpacked into a new folder and never read from an old one.

The archive is made by :func:`pack` (``examples/pack_mmlu_pro_philosophy.py``): regular files
only, sorted, owner 0, mode 0644, time 0, so that the same tree gives the same tar bytes.
"""

from __future__ import annotations

import hashlib
import io
import lzma
import os
import shutil
import tarfile
import tempfile
import time
from pathlib import Path, PurePosixPath

from kagreport._atomic import write_atomic
from kagreport._errors import KagreportError

__all__ = ["CACHE_VARIABLE", "cache_folder", "pack", "tar_bytes", "unpacked"]

#: The environment variable that names the cache folder.
CACHE_VARIABLE = "KAGREPORT_CACHE"

# Hex digits of the archive's SHA-256 in the cache folder's name: 64 bits, so two archives
# would share a folder only by a collision.
_HASH_DIGITS = 16
#: A staging folder this old belongs to no live unpack (one takes under a second).
_ABANDONED_SECS = 3600.0


def cache_folder() -> Path:
    """The per-user cache folder (absolute; it may not exist yet).

    ``$KAGREPORT_CACHE`` if set and not empty; else ``$XDG_CACHE_HOME/kagreport`` if that
    variable holds an absolute path (the XDG specification ignores a relative one); else
    ``~/.cache/kagreport``.

    Raises
    ------
    KagreportError
        If none is set and there is no home folder.
    """
    chosen = os.environ.get(CACHE_VARIABLE, "")
    if chosen:
        return Path(chosen).expanduser().absolute()
    xdg = os.environ.get("XDG_CACHE_HOME", "")
    if xdg and os.path.isabs(xdg):
        return Path(xdg) / "kagreport"
    try:
        home = Path.home()
    except (RuntimeError, KeyError):  # no HOME and no password entry
        raise KagreportError(
            f"no home folder to hold the kagreport cache; set {CACHE_VARIABLE} to a folder "
            "you can write"
        ) from None
    return home / ".cache" / "kagreport"


def unpacked(archive: Path, name: str) -> Path:
    """The folder holding the files of ``archive``, unpacked into the cache on first use.

    Two processes unpacking at once each write a temporary folder beside the target and
    rename it into place; the first rename wins and the other process removes its copy, so
    both return a whole folder. A folder already there is read, never written (a read-only
    cache that holds it works).

    Parameters
    ----------
    archive : Path
        A ``.tar.xz`` made by :func:`pack`.
    name : str
        The folder's name before the hash (the example's name).

    Raises
    ------
    KagreportError
        If the cache folder cannot be written (the message names it and
        ``KAGREPORT_CACHE``), if the archive is missing or damaged, or if it holds a member
        that is not a regular file or folder or whose path is absolute or leaves the folder.
    """
    try:
        data = archive.read_bytes()
    except OSError as exc:
        raise KagreportError(
            f"the bundled example archive {archive} cannot be read ({exc.strerror or exc}); "
            "reinstall kagreport",
            path=archive,
        ) from None
    digest = hashlib.sha256(data).hexdigest()[:_HASH_DIGITS]
    parent = cache_folder() / "examples"
    target = parent / f"{name}-{digest}"
    if target.is_dir():
        return target
    try:
        parent.mkdir(parents=True, exist_ok=True)
        _remove_abandoned(parent, name)
        staging = Path(tempfile.mkdtemp(prefix=f".{name}-", suffix=".partial", dir=parent))
    except OSError as exc:
        raise _unwritable(parent, exc) from None
    try:
        _extract(archive, data, staging)
        try:
            os.rename(staging, target)
        except OSError:
            # Another process renamed its whole copy into place first: use that one.
            if not target.is_dir():
                raise
    except OSError as exc:
        raise _unwritable(parent, exc) from None
    finally:
        # Gone after a successful rename; else a partial copy nobody else reads.
        shutil.rmtree(staging, ignore_errors=True)
    return target


def _remove_abandoned(parent: Path, name: str) -> None:
    """Remove the staging folders a killed process left (SIGKILL skips its ``finally``).

    Only those untouched for ``_ABANDONED_SECS``: an unpack takes well under a second, so a
    younger one may be another process's, still being written."""
    now = time.time()
    for staging in parent.glob(f".{name}-*.partial"):
        try:
            if now - staging.lstat().st_mtime > _ABANDONED_SECS and staging.is_dir():
                shutil.rmtree(staging, ignore_errors=True)
        except OSError:
            continue  # gone already: another process swept it


def _unwritable(parent: Path, exc: OSError) -> KagreportError:
    return KagreportError(
        f"cannot write the kagreport cache folder {parent} ({exc.strerror or exc}); "
        f"set {CACHE_VARIABLE} to a folder you can write",
        path=parent,
    )


def _extract(archive: Path, data: bytes, into: Path) -> None:
    """Write the regular files of ``data`` (the bytes of ``archive``) under ``into``,
    refusing any other member."""
    root = into.resolve()
    try:
        # Decompressed at once (3.4 MB for the MMLU-Pro run): reading the xz stream member
        # by member takes a hundred times longer.
        stream = io.BytesIO(lzma.decompress(data, format=lzma.FORMAT_XZ))
        with tarfile.open(fileobj=stream, mode="r:") as tar:
            for member in tar:
                relative = _checked_name(archive, member)
                destination = root.joinpath(*relative.parts)
                if member.isdir():
                    destination.mkdir(parents=True, exist_ok=True)
                    continue
                source = tar.extractfile(member)
                assert source is not None  # a regular file (checked above)
                destination.parent.mkdir(parents=True, exist_ok=True)
                try:
                    out = open(destination, "xb")  # noqa: SIM115 (closed just below)
                except FileExistsError:
                    raise KagreportError(
                        f"the bundled example archive {archive} holds {member.name!r} twice; "
                        "refusing to unpack it (reinstall kagreport)",
                        path=archive,
                    ) from None
                with source, out:
                    shutil.copyfileobj(source, out)
    except (tarfile.TarError, lzma.LZMAError, EOFError) as exc:
        raise KagreportError(
            f"the bundled example archive {archive} is damaged ({exc}); reinstall kagreport",
            path=archive,
        ) from None


def _checked_name(archive: Path, member: tarfile.TarInfo) -> PurePosixPath:
    """The member's relative path, or an error if it is not a plain file or folder inside."""
    name = member.name
    path = PurePosixPath(name)
    if not (member.isreg() or member.isdir()):
        why = "a link" if member.issym() or member.islnk() else "not a regular file or folder"
    elif not path.parts or "\\" in name or "\0" in name:
        why = "an unusual name"
    elif path.is_absolute():
        why = "an absolute path"
    elif ".." in path.parts:
        why = "a path with '..'"
    else:
        return path
    raise KagreportError(
        f"the bundled example archive {archive} holds the member {name!r}, {why}; "
        "refusing to unpack it (reinstall kagreport)",
        path=archive,
    )


def tar_bytes(tree: Path) -> bytes:
    """The uncompressed tar stream of the regular files under ``tree``: sorted by path,
    owner 0, mode 0644, time 0 (folders are implied by the files' paths).

    Raises
    ------
    ValueError
        If ``tree`` holds a link or anything else that is not a regular file or folder.
    """
    names = []
    for folder, subfolders, files in os.walk(tree):
        subfolders.sort()
        for file in files:
            path = Path(folder) / file
            if path.is_symlink() or not path.is_file():
                raise ValueError(f"{path}: not a regular file; the archive holds only those")
            names.append(path.relative_to(tree).as_posix())
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w", format=tarfile.PAX_FORMAT) as tar:
        for name in sorted(names):
            data = (tree / name).read_bytes()
            info = tarfile.TarInfo(name)
            info.size, info.mode, info.mtime = len(data), 0o644, 0
            info.uid = info.gid = 0
            info.uname = info.gname = ""
            tar.addfile(info, io.BytesIO(data))
    return buffer.getvalue()


def pack(tree: Path, archive: Path) -> None:
    """Write ``archive`` (``.tar.xz``) from the files under ``tree``, atomically.

    The tar stream is :func:`tar_bytes`; xz preset 9 with a CRC-64 check (the extreme
    presets save 6% in seven times the time). The compressed bytes depend on liblzma's
    encoder too, so the tests compare the tar stream as well.
    """
    data = lzma.compress(tar_bytes(tree), format=lzma.FORMAT_XZ, check=lzma.CHECK_CRC64, preset=9)
    write_atomic(archive, data)
