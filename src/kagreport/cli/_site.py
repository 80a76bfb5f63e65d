"""``kagreport site build``: parse, call :func:`kagreport.site.build_site`, print the path."""

from __future__ import annotations

import argparse
import logging
import sys
from typing import Any

from kagreport.cli._output import as_text

__all__ = ["add_parsers", "run_site"]

#: Where ``kagreport site build`` writes without ``-o``.
DEFAULT_OUTPUT = "site/_build"


def add_parsers(commands: Any, verbosity: argparse.ArgumentParser) -> None:
    """Register ``site`` (with its ``build`` sub-command) on the top-level parser."""
    site = commands.add_parser(
        "site",
        parents=[verbosity],
        help="build the static report site",
        description="Static HTML report site that opens from disk with no network.",
    )
    actions = site.add_subparsers(dest="site_command", metavar="ACTION", required=True)
    build = actions.add_parser(
        "build",
        parents=[verbosity],
        help="build the site from a TOML configuration, flags, or the bundled examples",
        description="Build the site. With neither CONFIG nor --results nor --run, the bundled "
        "examples are used. The output folder is replaced whole (atomically).",
    )
    build.add_argument(
        "config", nargs="?", metavar="CONFIG", help="site configuration (TOML), e.g. site/site.toml"
    )
    build.add_argument(
        "-o",
        "--output",
        metavar="DIR",
        default=DEFAULT_OUTPUT,
        help=f"site folder to write (default: {DEFAULT_OUTPUT})",
    )
    build.add_argument("--title", help="site title (overrides the configuration's)")
    run = build.add_argument_group("one run from flags (instead of CONFIG)")
    run.add_argument("-r", "--results", metavar="DIR", help="results root of a kag run")
    run.add_argument("-d", "--datasets", metavar="FILE", help="datasets file (with --results)")
    run.add_argument("--prefix", default="", help="file-name prefix of the run")
    run.add_argument(
        "--name",
        help="display name of the run (default: the results folder's name, or its parent's "
        "when it is called results)",
    )
    run.add_argument("--baseline", metavar="SETUP", help="setup to compare against")
    run.add_argument(
        "--compare",
        choices=("baseline", "all-pairs"),
        default="baseline",
        help="compare each setup with the baseline (default) or every pair",
    )
    build.add_argument(
        "--run",
        dest="sources",
        action="append",
        default=[],
        metavar="PATH",
        help="a run of another tool (lm-eval, promptfoo, OpenAI evals, ... or a kagreport.run "
        "document; the format is detected), named after its file or folder (repeatable). Each "
        "--run is a run of its own, its systems compared with each other: to compare systems "
        "that sit in several files (two Inspect logs, say), give their folder as one --run",
    )
    build.add_argument(
        "--history",
        metavar="DIR",
        help="a folder of runs (any format, one file or folder each): adds a history page, "
        "the runs ordered by the time each records (its file's time when it records none), "
        "each system's value across them and every change tested. Hidden entries are left "
        "alone; an entry that is not a run is skipped with a warning",
    )
    build.add_argument(
        "--evaluation",
        action="append",
        default=[],
        metavar="FILE",
        help="AnswerEvaluation / RetrievalEvaluation / EvaluationComparison file (repeatable)",
    )
    build.add_argument(
        "--notebook", action="append", default=[], metavar="FILE", help="notebook (repeatable)"
    )
    build.add_argument(
        "--templates", metavar="DIR", help="folder of templates that replace the package's"
    )
    build.add_argument(
        "--no-execute",
        action="store_true",
        help="convert notebooks as saved, without running them",
    )
    build.add_argument(
        "--with-notebooks",
        action="store_true",
        help="with the bundled examples: also execute the repository's notebooks/",
    )
    build.set_defaults(parser=build)


def run_site(args: argparse.Namespace, level: int) -> int:
    """Run ``kagreport site build``; print the index path."""
    from kagreport.site import build_site
    from kagreport.site._options import config_from_options

    config = config_from_options(
        args.config,
        title=as_text(args.title) if args.title else None,
        results=args.results,
        datasets=args.datasets,
        prefix=args.prefix,
        name=as_text(args.name) if args.name is not None else None,
        baseline=args.baseline,
        compare=args.compare,
        evaluations=args.evaluation,
        notebooks=args.notebook,
        templates=args.templates,
        with_notebooks=args.with_notebooks,
        sources=args.sources,
        history=args.history,
    )

    # Steps on a terminal at the default level; with -vv they are logged (INFO) instead.
    show = level == logging.ERROR and sys.stderr is not None and sys.stderr.isatty()

    def progress(message: str) -> None:
        sys.stderr.write(f"kagreport: site: {message}\n")

    def warn(message: str) -> None:
        sys.stderr.write(f"kagreport: {message}\n")

    index = build_site(
        config,
        args.output,
        execute_notebooks=not args.no_execute,
        progress=progress if show else None,
        # At the default level (logs off) each warning is one line; with -v it is logged.
        warn=warn if level == logging.ERROR else None,
    )
    sys.stdout.write(f"site written to {index.parent}\nopen {index.resolve().as_uri()}\n")
    return 0
