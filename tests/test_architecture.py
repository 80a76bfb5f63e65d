"""The layers of DESIGN.md: nothing imports upward; the lower layers stay light to import."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

import kagreport

PACKAGE = Path(kagreport.__file__).parent
# Lower index = lower layer; a module may import only its own layer or lower ones.
LAYERS = ["_errors", "_io", "_atomic", "_signals", "_optional", "_format", "_document", "stats",
          "kag", "grading", "evaluation", "runs", "sources", "examples", "frames", "charts",
          "widgets", "site", "cli", "_entry"]  # fmt: skip


def _layer(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "__init__"


def _imports(path: Path) -> set[str]:
    return {name for name in _all_imports(path) if name.startswith("kagreport.")}


@pytest.mark.parametrize(
    "path", sorted(PACKAGE.rglob("*.py")), ids=lambda p: str(p.relative_to(PACKAGE))
)
def test_no_upward_imports(path: Path) -> None:
    module = "kagreport." + ".".join(path.relative_to(PACKAGE).with_suffix("").parts)
    own = _layer(module)
    if own in ("__init__", "__main__"):
        return  # the package root and __main__ may import anything
    assert own in LAYERS, f"{module} belongs to no layer: add it to LAYERS"
    for imported in _imports(path):
        other = _layer(imported)
        if other in LAYERS:
            assert LAYERS.index(other) <= LAYERS.index(own), f"{module} imports {imported}"


def _all_imports(path: Path) -> set[str]:
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.add(node.module)
        elif isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
    return found


@pytest.mark.parametrize("path", sorted((PACKAGE / "stats").rglob("*.py")), ids=lambda p: p.name)
def test_stats_imports_only_numpy_the_stdlib_and_errors(path: Path) -> None:
    # The mathematics layer: NumPy and the standard library; a progress bar is the caller's
    # (a callback), so not even an optional import of tqdm.
    for name in _all_imports(path):
        top = name.split(".")[0]
        if name.startswith("kagreport."):
            assert name == "kagreport._errors" or name.startswith("kagreport.stats"), name
        else:
            assert top in sys.stdlib_module_names or top == "numpy", name


def test_every_stats_module_loads_only_numpy_and_the_stdlib() -> None:
    # At run time too, progress callback included: what importing every kagreport.stats module
    # and running the alpha bootstrap with a progress callback adds to `import kagreport`.
    code = """
import importlib, pkgutil, sys
import kagreport
before = set(sys.modules)
import kagreport.stats
for found in pkgutil.iter_modules(kagreport.stats.__path__, "kagreport.stats."):
    importlib.import_module(found.name)
import numpy as np
from kagreport.stats import alpha_bootstrap_interval, pairable
data = pairable(np.array([[1.0, 2.0, 3.0, 4.0], [1.0, 2.0, 4.0, 4.0]]), "interval")
calls = []
alpha_bootstrap_interval(data, "interval", 50, 0, 0.95, lambda done, total: calls.append(done))
assert calls[0] == 0 and calls[-1] == 50, calls
added = set(sys.modules) - before
loaded = {m.split(".")[0] for m in added if not m.startswith("kagreport.")}
loaded |= {m for m in added if m.startswith("kagreport.")}
# NumPy's compiled parts (numpy.random) register Cython's runtime modules.
numpy_parts = {"numpy", "cython_runtime"}
print(sorted(m for m in loaded if m not in sys.stdlib_module_names and m not in numpy_parts
             and not m.startswith("_cython_") and m != "kagreport._errors"
             and not m.startswith("kagreport.stats")))
"""
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_stats_loads_no_pandas_or_scipy() -> None:
    # Only what kagreport.stats adds to what `import kagreport` (the package root) loads.
    code = (
        "import sys, kagreport; before = set(sys.modules); import kagreport.stats;"
        "print(sorted(m for m in set(sys.modules) - before if m.split('.')[0] in"
        " ('pandas', 'scipy', 'altair', 'tqdm') or (m.startswith('kagreport.')"
        " and m.split('.')[1] not in ('stats', '_errors'))))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_lower_layers_do_not_load_heavy_libraries() -> None:
    code = (
        "import sys, kagreport, kagreport.kag, kagreport.grading;"
        "print(sorted(m for m in ('pandas', 'altair', 'ipywidgets', 'numpy') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_public_names_exist() -> None:
    # Their order is checked by ruff (RUF022).
    import kagreport.grading
    import kagreport.kag

    for module in (kagreport, kagreport.kag, kagreport.grading):
        for name in module.__all__:
            assert hasattr(module, name), name


# ---------------------------------------------------------------- the views draw a run (#24)

VIEWS = ("frames", "charts", "widgets", "site")


def _modules() -> dict[str, Path]:
    found = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = path.relative_to(PACKAGE).with_suffix("").parts
        if parts[-1] == "__init__":
            parts = parts[:-1]
        found[".".join(("kagreport", *parts))] = path
    return found


def _resolve(name: str, modules: dict[str, Path]) -> str | None:
    """The module of the package ``name`` refers to (the longest known prefix)."""
    while name and name not in modules:
        name = name.rpartition(".")[0]
    return name or None


def _edges(modules: dict[str, Path]) -> dict[str, set[str]]:
    """Module -> the package modules it imports, function-level and TYPE_CHECKING imports
    included; ``from kagreport.x import y`` counts ``kagreport.x.y`` when it is a module."""
    edges: dict[str, set[str]] = {}
    for module, path in modules.items():
        targets: set[str] = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names: list[str] = []
            if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                names = [f"{node.module}.{alias.name}" for alias in node.names] + [node.module]
            elif isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            for name in names:
                if name.startswith("kagreport."):
                    target = _resolve(name, modules)
                    if target is not None and target != module:
                        targets.add(target)
        edges[module] = targets
    return edges


def _cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for other in sorted(edges.get(node, ())):
            if other not in index:
                visit(other)
                low[node] = min(low[node], low[other])
            elif other in on_stack:
                low[node] = min(low[node], index[other])
        if low[node] == index[node]:
            component = []
            while True:
                top = stack.pop()
                on_stack.discard(top)
                component.append(top)
                if top == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(edges):
        if node not in index:
            visit(node)
    return found


def _without_packages(edges: dict[str, set[str]]) -> dict[str, set[str]]:
    """The graph without the edges into a package's ``__init__`` from below it: a module
    importing its own package's re-exports is the package's façade, not a cycle."""
    return {
        module: {t for t in targets if not module.startswith(t + ".")}
        for module, targets in edges.items()
    }


#: Cycles and view imports still to break (issue #24): emptied as each part is rebuilt.
KNOWN_CYCLES = [
    ["kagreport.grading._shards", "kagreport.grading._store"],
    ["kagreport.grading._grade", "kagreport.grading._render"],
]


def test_no_import_cycles() -> None:
    edges = _without_packages(_edges(_modules()))
    assert [c for c in _cycles(edges) if c not in KNOWN_CYCLES] == []


@pytest.mark.parametrize("view", VIEWS)
def test_the_views_import_neither_kag_nor_grading(view: str) -> None:
    modules = _modules()
    edges = _edges(modules)
    for module, targets in edges.items():
        if module == f"kagreport.{view}" or module.startswith(f"kagreport.{view}."):
            wrong = sorted(
                t for t in targets if _layer(t) in ("kag", "grading") or t in ("kagreport.kag",)
            )
            assert wrong == [], f"{module} imports {', '.join(wrong)}"


@pytest.mark.parametrize("view", VIEWS)
def test_the_views_never_branch_on_the_kind_of_run(view: str) -> None:
    # A StatsReport or evaluation becomes a Run at the edge (kagreport.sources.as_run).
    for path in sorted((PACKAGE / view).rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Call) and getattr(node.func, "id", None) == "isinstance":
                kinds = ast.unparse(node.args[1]) if len(node.args) > 1 else ""
                assert not {"StatsReport", "Run"} & set(
                    part.strip("() ") for part in kinds.replace("|", ",").split(",")
                ), f"{path.name}:{node.lineno}: isinstance(..., {kinds})"
