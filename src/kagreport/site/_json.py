"""JSON for the site: files for download and data inlined into ``<script>`` elements.

Everything a page inlines comes from result files and is untrusted. ``inline_json``
returns text that is valid JSON *and* cannot end the ``<script>`` element that holds it nor
open an HTML comment there: ``<``, ``>`` and ``&`` are written as ``\\u003c``, ``\\u003e``
and ``\\u0026`` (they can only occur inside JSON strings, where the escape means the same
character), and U+2028 / U+2029 as ``\\u2028`` / ``\\u2029``.

Integers are written as Python writes them, digit for digit, however large (PITFALLS.md
B11): an integer above 2**53 stays exact in the page and in the files. The site's own
JavaScript never does arithmetic on such numbers (it only shows text the pages already hold,
and Vega reads chart data, which is aggregated and small), so ``JSON.parse`` rounding them in
a browser changes nothing the site shows; a reader who needs them exact has the files in
``data/``.
"""

from __future__ import annotations

import json
from typing import Any

from kagreport._format import json_safe

__all__ = ["dumps_json", "inline_json"]

_SCRIPT_ESCAPES = {
    ord("<"): "\\u003c",
    ord(">"): "\\u003e",
    ord("&"): "\\u0026",
    0x2028: "\\u2028",
    0x2029: "\\u2029",
}


def dumps_json(value: Any, *, sort_keys: bool = True, indent: int | None = 2) -> str:
    """Strict JSON text (no NaN token; non-ASCII kept as is), with a trailing newline.

    Raises
    ------
    TypeError
        For a value JSON cannot hold.
    """
    return _dumps(value, sort_keys=sort_keys, indent=indent, separators=None) + "\n"


def inline_json(value: Any, *, sort_keys: bool = True) -> str:
    """Compact JSON safe to place between ``<script type="application/json">`` tags.

    Parameters
    ----------
    value : JSON-compatible value
        NaN and infinities become ``null``.
    sort_keys : bool
        Sort the keys of every object (for specs and maps whose order means nothing).

    Returns
    -------
    str
        JSON text without ``<``, ``>``, ``&``, U+2028 or U+2029 characters.
    """
    text = _dumps(value, sort_keys=sort_keys, indent=None, separators=(",", ":"))
    return text.translate(_SCRIPT_ESCAPES)


def _dumps(
    value: Any, *, sort_keys: bool, indent: int | None, separators: tuple[str, str] | None
) -> str:
    options: dict[str, Any] = {
        "sort_keys": sort_keys,
        "indent": indent,
        "separators": separators,
        "ensure_ascii": False,
        "allow_nan": False,
    }
    try:  # fast path: plain data without NaN (the item tables of big runs)
        return json.dumps(value, **options)
    except (ValueError, TypeError):
        return json.dumps(json_safe(value), **options)
