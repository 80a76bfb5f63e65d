"""Names a package loads on first access (PEP 562), so that importing it stays light.

``kagreport stats`` imports the grading and reading packages only: their simulator, ``find``
and ``watch``, and the readers of other tools' runs (with NumPy), are loaded when a caller
first names them.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

__all__ = ["lazy_attributes"]


def lazy_attributes(
    package: str, names: Mapping[str, str], namespace: dict[str, Any]
) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """A package's ``__getattr__`` and ``__dir__`` for ``names``: attribute name -> the
    module that defines it (absolute, or relative to ``package`` with a leading dot).

    The first access imports the module and stores the value in ``namespace`` (the
    package's globals), so later accesses skip ``__getattr__``. Any other name raises
    AttributeError as a module does.
    """

    def __getattr__(name: str) -> Any:
        module = names.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        import importlib

        value = getattr(importlib.import_module(module, package), name)
        namespace[name] = value
        return value

    def __dir__() -> list[str]:
        return sorted(set(namespace) | set(names))

    return __getattr__, __dir__
