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
    from kagreport.site._config import EvaluationSource, RunConfig, SiteConfig, SourceConfig

__all__ = [
    "EvaluationSource",
    "RunConfig",
    "SiteConfig",
    "SiteError",
    "SourceConfig",
    "build_site",
]
