"""When a run happened, as the tool that wrote it recorded it: ``metadata["created"]``.

Every reader of :mod:`kagreport.sources` normalises the time its tool records (Inspect's
``eval.created``, lm-eval's ``date``, promptfoo's ``results.timestamp``, OpenAI evals'
``created_at``, every_eval_ever's ``evaluation_timestamp``) into this one key, an ISO 8601
string in UTC (``"2026-12-05T10:58:47Z"``); a run whose tool records no time (a kag tree,
HELM) has no such key, unless ``kagreport convert`` kept its files' modification time there
(``metadata["created_from"] = "file"``). :func:`kagreport.runs.history` orders runs by it
(:func:`run_time`).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from datetime import UTC, datetime
from typing import Any

__all__ = [
    "CREATED",
    "CREATED_FROM",
    "created_time",
    "kept_file_time",
    "latest_time",
    "parse_time",
    "recorded_time",
    "run_time",
    "time_source",
]

#: The metadata key of the time a run records.
CREATED = "created"
#: The metadata key saying where that time came from when the tool recorded none:
#: ``"file"`` (a file's modification time, stamped by ``kagreport convert``).
CREATED_FROM = "created_from"


def recorded_time(value: Any) -> str | None:
    """A tool's recorded time as an ISO 8601 string in UTC, or None when it is not one.

    Accepted: an ISO 8601 date-time string, with an offset or ``Z`` (converted to UTC) or
    without one (read as UTC: OpenAI evals writes ``str(datetime.utcnow())``), a date and
    time separated by a space included; Unix seconds as a number or a numeric string
    (lm-eval's ``date``, every_eval_ever's timestamps). Anything else (None, a blank or
    unparsable string, a boolean, a non-finite number, a date outside years 1-9999) is None:
    a time the tool did not record readably is no time, never a guess.

    Returns
    -------
    str or None
        ``"YYYY-MM-DDTHH:MM:SS[.ffffff]Z"``.
    """
    moment = parse_time(value)
    if moment is None:
        return None
    return moment.isoformat().replace("+00:00", "Z")


def parse_time(value: Any) -> datetime | None:
    """:func:`recorded_time`'s reading of ``value`` as an aware UTC datetime (a datetime is
    taken as it is, a naive one as UTC); None when it is not a time."""
    if isinstance(value, datetime):
        return (value if value.tzinfo else value.replace(tzinfo=UTC)).astimezone(UTC)
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, int | float):
        seconds = float(value)
    elif isinstance(value, str):
        text = value.strip()
        if not text:
            return None
        try:
            seconds = float(text)
        except ValueError:
            try:
                moment = datetime.fromisoformat(text)
            except ValueError:
                return None
            if moment.tzinfo is None:
                moment = moment.replace(tzinfo=UTC)
            try:
                return moment.astimezone(UTC)
            except (OverflowError, ValueError):
                return None
    else:
        return None
    if not math.isfinite(seconds):
        return None
    try:
        return datetime.fromtimestamp(seconds, UTC)
    except (OverflowError, OSError, ValueError):
        return None


def latest_time(values: Iterable[Any]) -> str | None:
    """The latest of several recorded times (:func:`recorded_time` of each; the ones that
    are not times are left out), or None when none is: the time of a run made of several
    logs is when its last one was made."""
    found = [m for m in (parse_time(v) for v in values) if m is not None]
    return max(found).isoformat().replace("+00:00", "Z") if found else None


def time_source(metadata: Mapping[str, Any]) -> str:
    """``"file"`` when ``metadata["created"]`` is a file's modification time (``created_from``
    says so: :func:`kagreport.sources.convert_run` stamps it on a run whose tool records no
    time), else ``"recorded"`` (the tool's own)."""
    return "file" if metadata.get(CREATED_FROM) == "file" else "recorded"


def created_time(metadata: Mapping[str, Any]) -> datetime | None:
    """The time ``metadata["created"]`` records, as an aware UTC datetime; None without
    one (or with a value that is not a time)."""
    return parse_time(metadata.get(CREATED))


def run_time(
    metadata: Mapping[str, Any], fallback: Any = None
) -> tuple[datetime | None, str | None]:
    """When a run happened and where that time comes from, as :func:`kagreport.runs.history`
    orders runs and every page of a history says it.

    Parameters
    ----------
    metadata : mapping
        The run's metadata.
    fallback : time, optional
        The time to use when the run records none (:func:`parse_time` reads it): e.g. the
        modification time of the run's file.

    Returns
    -------
    (datetime or None, str or None)
        The aware UTC time and its source: :func:`time_source` of ``metadata`` for
        ``metadata["created"]`` (``"recorded"``, or ``"file"`` when ``kagreport convert``
        kept a file time there); ``"file"`` for ``fallback``; ``(None, None)`` without
        either.
    """
    moment, source = created_time(metadata), time_source(metadata)
    if moment is None and fallback is not None:
        moment, source = parse_time(fallback), "file"
    return moment, (source if moment is not None else None)


def kept_file_time(metadata: Mapping[str, Any]) -> bool:
    """Whether ``metadata["created"]`` is a time and a file's (``created_from="file"``):
    kept by ``kagreport convert``, unlike a fallback a caller gives (:func:`run_time`)."""
    return time_source(metadata) == "file" and created_time(metadata) is not None
