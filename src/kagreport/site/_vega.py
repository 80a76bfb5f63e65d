"""The one shared chart script: Vega, Vega-Lite and vega-embed from the installed vl-convert.

``vl_convert.javascript_bundle()`` returns a classic script (no ES module, which ``file://``
would block) that sets ``window.vegaEmbed``. Bundling takes several seconds, so the result is
kept in memory and in the user's cache folder, keyed by the versions of vl-convert and of the
libraries it bundles; the cache is only an optimisation (any failure to use it is ignored).
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import os
from pathlib import Path

from kagreport._atomic import write_atomic

__all__ = ["cache_folder", "vega_bundle"]


def cache_folder() -> Path:
    """``$KAGREPORT_CACHE_DIR``, else ``$XDG_CACHE_HOME/kagreport``, else ``~/.cache/kagreport``."""
    explicit = os.environ.get("KAGREPORT_CACHE_DIR")
    if explicit:
        return Path(explicit)
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "kagreport"


def _key() -> str:
    import vl_convert as vlc

    parts = [
        getattr(vlc, "__version__", "?"),
        vlc.get_vega_version(),
        vlc.get_vega_embed_version(),
        ",".join(vlc.get_vegalite_versions()),
    ]
    return hashlib.sha256("|".join(parts).encode()).hexdigest()[:16]


@functools.cache
def vega_bundle() -> str:
    """The bundle's text (about 900 kB)."""
    import vl_convert as vlc

    path = cache_folder() / f"vega-bundle-{_key()}.js"
    with contextlib.suppress(OSError, UnicodeDecodeError):
        text = path.read_text(encoding="utf-8")
        if "window.vegaEmbed" in text:
            return text
    # The stub says `snippet` is required; at run time None gives the default snippet, which
    # sets window.vegaEmbed, window.vegaLite and window.vega.
    text = str(vlc.javascript_bundle())  # type: ignore[call-arg]
    with contextlib.suppress(OSError):
        path.parent.mkdir(parents=True, exist_ok=True)
        write_atomic(path, text)
    return text
