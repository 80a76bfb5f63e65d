"""Optional dependencies: each one is imported here or named with the extra that installs it.

The core install (``pip install kagreport``) grades and finds with msgspec, NumPy and ry.
The rest comes with extras (pyproject.toml)::

    [notebook]  pandas, Altair, vl-convert, ipywidgets,   frames, charts, widgets
                SciPy
    [site]      Jinja2, nbconvert, nbclient, ipykernel,   kagreport site (and [notebook])
                nh3
    [llm]       openai, Jinja2, tqdm                      LLM judges, progress bars
    [formats]   PyYAML, tomli-w                           YAML and TOML documents
    [zstd]      zstandard                                 zstd .eval logs (Python < 3.14)
    [store]     pyarrow                                   grade stores (--store, --watch)
    [cloud]     fsspec, s3fs, gcsfs, adlfs                s3://, gs://, az:// result trees
    [dask]      dask.distributed (and [store])            stats --engine dask
    [stats]     SciPy                                     t intervals of kagreport.stats
    [all]       [notebook,site,llm,formats,zstd,store,stats]

A missing one raises :class:`~kagreport._errors.MissingExtraError`, one line naming the extra.
"""

from __future__ import annotations

import importlib
import importlib.util
import sys
import threading
import types
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from kagreport._errors import MissingExtraError

__all__ = ["EXTRAS", "defer_iri_grammar", "need", "optional"]

#: The extra that installs each optional top-level module.
EXTRAS = {
    "altair": "notebook",
    "ipywidgets": "notebook",
    "pandas": "notebook",
    "vl_convert": "notebook",
    "ipykernel": "site",
    "jinja2": "site",  # [llm] brings it too
    "nbclient": "site",
    "nbconvert": "site",
    "nbformat": "site",
    "nh3": "site",
    "traitlets": "site",
    "openai": "llm",
    "tqdm": "llm",
    "tomli_w": "formats",
    "yaml": "formats",
    "zstandard": "zstd",  # zstd-compressed Inspect AI .eval logs, before Python 3.14
    "pyarrow": "store",
    "fsspec": "cloud",
    "s3fs": "cloud",
    "gcsfs": "cloud",
    "adlfs": "cloud",
    "dask": "dask",
    "distributed": "dask",
    "scipy": "stats",  # [notebook] brings it too
}


def _missing(module: str) -> MissingExtraError:
    return MissingExtraError(
        f"{module} is not installed; install it with: pip install 'kagreport[{EXTRAS[module]}]'"
    )


@contextmanager
def optional(*modules: str) -> Iterator[None]:
    """Turn the ImportError of an optional module of ``modules`` in the block into one line.

    Use it around the import statements so that type checkers still see the imports::

        with optional("yaml"):
            import yaml

    A package puts its submodules' imports in the block, naming what they import.

    Raises
    ------
    MissingExtraError
        If one of ``modules`` is not installed. An ImportError of any other module (a
        broken installation of the library itself) keeps its traceback.
    """
    try:
        yield
    except ImportError as exc:
        top = (exc.name or "").partition(".")[0]
        if top not in modules:
            raise
        raise _missing(top) from None


def need(*modules: str) -> None:
    """Check that each optional top-level module of ``modules`` is installed, without importing it.

    A package calls it at its top for the modules its functions import lazily.

    Raises
    ------
    MissingExtraError
        For the first module that is not installed.
    """
    for module in modules:
        try:
            found = importlib.util.find_spec(module) is not None
        except (ImportError, ValueError):  # a stale or broken entry in sys.modules
            found = False
        if not found:
            raise _missing(module)


def defer_iri_grammar() -> None:
    """Import rfc3987-syntax at its first use rather than with jsonschema (in kagreport's own
    processes: the command line, the site's figure helper and the kernels the site starts to
    run notebooks; never in a library caller's).

    jsonschema, which Altair and nbformat import, imports rfc3987-syntax when it is
    installed (Jupyter's servers bring it) for its "iri" format check; that module builds
    some forty parsers as it is imported: about 1.4 s of every command that draws a chart,
    where nothing checks that format. A stand-in module takes its place in this process
    and imports the real one, which then replaces it, when something first uses it: the
    behaviour is the same, only the moment of the import changes.
    """
    name = "rfc3987_syntax"
    if name in sys.modules or importlib.util.find_spec(name) is None:
        return
    stand_in = types.ModuleType(name)
    lock = threading.Lock()

    def real() -> Any:
        with lock:
            if sys.modules.get(name) is stand_in:
                del sys.modules[name]
                importlib.import_module(name)
            return sys.modules[name]

    def is_valid_syntax(term: str, value: str) -> Any:  # what jsonschema imports by name
        return real().is_valid_syntax(term, value)

    def attribute(attribute_name: str) -> Any:
        if attribute_name.startswith("__"):  # the import system's questions: none here
            raise AttributeError(attribute_name)
        return getattr(real(), attribute_name)

    stand_in.is_valid_syntax = is_valid_syntax  # type: ignore[attr-defined]
    stand_in.__getattr__ = attribute  # type: ignore[method-assign]
    sys.modules[name] = stand_in
