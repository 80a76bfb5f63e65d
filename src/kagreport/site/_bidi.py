"""Right-to-left text and direction controls in names and texts, isolated from the page around them.

A right-to-left override (U+202E) in a system name, or a name in Hebrew or Arabic, reorders
the page's own text next to it: "myrun, rank 2" reads "2 knar ,nurym". Every value a page
template writes with ``{{ ... }}`` passes through :func:`mark` (the Jinja environment's
``finalize``), which brackets a text that can reorder its surroundings (one holding a
right-to-left letter, an Arabic digit or an explicit direction control) with two Unicode
noncharacters. Once the page is rendered, :func:`isolate` makes the brackets ``<bdi>``
elements in text (an isolate: nothing inside reorders what is outside), U+2068/U+2069
(first strong isolate, pop directional isolate) in ``<title>``, and drops them inside tags
(attribute values keep the text exactly, for scripts that compare them). Markup made by
filters and macros (``Markup``) is not bracketed again: the values in it were.

A sentence made in Python with a name in it (a page title, a note) is one value: the name
is isolated inside it with U+2068/U+2069 by :func:`kagreport._format.isolated`, as charts
isolate names. Text of only left-to-right and
neutral characters needs nothing and gets nothing, so the pages of runs with such names are
unchanged, byte for byte. ``assets/site.js`` puts every text it draws into a ``<bdi>`` of
its own (its ``isolated``).
"""

from __future__ import annotations

import re
from typing import Any

from markupsafe import Markup

from kagreport._format import reorders

__all__ = ["isolate", "mark"]

# Noncharacters, which Unicode keeps for a program's own use; a value holding one of them
# has it replaced (it cannot pass for a bracket).
_OPEN, _CLOSE = "\ufdd0", "\ufdd1"
_NONCHARACTERS = re.compile("[\ufdd0-\ufdef]")


def mark(value: Any) -> Any:
    """``value`` bracketed for :func:`isolate` if it is text (not markup) that can reorder
    the text around it; other values as they are."""
    if not isinstance(value, str) or isinstance(value, Markup) or value.isascii():
        return value
    value = _NONCHARACTERS.sub("\ufffd", value)
    return _OPEN + value + _CLOSE if reorders(value) else value


# Our own pages' parts: elements whose text is not markup, comments, tags (values in
# attributes are escaped, so a tag ends at the first ">").
_PARTS = re.compile(
    r"<(script|style|title|textarea)\b[^>]*>.*?</\1\s*>|<!--.*?-->|<[^>]*>",
    re.IGNORECASE | re.DOTALL,
)


def isolate(html: str) -> str:
    """``html`` (a rendered page) with :func:`mark`'s brackets made isolates.

    ``<bdi>`` around the text in markup, U+2068 and U+2069 around it in ``<title>`` and
    ``<textarea>``, nothing in tags, comments, scripts and style sheets.
    """
    if _OPEN not in html:
        return html
    parts: list[str] = []
    position = 0
    for found in _PARTS.finditer(html):
        parts.append(_in_text(html[position : found.start()]))
        part, element = found.group(0), (found.group(1) or "").lower()
        if element in ("title", "textarea"):
            part = part.replace(_OPEN, "\u2068").replace(_CLOSE, "\u2069")
        elif element not in ("script", "style"):  # a script's data is the value itself
            part = part.replace(_OPEN, "").replace(_CLOSE, "")
        parts.append(part)
        position = found.end()
    parts.append(_in_text(html[position:]))
    return "".join(parts)


def _in_text(text: str) -> str:
    return text.replace(_OPEN, "<bdi>").replace(_CLOSE, "</bdi>")
