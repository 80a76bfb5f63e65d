"""Argument parsing and output for ``kagreport``; the work is done by the library."""

from __future__ import annotations

import argparse
import json
import logging
import os
import sys
import time
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, NoReturn

from kagreport import KagreportError, UsageError, __version__
from kagreport._signals import stop_requested
from kagreport.cli._convert import add_parser as add_convert_parser
from kagreport.cli._convert import run_convert
from kagreport.cli._evaluation import add_parsers as add_evaluation_parsers
from kagreport.cli._evaluation import run_compare, run_evaluate
from kagreport.cli._gate import add_parser as add_gate_parser
from kagreport.cli._gate import run_gate
from kagreport.cli._output import inert, plural, write_json, write_lossily
from kagreport.cli._site import add_parsers as add_site_parsers
from kagreport.cli._site import run_site
from kagreport.cli._stop import (
    end_process,
    restore_stop_handlers,
    stopped,
    terminate_as_interrupt,
)
from kagreport.grading import StatsReport, grade
from kagreport.grading.engine import EngineOptions
from kagreport.grading.engine._options import ENGINES

if TYPE_CHECKING:
    from kagreport.grading import FindReport

__all__ = ["main"]

TRACE = 5
logging.addLevelName(TRACE, "TRACE")
logger = logging.getLogger("kagreport")

_LEVELS = {0: logging.ERROR, 1: logging.WARNING, 2: logging.INFO, 3: logging.DEBUG}


class _CommandParser(argparse.ArgumentParser):
    """A command's parser. A word `stats` takes for its subcommand is most often the value
    of an option spelt wrong (`--fromat json`): its error says so."""

    def error(self, message: str) -> NoReturn:
        if message.startswith("argument [find]: invalid choice"):
            message += "; if it is an option's value, check that option's spelling"
        super().error(message)


def _verbosity_parent() -> _CommandParser:
    parent = _CommandParser(add_help=False)
    group = parent.add_mutually_exclusive_group()
    group.add_argument(
        "-v",
        "--verbose",
        action="count",
        default=argparse.SUPPRESS,
        help="more logs on stderr: -v warnings, -vv info, -vvv debug, -vvvv every file's grade",
    )
    group.add_argument(
        "-q", "--quiet", action="store_true", default=argparse.SUPPRESS, help="no logs at all"
    )
    return parent


_SEEN = "_kagreport_seen:"  # namespace markers of _Once, removed after parsing


class _Once(argparse.Action):
    """Store an option's value (or ``const`` with ``nargs=0``), refusing a second occurrence.

    kag's options are clap ``ArgAction::Set`` (``SetTrue`` for flags): given twice on the same
    command (``--format text --format json``) they are a usage error, not "the last wins".
    The same option given again after a subcommand (``stats --format text find --format
    json``) is another command's option: allowed there, the subcommand's value wins (as clap's
    global options).
    """

    def __call__(
        self,
        parser: argparse.ArgumentParser,
        namespace: argparse.Namespace,
        values: object,
        option_string: str | None = None,
    ) -> None:
        marker = f"{_SEEN}{parser.prog}:{self.dest}"
        if getattr(namespace, marker, False):
            raise argparse.ArgumentError(self, "cannot be used multiple times")
        setattr(namespace, marker, True)
        setattr(namespace, self.dest, self.const if self.nargs == 0 else values)


class _Refused(argparse.Action):
    """A hidden option that is refused when used (see :func:`_tree_options`)."""

    def __call__(
        self,
        parser: argparse.ArgumentParser,
        namespace: argparse.Namespace,
        values: object,
        option_string: str | None = None,
    ) -> None:
        raise argparse.ArgumentError(self, "unexpected argument")


def _path_value(text: str) -> str:
    # clap's PathBuf parser refuses an empty value (`-r ''`): a usage error, not "no such folder".
    if not text:
        raise argparse.ArgumentTypeError("a value is required but none was supplied")
    return text


def _utf8_value(text: str) -> str:
    # clap's String parser refuses bytes that are not UTF-8 (Python keeps them as lone
    # surrogates): kag exits 2, "invalid UTF-8 was detected in one or more arguments".
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        shown = os.fsencode(text).decode("ascii", "backslashreplace")
        raise argparse.ArgumentTypeError(f"invalid UTF-8 was detected in '{shown}'") from None
    return text


def _tree_options(parser: argparse.ArgumentParser, *, suppress: bool) -> None:
    def default(value: object) -> object:
        return argparse.SUPPRESS if suppress else value

    parser.add_argument(
        "-r",
        "--results",
        action=_Once,
        type=_path_value,
        metavar="DIR",
        default=default("."),
        help="results root written by `kag benchmark`: a folder or an fsspec URL "
        "(s3://bucket/run, gs://, az://; default: .)",
    )
    parser.add_argument(
        "--prefix",
        action=_Once,
        type=_utf8_value,
        metavar="STR",
        default=default(""),
        help="file-name prefix of the run (kag benchmark --prefix; default: none)",
    )
    parser.add_argument(
        "--format",
        action=_Once,
        choices=("text", "json"),
        default=default("text"),
        help="text table (default) or JSON",
    )
    parser.add_argument(
        "--engine",
        action=_Once,
        choices=ENGINES,
        default=default("local"),
        help="where files are read and graded: this machine's processes (local, default) "
        "or a Dask cluster (dask: pip install 'kagreport[dask]')",
    )
    parser.add_argument(
        "--scheduler",
        action=_Once,
        metavar="ADDRESS",
        default=default(None),
        help="with --engine dask: the scheduler (tcp://host:8786); default a LocalCluster "
        "of this machine's cores",
    )
    parser.add_argument(
        "--workers",
        action=_Once,
        type=_positive,
        metavar="N",
        default=default(None),
        help="processes that read and grade result files (default: the CPU count, at most "
        "8); with --engine dask and no --scheduler, the LocalCluster's",
    )
    parser.add_argument(
        "--storage-option",
        action="append",
        type=_storage_option,
        metavar="KEY=VALUE",
        dest="storage_options",
        default=default([]),
        help="an fsspec option for URLs (endpoint_url=http://127.0.0.1:9000, anon=true, "
        "profile=NAME); repeatable; a VALUE that is JSON (true, 3) is read as such",
    )
    # clap reads a word that looks like a negative number as an option, never as a value
    # (`--prefix -1`, `-r -1`, `find -1`: usage errors in kag; `--prefix=-1`, `find -- -1` are
    # fine). argparse does the same once the parser has an option that looks like one.
    parser.add_argument(
        "-0", action=_Refused, nargs=0, dest="_refused", default=argparse.SUPPRESS,
        help=argparse.SUPPRESS,
    )  # fmt: skip


def _describe(parser: argparse.ArgumentParser) -> None:
    """Give each command's own ``--help`` a description: its one-line help where it has
    none of its own (``kagreport demo --help`` said nothing of what demo does)."""
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            helps = {choice.dest: choice.help for choice in action._choices_actions}
            for name, sub in action.choices.items():
                if not sub.description and helps.get(name):
                    text = str(helps[name])
                    sub.description = text[:1].upper() + text[1:] + "."
                _describe(sub)


def build_parser() -> argparse.ArgumentParser:
    """The ``kagreport`` argument parser."""
    verbosity = _verbosity_parent()
    parser = argparse.ArgumentParser(
        prog="kagreport",
        description="Grade, evaluate and report knowledge-augmented generation benchmark runs.",
        parents=[verbosity],
    )
    parser.add_argument("--version", action="version", version=f"kagreport {__version__}")
    commands = parser.add_subparsers(
        dest="command", metavar="COMMAND", required=True, parser_class=_CommandParser
    )

    stats = commands.add_parser(
        "stats",
        parents=[verbosity],
        help="grade a kag result tree (reproduces `kag stats`)",
        description="Grade a kag result tree against its datasets file, as `kag stats` does.",
    )
    stats.add_argument(
        "-d",
        "--datasets",
        action=_Once,
        type=_path_value,
        metavar="FILE",
        help="datasets file (ground truth); required unless `find` is used",
    )
    stats.add_argument(
        "--store",
        action=_Once,
        type=_path_value,
        metavar="DIR",
        help="keep graded files in DIR (made if missing) so that a rerun reads only new "
        "or changed ones (pip install 'kagreport[store]')",
    )
    stats.add_argument(
        "--watch",
        action=_Once,
        nargs="?",
        type=_seconds,
        const=2.0,
        metavar="SECS",
        help="grade again every SECS seconds (default 2) as a running benchmark adds "
        "files, printing the report each time it changes; Ctrl-C stops",
    )
    _tree_options(stats, suppress=False)
    stats.set_defaults(parser=stats)
    stats_commands = stats.add_subparsers(
        dest="stats_command", metavar="[find]", title="subcommand (optional)"
    )
    finder = stats_commands.add_parser(
        "find",
        parents=[verbosity],
        help="list the results whose response matches a regular expression",
        description="Search every <prefix>*.json result under --results (any depth) for REGEX "
        "anywhere in the trimmed response. REGEX is in the syntax of Rust's regex crate, "
        "which kag uses (https://docs.rs/regex/latest/regex/#syntax): like Python's re, "
        "but without look-around or backreferences.",
    )
    finder.add_argument("regex", metavar="REGEX", type=_utf8_value, help="regular expression")
    _tree_options(finder, suppress=True)
    finder.set_defaults(parser=finder)
    finder.add_argument(
        "--fzf",
        action=_Once,
        nargs=0,
        const=True,
        default=False,
        help="browse the matches in fzf (as kag does) when fzf is installed",
    )

    demo = commands.add_parser(
        "demo",
        parents=[verbosity],
        help="grade the bundled real MMLU-Pro philosophy example and print the table",
    )
    demo.add_argument(
        "--format",
        choices=("text", "json"),
        default="text",
        help="kag's table (text, default) or kag's JSON report (json)",
    )

    _add_simulate_parser(commands, verbosity)
    add_evaluation_parsers(commands, verbosity)
    add_site_parsers(commands, verbosity)
    add_convert_parser(commands, verbosity)
    add_gate_parser(commands, verbosity)
    _describe(parser)
    return parser


def _add_simulate_parser(commands: Any, verbosity: argparse.ArgumentParser) -> None:
    simulate = commands.add_parser(
        "simulate",
        parents=[verbosity],
        help="write a SIMULATED kag run (datasets.json + results/) for tests and demos",
        description="Write a deterministic, clearly labelled SIMULATED kag run. "
        "OUT must not exist; it appears complete or not at all.",
    )
    simulate.add_argument("out", metavar="OUT", help="folder to create")
    simulate.add_argument(
        "--questions", type=_non_negative, default=40, help="scorable questions per dataset (40)"
    )
    simulate.add_argument(
        "--datasets",
        type=int,
        default=3,
        choices=range(1, 7),
        metavar="1-6",
        help="scorable MCQ datasets (3); one unlabelled and one free-form dataset are added",
    )
    simulate.add_argument(
        "--vector-dim", type=_non_negative, default=384, help="embedding length (384)"
    )
    simulate.add_argument("--seed", type=int, default=0, help="random seed (0)")
    simulate.add_argument("--prefix", default="", help="file-name prefix of the run (none)")


def _storage_option(text: str) -> tuple[str, Any]:
    key, sep, value = text.partition("=")
    if not sep or not key:
        raise argparse.ArgumentTypeError(f"expected KEY=VALUE, not {text!r}")
    try:
        parsed = json.loads(value)
    except ValueError:
        parsed = value
    return key, parsed if isinstance(parsed, bool | int | float) or parsed is None else value


def _seconds(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number of seconds: {text!r}") from None
    if not 0 < value < 1e6:
        raise argparse.ArgumentTypeError(f"must be a positive number of seconds: {text!r}")
    return value


def _positive(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not an integer: {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be >= 1: {text!r}")
    return value


def _non_negative(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not an integer: {text!r}") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"must be >= 0: {text!r}")
    return value


def _configure_logging(args: argparse.Namespace) -> int:
    verbose = getattr(args, "verbose", 0)
    if getattr(args, "quiet", False):
        level = logging.CRITICAL + 10
    else:
        level = _LEVELS.get(verbose, TRACE)
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("kagreport: %(levelname)s: %(message)s"))
    root = logging.getLogger("kagreport")
    root.handlers[:] = [handler]
    root.setLevel(level)
    root.propagate = False
    # Dask's own logs (a closed connection after a stop, with its traceback) are not
    # for the terminal: failures reach it as one kagreport line; -vv shows them. Dask
    # sets its loggers' levels from its config when imported, later.
    if level > logging.INFO:
        os.environ.setdefault("DASK_LOGGING__DISTRIBUTED", "critical")
    return level


def _progress(level: int) -> Callable[[int], None] | None:
    # Only at the default level: with -v its line would interleave with the logs.
    if level != logging.ERROR or sys.stderr is None or not sys.stderr.isatty():
        return None

    def show(count: int) -> None:
        sys.stderr.write(f"\rkagreport: {count:,} result files read")
        sys.stderr.flush()

    return show


def _end_progress(progress: Callable[[int], None] | None) -> None:
    if progress is not None:
        sys.stderr.write("\r\033[K")
        sys.stderr.flush()


def _engine(args: argparse.Namespace, *, store: bool = False) -> EngineOptions:
    """The engine options of ``stats`` (with ``store``: its ``--store`` and ``--watch``) and
    of ``find``, as the library takes them.

    Raises
    ------
    UsageError
        For ``--scheduler`` without ``--engine dask``, or with ``--workers``.
    InputError
        For a ``--scheduler`` that is not a ``tcp://HOST:PORT`` address (exit code 1).
    """
    if args.scheduler is not None and args.engine != "dask":
        raise UsageError("--scheduler needs --engine dask")
    if args.scheduler is not None and args.workers is not None:
        raise UsageError("--workers does not go with --scheduler (the cluster has its own)")
    options = EngineOptions(
        engine=args.engine,
        workers=args.workers,
        scheduler=args.scheduler,
        store=args.store if store else None,
        storage_options=dict(args.storage_options) or None,
    )
    return options.with_keywords(interval=args.watch if store else None)


def _run_stats(args: argparse.Namespace, level: int) -> int:
    if args.datasets is None:
        raise UsageError(
            "the following argument is required: -d/--datasets (unless `find` is used)"
        )
    options = _engine(args, store=True)
    if args.watch is not None:
        return _watch_stats(args, level, options)
    progress = _progress(level)
    logger.debug("grading %s against %s (prefix %r)", args.results, args.datasets, args.prefix)
    try:
        report = grade(args.datasets, args.results, args.prefix, progress=progress, options=options)
    finally:
        _end_progress(progress)
    _log_graded(report)
    _print_report(report, args.format)
    _hint_skipped(report.unparsable_files, level, "did not parse")
    _leave_for_exit(options, report)
    return 0


#: What a finished `stats` or `find` leaves for the process's end (see main).
_left_for_exit: list[object] = []


def _leave_for_exit(options: EngineOptions, result: object) -> None:
    # Run on this machine's processes, nothing is left to close once the output is written
    # (the workers were joined, a store saved); a Dask client is closed by the interpreter's
    # exit, so those runs take the usual way out.
    if options.engine == "local":
        _left_for_exit.append(result)


def _log_graded(report: StatsReport) -> None:
    logger.debug(
        "graded %d result files of %d setups; %d did not parse",
        len(report.items),
        len(report.setups),
        len(report.unparsable_files),
    )
    logger.info("read %s", plural(report.files_read, "result file"))


def _print_report(report: StatsReport, format: str) -> None:
    if format == "json":
        write_json(report.to_json())
    else:
        sys.stdout.write(report.to_text())


def _watch_stats(args: argparse.Namespace, level: int, options: EngineOptions) -> int:
    # Runs until Ctrl-C or SIGTERM (exit 130 / 143, as any stopped command).
    screen = args.format == "text" and sys.stdout.isatty()
    first = True

    from kagreport.grading import watch

    def notice(line: str) -> None:
        sys.stderr.write(f"kagreport: {time.strftime('%H:%M:%S')}: {line}\n")

    for report in watch(args.datasets, args.results, args.prefix, options=options, notice=notice):
        _log_graded(report)
        if screen:
            sys.stdout.write("\033[H\033[2J")  # a terminal shows the latest report only
        elif not first and args.format == "text":
            sys.stdout.write("\n")
        first = False
        _print_report(report, args.format)
        if screen:
            sys.stdout.write(
                f"\nkagreport: {time.strftime('%H:%M:%S')}: watching {args.results} every "
                f"{options.interval:g} s ({plural(report.files_read, 'file')} read in the last "
                "pass); Ctrl-C stops.\n"
            )
        sys.stdout.flush()
        _hint_skipped(report.unparsable_files, level, "did not parse")
    return 0


def _hint_skipped(paths: Sequence[str], level: int, what: str) -> None:
    # kagreport addition: at the default level, say once that files were skipped.
    if paths and level == logging.ERROR:
        sys.stderr.write(
            f"kagreport: {plural(len(paths), 'result file')} {what} and "
            f"{'was' if len(paths) == 1 else 'were'} skipped; run with -v to list them.\n"
        )


def _run_find(args: argparse.Namespace, level: int) -> int:
    # Imported here, as each command's own modules are: `stats` does not load them.
    from kagreport.grading import find
    from kagreport.grading._find import compile_pattern

    pattern = compile_pattern(args.regex)
    options = _engine(args)
    progress = _progress(level)
    try:
        report = find(
            args.regex if options.engine == "dask" else pattern,
            args.results,
            args.prefix,
            progress=progress,
            options=options,
        )
    finally:
        _end_progress(progress)
    if args.format == "json":
        write_json(report.to_json())
        _hint_skipped(report.skipped, level, "could not be read or parsed")
        _leave_for_exit(options, report)
        return 0
    _hint_skipped(report.skipped, level, "could not be read or parsed")
    if not report.matches:
        sys.stderr.write(report.summary + "\n")
        _leave_for_exit(options, report)
        return 0
    if args.fzf:
        _browse_with_fzf(report)
    else:
        sys.stdout.write("".join(m.line + "\n" for m in report))
        sys.stdout.flush()
    sys.stderr.write("\n" + report.summary + "\n")
    _leave_for_exit(options, report)
    return 0


# kag's fzf command line (src/subcommand/stats/subcommand/find/mod.rs, run_fzf): the path is a
# hidden first field shown by the preview; several matches can be selected.
FZF_OPTIONS = ("--delimiter", "\t", "--with-nth", "2..", "--multi", "--preview", "cat {1}")


def _browse_with_fzf(report: FindReport) -> None:
    import shutil
    import subprocess

    fzf = shutil.which("fzf")
    if fzf is None:
        raise KagreportError("--fzf needs fzf on the PATH; it was not found")
    lines = "".join(m.line + "\n" for m in report).encode("utf-8", "surrogateescape")
    try:
        subprocess.run(
            [fzf, *FZF_OPTIONS],
            input=lines,
            check=False,
        )
    except OSError as exc:
        raise KagreportError(f"cannot run fzf: {exc}") from None


def _run_demo(args: argparse.Namespace, level: int) -> int:
    from kagreport.examples import mmlu_pro_philosophy

    example = mmlu_pro_philosophy()
    report = grade(example.datasets, example.results)
    if args.format == "json":
        write_json(report.to_json())
    else:
        sys.stdout.write(f"{example.name} (real data)\n{example.attribution}\n\n")
        sys.stdout.write(report.to_text())
        sys.stdout.write(
            "\nThe report site (`kagreport site build`, run by `make demo`) shows this run and "
            "a SIMULATED kag run\n(no model was run; seed 0) whose setups record retrieval "
            "time, context length and graph\nelements, for the accuracy-against-cost charts.\n"
        )
    return 0


def _run_simulate(args: argparse.Namespace, level: int) -> int:
    import shlex

    from kagreport.kag._simulate import write_simulated_run

    run = write_simulated_run(
        args.out,
        questions=args.questions,
        datasets=args.datasets,
        vector_dim=args.vector_dim,
        seed=args.seed,
        prefix=args.prefix,
    )
    # Copy-pasteable into a POSIX shell: every word quoted as it needs.
    words = [_program(), "stats", "-d", _operand(os.path.join(args.out, "datasets.json"))]
    words += ["-r", _operand(os.path.join(args.out, "results"))]
    hint = " ".join(shlex.quote(word) for word in words)
    if args.prefix:  # `--prefix -x` would read -x as an option; `--prefix=-x` does not
        hint += f" --prefix={shlex.quote(args.prefix)}"
    sys.stdout.write(f"SIMULATED kag run written to {args.out}: {run.files} result files\n")
    sys.stdout.write(f"  grade it: {hint}\n")
    return 0


def _operand(path: str) -> str:
    # A relative path that starts with '-' would be read as an option.
    return os.path.join(os.curdir, path) if path.startswith("-") else path


def _quiet_stdout() -> None:
    # Drop what is still buffered for a stdout that cannot be written (disk full),
    # so the interpreter's exit does not fail on it a second time.
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):
        pass


def _program() -> str:
    # The command as the user can type it (.venv/bin/kagreport when not on PATH).
    import shutil

    program = sys.argv[0] if sys.argv and os.path.basename(sys.argv[0]) == "kagreport" else ""
    if program and shutil.which("kagreport") != os.path.abspath(program):
        return program
    return "kagreport"


_COMMANDS: dict[str, Callable[[argparse.Namespace, int], int]] = {
    "demo": _run_demo,
    "simulate": _run_simulate,
    "evaluate": run_evaluate,
    "compare": run_compare,
    "site": run_site,
    "convert": run_convert,
    "gate": run_gate,
}


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; return the exit code (0 ok, 1 runtime error, 2 usage error;
    ``gate``: 0 pass, 1 fail, 3 inconclusive, 2 any error).

    With ``argv`` None (the console command, ``sys.argv``), a command that was stopped,
    and a finished ``stats`` or ``stats find`` on this machine's processes, end the
    process here once the logs and standard streams are flushed (``os._exit``), without
    the interpreter's teardown; with ``argv`` given, it returns."""
    write_lossily()
    parser = build_parser()
    if sys.stdout is None or sys.stderr is None:  # started with a standard stream closed
        return 1
    args = parser.parse_args(argv)
    for marker in [name for name in vars(args) if name.startswith(_SEEN)]:
        delattr(args, marker)
    level = _configure_logging(args)
    previous = terminate_as_interrupt()
    try:
        run: Callable[[argparse.Namespace, int], int]
        if args.command == "stats":
            run = _run_find if args.stats_command == "find" else _run_stats
        else:
            run = _COMMANDS[args.command]
        code = run(args, level)
        sys.stdout.flush()  # the output is whole before the stop handlers go (below)
        if stop_requested() is not None:
            # A command that caught the stop and said what it kept (evaluate) exits as one
            # that did not: no waiting on its threads at interpreter exit (cli._stop).
            return stopped(code, exiting=argv is None)
        if _left_for_exit and argv is None:
            # The interpreter's teardown would free the result's objects one by one (each
            # question of the datasets file: 25 ms of a 0.5 s `stats` at 50,000 files).
            end_process(code)
        return code
    except UsageError as exc:
        if exc.show_usage:
            getattr(args, "parser", parser).print_usage(sys.stderr)
        sys.stderr.write(f"kagreport: error: {inert(str(exc))}\n")
        return exc.exit_code
    except KagreportError as exc:
        sys.stderr.write(f"kagreport: error: {inert(str(exc))}\n")
        return exc.exit_code
    except BrokenPipeError:
        # The reader went away (`| head`): not an error of ours.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 0
    except OSError as exc:
        if exc.filename is not None:  # pragma: no cover - library I/O errors are KagreportErrors
            raise
        _quiet_stdout()
        sys.stderr.write(f"kagreport: error: cannot write the output: {exc.strerror or exc}\n")
        return 1
    except KeyboardInterrupt:
        sys.stderr.write("kagreport: interrupted\n")
        return stopped(130, exiting=argv is None)
    except SystemExit as exc:
        if exc is not stop_requested():
            raise
        # SIGTERM (see terminate_as_interrupt), after the cleanup it ran.
        sys.stderr.write("kagreport: terminated\n")
        return stopped(exc.code if isinstance(exc.code, int) else 1, exiting=argv is None)
    finally:
        restore_stop_handlers(previous, exiting=argv is None)
