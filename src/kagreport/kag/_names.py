"""Component names: the dataset, question and setup names of a kag tree."""

from __future__ import annotations

import re

from kagreport._errors import InputError

__all__ = ["is_component_name", "to_component_name"]

# kag's ComponentName: non-empty, ASCII a-z, 0-9 and '-' only.
_COMPONENT = re.compile(r"[a-z0-9-]+")
_INVALID_RUN = re.compile(r"[^a-z0-9-]+")


def is_component_name(name: str) -> bool:
    """Return whether ``name`` is a valid kag component name.

    A component name is non-empty and made only of ASCII ``a-z``, ``0-9``
    and ``-`` (kag ``src/cli/component.rs``).
    """
    return _COMPONENT.fullmatch(name) is not None


def to_component_name(text: str) -> str:
    """Turn free text (a model name, say) into a valid component name.

    Lower-cases ASCII letters and replaces each run of other characters by
    one ``-``; leading and trailing ``-`` are dropped.

    Raises
    ------
    InputError
        A ValueError too: if nothing valid is left (``text`` has no ASCII letter or digit).
    """
    name = _INVALID_RUN.sub("-", text.lower()).strip("-")
    if not name or not is_component_name(name):
        raise InputError(f"cannot make a component name from {text!r}")
    return name
