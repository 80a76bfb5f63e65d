"""Running judges over items (:func:`evaluate_answers`) and scoring retrievals
(:func:`evaluate_retrieval`)."""

from __future__ import annotations

import logging
import math
import numbers
import sys
import threading
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from kagreport._errors import InputError
from kagreport._optional import optional
from kagreport.evaluation._agreement import LEVELS
from kagreport.evaluation._correction import label_corrections
from kagreport.evaluation._items import AnswerItem, RetrievalItem
from kagreport.evaluation._labels import checked_labels
from kagreport.evaluation._report import AnswerEvaluation, RetrievalEvaluation, mean_scores
from kagreport.evaluation._retrieval import DEFAULT_KS, retrieval_scores
from kagreport.evaluation.judges._protocol import (
    Judge,
    JudgeFailure,
    Judgement,
    Usage,
    declared_scale,
)

__all__ = ["current_stop", "evaluate_answers", "evaluate_retrieval", "metric_name"]

logger = logging.getLogger("kagreport.evaluation")

# The stop event of the evaluation a worker thread judges for (see current_stop).
_worker = threading.local()


def current_stop() -> threading.Event | None:
    """The event set when the evaluation this thread judges for is stopped, or ``None``.

    A judge that waits or retries (:class:`~kagreport.evaluation.judges._llm.LLMJudge`) asks it
    before each request and waits on it between attempts, so that once Ctrl-C or SIGTERM
    stopped :func:`evaluate_answers`, no request is sent any more.
    """
    event = getattr(_worker, "stop", None)
    return event if isinstance(event, threading.Event) else None


def _run_pooled(
    tasks: Sequence[tuple[int, Judge]],
    run: Callable[[int, Judge], None],
    workers: int,
    stop: threading.Event,
) -> None:
    """Run ``tasks`` on ``workers`` daemon threads; return when all are done.

    Not a ThreadPoolExecutor: leaving one (even with ``cancel_futures``) waits for the
    requests in flight, and the interpreter's exit joins its threads, so a Ctrl-C would
    wait for a slow server. These threads stop taking tasks once ``stop`` is set, and an
    interrupted caller does not wait for them (a request in flight is abandoned).
    """
    pending = iter(tasks)
    lock = threading.Lock()
    finished = threading.Event()
    active = min(workers, len(tasks))
    failures: list[BaseException] = []

    def work() -> None:
        nonlocal active
        _worker.stop = stop
        try:
            while not stop.is_set():
                with lock:
                    task = next(pending, None)
                if task is None:
                    break
                run(*task)
        except BaseException as exc:  # run() keeps Exceptions: this is something worse
            failures.append(exc)
            stop.set()
        finally:
            with lock:
                active -= 1
                if active == 0:
                    finished.set()

    threads = [
        threading.Thread(target=work, name=f"kagreport-judge-{n}", daemon=True)
        for n in range(active)
    ]
    for thread in threads:
        thread.start()
    # A timed wait: a signal handler's exception (Ctrl-C, SIGTERM) comes through at once.
    while not finished.wait(0.25):
        pass
    if failures:
        raise failures[0]


#: Causes of errors kept per judge in ``AnswerEvaluation.error_causes``, most common first.
MAX_CAUSES = 5


def _cause(exc: Exception) -> str:
    """The cause of a failed judgement, the same for items that failed the same way."""
    if isinstance(exc, JudgeFailure):
        return exc.cause
    text = f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
    return text if len(text) <= 200 else text[:200] + "..."


def metric_name(judge: Judge, criterion: str) -> str:
    """``<judge>`` for a judge with one criterion, ``<judge>.<criterion>`` for several."""
    return judge.name if len(judge.criteria) == 1 else f"{judge.name}.{criterion}"


def _as_item(value: AnswerItem | Mapping[str, Any], index: int) -> AnswerItem:
    if isinstance(value, AnswerItem):
        return value
    if isinstance(value, Mapping):
        try:
            return AnswerItem.from_dict(value)
        except KeyError as exc:
            raise ValueError(f"item {index} has no {exc.args[0]!r}") from None
    raise TypeError(f"item {index} must be an AnswerItem or a mapping, not {type(value).__name__}")


def _check_unique(names: Iterable[str], what: str) -> None:
    seen: set[str] = set()
    repeated: set[str] = set()
    for name in names:
        (repeated if name in seen else seen).add(name)
    duplicates = sorted(repeated)
    if duplicates:
        shown = ", ".join(repr(d) for d in duplicates[:5])
        raise InputError(f"{what} must be unique; repeated: {shown}")


def _progress_bar(total: int, enabled: bool | None, description: str) -> Any:
    if enabled is None:
        enabled = total >= 50 and sys.stderr.isatty()
    if not enabled:
        return None
    with optional("tqdm"):
        from tqdm import tqdm

    return tqdm(total=total, desc=description, file=sys.stderr, leave=False)


def _check_arguments(
    rows: Sequence[AnswerItem],
    judges: Sequence[Judge],
    max_concurrency: object,
    agreement_level: object,
    seed: object,
) -> dict[str, str]:
    """Check :func:`evaluate_answers`' arguments; the judge that owns each metric."""
    _check_unique((row.identifier for row in rows), "item identifiers")
    for judge in judges:
        if not isinstance(judge, Judge):
            raise TypeError(
                f"{judge!r} is not a judge (it needs name, criteria, identity, judge())"
            )
    _check_unique((judge.name for judge in judges), "judge names")
    if (
        isinstance(max_concurrency, bool)
        or not isinstance(max_concurrency, int)
        or max_concurrency < 1
    ):
        raise ValueError(f"max_concurrency must be an integer >= 1, not {max_concurrency!r}")
    if agreement_level not in LEVELS:
        raise ValueError(
            f"agreement_level must be one of {', '.join(LEVELS)}, not {agreement_level!r}"
        )
    if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
        raise ValueError(f"seed must be an integer >= 0, not {seed!r}")
    owners: dict[str, str] = {}
    for judge in judges:  # "a.b" x "c" and "a" x "b.c" would both be "a.b.c"
        for criterion in judge.criteria:
            metric = metric_name(judge, criterion)
            if metric in owners:
                raise ValueError(
                    f"judges {owners[metric]!r} and {judge.name!r} both produce "
                    f"the metric {metric!r}"
                )
            owners[metric] = judge.name
    return owners


def _checked_scores(judge: Judge, judgement: object) -> dict[str, float]:
    """The finite scores of one judgement, by metric name; TypeError or ValueError (a
    failed judgement) for anything but a Judgement with numbers for the judge's criteria."""
    if not isinstance(judgement, Judgement):
        raise TypeError(f"judge {judge.name!r} returned {type(judgement).__name__}")
    values = {}
    raw: Mapping[str, Any] = judgement.scores  # untrusted: a custom judge's output
    for criterion, value in raw.items():
        if criterion not in judge.criteria:
            raise ValueError(f"judge {judge.name!r} scored unknown criterion {criterion!r}")
        if value is None:
            continue
        if isinstance(value, bool) or not isinstance(value, numbers.Real):
            raise TypeError(f"judge {judge.name!r} gave a non-numeric score {value!r}")
        number = float(value)  # OverflowError for absurd ints: a failed judgement
        if math.isfinite(number):
            values[metric_name(judge, criterion)] = number
    return values


# Long (over 80 lines): the judging state (scores, verdicts, usage, errors, the bar) is shared
# by the closures that the pool's threads run; the argument and score checks are apart.
def evaluate_answers(
    items: Iterable[AnswerItem | Mapping[str, Any]],
    judges: Sequence[Judge],
    *,
    keep_verdicts: bool = False,
    max_concurrency: int = 8,
    cache: Any = None,
    agreement_level: str = "interval",
    agreement_resamples: int = 1000,
    seed: int = 0,
    progress: bool | None = None,
    metadata: Mapping[str, Any] | None = None,
    labels: Any = None,
) -> AnswerEvaluation:
    """Score every item with every judge.

    Parameters
    ----------
    items : iterable of AnswerItem or mapping
        The system's answers; mappings take :class:`AnswerItem`'s field names.
        Scores already on an item (e.g. kag's ``correct``) are kept.
    judges : sequence of Judge
        Rule judges (``OptionMatch``, ``TokenF1``, ...) and LLM judges.
    keep_verdicts : bool
        Keep each judge's raw verdict on the items (failed ones included).
    max_concurrency : int
        Threads judging at once (judges that call a server also limit themselves).
    cache : JudgeCache or path, optional
        A response cache given to every judge that takes one (``with_cache``).
    agreement_level : {"interval", "nominal", "ordinal", "ratio"}
        Level of Krippendorff's alpha between judges sharing a criterion and its scale
        (``scales``; judges on different scales, or declaring none, are not compared).
    agreement_resamples : int
        Bootstrap resamples (over items) for the alpha intervals; 0 skips them.
    seed : int
        Seed of the bootstrap.
    progress : bool, optional
        Show progress bars on stderr (judging, then the agreement bootstrap); default: on a
        terminal, for 50+ judgements and for a bootstrap that takes over a second.
    metadata : mapping, optional
        Free-form, JSON-compatible description stored in the report.
    labels : path or mapping, optional
        Human scores for some items: a labels file (``.csv`` with an ``identifier`` or
        ``id`` column and one column per metric, or ``.jsonl`` with one object per line
        holding ``identifier`` or ``id`` and a number per metric) or a mapping
        identifier -> {metric: score}. A label corrects the metric of its name; the
        report's ``label_corrections`` give, per labelled metric, the judge-only mean,
        the human-only mean and the PPI++ estimate with 95% intervals
        (:class:`~kagreport.evaluation.LabelCorrection`), and ``settings["labels"]``
        names the file. Checked before any judge runs. Needs SciPy
        (the ``stats`` extra; :class:`~kagreport.MissingExtraError` without it).

    Returns
    -------
    AnswerEvaluation

    Raises
    ------
    ValueError
        If identifiers or judge names repeat (:class:`~kagreport.InputError`, also a
        KagreportError), or an item is malformed; if ``labels`` cannot be read, names an
        item or metric the evaluation does not have, repeats an item, holds a value that
        is not a finite number, or leaves a metric fewer than 2 labelled items or none
        unlabelled (InputError; :class:`~kagreport.FormatError` for a file suffix other
        than ``.csv`` or ``.jsonl``).

    Notes
    -----
    A failing judgement (any exception from the judge) is counted in
    ``errors[judge]``, its cause (:attr:`JudgeFailure.cause
    <kagreport.evaluation.judges.JudgeFailure>`, or the exception's type and text) in
    ``error_causes[judge]``, and leaves that score undefined; it never stops the
    evaluation, nor does a judge that failed on every item (``failed_judges``), which
    ``kagreport evaluate`` reports with exit status 1. Items without an answer are
    counted in ``errors["system"]`` and not judged.

    **Interruption.** On ``KeyboardInterrupt`` (Ctrl-C) or ``SystemExit`` (the command
    line's SIGTERM) no new judgement starts, a judge waiting to retry sends nothing more
    (``current_stop``), requests in flight are abandoned rather than waited for, and
    the exception propagates at once, carrying ``evaluation_progress``: ``(judged,
    total)``, the items every judge had finished and the items with an answer. What a
    cached judge received is already in its cache (written as each response arrives), so
    a rerun asks only for the rest. No partial report is returned.
    """
    rows = [_as_item(item, i) for i, item in enumerate(items)]
    judges = list(judges)
    owners = _check_arguments(rows, judges, max_concurrency, agreement_level, seed)
    human = None if labels is None else checked_labels(labels, rows, owners)
    copies: list[Any] = []
    if cache is not None:
        copies = [j.with_cache(cache) if hasattr(j, "with_cache") else None for j in judges]
        judges = [copy if copy is not None else j for j, copy in zip(judges, copies, strict=True)]

    # The judges define their metrics afresh: an old value of one (an item judged before)
    # must not survive a failed judgement.
    scores: list[dict[str, float]] = [
        {k: v for k, v in row.scores.items() if k not in owners} for row in rows
    ]
    verdicts: list[dict[str, Any]] = [dict(row.verdicts) for row in rows]
    usage = {judge.name: Usage() for judge in judges}
    errors = {"system": sum(row.answer is None for row in rows)} | {j.name: 0 for j in judges}
    causes: dict[str, Counter[str]] = {judge.name: Counter() for judge in judges}
    lock = threading.Lock()
    bar = _progress_bar(len(judges) * (len(rows) - errors["system"]), progress, "judging")

    tasks = [(i, j) for j in judges for i, row in enumerate(rows) if row.answer is not None]
    unfinished = [0] * len(rows)  # judgements still to come, per item
    for i, _ in tasks:
        unfinished[i] += 1

    def run(index: int, judge: Judge) -> None:
        judge_one(index, judge)  # keeps every Exception: it returns unless interrupted
        with lock:
            unfinished[index] -= 1

    def judge_one(index: int, judge: Judge) -> None:
        row = rows[index]
        verdict: Any = None
        try:
            judgement = judge.judge(row)
            values = _checked_scores(judge, judgement)
        except Exception as exc:  # one failing judgement never stops the evaluation
            cost = exc.usage if isinstance(exc, JudgeFailure) else Usage()
            verdict = exc.verdict if isinstance(exc, JudgeFailure) else None
            logger.warning("judge %r failed on item %r: %s", judge.name, row.identifier, exc)
            with lock:
                errors[judge.name] += 1
                causes[judge.name][_cause(exc)] += 1
                usage[judge.name].add(cost)
                if keep_verdicts:
                    verdicts[index][judge.name] = {"error": str(exc), "verdict": verdict}
                if bar is not None:
                    bar.update()
            return
        with lock:
            usage[judge.name].add(judgement.usage)
            scores[index].update(values)
            if keep_verdicts and judgement.verdict is not None:
                verdicts[index][judge.name] = judgement.verdict
            if bar is not None:
                bar.update()

    inline = [(i, j) for i, j in tasks if not getattr(j, "blocking", True)]
    pooled = [(i, j) for i, j in tasks if getattr(j, "blocking", True)]
    stop = threading.Event()
    try:
        for i, j in inline:
            run(i, j)
        if pooled:
            _run_pooled(pooled, run, max_concurrency, stop)
    except (KeyboardInterrupt, SystemExit) as interruption:
        stop.set()  # before anything else: no request may start after this
        # Without the lock: the signal may have come while this thread held it.
        done = sum(1 for i, row in enumerate(rows) if row.answer is not None and not unfinished[i])
        interruption.evaluation_progress = (done, len(rows) - errors["system"])  # type: ignore[union-attr]
        raise
    finally:
        stop.set()
        if bar is not None:
            bar.close()
        for copy in copies:  # the cache-bound copies are ours to close
            if copy is not None and hasattr(copy, "close"):
                copy.close()

    judged = tuple(
        AnswerItem(
            identifier=row.identifier,
            question=row.question,
            answer=row.answer,
            reference=row.reference,
            scores=scores[i],
            verdicts=verdicts[i] if keep_verdicts else dict(row.verdicts),
            latency=row.latency,
            error=row.error,
            metadata=row.metadata,
        )
        for i, row in enumerate(rows)
    )
    metrics = mean_scores(judged)
    for judge in judges:  # a metric no item defines still appears, as NaN
        for criterion in judge.criteria:
            metrics.setdefault(metric_name(judge, criterion), math.nan)
    agreement, intervals, notes, compared = _agreement(
        judged, judges, agreement_level, agreement_resamples, seed, progress
    )
    settings: dict[str, Any] = {
        "keep_verdicts": keep_verdicts,
        "max_concurrency": max_concurrency,
        "agreement_level": agreement_level,
        "agreement_resamples": agreement_resamples,
        "seed": seed,
    }
    if human is not None:  # only with labels: a report without them reads as it always did
        settings["labels"] = human.source
    return AnswerEvaluation(
        metrics=metrics,
        items=judged,
        judges={judge.name: dict(judge.identity) for judge in judges},
        agreement=agreement,
        usage={name: u.to_dict() for name, u in usage.items()},
        errors=errors,
        error_causes={
            name: dict(counted.most_common(MAX_CAUSES))
            for name, counted in causes.items()
            if counted
        },
        settings=settings,
        metadata=dict(metadata or {}),
        agreement_intervals=intervals,
        agreement_notes=notes,
        agreement_judges=compared,
        label_corrections={} if human is None else label_corrections(judged, human),
    )


# Why alpha is undefined, in the words of an evaluation (keys: kagreport.evaluation.UNDEFINED).
_UNDEFINED_FOR_JUDGES = {
    "no_rating": "no judge scored any item",
    "one_coder_rated": "only one judge scored any item",
    "no_pairable_unit": "no item scored by two or more judges",
    "no_variation": "no variation: every score on the items scored by two or more judges is "
    "the same value",
}


def _agreement(
    items: Sequence[AnswerItem],
    judges: Sequence[Judge],
    level: str,
    resamples: int,
    seed: int,
    progress: bool | None = None,
) -> tuple[
    dict[str, float], dict[str, tuple[float, float]], dict[str, str], dict[str, tuple[str, ...]]
]:
    """Alpha per criterion and scale over the judges that score it (coders = judges, units =
    items), its bootstrap interval, why alpha (or its interval) is missing where it is, and the
    judges' metrics each alpha compared.

    Judges are coders of one alpha only when they declare the same criterion on the same scale
    (:func:`~kagreport.evaluation.judges._protocol.declared_scale`): a 0/1 exact match, a token
    F1 and a 1-5 rating, all named ``"score"``, answer different questions. A criterion scored
    on one scale keeps its name as key; one scored on several has a key per scale,
    ``"<criterion> (<scale>)"``.
    """
    from kagreport.evaluation._agreement import compute_agreement

    scales: dict[str, dict[str | None, list[str]]] = {}  # criterion -> scale -> metrics
    for judge in judges:
        for criterion in judge.criteria:
            scale = declared_scale(judge, criterion)
            scales.setdefault(criterion, {}).setdefault(scale, []).append(
                metric_name(judge, criterion)
            )
    by_criterion: dict[str, list[str]] = {}
    explained: dict[str, str] = {}  # key -> why these judges are apart from the others
    for criterion, groups in scales.items():
        for scale, metrics in groups.items():
            shown = scale or "no scale declared"
            key = criterion if len(groups) == 1 else f"{criterion} ({shown})"
            by_criterion[key] = metrics
            others = "; ".join(
                f"{other or 'no scale declared'} ({', '.join(judged)})"
                for other, judged in groups.items()
                if other != scale
            )
            if (scale is not None and len(metrics) > 1) or (not others and len(metrics) == 1):
                continue  # alpha is computed, or the usual "one judge" says why not
            why = (
                f"no scale declared ({', '.join(metrics)})"
                if scale is None
                else f"one judge on {scale} ({metrics[0]})"
            )
            if others:
                why += f"; {criterion!r} is also scored on {others}"
            explained[key] = (
                f"{why}: alpha compares only judges that declare the same criterion on the "
                "same scale"
            )
    agreement: dict[str, float] = {}
    intervals: dict[str, tuple[float, float]] = {}
    notes: dict[str, str] = {}
    for criterion, metrics in by_criterion.items():
        if len(metrics) < 2 or criterion in explained:
            agreement[criterion] = math.nan
            notes[criterion] = explained.get(criterion, f"one judge ({metrics[0]})")
            continue
        data = [[item.scores.get(metric) for item in items] for metric in metrics]
        try:
            result = compute_agreement(
                data, level, n_resamples=resamples, seed=seed, progress=progress
            )
        except ValueError as exc:
            # E.g. a negative score at ratio level: agreement is then unknown, but the
            # evaluation itself stands, and the report says why.
            logger.warning("agreement on %r not computed: %s", criterion, exc)
            agreement[criterion] = math.nan
            notes[criterion] = f"not computed: {exc}"
            continue
        agreement[criterion] = result.alpha
        if resamples > 0:
            intervals[criterion] = (result.low, result.high)
        if result.undefined is not None:
            notes[criterion] = _UNDEFINED_FOR_JUDGES.get(result.undefined, result.reason or "")
        elif resamples > 0 and math.isnan(result.low):
            notes[criterion] = (
                f"no interval: only {result.n_defined_resamples} of {resamples} bootstrap "
                "resamples have variation (fewer than half)"
            )
    compared = {criterion: tuple(metrics) for criterion, metrics in by_criterion.items()}
    return agreement, intervals, notes, compared


def evaluate_retrieval(
    items: Iterable[RetrievalItem | Mapping[str, Any]],
    *,
    ks: Sequence[int] = DEFAULT_KS,
    metadata: Mapping[str, Any] | None = None,
) -> RetrievalEvaluation:
    """Score ranked retrievals against their relevant ids.

    Parameters
    ----------
    items : iterable of RetrievalItem or mapping
        Mappings take :class:`RetrievalItem`'s field names (``retrieved`` best first).
    ks : sequence of int
        Cut-offs for the @k metrics (default 1, 3, 5, 10).
    metadata : mapping, optional
        Free-form, JSON-compatible description stored in the report.

    Returns
    -------
    RetrievalEvaluation
        Metrics: ``recall@k``, ``precision@k``, ``hit@k``, ``complete@k``,
        ``ndcg@k`` and ``mrr``. With T the first k retrieved ids and R the relevant ones:
        ``recall@k = |T ∩ R| / |R|``; ``precision@k = |T ∩ R| / k`` (a short list is
        penalised); ``hit@k`` = 1 if T ∩ R is not empty; ``complete@k`` = 1 if R ⊆ T;
        ``mrr`` = 1 / the rank of the first relevant id (0 if none; no cut-off);
        ``ndcg@k = DCG@k / IDCG@k``, DCG = Σ rel_i / log2(i + 1) over ranks 1..k, IDCG
        that of min(k, #R) relevant ids at the top. Every metric is undefined for an item
        with no relevant id.

    Raises
    ------
    ValueError
        If identifiers repeat or a k is not a positive integer.
    """
    rows = []
    for index, value in enumerate(items):
        if isinstance(value, Mapping):
            try:
                value = RetrievalItem.from_dict(value)
            except KeyError as exc:
                raise ValueError(f"item {index} has no {exc.args[0]!r}") from None
        if not isinstance(value, RetrievalItem):
            raise TypeError(
                f"item {index} must be a RetrievalItem or a mapping, not {type(value).__name__}"
            )
        rows.append(value)
    _check_unique((row.identifier for row in rows), "item identifiers")
    ks = tuple(ks)
    scored = tuple(
        RetrievalItem(
            identifier=row.identifier,
            question=row.question,
            retrieved=row.retrieved,
            relevant=row.relevant,
            scores={**row.scores, **retrieval_scores(row.retrieved, row.relevant, ks)}
            if row.error is None
            else dict(row.scores),
            latency=row.latency,
            error=row.error,
            metadata=row.metadata,
        )
        for row in rows
    )
    return RetrievalEvaluation(
        metrics=mean_scores(scored),
        items=scored,
        errors={"system": sum(row.error is not None for row in rows)},
        settings={"ks": list(ks)},
        metadata=dict(metadata or {}),
    )
