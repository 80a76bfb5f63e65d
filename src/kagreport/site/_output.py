"""The site folder's safety: where a site may be written, and the atomic swap that
replaces it (built in a sibling temporary folder, then put in place by two renames)."""

from __future__ import annotations

import os
import secrets
import shutil
from pathlib import Path
from typing import TYPE_CHECKING

from kagreport._errors import SiteError

if TYPE_CHECKING:
    from kagreport.site._config import SiteConfig

__all__ = ["MARKER", "check_output", "new_folder", "site_path", "swap"]

#: A file at the root of every built site; a folder without it is never replaced.
MARKER = ".kagreport-site"


def site_path(out: Path) -> Path:
    """``out`` made absolute with its parent resolved (symbolic links and ``..`` as the
    kernel follows them), its own last part kept: a symlinked site folder is refused later,
    not followed."""
    absolute = out.absolute()
    if absolute.name in ("", ".", ".."):
        return absolute.resolve()
    try:
        return absolute.parent.resolve() / absolute.name
    except OSError:  # a loop of links: left to the checks that follow
        return absolute


def check_output(out: Path, config: SiteConfig) -> None:
    parent = out.absolute().parent
    if parent.exists() and not parent.is_dir():
        raise SiteError(f"the parent of the site folder {out} is not a folder", path=out)
    if out.is_symlink():
        raise SiteError(
            f"the site folder {out} is a symbolic link; give the folder it points to", path=out
        )
    if out.exists() and not out.is_dir():
        raise SiteError(f"the site folder {out} exists and is not a folder", path=out)
    cwd = Path.cwd().resolve()
    if out.resolve() == cwd or out.resolve() in cwd.parents:
        raise SiteError(
            f"the site folder {out} is (or holds) the current folder, which a rebuild cannot "
            "replace; give a folder below it",
            path=out,
        )
    if out.is_dir() and any(out.iterdir()) and not (out / MARKER).is_file():
        raise SiteError(
            f"{out} is not empty and is not a site built by kagreport (no {MARKER}); "
            "choose another folder or empty it",
            path=out,
        )
    target = out.resolve()
    inputs: list[Path] = []
    for run in config.runs:
        inputs += [run.datasets, run.results]
    inputs += [e.path for e in config.evaluations if e.path is not None]
    inputs += list(config.notebooks)
    if config.templates is not None:
        inputs.append(config.templates)
    for item in inputs:
        resolved = item.resolve()
        if resolved == target or target in resolved.parents or resolved in target.parents:
            raise SiteError(
                f"the site folder {out} would replace or sit inside the input {item}", path=out
            )


def new_folder(parent: Path, prefix: str) -> Path:
    """A new empty folder in ``parent``, created with the process's umask (as ``mkdir``
    does; ``tempfile.mkdtemp`` would make it readable by its owner only)."""
    for _ in range(100):
        folder = parent / f"{prefix}{secrets.token_hex(4)}"
        try:
            folder.mkdir()
        except FileExistsError:
            continue
        except OSError as exc:
            raise SiteError(
                f"cannot write in {parent}: {exc.strerror or exc}", path=parent
            ) from None
        return folder
    raise SiteError(f"cannot create a build folder in {parent}", path=parent)


def swap(staging: Path, out: Path) -> None:
    """Put ``staging`` in place of ``out``: two renames, the old site removed last."""
    old: Path | None = None
    if out.exists():
        old = new_folder(out.absolute().parent, f".{out.name}.old-")
        old.rmdir()
        try:
            os.rename(out, old)
        except OSError as exc:
            raise SiteError(
                f"cannot replace the site folder {out}: {exc.strerror or exc}", path=out
            ) from None
    try:
        os.rename(staging, out)
    except OSError as exc:
        if old is not None:
            os.rename(old, out)
        raise SiteError(f"cannot move the built site to {out}: {exc}", path=out) from None
    if old is not None:
        shutil.rmtree(old, ignore_errors=True)
