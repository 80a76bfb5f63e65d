"""The ``kagreport`` command line (thin: parse, call the library, print)."""

from __future__ import annotations

__all__: list[str] = []
