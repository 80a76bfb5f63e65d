"""The ``kagreport`` console command: the command line, with nothing heavy imported first.

The console-script wrapper (``kagreport = "kagreport._entry:main"``) imports this module
before anything can catch an exception; it imports only the standard library (and the
package root, which is light). Ctrl-C while the command line loads, before
the command line handles it, ends with one line and exit code 130; a missing
core dependency is one line naming it and the install command.
"""

from __future__ import annotations

import importlib
import importlib.util
import sys
import threading
import types
from typing import Any

__all__ = ["CORE_DEPENDENCIES", "main"]

#: The import names of the core install's dependencies (pyproject.toml ``dependencies``).
CORE_DEPENDENCIES = ("msgspec", "numpy", "ry")


def main() -> int:
    """Run ``kagreport`` with ``sys.argv``; return the exit code."""
    try:
        _defer_iri_grammar()
        from kagreport.cli._main import main as run

        return run()
    except KeyboardInterrupt:  # while the command line loads, before run() handles it
        import signal

        signal.signal(signal.SIGINT, signal.SIG_IGN)  # a repeat must not interrupt this line
        sys.stderr.write("kagreport: interrupted\n")
        return 130
    except ModuleNotFoundError as exc:
        missing = (exc.name or "").partition(".")[0]
        if missing not in CORE_DEPENDENCIES:
            raise
        sys.stderr.write(
            f"kagreport: error: the package {missing} (a dependency of kagreport) is not "
            "installed or cannot be imported; install it with: pip install kagreport\n"
        )
        return 1


def _defer_iri_grammar() -> None:
    """Import rfc3987-syntax at its first use rather than with jsonschema.

    jsonschema, which Altair and nbformat import, imports rfc3987-syntax when it is
    installed (Jupyter's servers bring it) for its "iri" format check; that module builds
    some forty parsers as it is imported: about 1.4 s of every command that draws a chart,
    where nothing checks that format. A stand-in module takes its place in this process
    and imports the real one, which then replaces it, when something first uses it: the
    behaviour is the same, only the moment of the import changes.
    """
    name = "rfc3987_syntax"
    if name in sys.modules or importlib.util.find_spec(name) is None:
        return
    stand_in = types.ModuleType(name)
    lock = threading.Lock()

    def real() -> Any:
        with lock:
            if sys.modules.get(name) is stand_in:
                del sys.modules[name]
                importlib.import_module(name)
            return sys.modules[name]

    def is_valid_syntax(term: str, value: str) -> Any:  # what jsonschema imports by name
        return real().is_valid_syntax(term, value)

    def attribute(attribute_name: str) -> Any:
        if attribute_name.startswith("__"):  # the import system's questions: none here
            raise AttributeError(attribute_name)
        return getattr(real(), attribute_name)

    stand_in.is_valid_syntax = is_valid_syntax  # type: ignore[attr-defined]
    stand_in.__getattr__ = attribute  # type: ignore[method-assign]
    sys.modules[name] = stand_in
