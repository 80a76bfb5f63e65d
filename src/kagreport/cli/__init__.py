"""The ``kagreport`` command line (thin: parse, call the library, print)."""

from __future__ import annotations

from kagreport.cli._main import main

__all__ = ["main"]
