"""The public surface: each package's ``__all__``, and the spec's names at the top level."""

from __future__ import annotations
import __future__

import importlib
import re
import subprocess
import sys
import types
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "src" / "kagreport"
PACKAGES = sorted(
    ".".join(("kagreport", *p.parent.relative_to(PACKAGE).parts))
    for p in PACKAGE.rglob("__init__.py")
)

# ANSWER_EVALUATION_SPEC.md's entry points, importable from the package root.
SPEC_NAMES = [
    "AnswerEvaluation",
    "AnswerItem",
    "EvaluationComparison",
    "RetrievalEvaluation",
    "evaluate_answers",
    "evaluate_retrieval",
    "evaluation_from_stats",
]


def _ruff_order(name: str) -> tuple[int, str]:
    # RUF022's isort-style order: SCREAMING_CASE, then CamelCase, then the rest.
    if len(name) > 1 and re.fullmatch(r"[A-Z0-9_]+", name):
        return 0, name
    return (1 if name[:1].isupper() else 2), name


def _own_public_names(module: types.ModuleType) -> set[str]:
    """Public names the package binds that it defines or takes from its own submodules."""
    prefix = module.__name__
    names = set()
    for name, value in vars(module).items():
        if name.startswith("_") or isinstance(value, types.ModuleType | __future__._Feature):
            continue
        origin = getattr(value, "__module__", None)
        # A helper imported for use (typing.Any, pathlib.Path) is not re-exported.
        if origin is None or origin == prefix or origin.startswith(prefix + "."):
            names.add(name)
    return names


@pytest.mark.parametrize("package", PACKAGES)
def test_all_is_complete_and_sorted(package: str) -> None:
    module = importlib.import_module(package)
    exported = module.__all__
    assert exported == sorted(exported, key=_ruff_order)
    assert len(set(exported)) == len(exported)
    assert _own_public_names(module) <= set(exported), package
    for name in exported:
        assert hasattr(module, name), f"{package}.{name}"


def test_spec_names_at_top_level_are_lazy() -> None:
    code = (
        "import sys, kagreport;"
        "heavy = sorted(m for m in ('numpy', 'pandas') if m in sys.modules);"
        "names = " + repr(SPEC_NAMES) + ";"
        "missing = [n for n in names if n not in dir(kagreport) or n not in kagreport.__all__];"
        "from kagreport import " + ", ".join(SPEC_NAMES) + ";"
        "import kagreport.evaluation as ev;"
        "same = all(getattr(kagreport, n) is getattr(ev, n) for n in names);"
        "print(heavy, missing, same)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[] [] True"


def test_unknown_top_level_name_is_an_attribute_error() -> None:
    import kagreport

    with pytest.raises(AttributeError, match="no attribute 'evaluation_frm_stats'"):
        _ = kagreport.evaluation_frm_stats  # type: ignore[attr-defined]


def test_subpackages_load_on_first_attribute_access() -> None:
    # `import kagreport` alone, then a subpackage as an attribute: no `import kagreport.x`.
    code = (
        "import sys, kagreport;"
        "light = 'numpy' not in sys.modules and 'kagreport.examples' not in sys.modules;"
        "example = kagreport.examples.mmlu_pro_philosophy();"
        "print(light, example.results.is_dir(), kagreport.runs.Run.__name__,"
        " kagreport.gates.gate is kagreport.gate)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "True True Run True"
    import kagreport

    with pytest.raises(AttributeError, match="no attribute 'exampels'"):
        _ = kagreport.exampels  # type: ignore[attr-defined]


def test_one_exception_tree() -> None:
    import inspect

    import kagreport._errors as errors
    from kagreport.evaluation import (
        ConfigError,
        DifferentItemsError,
        JudgeCacheError,
        ReportError,
    )
    from kagreport.site import SiteError

    for cls in (ConfigError, DifferentItemsError, JudgeCacheError, ReportError, SiteError):
        assert issubclass(cls, errors.KagreportError)
        assert cls.__module__ == "kagreport._errors"
    assert issubclass(DifferentItemsError, ValueError)  # the spec: compare raises ValueError
    # Every exception class in the package is defined in _errors (private helpers aside).
    src = Path(errors.__file__).parent
    for path in src.rglob("*.py"):
        if path.name == "_errors.py":
            continue
        for line in path.read_text(encoding="utf-8").splitlines():
            if line.startswith("class ") and "Error(" in line:
                name = line.split()[1].split("(")[0]
                assert name.startswith("_") or name == "JSONScanError", f"{path}: {name}"
    names = {n for n, v in vars(errors).items() if inspect.isclass(v) and issubclass(v, Exception)}
    assert {"ConfigError", "JudgeCacheError", "ReportError", "SiteError"} <= names
    e = DifferentItemsError("differ", only_candidate=1, only_baseline=2)
    assert str(e) == "differ"
    assert (e.only_candidate, e.only_baseline) == (1, 2)


def test_the_command_line_loads_no_reader_for_stats() -> None:
    """`kagreport stats` starts without loading another tool's reader or the run model
    (about 120 ms of imports on a 2-core machine: measured with -X importtime)."""
    code = (
        "import sys; from kagreport.cli import _main;"
        "print(sorted(m for m in sys.modules if m.startswith(('kagreport.sources.',"
        " 'kagreport.runs', 'kagreport.evaluation', 'pandas')) and m != 'kagreport.sources._names'))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_format_names_are_the_formats_read_run_tries() -> None:
    from kagreport.sources._names import FORMAT_NAMES
    from kagreport.sources._registry import FORMATS

    assert tuple(FORMATS) == FORMAT_NAMES


SNAPSHOT = Path(__file__).resolve().parent / "data" / "public_surface.txt"
#: Distinct public objects at most (issue #30 aims at about 140); lower it as names go private.
LIMIT = 140


def _public_surface() -> list[str]:
    """Every ``package.name`` of every public package's ``__all__``, sorted."""
    names = []
    for package in PACKAGES:
        if any(part.startswith("_") for part in package.split(".")):
            continue
        names += [f"{package}.{name}" for name in importlib.import_module(package).__all__]
    return sorted(names)


def test_the_public_surface_is_the_reviewed_snapshot() -> None:
    """Growth of the public API is a decision: a name added or removed changes the snapshot.

    After a reviewed change, update it with:
    ``python -c "import tests.test_public_surface as t; t.write_snapshot()"`` (from the
    repository root, with ``src`` and the root on the path).
    """
    expected = SNAPSHOT.read_text(encoding="utf-8").split()
    surface = _public_surface()
    added = sorted(set(surface) - set(expected))
    removed = sorted(set(expected) - set(surface))
    how = (
        f"if intended, update {SNAPSHOT.name} with: PYTHONPATH=src:. python -c "
        '"import tests.test_public_surface as t; t.write_snapshot()"'
    )
    assert added == [], f"new public names {added}; {how}"
    assert removed == [], f"public names gone {removed}; {how}"


def test_the_public_surface_stays_small() -> None:
    # Issue #30: at most about 140 distinct objects (the same object under two names counts once).
    import kagreport

    objects = {
        id(getattr(importlib.import_module(name.rpartition(".")[0]), name.rpartition(".")[2]))
        for name in _public_surface()
        if name != "kagreport.__version__"
    }
    assert len(objects) <= LIMIT, len(objects)
    assert kagreport.__version__


def write_snapshot() -> None:
    """Rewrite the snapshot from the current ``__all__`` lists (after a reviewed change)."""
    SNAPSHOT.write_text("\n".join(_public_surface()) + "\n", encoding="utf-8")


def test_every_format_name_is_in_the_docstrings_that_list_them() -> None:
    # The names are private (sources._names); the public docstrings list them by hand.
    from kagreport.site import SourceConfig
    from kagreport.sources import read_run
    from kagreport.sources._names import FORMAT_NAMES

    for doc in (read_run.__doc__, SourceConfig.__doc__):
        assert doc is not None
        listed = re.findall(r'``"([a-z-]+)"``', doc.split("; None")[0].split("; detected")[0])
        assert [n for n in listed if n in FORMAT_NAMES] == list(FORMAT_NAMES), listed


_SHORT_PRIVATE = re.compile(
    r"(?<![\w.])(?:stats|runs|charts|frames|sources|evaluation|grading|kag|gates|site|widgets"
    r"|examples)\._\w+"
)

#: Schema names a docstring quotes (a document's ``schema`` value), not Python paths.
SCHEMAS = {"kagreport.run", "kagreport.gate"}


def _docstrings(value: object, path: str) -> list[tuple[str, str]]:
    import inspect

    found = [(path, inspect.getdoc(value) or "")]
    if inspect.isclass(value):
        for name, member in vars(value).items():
            if name.startswith("_") and name != "__init__":
                continue
            function = member.fget if isinstance(member, property) else member
            function = getattr(function, "__func__", function)
            if inspect.isfunction(function) or isinstance(member, property):
                found.append((f"{path}.{name}", inspect.getdoc(function) or ""))
    return found


def _resolves(reference: str) -> bool:
    parts = reference.split(".")
    for cut in range(len(parts), 0, -1):
        try:
            value: object = importlib.import_module(".".join(parts[:cut]))
        except ImportError:
            continue
        for index, part in enumerate(parts[cut:]):
            fields = getattr(value, "__annotations__", {})
            if not hasattr(value, part):
                # A field declared on a class (a msgspec struct, a slotted dataclass).
                return index == len(parts[cut:]) - 1 and part in fields
            value = getattr(value, part)
        return True
    return False


def test_public_docstrings_name_only_public_paths() -> None:
    """A public docstring that names ``kagreport.x.y`` names something a user can import:
    not a private module (``kagreport._format``) and not a name that went private or away
    (issue 30: the reference pages named ``kagreport.charts.DPI``, ``kagreport.runs.LazyTexts``)."""
    bad = []
    for name in _public_surface():
        package, _, attribute = name.rpartition(".")
        value = getattr(importlib.import_module(package), attribute)
        if isinstance(value, str | int | float | tuple | frozenset):
            continue
        for where, doc in _docstrings(value, name) + _docstrings(
            importlib.import_module(package), package
        ):
            for reference in re.findall(r"kagreport(?:\.[A-Za-z_]\w*)+", doc):
                private = any(part.startswith("_") for part in reference.split(".")[1:])
                if reference not in SCHEMAS and (private or not _resolves(reference)):
                    bad.append(f"{where}: {reference}")
            # A short private path (``stats._holm.holm_levels``) is as private.
            bad += [f"{where}: {m}" for m in _SHORT_PRIVATE.findall(doc)]
    assert bad == [], sorted(set(bad))
