"""``kagreport site build``: parse, call :func:`kagreport.site.build_site`, print the path."""

from __future__ import annotations

import argparse
import logging
import sys
from pathlib import Path
from typing import Any

from kagreport import UsageError
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
        description="Build the site. With neither CONFIG nor --results, the bundled examples "
        "are used. The output folder is replaced whole (atomically).",
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


def _run_name(results: Path) -> str:
    """The default display name of a run: its results folder's, or the folder above a
    folder called ``results`` (``kagreport simulate`` and kag write ``<run>/results``)."""
    folder = results.resolve()
    return folder.parent.name if folder.name == "results" and folder.parent.name else folder.name


def run_site(args: argparse.Namespace, level: int) -> int:
    """Run ``kagreport site build``; print the index path."""
    import dataclasses

    from kagreport.site import EvaluationSource, RunConfig, SiteConfig, build_site

    if args.config is not None and (args.results or args.datasets):
        raise UsageError("give either CONFIG or --results/--datasets, not both")
    if args.datasets and not args.results:
        raise UsageError("--datasets goes with --results")
    if args.results is None:
        given = [
            flag
            for flag, value in (
                ("--prefix", args.prefix),
                ("--name", args.name),
                ("--baseline", args.baseline),
                ("--compare", args.compare != "baseline"),
            )
            if value
        ]
        if given:
            raise UsageError(f"{', '.join(given)}: only for a run given with --results")
    if args.with_notebooks and (args.config is not None or args.results is not None):
        raise UsageError(
            "--with-notebooks goes with the bundled examples (no CONFIG, no --results)"
        )
    if args.name is not None and not args.name.strip():
        raise UsageError("--name must not be blank")
    if args.config is not None:
        config = SiteConfig.from_toml(args.config)
    elif args.results is not None:
        if args.datasets is None:
            raise UsageError("--results needs --datasets")
        results = Path(args.results)
        config = SiteConfig(
            title=as_text(args.title or "kagreport"),
            runs=(
                RunConfig(
                    name=as_text(args.name or _run_name(results) or "run"),
                    datasets=Path(args.datasets),
                    results=results,
                    prefix=args.prefix,
                    baseline=args.baseline,
                    compare=args.compare,
                ),
            ),
        )
    else:
        config = SiteConfig.default(notebooks=args.with_notebooks)
    config = dataclasses.replace(
        config,
        title=as_text(args.title) if args.title else config.title,
        evaluations=config.evaluations
        + tuple(EvaluationSource.of(Path(p)) for p in args.evaluation),
        notebooks=config.notebooks + tuple(Path(p) for p in args.notebook),
        templates=Path(args.templates) if args.templates else config.templates,
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
