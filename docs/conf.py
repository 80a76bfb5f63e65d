"""Sphinx configuration of kagreport's documentation (``make docs``).

The build is offline and strict: ``make docs`` runs ``sphinx-build -W --keep-going -n``, so a
warning or a reference that resolves to nothing fails it. No inventory is downloaded
(no intersphinx): references to types of Python itself and of other libraries (NumPy, pandas,
Altair ...) are left as text, by ``nitpick_ignore_regex`` below.
"""

from __future__ import annotations

import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE / "_ext"))

import kagreport  # noqa: E402

project = "kagreport"
author = "kagreport developers"
copyright = "kagreport developers"
release = kagreport.__version__
version = release

extensions = [
    "myst_parser",
    "sphinx.ext.autodoc",
    "sphinx.ext.napoleon",
    "kagreport_docs",
]

source_suffix = {".rst": "restructuredtext", ".md": "markdown"}
root_doc = "index"
exclude_patterns = ["_build", "_ext", "**/.ipynb_checkpoints"]
# Pages are Markdown (MyST); headings get anchors so that pages can link to them.
myst_heading_anchors = 3
myst_enable_extensions = ["colon_fence"]
# Quotes are made typographic, but "--" stays two hyphens: prose names options (--margin).
smartquotes_action = "qe"

# The public packages, in the order of the layers (DESIGN.md): a name exported by several is
# documented in the one that defines it (see _ext/kagreport_docs.py), else in the first here.
kagreport_api_packages = [
    "kagreport",
    "kagreport.stats",
    "kagreport.kag",
    "kagreport.grading",
    "kagreport.grading.engine",
    "kagreport.evaluation",
    "kagreport.evaluation.judges",
    "kagreport.runs",
    "kagreport.sources",
    "kagreport.gates",
    "kagreport.frames",
    "kagreport.charts",
    "kagreport.widgets",
    "kagreport.site",
    "kagreport.examples",
]

# The docstrings are numpydoc.
napoleon_google_docstring = False
napoleon_numpy_docstring = True
napoleon_use_rtype = False
autodoc_member_order = "groupwise"
autodoc_typehints = "signature"
autodoc_inherit_docstrings = True

nitpicky = True
# Types of Python and of other libraries: without intersphinx (offline) they have no target.
_BUILTINS = (
    "None|True|False|bool|int|float|complex|str|bytes|bytearray|object|type|list|tuple|dict"
    "|set|frozenset|slice|range|memoryview|Ellipsis|NotImplemented|callable|iterable|mapping"
    "|sequence|BaseException|Exception|ValueError|TypeError|KeyError|OSError|RuntimeError"
    "|IndexError|LookupError|FileNotFoundError|FileExistsError|PermissionError"
    "|NotImplementedError|KeyboardInterrupt|SystemExit|UnicodeError|UnicodeDecodeError"
    "|Warning|UserWarning|RuntimeWarning|DeprecationWarning|TimeoutError|ConnectionError"
    "|StopIteration|AttributeError|ImportError|ModuleNotFoundError|ArithmeticError"
    "|ZeroDivisionError|OverflowError|AssertionError|EOFError|BrokenPipeError|InterruptedError"
)
_STDLIB = (
    "typing|typing_extensions|collections|collections\\.abc|os|pathlib|io|datetime|enum"
    "|argparse|logging|re|threading|concurrent\\.futures|types|decimal|fractions|random"
    "|signal|subprocess|json|tomllib|contextlib|functools|abc|dataclasses|asyncio|email"
    "|http|urllib|hashlib|string|queue|numbers|inspect|weakref|warnings|tempfile|sqlite3"
)
_THIRD_PARTY = (
    "numpy|np|npt|pandas|pd|altair|alt|ipywidgets|traitlets|anywidget|msgspec|scipy|pyarrow"
    "|fsspec|dask|distributed|jinja2|openai|httpx|yaml|vl_convert|nbformat|nbclient|IPython"
    "|ry|tqdm|matplotlib"
)
_TYPING = (
    "Any|Callable|Iterable|Iterator|Generator|Mapping|MutableMapping|Sequence|MutableSequence"
    "|Collection|Container|Hashable|Sized|Set|AbstractSet|Literal|Optional|Union|TypeVar|Self"
    "|ClassVar|Final|Protocol|NamedTuple|TypedDict|Awaitable|Coroutine|AsyncIterator"
    "|AsyncIterable|IO|TextIO|BinaryIO|Pattern|Match|Path|PathLike|Enum|IntEnum|StrEnum"
    "|Counter|OrderedDict|defaultdict|deque|ChainMap|MappingProxyType|Decimal|Fraction|datetime"
    "|date|timedelta|timezone|Namespace|ArgumentParser|Logger|Event|Lock|Thread|Future"
    "|Executor|Popen|CompletedProcess|FrameType|TracebackType|ModuleType|FunctionType"
    "|SimpleNamespace|Signals|Handlers|Random|Generic|SupportsFloat|SupportsIndex|TextIOWrapper"
)
# Capitalised words of numpydoc types that are prose or another library's class.
_WORDS = "URL|DataFrame|Series|Index|Chart|LayerChart|HConcatChart|VConcatChart|FacetChart"
nitpick_ignore_regex = [
    (r"py:.*", rf"({_WORDS})"),
    (r"py:.*", rf"({_BUILTINS})"),
    (r"py:.*", rf"({_STDLIB})(\..+)?"),
    (r"py:.*", rf"({_THIRD_PARTY})(\..+)?"),
    (r"py:.*", rf"({_TYPING})"),
]

html_theme = "furo"
html_title = f"kagreport {release}"
# Nothing is loaded from the network: furo bundles its styles and scripts, uses the system's
# fonts, and no page here needs MathJax (tests/test_docs.py checks every built page).
html_static_path: list[str] = []
html_show_sourcelink = False
html_copy_source = False
