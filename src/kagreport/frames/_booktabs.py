"""A small booktabs writer: stacked headers, cells of several lines, a column or page wide.

pandas' ``Styler.to_latex`` writes one physical row per frame row and one header row per
column level, so an interval beside its value makes a table too wide for a paper's column
(196 pt over \\columnwidth in issue #14). Here a cell is a tuple of lines: its value, then
what goes beneath it (an interval, set smaller, as :class:`Sub`; or the rest of a long
name). The writer turns each logical row into as many physical rows as its tallest cell,
so every line stays right-aligned in its column, and needs only ``booktabs``.

Everything given to the writer is LaTeX already: callers escape with ``latex_escape``.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from kagreport._format import printable

__all__ = ["Column", "Sub", "check_label", "latex_escape", "name_lines", "render"]

_SPECIAL = {
    "\\": r"\textbackslash{}",
    "&": r"\&",
    "%": r"\%",
    "$": r"\$",
    "#": r"\#",
    "_": r"\_",
    "{": r"\{",
    "}": r"\}",
    "~": r"\textasciitilde{}",
    "^": r"\textasciicircum{}",
    "±": r"$\pm$",
    "–": "--",
    "—": "---",
    "−": r"$-$",
    "≤": r"$\leq$",
    "≥": r"$\geq$",
    # In the default OT1 encoding these print as other glyphs (¡ ¿ — and a closing quote).
    "<": r"\textless{}",
    ">": r"\textgreater{}",
    "|": r"\textbar{}",
    '"': "''",
}
# A line break or tab in a cell becomes a space (a blank line would end the paragraph inside
# a tabular: fatal). Every other character TeX refuses is shown as its escape by
# kagreport._format.printable: control characters ("invalid character"), and the direction
# controls, which pdflatex has not set up (a right-to-left override would stop the run, and
# TeX has no bidirectional algorithm to obey it: shown, it reverses nothing).
_SPACES = str.maketrans(dict.fromkeys("\t\n\v\f\r\x85\u2028\u2029", " "))


def latex_escape(text: str) -> str:
    """Escape text for LaTeX: the ten special characters, ``< > | "`` (which OT1 sets as
    other glyphs), ``±`` as ``$\\pm$``, the real minus sign (U+2212) as ``$-$``, dashes as
    ``--``/``---``; line breaks and tabs become spaces, other control characters and the
    direction controls (U+202E, ...) are shown as escapes (``\\x1b``, ``\\u202e``:
    ``kagreport._format.printable`` with ``bidi``)."""
    shown = printable(str(text).translate(_SPACES), bidi=True)
    return "".join(_SPECIAL.get(ch, ch) for ch in shown)


_LABEL = re.compile(r"[A-Za-z0-9:._/-]+")


def check_label(label: str) -> str:
    """``label`` if it is safe as a ``\\label`` key (letters, digits, ``: . _ / -``).

    Raises
    ------
    ValueError
        Otherwise (a space, ``&``, ``%``, ``#``, a brace would break the document).
    """
    if not _LABEL.fullmatch(label):
        raise ValueError(
            f"`label` must be letters, digits and ': . _ / -' only (a LaTeX key), not {label!r}"
        )
    return label


class Sub(str):
    """A line of a cell set in the smaller size (an interval beneath its value)."""

    __slots__ = ()


@dataclass(frozen=True)
class Column:
    """One column: its header lines (LaTeX, bottom-aligned) and ``"l"`` or ``"r"``."""

    header: tuple[str, ...]
    align: str = "r"


#: A cell: its lines, top to bottom (LaTeX).
Cell = tuple[str, ...]

_BREAK_AFTER = re.compile(r"[^-_./ ]*[-_./ ]+|[^-_./ ]+")


def name_lines(name: str, limit: int) -> tuple[str, ...]:
    """A name cut into lines of at most ``limit`` characters, after ``-``, ``_``, ``.``,
    ``/`` or a space where it can (a part longer than ``limit`` is cut where it must).

    Returns the plain lines (escape them afterwards); ``("",)`` for an empty name.
    """
    parts: list[str] = []
    for token in _BREAK_AFTER.findall(str(name)):
        while len(token) > limit:
            parts.append(token[:limit])
            token = token[limit:]
        parts.append(token)
    lines: list[str] = []
    for k, part in enumerate(parts):
        # A last piece of three characters or fewer stays on its line ("llama-2-7b-hf").
        room = limit + 3 if k == len(parts) - 1 and len(part) <= 3 else limit
        if lines and len(lines[-1]) + len(part) <= room:
            lines[-1] += part
        else:
            lines.append(part)
    return tuple(line.rstrip() for line in lines) or ("",)


def _line(cells: Sequence[str]) -> str:
    return " & ".join(cells).rstrip() + r" \\"


def render(
    columns: Sequence[Column],
    rows: Sequence[Sequence[Cell]],
    *,
    caption: str | None = None,
    label: str | None = None,
    wide: bool = False,
    note: str | None = None,
) -> str:
    """The LaTeX of a booktabs table.

    Parameters
    ----------
    columns : sequence of Column
    rows : sequence of sequences of Cell
        One entry per logical row, one cell per column; a cell's :class:`Sub` lines are
        set one size smaller.
    caption, label : str, optional
        LaTeX (escaped by the caller if it should be). With neither, a bare ``tabular``
        in a group that sets the font size (for the caller's own float).
    wide : bool
        ``table*`` in ``\\small`` across both columns of a two-column paper; else
        ``table`` in ``\\footnotesize`` with narrower column gaps, to fit one column.
    note : str, optional
        LaTeX set beneath the table in the smallest size (the meaning of marks).

    Returns
    -------
    str
        Ends with a newline. Needs ``\\usepackage{booktabs}``.
    """
    size, small = (r"\small", r"\footnotesize") if wide else (r"\footnotesize", r"\scriptsize")
    height = max((len(c.header) for c in columns), default=1)
    header = [
        _line(
            [
                c.header[i - (height - len(c.header))] if i >= height - len(c.header) else ""
                for c in columns
            ]
        )
        for i in range(height)
    ]
    body: list[str] = []
    tall = any(len(cell) > 1 for row in rows for cell in row)
    for k, row in enumerate(rows):
        if len(row) != len(columns):
            raise ValueError(f"row {k} has {len(row)} cells for {len(columns)} columns")
        if tall and k:
            body.append(r"\addlinespace[2pt]")  # tell the logical rows apart
        for i in range(max((len(cell) for cell in row), default=1)):
            texts = []
            for cell in row:
                text = cell[i] if i < len(cell) else ""
                texts.append(f"{{{small} {text}}}" if isinstance(text, Sub) and text else text)
            body.append(_line(texts))
    spec = "@{}" + "".join(c.align for c in columns) + "@{}"
    tabular = [
        f"\\begin{{tabular}}{{{spec}}}",
        r"\toprule",
        *header,
        r"\midrule",
        *body,
        r"\bottomrule",
        r"\end{tabular}",
    ]
    setup = [size] if wide else [size, r"\setlength{\tabcolsep}{4pt}"]
    after = [] if note is None else [rf"\par\smallskip{{\raggedright{small} {note}\par}}"]
    if caption is None and label is None:
        lines = [r"\begingroup", *setup, *tabular, *after, r"\endgroup"]
    else:
        env = "table*" if wide else "table"
        lines = [f"\\begin{{{env}}}", r"\centering"]
        lines += [] if caption is None else [f"\\caption{{{caption}}}"]
        lines += [] if label is None else [f"\\label{{{check_label(label)}}}"]
        lines += [*setup, *tabular, *after, f"\\end{{{env}}}"]
    return "\n".join(lines) + "\n"
