"""The static report site: runs, comparisons, evaluations and notebooks as HTML pages.

>>> from kagreport.site import SiteConfig, build_site
>>> build_site(SiteConfig.from_toml("site/site.toml"), "site/_build")  # doctest: +SKIP

The site opens from ``file://`` with no network: data is inlined into the pages (and written
under ``data/`` for download), charts are Vega-Lite specs drawn by the one shared
``assets/vega.js`` (from the installed vl-convert), and every link is relative. Builds are
deterministic and replace the output folder atomically. Importing this module loads neither
pandas nor Altair; building does.
"""

from __future__ import annotations

from kagreport._errors import SiteError
from kagreport._optional import need, optional

# What this package needs from its extra: one line naming the extra when one is missing.
_NEEDS = (
    "jinja2",
    "nbclient",
    "nbconvert",
    "nbformat",
    "ipykernel",
    "nh3",
    "pandas",
    "altair",
    "vl_convert",
)
with optional(*_NEEDS):
    need(*_NEEDS)
    from kagreport.site._build import build_site
    from kagreport.site._config import (
        COMPARE_MODES,
        EvaluationSource,
        RunConfig,
        SiteConfig,
        SourceConfig,
    )
    from kagreport.site._items import RESPONSE_LIMIT
    from kagreport.site._json import dumps_json, inline_json
    from kagreport.site._options import config_from_options, run_name
    from kagreport.site._output import MARKER
    from kagreport.site._slugs import slugify

__all__ = [
    "COMPARE_MODES",
    "MARKER",
    "RESPONSE_LIMIT",
    "EvaluationSource",
    "RunConfig",
    "SiteConfig",
    "SiteError",
    "SourceConfig",
    "build_site",
    "config_from_options",
    "dumps_json",
    "inline_json",
    "run_name",
    "slugify",
]
