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
LAYERS = ["_version", "_lazy", "_errors", "_io", "_signals", "_atomic", "_optional", "_format", "_document", "stats",
          "kag", "grading", "evaluation", "runs", "sources", "gates", "examples", "frames", "charts",
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


def _eager_imports(path: Path) -> set[str]:
    """What ``path`` imports outside functions: on import (``TYPE_CHECKING`` blocks count)."""
    found: set[str] = set()
    todo: list[ast.AST] = [ast.parse(path.read_text(encoding="utf-8"))]
    while todo:
        node = todo.pop()
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda):
            continue
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.add(node.module)
        elif isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        todo.extend(ast.iter_child_nodes(node))
    return found


@pytest.mark.parametrize("path", sorted((PACKAGE / "stats").rglob("*.py")), ids=lambda p: p.name)
def test_stats_imports_only_numpy_the_stdlib_and_errors(path: Path) -> None:
    # The mathematics layer: NumPy and the standard library; a progress bar is the caller's
    # (a callback), so not even an optional import of tqdm. SciPy (t quantiles, the [stats]
    # extra) only inside functions, through kagreport._optional.
    eager = _eager_imports(path)
    for name in _all_imports(path):
        top = name.split(".")[0]
        if name not in eager and (top == "scipy" or name == "kagreport._optional"):
            continue
        if name.startswith("kagreport."):
            assert name == "kagreport._errors" or name.startswith("kagreport.stats"), name
        else:
            assert top in sys.stdlib_module_names or top == "numpy", name


def test_eager_imports_leave_out_what_functions_import(tmp_path: Path) -> None:
    module = tmp_path / "m.py"
    module.write_text(
        "from typing import TYPE_CHECKING\nimport numpy\nif TYPE_CHECKING:\n    import pandas\n"
        "def f():\n    from scipy.special import stdtr\n    import kagreport._optional\n"
        "class C:\n    def g(self):\n        import altair\n",
        encoding="utf-8",
    )
    assert _eager_imports(module) == {"typing", "numpy", "pandas"}
    assert _all_imports(module) - _eager_imports(module) == {
        "scipy.special", "kagreport._optional", "altair"
    }  # fmt: skip


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
from kagreport.stats._alpha import pairable
from kagreport.stats._alpha import alpha_bootstrap_interval
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


# ------------------------------------------------------------------ the module graph

#: Cycles that other work still breaks (issue #24), each a sorted strongly connected
#: component. Empty this list as they go; no cycle may touch grading or kag.
KNOWN_CYCLES: list[list[str]] = []


def _module_paths() -> dict[str, Path]:
    """Every module of the package by name (a package by its own name: its ``__init__``)."""
    found = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = path.relative_to(PACKAGE).with_suffix("").parts
        if parts[-1] == "__init__":
            parts = parts[:-1]
        found[".".join(("kagreport", *parts))] = path
    return found


def _import_graph() -> dict[str, set[str]]:
    """Module -> the package's modules it imports anywhere: at the top, in a function, under
    ``TYPE_CHECKING``. ``from kagreport.x import y`` is an edge to ``kagreport.x.y`` if that is
    a module, else to ``kagreport.x`` (a package's ``__init__``, whose own imports are its
    edges: a re-export goes through it)."""
    modules = _module_paths()
    # A C extension (kag/_scan.c) is a module that imports nothing of the package.
    compiled = {
        ".".join(("kagreport", *path.relative_to(PACKAGE).with_suffix("").parts))
        for path in PACKAGE.rglob("*.c")
    }
    graph: dict[str, set[str]] = {name: set() for name in compiled}
    for module, path in modules.items():
        package = module if path.name == "__init__.py" else module.rpartition(".")[0]
        targets: set[str] = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:  # relative: from the package, up level - 1
                    anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                    base = ".".join([*anchor, *([base] if base else [])])
                names = [f"{base}.{alias.name}" for alias in node.names]
            else:
                continue
            for name in names:
                if name.split(".")[0] != "kagreport":
                    continue
                # The longest prefix that is a module of the package.
                while name not in modules and name not in compiled:
                    name = name.rpartition(".")[0]
                if name != module:
                    targets.add(name)
        graph[module] = targets
    return graph


def _strongly_connected(graph: dict[str, set[str]]) -> list[list[str]]:
    """The components of more than one module (Tarjan's algorithm, iterative), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph[child]))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
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
    return sorted(found)


def test_the_cycle_finder_finds_cycles() -> None:
    # A ring through a package's __init__, a two-module cycle, and a chain that is none.
    graph = {
        "p": {"p._a"}, "p._a": {"p._b"}, "p._b": {"p"},
        "q._x": {"q._y"}, "q._y": {"q._x"}, "r": {"p"}, "s": set(),
    }  # fmt: skip
    assert _strongly_connected(graph) == [["p", "p._a", "p._b"], ["q._x", "q._y"]]


def test_the_import_graph_counts_function_level_and_typing_imports() -> None:
    graph = _import_graph()
    # grading._find imports the Dask engine in a function, the store's rows under
    # TYPE_CHECKING only; the package root re-exports from kagreport._version.
    assert "kagreport.grading.engine._dask" in graph["kagreport.grading._find"]
    assert "kagreport.grading.engine._rows" in graph["kagreport.grading.engine._store"]
    assert "kagreport._version" in graph["kagreport"]


def test_no_module_imports_in_a_cycle() -> None:
    cycles = _strongly_connected(_import_graph())
    new = [c for c in cycles if c not in KNOWN_CYCLES]
    assert new == [], "import cycles (function-level and TYPE_CHECKING imports count)"
    gone = [c for c in KNOWN_CYCLES if c not in cycles]
    assert gone == [], "no longer cycles: remove them from KNOWN_CYCLES"
    for cycle in KNOWN_CYCLES:
        assert not any(m.split(".")[1] in ("kag", "grading") for m in cycle), cycle


def test_each_module_of_grading_and_kag_imports_first() -> None:
    # What the graph above cannot see: importing a module first runs its packages'
    # __init__, which must not come back to a module still half imported.
    code = """
import importlib, sys
failed = []
for name in sys.argv[1:]:
    for loaded in [m for m in sys.modules if m == "kagreport" or m.startswith("kagreport.")]:
        del sys.modules[loaded]
    try:
        importlib.import_module(name)
    except ImportError as exc:
        failed.append(f"{name}: {exc}")
print(failed)
"""
    names = [m for m in _module_paths() if m.split(".")[1:2] in (["grading"], ["kag"])]
    assert len(names) > 20
    out = subprocess.run(
        [sys.executable, "-c", code, *names], capture_output=True, text=True, check=True
    )
    assert out.stdout.strip() == "[]"


@pytest.mark.parametrize("layer", ["grading", "kag"])
def test_no_module_of_grading_or_kag_is_over_600_lines(layer: str) -> None:
    for path in sorted((PACKAGE / layer).rglob("*.py")):
        lines = len(path.read_text(encoding="utf-8").splitlines())
        assert lines <= 600, f"{path.relative_to(PACKAGE)}: {lines} lines"


# ------------------------------------------------------------------ the exception tree


def _class_bases() -> dict[str, list[str]]:
    """Every class the package defines, by name, with its bases' names (the last part of a
    dotted name: ``errors.KagreportError`` is ``KagreportError``)."""
    classes: dict[str, list[str]] = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ClassDef):
                bases = [ast.unparse(base).rpartition(".")[2] for base in node.bases]
                classes[f"{node.name}@{path.relative_to(PACKAGE)}:{node.lineno}"] = bases
    return classes


def _ancestors(name: str, by_name: dict[str, list[list[str]]], seen: set[str]) -> set[str]:
    """The names of ``name``'s bases, theirs, and so on (the package's and the builtins')."""
    import builtins

    out: set[str] = set()
    for bases in by_name.get(name, []):
        for base in bases:
            if base in seen:
                continue
            seen.add(base)
            out.add(base)
            out |= _ancestors(base, by_name, seen)
    builtin = getattr(builtins, name, None)
    if isinstance(builtin, type):
        out |= {cls.__name__ for cls in builtin.__mro__}
    return out


def test_every_exception_class_derives_from_kagreport_error() -> None:
    classes = _class_bases()
    by_name: dict[str, list[list[str]]] = {}
    for key, bases in classes.items():
        by_name.setdefault(key.partition("@")[0], []).append(bases)
    outside = []
    for key in classes:
        name = key.partition("@")[0]
        ancestors = _ancestors(name, by_name, set())
        # A base from another library (jinja2's TemplateError, say) is named as one.
        exception = "BaseException" in ancestors or any(
            a.endswith(("Error", "Exception", "Failure")) for a in ancestors
        )
        # Warnings are issued (warnings.warn), never raised.
        raised = exception and "Warning" not in ancestors and name != "KagreportError"
        if raised and "KagreportError" not in ancestors:
            outside.append(key)
    assert outside == []


def test_the_exception_test_sees_what_it_must() -> None:
    # Run on the real tree above; here on classes written for it.
    by_name = {
        "KagreportError": [["Exception"]],
        "Ok": [["KagreportError", "ValueError"]],
        "Private": [["ValueError"]],
        "Issued": [["UserWarning"]],
    }
    assert "KagreportError" in _ancestors("Ok", by_name, set())
    assert "BaseException" in _ancestors("Private", by_name, set())
    assert "KagreportError" not in _ancestors("Private", by_name, set())
    assert "Warning" in _ancestors("Issued", by_name, set())


# ---------------------------------------------------------------- the views draw a run (#24)

VIEWS = ("frames", "charts", "widgets", "site")


@pytest.mark.parametrize("view", VIEWS)
def test_the_views_import_neither_kag_nor_grading(view: str) -> None:
    # Function-level and TYPE_CHECKING imports count: a view takes a Run, made at its edge
    # by kagreport.sources.as_run.
    for module, targets in _import_graph().items():
        if module == f"kagreport.{view}" or module.startswith(f"kagreport.{view}."):
            wrong = sorted(t for t in targets if _layer(t) in ("kag", "grading"))
            assert wrong == [], f"{module} imports {', '.join(wrong)}"


@pytest.mark.parametrize("view", VIEWS)
def test_the_views_never_branch_on_the_kind_of_run(view: str) -> None:
    # A StatsReport or evaluation becomes a Run at the edge (kagreport.sources.as_run).
    for path in sorted((PACKAGE / view).rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Call) and getattr(node.func, "id", None) == "isinstance":
                kinds = ast.unparse(node.args[1]) if len(node.args) > 1 else ""
                named = {part.strip("() ") for part in kinds.replace("|", ",").split(",")}
                assert not {"StatsReport", "Run"} & named, (
                    f"{path.name}:{node.lineno}: isinstance(..., {kinds})"
                )


@pytest.mark.parametrize("layer", ["runs", "sources", "frames", "charts", "widgets", "site"])
def test_no_module_of_the_upper_layers_is_over_600_lines(layer: str) -> None:
    for path in sorted((PACKAGE / layer).rglob("*.py")):
        lines = len(path.read_text(encoding="utf-8").splitlines())
        assert lines <= 600, f"{path.relative_to(PACKAGE)}: {lines} lines"
