"""``kagreport convert``: another tool's run as a kagreport.run document."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from kagreport import UsageError
from kagreport.cli._output import plural
from kagreport.sources._names import FORMAT_NAMES, TARGETS

__all__ = ["add_parser", "run_convert"]


def add_parser(commands: Any, verbosity: argparse.ArgumentParser) -> None:
    convert = commands.add_parser(
        "convert",
        parents=[verbosity],
        help="read another tool's run and write it as a kagreport.run document or EEE files",
        description="Read a run (its format detected from the path, or --from; a kag "
        "result tree with its --datasets file) and write "
        "it as a kagreport.run JSON document that every view and `site build` reads, or "
        "(--to eee, or an output named *.eee) as an Every Eval Ever 0.3 folder: per "
        "system an aggregate data/<collection>/<developer>/<model>/<uuid>.json and its "
        "<uuid>_samples.jsonl.",
    )
    convert.add_argument("path", metavar="PATH", help="the run's file or folder")
    convert.add_argument(
        "-o",
        "--output",
        required=True,
        help="the document to write (.json), or the EEE folder to write",
    )
    convert.add_argument(
        "--from", dest="source_format", choices=FORMAT_NAMES, help="the input format"
    )
    convert.add_argument(
        "-d",
        "--datasets",
        metavar="FILE",
        help="a kag result tree's datasets file: PATH is then read as a kag result tree",
    )
    convert.add_argument(
        "--prefix",
        help="with --datasets: the result files' name prefix (kag benchmark --prefix)",
    )
    convert.add_argument(
        "--system",
        action="append",
        dest="systems",
        metavar="NAME",
        help="keep only this system (repeatable; in the order given): one system of a run, "
        "to gate it alone",
    )
    convert.add_argument(
        "--to",
        dest="target_format",
        choices=TARGETS,
        help="the output format (default: eee when OUTPUT ends in .eee, else kagreport)",
    )
    convert.set_defaults(parser=convert)


def run_convert(args: argparse.Namespace, level: int) -> int:
    from kagreport.sources import convert_run
    from kagreport.sources._registry import FORMATS, detect_format

    options = {"datasets": args.datasets} if args.datasets is not None else {}
    if args.prefix is not None:
        if args.datasets is None:
            raise UsageError("--prefix goes with --datasets (a kag result tree)")
        options["prefix"] = args.prefix
    run = convert_run(
        args.path,
        args.output,
        format=args.source_format,
        to=args.target_format,
        systems=args.systems,
        **options,
    )
    # Say which format was read: a detected one may not be the one the user thought.
    if args.source_format:
        source = FORMATS[args.source_format]
    else:
        source = FORMATS["kag"] if options else detect_format(args.path)
    systems, rows = len(run.systems), len(run)
    sys.stdout.write(
        f"read {args.path} as {source.name}: {plural(systems, 'system')}, "
        f"{plural(rows, 'row')} written to {args.output}\n"
    )
    return 0
