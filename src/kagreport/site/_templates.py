"""The Jinja2 environment of the site: package templates, a user's override folder, filters."""

from __future__ import annotations

import base64
import functools
import hashlib
import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from importlib.resources import files
from pathlib import Path
from typing import Any

import jinja2
from markupsafe import Markup

from kagreport import _format
from kagreport._errors import KagreportError, SiteError
from kagreport.evaluation._text import method_label
from kagreport.site._bidi import isolate, mark
from kagreport.site._items import item_score
from kagreport.site._json import inline_json

__all__ = [
    "NOTEBOOK_TEMPLATE",
    "PAGE_SIZE",
    "SITE_SCRIPTS",
    "SORT_MIN_ROWS",
    "Chart",
    "Page",
    "Templates",
    "holm_family",
    "package_templates",
    "page_csp",
    "script_loader",
    "split_interval",
]

#: Rows a page of an item table (or of flipped items) shows; the first page is in the HTML.
PAGE_SIZE = 50
#: Rows from which a table sorts by a clicked header (assets/site.js's ``SORT_MIN_ROWS`` is
#: written from this one when the site is written): a shorter table is read at a glance,
#: and a page says "click a header to sort" only where sorting exists.
SORT_MIN_ROWS = 10
#: The nbconvert template (a folder of the templates directory) notebooks are converted with.
NOTEBOOK_TEMPLATE = "notebook"

#: The site's own scripts, in the order they run (paths from the site root).
SITE_SCRIPTS = ("assets/vega.js", "assets/site.js", "assets/charts.js")
_ROOT = re.compile(r"(\.\./)*")


def script_loader(root: str) -> str:
    """The one inline script of a page whose site root is ``root`` (``""``, ``"../"``):
    it adds :data:`SITE_SCRIPTS` to the page, to run in order.

    The policy (:func:`page_csp`) allows this script by its hash and, through
    ``'strict-dynamic'``, the scripts it adds; no other script runs, wherever it comes
    from. (A ``<script src>`` allowed by a hash needs ``integrity``, and Chromium enforces
    integrity only on a CORS request, which a ``file://`` page cannot make: the site's
    own scripts would be blocked.) The text is fixed for each root, so its hash is too.

    Raises
    ------
    SiteError
        If ``root`` is not a run of ``../``.
    """
    if not _ROOT.fullmatch(root):
        raise SiteError(f"a page's root is a run of '../', not {root!r}")
    sources = json.dumps([root + name for name in SITE_SCRIPTS], separators=(",", ":"))
    return (
        f"(function(){{var n={sources},i,e;for(i=0;i<n.length;i++){{"
        'e=document.createElement("script");e.src=n[i];e.async=false;'
        "document.body.appendChild(e);}})();"
    )


def page_csp(root: str, *, inline_styles: bool = False) -> str:
    """The Content-Security-Policy of a page whose site root is ``root`` (a ``<meta
    http-equiv>`` first in its head).

    Scripts: only :func:`script_loader`'s, by its SHA-256, and the site's scripts it adds
    (``'strict-dynamic'``): no inline script, no event handler, no ``eval`` (the charts use
    Vega's expression interpreter), and no ``<script src>`` in the markup, not even of a
    local file (on a ``file://`` page Chromium counts every local file as ``'self'``, so
    ``'self'`` is not used for scripts). Styles only from the site's files (with
    ``inline_styles``, inline styles too: notebook pages, whose nbconvert styles and
    outputs' tables are inline), images and fonts from its files or ``data:`` URLs, no
    network, no frames, plugins, forms or ``<base>``. An escaping slip in a page then still
    runs nothing and sends nothing anywhere.
    """
    digest = hashlib.sha256(script_loader(root).encode("utf-8")).digest()
    styles = "'self' 'unsafe-inline'" if inline_styles else "'self'"
    return (
        f"default-src 'none'; script-src 'sha256-{base64.b64encode(digest).decode()}' "
        f"'strict-dynamic'; style-src {styles}; img-src 'self' data:; font-src 'self' data:; "
        "connect-src 'none'; frame-src 'none'; object-src 'none'; base-uri 'none'; "
        "form-action 'none'"
    )


def package_templates() -> Path:
    """The folder of the templates shipped with kagreport."""
    return Path(str(files("kagreport.site"))) / "templates"


def _missing(value: Any) -> bool:
    return _format.is_missing(value)


def _finalize(value: Any) -> Any:
    """Every value a page shows: U+0000 as U+FFFD (HTML forbids the character: a browser
    drops it, grep takes the page for binary, and a response may hold one), and text that
    could reorder the page's text around it marked for isolation (:mod:`._bidi`)."""
    if isinstance(value, str) and "\x00" in value:
        value = value.replace("\x00", "\ufffd")
    return mark(value)


def fmt_pct(value: Any, digits: int = 1) -> str:
    """A proportion as a percentage (``"72.3%"``); a dash where undefined."""
    return _format.percent(value, digits)


def fmt_pp(value: Any, digits: int = 1, unit: bool = True) -> str:
    """A difference of two proportions in percentage points with a real minus (``"−5.0 pp"``;
    ``unit=False``: ``"−5.0"``, for an interval's bounds); a dash where undefined."""
    return _format.points(value, digits, unit=unit)


def fmt_num(value: Any, digits: int = 3) -> str:
    """A number with ``digits`` decimals (so a column's decimal points line up); integers
    in full, bools as yes/no; a dash where undefined (:func:`kagreport._format.number`)."""
    return _format.number(value, digits)


def fmt_metric(value: Any, name: str, values: Any = ()) -> str:
    """A metric's value: a percentage when the metric is a proportion
    (:func:`kagreport._format.is_proportion` of its name and per-item ``values``), else a
    score with 3 decimals (:func:`kagreport._format.metric`); a dash where undefined."""
    return _format.metric(name, value, values)


def fmt_difference(value: Any, low: Any, high: Any, proportion: bool) -> str:
    """A difference of means and its interval (:func:`kagreport._format.difference_interval`):
    ``−10.6 pp [−14.6, −6.6]`` for proportions, ``−0.250 [−0.500, 0.000]`` for scores."""
    return _format.difference_interval(value, low, high, proportion=bool(proportion))


def fmt_mean_interval(value: Any, low: Any, high: Any, proportion: bool) -> str:
    """A mean and its interval in the kind of its metric: ``72.3% [68.3%, 76.1%]`` for a
    proportion, ``0.800 [0.490, 0.943]`` for a score; the mean alone without bounds."""
    if proportion:
        return _format.percent_interval(value, low, high)
    return _format.score_interval(value, low, high)


def fmt_plural(n: int, noun: str, many: str | None = None) -> str:
    """``n`` and its noun in the right number (:func:`kagreport._format.plural`)."""
    return _format.plural(n, noun, many)


def holm_family(n: int) -> str:
    """The family of hypotheses a run's Holm adjustment is across, as a page names it:
    ``"the run's 3 comparisons"``; with one, ``"the run's only comparison"`` (Holm leaves a
    single p-value as it is)."""
    return "the run's only comparison" if n == 1 else f"the run's {_format.plural(n, 'comparison')}"


def split_interval(text: str) -> tuple[str, str]:
    """A value and its interval as two parts, ``("−10.6 pp", "[−14.6, −6.6]")``, so a page
    sets the interval in a smaller type; ``(text, "")`` without an interval."""
    value, bracket, bounds = str(text).partition(" [")
    return (value, bracket.strip() + bounds) if bracket else (value, "")


def fmt_fixed(value: Any, digits: int = 3) -> str:
    """A number with ``digits`` decimals; a dash where undefined."""
    return _format.fixed(value, digits)


def fmt_p(value: Any) -> str:
    """A p-value as every view shows it (:func:`kagreport._format.p_value`)."""
    return _format.p_value(value)


def json_number(value: Any) -> str:
    """A value as JSON writes it (``null``, ``12``, ``0.5``): a cell's exact number for
    sorting, whatever the cell shows (the shortest digits that round-trip)."""
    if _missing(value):
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return repr(float(value))
    return str(value)


def script_json(value: Any, sort_keys: bool = True) -> Markup:
    """JSON safe inside ``<script type="application/json">`` (see ``inline_json``)."""
    return Markup(inline_json(value, sort_keys=sort_keys))


def _environment(searched: tuple[str, ...]) -> jinja2.Environment:
    """The Jinja environment of the template folders ``searched``."""
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(list(searched)),
        autoescape=True,
        undefined=jinja2.StrictUndefined,
        keep_trailing_newline=True,
        trim_blocks=True,
        lstrip_blocks=True,
        finalize=_finalize,
    )
    env.globals["sort_min_rows"] = SORT_MIN_ROWS
    env.filters.update(
        # One filter per kind of number (kagreport._format's convention).
        pct=fmt_pct,
        percent_interval=_format.percent_interval,
        score=_format.score,
        score_interval=_format.score_interval,
        metric=fmt_metric,
        difference=fmt_difference,
        mean_interval=fmt_mean_interval,
        quantity=_format.quantity,
        count=_format.count,
        plural=fmt_plural,
        holm_family=holm_family,
        pvalue=fmt_p,
        split_interval=split_interval,
        item_score=item_score,
        # Kept for templates written for earlier versions.
        pp=fmt_pp,
        num=fmt_num,
        fixed=fmt_fixed,
        p_method=method_label,
        json_number=json_number,
        script_json=script_json,
    )
    return env


@functools.lru_cache(maxsize=1)
def _package_environment(folder: str) -> jinja2.Environment:
    """The environment of the package's own templates, made once a process: it keeps the
    templates it compiled (about 0.3 s a build otherwise). An override folder gets an
    environment of its own at each build: its templates may be rewritten between builds
    faster than their files' times change."""
    return _environment((folder,))


class Templates:
    """Renders the site's pages; templates in ``override`` win over the package's.

    Autoescaping is on for every template, whatever its name.

    Raises
    ------
    KagreportError
        If ``override`` is given but is not a folder.
    """

    def __init__(self, override: Path | None = None) -> None:
        self.searched: list[Path] = []
        if override is not None:
            if not override.is_dir():
                raise SiteError(
                    f"the templates folder {override} does not exist or is not a folder",
                    path=override,
                )
            self.searched.append(override)
        self.searched.append(package_templates())
        folders = tuple(str(p) for p in self.searched)
        self.env = _environment(folders) if override else _package_environment(folders[0])

    def notebook_dirs(self) -> Sequence[Path]:
        """Base folders searched for the nbconvert template, the override first."""
        return tuple(self.searched)

    def render(self, name: str, /, **context: Any) -> str:
        """Render one page template.

        With ``root`` (the page's way back to the site root) in ``context``, the template
        also gets ``content_security_policy`` (:func:`page_csp`) and ``site_scripts`` (the
        ``<script>`` element of :func:`script_loader`, which the footer writes). Text that
        could reorder the page's own text is isolated (:mod:`kagreport.site._bidi`).

        Raises
        ------
        KagreportError
            If no searched folder holds the template or one it includes (the message lists
            the folders), or a template is not valid Jinja, not UTF-8, or fails to render.
        """
        root = context.get("root")
        if isinstance(root, str):
            context.setdefault("content_security_policy", page_csp(root))
            context.setdefault("site_scripts", Markup(f"<script>{script_loader(root)}</script>"))
        try:
            return isolate(self.env.get_template(name).render(**context))
        except jinja2.TemplateNotFound as exc:
            where = ", ".join(str(p) for p in self.searched)
            raise SiteError(
                f"the site template {exc.name!r} was not found; searched: {where}"
            ) from None
        except jinja2.TemplateSyntaxError as exc:
            raise SiteError(
                f"the site template {exc.filename or exc.name or name} is not valid Jinja "
                f"(line {exc.lineno}): {exc.message}",
                path=exc.filename,
            ) from None
        except KagreportError:
            raise
        except RecursionError:
            raise SiteError(
                f"the site template {name} (or one it uses) includes or extends itself"
            ) from None
        except Exception as exc:  # a user's template can fail in any way while it renders
            raise SiteError(
                f"the site template {name} (or one it uses) cannot be rendered: "
                f"{type(exc).__name__}: {exc}"
            ) from None


@dataclass
class Chart:
    """A chart on a page: its Vega-Lite spec and, when it is a figure, its SVG file."""

    id: str
    title: str
    spec: dict[str, Any]
    svg: str | None  # path from the site root of its SVG figure, if it has one


@dataclass
class Page:
    """A page the index lists: an evaluation or a notebook."""

    title: str
    href: str
    note: str = ""
