"""The ``kagreport`` console command: the command line, with nothing heavy imported first.

The console-script wrapper (``kagreport = "kagreport._entry:main"``) imports this module
before anything can catch an exception; it imports only the standard library (and the
package root, which is light). Ctrl-C while the command line loads, before the command
line handles it, is held until it has loaded, then ends it with one line and exit code
130; a missing core dependency is one line naming it and the install command.
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Callable

__all__ = ["CORE_DEPENDENCIES", "main"]

#: The import names of the core install's dependencies (pyproject.toml ``dependencies``).
CORE_DEPENDENCIES = ("msgspec", "numpy", "ry")


def _load() -> Callable[[], int]:
    """The command line's ``main``, loaded with a Ctrl-C held until the modules have loaded,
    then raised (KeyboardInterrupt): one raised inside msgspec as it builds a decoder at
    import can crash the interpreter (SIGSEGV, msgspec 0.23). SIGTERM keeps its default
    action meanwhile (the process ends by it, as before the command sets its handlers)."""
    import signal

    from kagreport._signals import stops_deferred

    with stops_deferred({signal.SIGINT}):
        from kagreport._optional import defer_iri_grammar

        defer_iri_grammar()
        from kagreport.cli._main import main as run
    return run


def main() -> int:
    """Run ``kagreport`` with ``sys.argv``; return the exit code."""
    try:
        run = _load()
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
