"""Compiles kagreport's one C extension, the result-file scanner (src/kagreport/kag/_scan*.c).

Hatchling runs this as the wheel's build hook (an editable install builds the module in
place beside its source; a wheel takes it as a platform file); ``make`` runs it as a
script when the C source is newer than the module. Without a C compiler or Python's
headers nothing is built and kagreport decodes with its pure-Python path, which gives
the same output (slower); the build says so in one line, and ``make`` checks for one.
"""

from __future__ import annotations

import os
import shlex
import subprocess
import sys
import sysconfig
import tempfile
from pathlib import Path
from typing import Any

try:
    from hatchling.builders.hooks.plugin.interface import BuildHookInterface
except ImportError:  # run as a script by make, outside a build
    BuildHookInterface = object  # type: ignore[assignment,misc]

ROOT = Path(__file__).resolve().parent
SOURCES = sorted((ROOT / "src" / "kagreport" / "kag").glob("_scan*.c"))
MODULE = "kagreport/kag/_scan" + (sysconfig.get_config_var("EXT_SUFFIX") or ".so")


def compile_scanner(out: Path) -> str | None:
    """Compile SOURCES to ``out`` (written whole or not at all); None, or why it was not."""
    compiler = shlex.split(os.environ.get("CC") or sysconfig.get_config_var("CC") or "cc")
    include = sysconfig.get_paths()["include"]
    if not (Path(include) / "Python.h").is_file():
        return f"no Python.h in {include} (install Python's development headers)"
    out.parent.mkdir(parents=True, exist_ok=True)
    handle, partial = tempfile.mkstemp(dir=out.parent, prefix=f".{out.name}.", suffix=".tmp")
    os.close(handle)
    command = [
        *compiler, "-O2", "-fPIC", "-shared", "-Wall",
        f"-I{include}", *map(str, SOURCES), "-o", partial,
    ]  # fmt: skip
    try:
        done = subprocess.run(command, capture_output=True, text=True, check=False)
    except OSError as exc:
        Path(partial).unlink(missing_ok=True)
        return f"no C compiler ({compiler[0]}: {exc.strerror})"
    if done.returncode != 0:
        Path(partial).unlink(missing_ok=True)
        return f"{shlex.join(command)} failed:\n{done.stderr.strip()}"
    os.chmod(partial, 0o755)  # mkstemp made it private
    os.replace(partial, out)
    return None


def _warn(problem: str) -> None:
    print(f"kagreport: the C scanner was not built, {problem}; the pure-Python decoder "
          "gives the same output, slower", file=sys.stderr)  # fmt: skip


class CustomBuildHook(BuildHookInterface):  # type: ignore[type-arg,misc,valid-type,unused-ignore]
    """Builds the scanner for a wheel (a platform wheel) or an editable install (in place)."""

    def initialize(self, version: str, build_data: dict[str, Any]) -> None:
        if self.target_name != "wheel":
            return
        if version == "editable":
            problem = compile_scanner(ROOT / "src" / MODULE)
            if problem:
                _warn(problem)
            return
        out = Path(self.directory) / "_scan_build" / Path(MODULE).name
        problem = compile_scanner(out)
        if problem:
            _warn(problem)
            return
        build_data["force_include"][str(out)] = MODULE
        build_data["pure_python"] = False
        build_data["infer_tag"] = True


if __name__ == "__main__":
    problem = compile_scanner(ROOT / "src" / MODULE)
    if problem:
        _warn(problem)
        sys.exit(1)
