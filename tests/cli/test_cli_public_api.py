"""The command line uses kagreport's public API, and beyond it only a named internal interface.

The CLI is thin: it parses, calls the library and prints. What only a command needs (checks
of its paths before any work, the text it prints, the signal state, argparse's choices) is
not public API (issue 30: a small public surface), so the CLI reaches it here, each private
module with the names it may take and why. A new private import fails until it is listed.
"""

from __future__ import annotations

import ast
from pathlib import Path

CLI = Path(__file__).resolve().parents[2] / "src" / "kagreport" / "cli"

#: private module -> (the names the CLI may import from it, why).
INTERNAL: dict[str, tuple[frozenset[str], str]] = {
    "kagreport._signals": (
        frozenset({"note_stop", "stop_requested"}),
        "the stop state every long command shares with the library",
    ),
    "kagreport.evaluation._files": (
        frozenset({"check_evaluate_paths", "check_output_path", "write_report"}),
        "`evaluate` and `compare` refuse an output that would replace an input, before work",
    ),
    "kagreport.evaluation._text": (
        frozenset({"render_comparison", "render_evaluation"}),
        "the terminal text of an evaluation and a comparison",
    ),
    "kagreport.evaluation._kag": (
        frozenset({"answer_items_from_run"}),
        "`evaluate --datasets --results` reads a kag tree's answers as items",
    ),
    "kagreport.evaluation.judges._config": (
        frozenset({"load_items_jsonl"}),
        "`evaluate --items` reads the items file",
    ),
    "kagreport.grading._find": (
        frozenset({"compile_pattern"}),
        "`stats find` refuses a bad pattern before it walks the tree",
    ),
    "kagreport.grading.engine._options": (frozenset({"ENGINES"}), "`--engine`'s choices"),
    "kagreport.kag._simulate": (
        frozenset({"write_simulated_run"}),
        "`simulate` writes the tree into a new folder, whole or not at all",
    ),
    "kagreport.site._options": (
        frozenset({"config_from_options"}),
        "`site build`'s options as a site configuration",
    ),
    "kagreport.sources._compare": (
        frozenset({"compare_files"}),
        "`compare A B` on two run files of any format",
    ),
    "kagreport.sources._names": (
        frozenset({"FORMAT_NAMES", "TARGETS"}),
        "`convert --from` and `--to` choices, without loading the readers",
    ),
    "kagreport.sources._registry": (
        frozenset({"FORMATS", "detect_format"}),
        "`convert` names the format it detected",
    ),
}


def _private_imports() -> dict[str, set[str]]:
    found: dict[str, set[str]] = {}
    for path in CLI.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            modules: list[tuple[str, set[str]]] = []
            if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                modules = [(node.module, {alias.name for alias in node.names})]
            elif isinstance(node, ast.Import):
                modules = [(alias.name, {"*"}) for alias in node.names]
            for name, names in modules:
                parts = name.split(".")
                # The CLI's own private modules are its business.
                if (
                    parts[0] == "kagreport"
                    and parts[1:2] != ["cli"]
                    and any(part.startswith("_") for part in parts[1:])
                ):
                    found.setdefault(name, set()).update(names)
    return found


def test_cli_imports_only_the_listed_internal_names() -> None:
    for module, names in _private_imports().items():
        assert module in INTERNAL, f"the CLI imports the private module {module}"
        assert names <= INTERNAL[module][0], (module, sorted(names - INTERNAL[module][0]))


def test_internal_list_is_not_stale() -> None:
    found = _private_imports()
    for module, (names, _) in INTERNAL.items():
        assert names <= found.get(module, set()), (module, sorted(names - found.get(module, set())))
