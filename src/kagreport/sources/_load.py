"""The one way the readers load a JSON or JSON Lines document or a zip entry: bounded.

Every reader of :mod:`kagreport.sources` reads its files through :func:`read_document`
(a plain file), :class:`Archive` (an entry of a zip: Inspect AI's ``.eval``) and
:func:`decode` (the bytes or text, into a msgspec type). What a hostile file can do is
bounded here, and every fault ends in one :class:`~kagreport._errors.DocumentError` line
naming the file, the entry or line, and the key path where msgspec gives one:

- **Size.** A plain file over :data:`DOCUMENT_LIMIT` bytes (1 GiB; the environment
  variable ``KAGREPORT_MAX_DOCUMENT_BYTES`` sets another) is refused before it is read,
  and at most the limit plus one byte is ever read (a file growing while read is refused
  too). The largest real outputs are single JSON documents of a few hundred megabytes (a
  HELM ``scenario_state.json``, an Inspect ``.json`` log of a large eval); decoding one
  costs a few times its size in memory, so 1 GiB lets every real file through while a
  hostile one of many gigabytes is refused in a fraction of a second.
- **Entries.** A zip entry over :data:`MEMBER_LIMIT` bytes once decompressed (256 MiB;
  ``KAGREPORT_MAX_MEMBER_BYTES``) is refused before it is read; the entry is then
  decompressed in chunks of at most :data:`_CHUNK` bytes, so an entry whose header
  understates its size (a deflate or zstd bomb, even one zstd frame) is refused once it
  passes its stated size, never held whole. A sample entry of a real Inspect log is a few
  megabytes.
- **Nesting.** JSON nested deeper than the interpreter's recursion limit (msgspec and
  :mod:`json` decode recursively) is refused instead of a ``RecursionError``.
- **Numbers.** An integer past a float's range (``10**400``) is refused with its key path
  (a typed float field is msgspec's ``Number out of range``); ``NaN`` and ``Infinity``,
  which Python's :func:`json.dumps` writes bare (Inspect, OpenAI evals, lm-eval and HELM
  logs may hold them), are read as floats.
- **Types.** A value of the wrong type for its msgspec field is msgspec's message with the
  key path (``Expected `str`, got `int` - at `$.results[0].provider.id```).
"""

from __future__ import annotations

import importlib
import io
import json
import os
import re
import stat
import sys
import zipfile
import zlib
from pathlib import Path
from typing import Any

import msgspec

from kagreport._errors import DocumentError, UsageError
from kagreport._io import open_regular_file
from kagreport._optional import optional

__all__ = [
    "DOCUMENT_LIMIT",
    "MEMBER_LIMIT",
    "Archive",
    "convert",
    "decode",
    "document_limit",
    "load",
    "member_limit",
    "read_document",
]

#: Bytes a plain JSON or JSON Lines file may hold (see the module docstring).
DOCUMENT_LIMIT = 1 << 30
#: Bytes an entry of a zip may hold once decompressed (see the module docstring).
MEMBER_LIMIT = 256 << 20
_DOCUMENT_VARIABLE = "KAGREPORT_MAX_DOCUMENT_BYTES"
_MEMBER_VARIABLE = "KAGREPORT_MAX_MEMBER_BYTES"
#: Bytes decompressed (or read) at a time from a zip entry.
_CHUNK = 1 << 20
_ZSTD = 93  # zip compression method of zstd (APPNOTE 4.4.5)
# A run of 309 digits: 309 digits reach 10**308, near a float's largest (1.8e308); a run
# inside a string matches too, and the decoded values are then looked at. Bytes are mapped
# to "1" (a digit) or "0" and searched for 309 ones, a chunk at a time (about 1 GB/s, a
# regular expression 20 times slower).
_DIGITS = 309
_DIGIT_TABLE = bytes(0x31 if 0x30 <= b <= 0x39 else 0x30 for b in range(256))
_DIGIT_RUN = b"1" * _DIGITS
_DIGIT_RUN_TEXT = re.compile(f"[0-9]{{{_DIGITS}}}")
_SCAN = 1 << 24


def _limit(variable: str, default: int) -> int:
    value = os.environ.get(variable, "")
    if not value.strip():
        return default
    try:
        limit = int(value)
    except ValueError:
        limit = -1
    if limit < 0:
        raise UsageError(f"{variable} must be a number of bytes, not {value!r}")
    return limit


def document_limit() -> int:
    """:data:`DOCUMENT_LIMIT`, or the byte count ``KAGREPORT_MAX_DOCUMENT_BYTES`` gives.

    Raises
    ------
    UsageError
        If the variable is set to something other than a whole number of bytes.
    """
    return _limit(_DOCUMENT_VARIABLE, DOCUMENT_LIMIT)


def member_limit() -> int:
    """:data:`MEMBER_LIMIT`, or the byte count ``KAGREPORT_MAX_MEMBER_BYTES`` gives.

    Raises
    ------
    UsageError
        If the variable is set to something other than a whole number of bytes.
    """
    return _limit(_MEMBER_VARIABLE, MEMBER_LIMIT)


def _too_big(where: str, size: int, limit: int, variable: str, path: Path) -> DocumentError:
    return DocumentError(
        f"{where}: {size:,} bytes, over the limit of {limit:,} ({variable} sets another)",
        path=path,
    )


def read_document(path: Path) -> bytes:
    """The bytes of the JSON or JSON Lines file ``path``, at most :func:`document_limit`.

    Raises
    ------
    DocumentError
        If the file cannot be read, is not a regular file (a FIFO would block), or holds
        more bytes than the limit (checked before reading, and again while reading: at
        most the limit plus one byte is read).
    """
    limit = document_limit()
    try:
        # O_NONBLOCK: opening a FIFO swapped in for the file must not wait for a writer.
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
        with open(fd, "rb") as handle:
            status = os.fstat(handle.fileno())
            if not stat.S_ISREG(status.st_mode):
                raise DocumentError(f"{path}: not a regular file", path=path)
            if status.st_size > limit:
                raise _too_big(str(path), status.st_size, limit, _DOCUMENT_VARIABLE, path)
            # One read of the stated size plus one byte sees the end of the file; a file
            # that grew since is read on, up to the limit plus one byte.
            data = handle.read(status.st_size + 1)
            if len(data) <= status.st_size:
                return data
            chunks, total = [data], len(data)
            while total <= limit:
                chunk = handle.read(min(_CHUNK, limit + 1 - total))
                if not chunk:
                    break
                chunks.append(chunk)
                total += len(chunk)
    except OSError as exc:
        raise DocumentError(f"{path}: cannot read ({exc.strerror or exc})", path=path) from None
    if total > limit:
        raise _too_big(str(path), total, limit, _DOCUMENT_VARIABLE, path)
    return b"".join(chunks)


def _one_line(text: str) -> str:
    return " ".join(text.split("\n"))


def _nested(where: str, path: Path | None) -> DocumentError:
    return DocumentError(
        f"{where}: nested too deeply to read (more than {sys.getrecursionlimit():,} levels of "
        "arrays or objects)",
        path=path,
    )


def _big_integer(value: Any) -> str | None:
    """The key path (``$.a[0].b``) of the first integer in ``value`` past a float's range;
    None when there is none. Walks without recursion (``value`` may be deep)."""
    stack: list[tuple[Any, str]] = [(value, "$")]
    while stack:
        item, where = stack.pop()
        if isinstance(item, dict):
            stack.extend((v, f"{where}.{k}") for k, v in reversed(item.items()))
        elif isinstance(item, list):
            stack.extend((v, f"{where}[{i}]") for i, v in reversed(list(enumerate(item))))
        elif isinstance(item, int) and not isinstance(item, bool):
            try:
                float(item)
            except OverflowError:
                return where
    return None


def _long_digits(data: bytes | bytearray | memoryview | str) -> bool:
    """Whether ``data`` holds a run of :data:`_DIGITS` digits (chunks of :data:`_SCAN`)."""
    if isinstance(data, str):
        return _DIGIT_RUN_TEXT.search(data) is not None
    view = memoryview(data).cast("B")
    for start in range(0, len(view), _SCAN):
        # Chunks overlap by a run's length less one, so that no run falls between two.
        if _DIGIT_RUN in bytes(view[start : start + _SCAN + _DIGITS - 1]).translate(_DIGIT_TABLE):
            return True
    return False


def _loads(data: bytes | bytearray | memoryview | str, where: str, path: Path | None) -> Any:
    """``data`` as Python values: msgspec, else :func:`json.loads` (NaN, Infinity)."""
    try:
        return msgspec.json.decode(data)
    except RecursionError:
        raise _nested(where, path) from None
    except msgspec.DecodeError as exc:
        first = exc
    try:
        # Strict UTF-8 first: json.loads would guess UTF-16 or 32 and pass lone surrogates.
        return json.loads(data if isinstance(data, str) else str(data, "utf-8"))
    except RecursionError:
        raise _nested(where, path) from None
    except ValueError:  # msgspec's message is the more precise one
        raise DocumentError(
            f"{where}: not valid JSON ({_one_line(str(first))})", path=path
        ) from None


# An escaped UTF-16 surrogate pair, or one surrogate escape alone (a lone one is no text:
# it reads, then cannot be written as UTF-8 or shown in a page).
_SURROGATES = re.compile(
    rb"\\u[dD][89abAB][0-9a-fA-F]{2}\\u[dD][c-fC-F][0-9a-fA-F]{2}|\\u[dD][89a-fA-F][0-9a-fA-F]{2}"
)


def _lone_surrogate(data: bytes | bytearray | memoryview | str) -> int | None:
    """The byte offset of a lone surrogate escape (``\\ud800`` not in a pair), or None."""
    raw = data.encode("utf-8", "surrogatepass") if isinstance(data, str) else bytes(data)
    if b"\\ud" not in raw and b"\\uD" not in raw:
        return None
    for match in _SURROGATES.finditer(raw):
        start = match.start()
        slashes = len(raw[:start]) - len(raw[:start].rstrip(b"\\"))
        if slashes % 2 == 0 and match.end() - start == 6:  # an escape, not "\\\\ud800"
            return start
    return None


def decode(
    data: bytes | bytearray | memoryview | str,
    kind: Any,
    where: str,
    *,
    path: Path | None = None,
) -> Any:
    """``data`` (one JSON document) decoded as the msgspec type ``kind``.

    Bare ``NaN``, ``Infinity`` and ``-Infinity`` (Python's :func:`json.dumps` writes them)
    are read as floats.

    Parameters
    ----------
    data : bytes-like or str
        The document (UTF-8 when bytes).
    kind : type
        A msgspec type (``Any`` for plain Python values).
    where : str
        The file, and its entry or line, for the message (``"run.jsonl: line 3"``).
    path : Path, optional
        The file, for :attr:`DocumentError.path`.

    Raises
    ------
    DocumentError
        One line, ``"<where>: <what>"``: not valid JSON (or not UTF-8), a lone surrogate
        escape (``\\ud800``: no text), nested deeper than
        the recursion limit, an integer past a float's range (with its key path), or a
        value not of its field's type (msgspec's message, with the key path).
    """
    lone = _lone_surrogate(data)
    if lone is not None:
        raise DocumentError(
            f"{where}: byte {lone}: a lone UTF-16 surrogate escape, which is not text", path=path
        )
    if _long_digits(data):
        found = _big_integer(_loads(data, where, path))
        if found is not None:
            raise DocumentError(
                f"{where}: {found}: an integer out of a float's range (over 1.8e308)", path=path
            )
    try:
        return msgspec.json.decode(data, type=kind)
    except RecursionError:
        raise _nested(where, path) from None
    except msgspec.ValidationError as exc:
        raise DocumentError(f"{where}: {_one_line(str(exc))}", path=path) from None
    except msgspec.DecodeError:
        pass  # a bare NaN or Infinity, or not JSON: _loads says which
    return convert(_loads(data, where, path), kind, where, path=path)


def convert(value: Any, kind: Any, where: str, *, path: Path | None = None) -> Any:
    """Python values ``value`` (as :func:`decode` gives them) as the msgspec type ``kind``.

    Raises
    ------
    DocumentError
        One line naming ``where`` and the key path of a value not of its field's type.
    """
    try:
        return msgspec.convert(value, kind)
    except RecursionError:
        raise _nested(where, path) from None
    except msgspec.ValidationError as exc:
        raise DocumentError(f"{where}: {_one_line(str(exc))}", path=path) from None


def load(path: Path, kind: Any) -> Any:
    """The JSON file ``path`` decoded as ``kind``: :func:`read_document`, then :func:`decode`.

    Raises
    ------
    DocumentError
        As those two raise it.
    """
    return decode(read_document(path), kind, str(path), path=path)


class _Window(io.RawIOBase):
    """``size`` bytes of an open file from ``offset`` on: a zip entry's stored bytes."""

    def __init__(self, handle: Any, offset: int, size: int) -> None:
        self.handle, self.left = handle, size
        handle.seek(offset)

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        want = min(len(buffer), self.left)
        data = self.handle.read(want) if want else b""
        if want and not data:
            raise zipfile.BadZipFile("entry cut short")
        buffer[: len(data)] = data
        self.left -= len(data)
        return len(data)


def _data_offset(handle: Any, info: zipfile.ZipInfo) -> int:
    """Where the stored bytes of ``info`` start (after its local file header)."""
    handle.seek(info.header_offset)
    local = handle.read(30)
    if len(local) < 30 or local[:4] != b"PK\x03\x04":
        raise zipfile.BadZipFile("bad local file header")
    skip = int.from_bytes(local[26:28], "little") + int.from_bytes(local[28:30], "little")
    return int(info.header_offset) + 30 + skip


def _zstd_reader(raw: _Window) -> Any:
    """A reader of the zstd frames in ``raw`` whose ``read(n)`` returns at most n bytes."""
    try:  # Python 3.14's compression.zstd reads concatenated frames
        stdlib: Any = importlib.import_module("compression.zstd")
    except ImportError:
        with optional("zstandard"):
            zstandard: Any = importlib.import_module("zstandard")
        # inspect caps each frame, so a large entry holds several
        return zstandard.ZstdDecompressor().stream_reader(raw, read_across_frames=True)
    return stdlib.ZstdFile(raw)


def _zstd_errors() -> tuple[type[BaseException], ...]:
    found: list[type[BaseException]] = []
    for module, name in (("compression.zstd", "ZstdError"), ("zstandard", "ZstdError")):
        loaded = sys.modules.get(module)
        if loaded is not None and isinstance(getattr(loaded, name, None), type):
            found.append(getattr(loaded, name))
    return tuple(found)


class Archive:
    """A zip whose entries are read bounded (:data:`MEMBER_LIMIT`), deflated, stored or zstd.

    Parameters
    ----------
    path : Path
        The zip (an Inspect ``.eval`` log).
    what : str
        What the zip is, for the message (``"an inspect .eval log"``).

    Raises
    ------
    DocumentError
        If the file is not a readable zip.
    """

    def __init__(self, path: Path, what: str) -> None:
        self.path = path
        try:
            # Not zipfile's own open(): a FIFO named *.eval would wait for a writer.
            self.file = open_regular_file(path)
        except OSError as exc:
            raise DocumentError(
                f"{path}: not a readable {what} ({exc.strerror or exc})", path=path
            ) from None
        try:
            self.zip = zipfile.ZipFile(self.file)
        except (zipfile.BadZipFile, OSError, EOFError, ValueError) as exc:
            self.file.close()
            raise DocumentError(f"{path}: not a readable {what} ({exc})", path=path) from None
        self.names = set(self.zip.namelist())

    def __enter__(self) -> Archive:
        return self

    def __exit__(self, *_: object) -> None:
        self.zip.close()
        self.file.close()

    def read(self, name: str) -> bytearray:
        """The entry ``name``, decompressed and its CRC checked.

        Raises
        ------
        DocumentError
            For an entry over the limit (stated, or found while decompressing: never more
            than the limit plus one chunk is held), a corrupt or cut entry.
        MissingExtraError
            For a zstd entry without Python 3.14 or the ``zstandard`` package.
        """
        where = f"{self.path}: {name}"
        limit = member_limit()
        try:
            info = self.zip.getinfo(name)
            if info.file_size > limit:
                raise DocumentError(
                    f"{where}: the entry holds {info.file_size:,} bytes decompressed, over "
                    f"the limit of {limit:,} ({_MEMBER_VARIABLE} sets another)",
                    path=self.path,
                )
            if info.compress_type == _ZSTD:
                with open(self.path, "rb") as handle:
                    raw = _Window(handle, _data_offset(handle, info), info.compress_size)
                    return self._drain(_zstd_reader(raw), info, check_crc=True)
            with self.zip.open(info) as stream:  # zipfile checks the CRC at the end
                return self._drain(stream, info, check_crc=False)
        except DocumentError:
            raise
        except (zipfile.BadZipFile, zlib.error, OSError, EOFError, ValueError) as exc:
            raise DocumentError(f"{where}: corrupt zip entry ({exc})", path=self.path) from None
        except NotImplementedError as exc:  # a compression method zipfile lacks
            raise DocumentError(f"{where}: {exc}", path=self.path) from None
        except _zstd_errors() as exc:
            raise DocumentError(
                f"{where}: corrupt zip entry (zstd: {exc})", path=self.path
            ) from None

    def _drain(self, stream: Any, info: zipfile.ZipInfo, *, check_crc: bool) -> bytearray:
        """Exactly ``info.file_size`` bytes of ``stream``, read a chunk at a time."""
        size = info.file_size
        # Grown as read, never allocated at the stated size: a header may lie.
        out = bytearray()
        crc = 0
        while len(out) < size:
            chunk = stream.read(min(_CHUNK, size - len(out)))
            if not chunk:
                raise zipfile.BadZipFile("entry shorter than its header states")
            out += chunk
            crc = zlib.crc32(chunk, crc) if check_crc else 0
        if stream.read(1):
            raise zipfile.BadZipFile("entry longer than its header states")
        if check_crc and crc != info.CRC:
            raise zipfile.BadZipFile("CRC check failed")
        return out
