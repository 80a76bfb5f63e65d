"""Every command and option says what it does (issue 26, item 12: ``demo``, ``compare``,
``--n-resamples``, ``--seed``, ``--max-concurrency`` and ``--format`` had no description,
and ``stats find --help`` named Python's re while the pattern is Rust's regex, as kag's)."""

from __future__ import annotations

import argparse
from collections.abc import Iterator

import pytest

from kagreport.cli._main import build_parser


def _commands(
    parser: argparse.ArgumentParser, path: tuple[str, ...] = ("kagreport",)
) -> Iterator[tuple[tuple[str, ...], argparse.ArgumentParser]]:
    yield path, parser
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield from _commands(sub, (*path, name))


COMMANDS = dict(_commands(build_parser()))


@pytest.mark.parametrize("path", sorted(COMMANDS), ids=" ".join)
def test_each_command_and_option_has_a_description(path: tuple[str, ...]) -> None:
    parser = COMMANDS[path]
    assert parser.description, f"{' '.join(path)} --help describes nothing"
    silent = [
        action.option_strings or [action.dest]
        for action in parser._actions
        if not isinstance(action, argparse._SubParsersAction) and not action.help
    ]
    assert silent == [], f"{' '.join(path)}: options without help"


def test_find_names_the_regex_dialect_it_uses() -> None:
    text = COMMANDS["kagreport", "stats", "find"].format_help()
    assert "Python re syntax" not in text
    assert "Rust" in text
    assert "docs.rs/regex" in text


def test_site_build_says_how_to_compare_systems_of_several_files() -> None:
    """Issue 26, item 10: two --run files stay two runs; the help says to give the folder."""
    text = " ".join(COMMANDS["kagreport", "site", "build"].format_help().split())
    assert "give their folder as one --run" in text


def test_stats_usage_shows_find_as_optional() -> None:
    # `kagreport stats -d D -r R` runs without a subcommand, as `kag stats` does.
    usage = COMMANDS[("kagreport", "stats")].format_usage()
    assert "[find] ..." in usage
    assert " find ..." not in usage.replace("[find] ...", "")
