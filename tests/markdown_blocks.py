"""The fenced code blocks of a Markdown page that a marker comment stands before.

A block is taken when the line before its opening fence is the HTML comment
``<!-- MARKER -->`` (invisible on GitHub and in the documentation site): the README marks its
command-line quick start ``runnable`` and its notebook cells ``notebook``; a guide marks the
examples a test runs ``runnable``. Used by tests/test_readme.py and
tests/browser/test_jupyterlab.py.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

_BLOCK = re.compile(
    r"^<!-- (?P<marker>[a-z-]+) -->\n```(?P<language>[a-z]*)\n(?P<code>.*?)^```$",
    flags=re.S | re.M,
)


@dataclass(frozen=True)
class Block:
    """One marked block: its language (``sh``, ``python``) and its code, as written."""

    language: str
    code: str


def marked_blocks(path: Path, marker: str) -> list[Block]:
    """The blocks of ``path`` marked ``<!-- marker -->``, in page order."""
    text = path.read_text(encoding="utf-8")
    return [Block(m["language"], m["code"]) for m in _BLOCK.finditer(text) if m["marker"] == marker]
