"""``kagreport evaluate`` and ``kagreport compare``: parse, call the library, print."""

from __future__ import annotations

import argparse
import os
import sys
import warnings
from collections.abc import Mapping
from typing import Any

from kagreport import KagreportError, UsageError
from kagreport._signals import stop_requested
from kagreport.cli._output import as_text, plural, write_json

__all__ = ["add_parsers", "run_compare", "run_evaluate"]


def add_parsers(commands: Any, verbosity: argparse.ArgumentParser) -> None:
    """Register the two sub-commands on the top-level parser."""
    evaluate = commands.add_parser(
        "evaluate",
        parents=[verbosity],
        help="judge answers (from a kag run or a JSONL file) and write an AnswerEvaluation",
        description="Judge answers with the judges of a TOML file and write the report "
        "(.json, .jsonl, .yaml or .toml by suffix). An llm judge reads at most "
        "max_response_bytes of a response (default 4 MiB), gives an attempt timeout seconds "
        "in all (default 60) and an item deadline seconds with its retries (see "
        "help(kagreport.evaluation.judges.LLMJudge)). A judge that failed on every item makes the "
        "command exit 1, with one line naming the judge, its endpoint and the most common "
        "cause; the report (and the cache) are written all the same.",
    )
    source = evaluate.add_mutually_exclusive_group(required=True)
    source.add_argument("--items", metavar="FILE", help="JSONL file, one AnswerItem per line")
    source.add_argument("-r", "--results", metavar="DIR", help="results root of a kag run")
    evaluate.add_argument("-d", "--datasets", metavar="FILE", help="datasets file (with -r)")
    evaluate.add_argument("--setup", help="setup whose answers to judge (with -r)")
    evaluate.add_argument("--prefix", default="", help="file-name prefix of the run (with -r)")
    evaluate.add_argument(
        "--questions",
        choices=("free-form", "mcq", "all"),
        default="free-form",
        help="which questions of the kag run (default: free-form)",
    )
    evaluate.add_argument("--judges", metavar="FILE", required=True, help="judges TOML file")
    evaluate.add_argument("-o", "--output", metavar="FILE", required=True, help="report to write")
    evaluate.add_argument("--cache", metavar="FILE", help="SQLite response cache for LLM judges")
    evaluate.add_argument("--keep-verdicts", action="store_true", help="keep raw verdicts")
    evaluate.add_argument(
        "--max-concurrency",
        type=int,
        default=8,
        metavar="N",
        help="LLM judge requests in flight at once (default 8)",
    )
    evaluate.add_argument("--name", help="name of the evaluated system (report metadata)")
    evaluate.add_argument(
        "--labels",
        metavar="FILE",
        help="human scores for some items (.csv: an identifier (or id) column and one column "
        'per metric, e.g. exact_match; or .jsonl: {"identifier": ..., "<metric>": score} '
        "per line; an empty cell or null is no label): the report adds, per labelled "
        "metric, the judge-only mean, the human-only mean and the PPI++ estimate with 95%% "
        "intervals, and how much the judge's bias moved the mean",
    )
    evaluate.set_defaults(parser=evaluate)

    compare = commands.add_parser(
        "compare",
        parents=[verbosity],
        help="paired sign-flip test of two evaluation reports, or two runs of any format, "
        "over the same items",
    )
    compare.add_argument("candidate", metavar="CANDIDATE", help="report file of the candidate")
    compare.add_argument("baseline", metavar="BASELINE", help="report file of the baseline")
    compare.add_argument(
        "--n-resamples",
        type=int,
        default=10000,
        metavar="N",
        help="bootstrap resamples for the intervals, and Monte Carlo sign flips where no "
        "exact test applies (default 10000)",
    )
    compare.add_argument(
        "--seed",
        type=int,
        default=0,
        help="seed of the resampling (default 0): same seed, same numbers",
    )
    compare.add_argument(
        "--shared",
        action="store_true",
        help="compare on the items both reports hold (others are left out and counted); "
        "by default reports whose items differ are refused",
    )
    compare.add_argument(
        "--metrics",
        metavar="NAME[,NAME...]",
        help="the metrics under test, Holm-adjusted together (default: for answers every "
        "metric but those of duplicate judges, for retrieval mrr); the others are shown "
        "unadjusted",
    )
    compare.add_argument(
        "--format",
        choices=("text", "json"),
        default="text",
        help="a table to read (text, default) or the comparison document (json)",
    )
    compare.add_argument("-o", "--output", metavar="FILE", help="also write the comparison")
    compare.set_defaults(parser=compare)


def run_evaluate(args: argparse.Namespace, level: int) -> int:
    from kagreport.evaluation import TextRepairWarning, evaluate_answers
    from kagreport.evaluation._files import check_evaluate_paths, write_report
    from kagreport.evaluation._kag import answer_items_from_run
    from kagreport.evaluation._text import render_evaluation
    from kagreport.evaluation.judges import load_judges
    from kagreport.evaluation.judges._config import load_items_jsonl

    if args.max_concurrency < 1:
        raise UsageError(f"--max-concurrency must be >= 1, not {args.max_concurrency}")
    if args.cache == "":
        raise UsageError("--cache needs a file name")
    if args.labels == "":
        raise UsageError("--labels needs a file name")
    if args.items is not None and (args.datasets or args.setup or args.prefix):
        raise UsageError("--datasets, --setup and --prefix go with --results, not --items")
    check_evaluate_paths(
        args.output,
        judges=args.judges,
        items=args.items,
        datasets=args.datasets,
        results=args.results,
        cache=args.cache,
        labels=args.labels,
    )
    judges = load_judges(args.judges)
    with warnings.catch_warnings(record=True) as repairs:
        warnings.simplefilter("always", TextRepairWarning)
        if args.items is not None:
            items = load_items_jsonl(args.items)
            name = as_text(args.name or os.path.splitext(os.path.basename(args.items))[0])
        else:
            if args.datasets is None or args.setup is None:
                raise UsageError("--results needs --datasets and --setup")
            items = answer_items_from_run(
                args.datasets,
                args.results,
                args.setup,
                prefix=args.prefix,
                questions=args.questions,
            )
            name = as_text(args.name or args.setup)
            if not items:
                other = {"free-form": "mcq", "mcq": "free-form"}.get(args.questions)
                raise KagreportError(
                    f"no {args.questions} answers of setup {args.setup!r} under {args.results}"
                    + (f" (the {other} answers: --questions {other})" if other else "")
                )
    _show_warnings(repairs)
    try:
        evaluation = evaluate_answers(
            items,
            judges,
            cache=args.cache,
            keep_verdicts=args.keep_verdicts,
            max_concurrency=args.max_concurrency,
            metadata={"name": name},
            labels=args.labels,
        )
    except (KeyboardInterrupt, SystemExit) as stop:  # Ctrl-C; SIGTERM (cli._main)
        if isinstance(stop, SystemExit) and stop is not stop_requested():
            raise  # a library's own sys.exit(), not a stop: no "interrupted" line
        sys.stderr.write(_interrupted(stop, args.cache))
        return stop.code if isinstance(stop, SystemExit) and isinstance(stop.code, int) else 130
    write_report(evaluation, args.output)
    sys.stdout.write(render_evaluation(evaluation))
    sys.stdout.write(f"\nreport written to {args.output}\n")
    hint = ""
    if args.items is None and args.questions == "free-form":
        hint = " (free-form questions have no reference: --questions mcq takes the MCQ ones)"
    for judge in evaluation.failed_judges:  # the report is written: nothing judged is lost
        sys.stderr.write(f"kagreport: error: {_failed(evaluation, judge)}{hint}\n")
    return 1 if evaluation.failed_judges else 0


def _failed(evaluation: Any, judge: str) -> str:
    """``judge 'j' (<endpoint>) failed on every item (n of n); most common cause (k items):
    <cause>``: the endpoint when the judge has one, the cause when the report has it."""
    identity = evaluation.judges.get(judge)
    endpoint = identity.get("base_url") if isinstance(identity, Mapping) else None
    at = f" ({endpoint})" if isinstance(endpoint, str) else ""
    answered = sum(item.answer is not None for item in evaluation.items)
    line = f"judge {judge!r}{at} failed on every item ({answered:,} of {answered:,})"
    causes = evaluation.error_causes.get(judge)
    if causes:
        cause, count = next(iter(causes.items()))
        # One line, whatever a server put in its error text.
        line += f"; most common cause ({plural(count, 'item')}): {' '.join(cause.split())}"
    return line


def _interrupted(stop: BaseException, cache: str | None) -> str:
    """The one line saying what an interrupted evaluation kept."""
    progress = getattr(stop, "evaluation_progress", None)
    # Without progress, judging was over (the agreement was being computed).
    done = (
        "all items judged"
        if progress is None
        else f"{progress[0]:,} of {progress[1]:,} items judged"
    )
    if cache is None:
        kept = "nothing is kept without --cache (with --cache FILE a rerun resumes at no cost)"
    else:
        kept = (
            f"the judgements received are in the cache {cache}: rerun the same command to "
            "resume, they cost nothing again"
        )
    return f"kagreport: interrupted: {done}; no report written; {kept}\n"


def _show_warnings(caught: list[warnings.WarningMessage]) -> None:
    # Repaired item texts: the user's data was changed, so it is said at every verbosity,
    # one line per item (at most 5, then a count). Other warnings go out as they came.
    from kagreport.evaluation import TextRepairWarning

    repairs = []
    for caught_one in caught:
        if issubclass(caught_one.category, TextRepairWarning):
            repairs.append(caught_one)
        else:
            warnings.showwarning(
                caught_one.message, caught_one.category, caught_one.filename, caught_one.lineno
            )
    for message in repairs[:5]:
        sys.stderr.write(f"kagreport: warning: {message.message}\n")
    if len(repairs) > 5:
        sys.stderr.write(
            f"kagreport: warning: ... and {len(repairs) - 5:,} more "
            f"{'item like this' if len(repairs) == 6 else 'items like these'}\n"
        )


def run_compare(args: argparse.Namespace, level: int) -> int:
    from kagreport.evaluation._files import check_output_path, write_report
    from kagreport.evaluation._text import render_comparison
    from kagreport.sources._compare import compare_files

    if not 1 <= args.n_resamples <= 10**7:
        raise UsageError(f"--n-resamples must be between 1 and 10,000,000, not {args.n_resamples}")
    if args.seed < 0:
        raise UsageError(f"--seed must be >= 0, not {args.seed}")
    metrics = None
    if args.metrics is not None:
        metrics = [name.strip() for name in args.metrics.split(",") if name.strip()]
        if not metrics:
            raise UsageError("--metrics names no metric (give NAME[,NAME...])")
    if args.output:
        check_output_path(args.output, inputs=[args.candidate, args.baseline])
    comparison = compare_files(
        args.candidate,
        args.baseline,
        n_resamples=args.n_resamples,
        seed=args.seed,
        shared_only=args.shared,
        metrics=metrics,
    )
    if args.output:
        write_report(comparison, args.output)
    if args.format == "json":
        write_json(comparison.dumps("json"))
    else:
        sys.stdout.write(render_comparison(comparison))
    return 0
