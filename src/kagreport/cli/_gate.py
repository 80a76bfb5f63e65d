"""``kagreport gate``: a candidate run against a baseline run, for CI.

Exit codes: 0 pass, 1 fail, 3 inconclusive (``--inconclusive`` maps it to 0 or 1), 2 for
every usage or input error (here 1 means only "fail", so an unreadable file is 2 too).
"""

from __future__ import annotations

import argparse
import math
import os
import sys
from collections.abc import Callable
from typing import Any

from kagreport import KagreportError, UsageError

__all__ = ["add_parser", "run_gate"]


def _number(option: str, text: str, bounds: str, inside: Callable[[float], bool]) -> float:
    """``text`` as a finite number that is ``inside``; else a one-line usage error naming
    ``option`` (argparse would print its usage text first)."""
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not (math.isfinite(value) and inside(value)):
        raise _input_error(KagreportError(f"{option} must be a number {bounds}, not {text!r}"))
    return value


def add_parser(commands: Any, verbosity: argparse.ArgumentParser) -> None:
    gate = commands.add_parser(
        "gate",
        parents=[verbosity],
        help="test a candidate run against a baseline run for regressions (CI gate)",
        description="Pair the systems and items of CANDIDATE and BASELINE (runs in any format "
        "`convert` reads; a kag result tree with --datasets) and test, per system, metric and "
        "slice, that the candidate is not worse than the baseline by more than the margin "
        "(paired sign-flip test, Holm-adjusted over all). Exit 0 pass, 1 fail (a regression "
        "beyond the margin), 3 inconclusive (the benchmark cannot tell), 2 usage or input "
        "error.",
    )
    gate.add_argument("candidate", metavar="CANDIDATE", help="the run under test")
    gate.add_argument("--baseline", required=True, metavar="BASELINE", help="the reference run")
    gate.add_argument(
        "--metric",
        action="append",
        dest="metrics",
        metavar="NAME",
        help="a metric to gate (higher is better); repeatable; default the runs' headline",
    )
    gate.add_argument(
        "--margin",
        default="0.02",
        help="non-inferiority margin in the metric's units (default 0.02: 2 points of a "
        "proportion)",
    )
    gate.add_argument(
        "--alpha",
        default="0.05",
        help="family-wise error rate over all hypotheses (default 0.05)",
    )
    gate.add_argument(
        "--slice",
        choices=("dataset", "task", "none"),
        default="dataset",
        help="one hypothesis per dataset (default), per task, or over all items (none)",
    )
    gate.add_argument(
        "--min-paired",
        default="0.5",
        metavar="SHARE",
        help="refuse when fewer of the items are in both runs (default 0.5)",
    )
    gate.add_argument(
        "-d", "--datasets", metavar="FILE", help="the datasets file of a kag result tree"
    )
    gate.add_argument(
        "--inconclusive",
        choices=("exit", "pass", "fail"),
        default="exit",
        help="an inconclusive gate exits 3 (exit, the default), or counts as pass (exit 0) "
        "or fail (exit 1; a JUnit failure); every output states it",
    )
    gate.add_argument(
        "-o",
        "--output",
        metavar="DIR",
        help="write gate.md, gate.xml (JUnit), gate.json and badge.svg into DIR",
    )
    gate.set_defaults(parser=gate)


def _input_error(exc: KagreportError) -> UsageError:
    error = UsageError(exc.message, path=exc.path)
    error.show_usage = False  # one line naming the file or value
    return error


def run_gate(args: argparse.Namespace, level: int) -> int:
    from kagreport.gates import gate

    margin = _number("--margin", args.margin, ">= 0", lambda x: x >= 0)
    alpha = _number("--alpha", args.alpha, "in (0, 1)", lambda x: 0 < x < 1)
    min_paired = _number("--min-paired", args.min_paired, "in (0, 1]", lambda x: 0 < x <= 1)
    if args.output is not None and os.path.lexists(args.output) and not os.path.isdir(args.output):
        raise _input_error(KagreportError(f"-o {args.output} is a file, not a folder"))
    try:
        result = gate(
            args.candidate,
            args.baseline,
            metrics=args.metrics,
            margin=margin,
            alpha=alpha,
            slice=args.slice,
            min_paired=min_paired,
            datasets=args.datasets,
            inconclusive=args.inconclusive,
        )
        if args.output is not None:
            result.write(args.output)
    except KagreportError as exc:
        raise _input_error(exc) from None
    except OSError as exc:
        where = exc.filename if exc.filename is not None else args.output
        raise _input_error(KagreportError(f"cannot write {where}: {exc.strerror or exc}")) from None
    sys.stdout.write(result.text())
    if args.output is not None:
        sys.stdout.write(f"\nwritten to {args.output}: gate.md, gate.xml, gate.json, badge.svg\n")
    return result.exit_code()
