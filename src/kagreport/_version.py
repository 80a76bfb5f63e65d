"""The package version, in a module of its own: modules below the package root (the grade
store's manifest) read it without importing the root, which imports them."""

from __future__ import annotations

__all__ = ["__version__"]

#: The package version (also read by the build backend).
__version__ = "0.1.0"
