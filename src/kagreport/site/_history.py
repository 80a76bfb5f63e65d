"""The history pages of ``kagreport site build --history DIR``: every run in DIR read, ordered
by the time it records (its file's modification time as the stated fallback), one history
page (per metric and system: the chart and the table of :func:`kagreport.runs.history`) and
a light page per run (its leaderboard rows, from the same frame) for the points to link to.

Each run gets a light page, not the full run pages (system pages with every item,
comparisons): at 100 runs x 20 systems x 5,000 items those would be 2,000 system pages and
10 million item rows; the history's own numbers are the leaderboard's, which the light page
shows. Nothing here computes a statistic: the numbers are :func:`kagreport.runs.history`'s.
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from kagreport._errors import KagreportError, SiteError
from kagreport._format import (
    difference_interval,
    is_proportion,
    p_value,
    percent_interval,
    score_interval,
)
from kagreport.site._labels import SIMULATED, SIMULATED_NOTICE

if TYPE_CHECKING:
    import pandas as pd

    from kagreport.runs import Run
    from kagreport.site._context import SiteContent

__all__ = ["SiteHistory", "plan_history", "read_history"]


@dataclass
class SiteHistory:
    """What the history page and the index show of a history folder."""

    folder: str
    runs: list[dict[str, Any]] = field(default_factory=list)  # in time order
    skipped: list[str] = field(default_factory=list)  # "entry: reason"
    hidden: list[str] = field(default_factory=list)  # hidden entries left alone
    sections: list[dict[str, Any]] = field(default_factory=list)  # per metric, per system
    simulated: list[str] = field(default_factory=list)  # the SIMULATED runs, in time order
    attrs: dict[str, Any] = field(default_factory=dict)


def read_history(
    site: SiteContent, folder: Path
) -> tuple[dict[str, Run], dict[str, float], SiteHistory]:
    """Every run in ``folder`` (each entry a file or folder :func:`kagreport.read_run`
    reads, in name order), with each one's file time (the fallback when it records none).

    Hidden entries (a leading ".") are left alone; an entry that is not a readable run
    (a README, a stray file) is skipped with one warning naming it and why, listed on the
    page too.

    Raises
    ------
    SiteError
        If ``folder`` is not a folder or holds no readable run.
    """
    from kagreport.sources import read_run

    history = SiteHistory(str(folder))
    try:
        entries = sorted(folder.iterdir(), key=lambda p: p.name)
    except OSError as exc:
        raise SiteError(
            f"cannot read the history folder {folder}: {exc.strerror or exc}", path=folder
        ) from None
    runs: dict[str, Run] = {}
    times: dict[str, float] = {}
    stems = [p.stem if p.is_file() else p.name for p in entries]
    full = {p.name for p in entries}
    for path, stem in zip(entries, stems, strict=True):
        if path.name.startswith("."):
            history.hidden.append(path.name)
            continue
        # A run is named by its stem unless another entry has that stem or that name
        # (`m.json` beside a folder `m` and `m.json.json`): then by its whole name, which
        # no other entry has. Two runs never share a name.
        unique = stems.count(stem) == 1 and (stem == path.name or stem not in full)
        name = stem if unique else path.name
        site.say(f"reading history run {path.name}")
        try:
            run = read_run(path)
            times[name] = path.stat().st_mtime
        except KagreportError as exc:
            # The reason without the path (named once) or the list of formats: "not a run
            # of any format kagreport reads", or what is wrong with the file.
            reason = str(exc).replace(str(path), "").split("; formats:")[0].strip(" :")
            if "kag result tree" in reason:  # a history reads documents: say how to make one
                reason = (
                    "a kag result tree, which is read with its datasets file: convert it "
                    f"first (kagreport convert {path.name} --datasets FILE -o "
                    f"{path.name}.json)"
                )
            history.skipped.append(f"{path.name}: {reason}")
            site.warn(f"history: skipped {path.name}: {reason}")
            continue
        except OSError as exc:
            history.skipped.append(f"{path.name}: {exc.strerror or exc}")
            site.warn(f"history: skipped {path.name}: {exc.strerror or exc}")
            continue
        runs[name] = run
    if history.hidden:
        site.warn(f"history: left hidden entries alone: {', '.join(history.hidden)}")
    if not runs:
        raise SiteError(f"the history folder {folder} holds no run kagreport reads", path=folder)
    return runs, times, history


def plan_history(site: SiteContent, folder: Path) -> SiteHistory:
    """Read the history folder and record the history page and each run's light page.

    Raises
    ------
    SiteError
        As :func:`read_history`.
    """
    from kagreport.runs import history as run_history
    from kagreport.runs._times import kept_file_time, run_time

    runs, times, found = read_history(site, folder)
    site.say(f"testing the history of {len(runs)} runs")
    frame = run_history(runs, fallback_times=times)
    found.attrs = {str(k): v for k, v in frame.attrs.items()}
    slugs = {name: site.slug("history", name) for name in sorted(runs)}
    # Time order as the frame has it; a run with no row (no metric) after, by name.
    ordered = list(frame.drop_duplicates("run").sort_values("position")["run"])
    ordered += sorted(set(runs) - set(ordered))
    for name in ordered:
        run = runs[name]
        # The time and its source as the frame ordered the run by (runs.history's own).
        moment, source = run_time(run.metadata, times[name])
        found.runs.append(
            {
                "name": name,
                "href": f"{slugs[name]}.html",
                "tool": str(run.metadata.get("tool", run.metadata.get("source", "-"))),
                "time": _time_text(moment),
                "source": source,
                "kept": kept_file_time(run.metadata),
                # The SIMULATED notice of a run `kagreport simulate` wrote, as on its run pages.
                "simulated": SIMULATED_NOTICE if run.metadata.get("simulated") else "",
                "systems": len(run.systems),
                "n_rows": len(run),
            }
        )
    for row in found.runs:
        simulated = row["simulated"] and SIMULATED.lower() not in row["name"].lower()
        row["label"] = f"{row['name']} ({SIMULATED})" if simulated else row["name"]
    found.simulated = [row["name"] for row in found.runs if row["simulated"]]
    hrefs = {name: f"{slugs[name]}.html" for name in runs}
    everything = bool(found.runs) and len(found.simulated) == len(found.runs)
    try:
        # Every page and chart of SIMULATED data says so (kagreport.site._labels).
        site.simulated = SIMULATED_NOTICE if everything else ""
        _sections(site, frame, found, hrefs)
        site.page("history/index.html", "history.html.j2", title="History", history=found)
        for row in found.runs:
            mine = frame[frame["run"] == row["name"]]
            site.simulated = row["simulated"]
            site.page(
                f"history/{row['href']}",
                "history_run.html.j2",
                title=row["label"],
                entry=row,
                rows=[_row(r) for r in mine.to_dict("records")],
            )
    finally:
        site.simulated = ""
    return found


def _sections(
    site: SiteContent, frame: pd.DataFrame, found: SiteHistory, hrefs: dict[str, str]
) -> None:
    from kagreport.charts import history_chart

    labels = {row["name"]: row["label"] for row in found.runs}
    for metric in dict.fromkeys(frame["metric"]):
        rows = frame[frame["metric"] == metric]
        for system in dict.fromkeys(rows["system"]):
            mine = rows[rows["system"] == system]
            drawn = history_chart(
                frame,
                metric=str(metric),
                systems=[str(system)],
                hrefs=hrefs,
                simulated=found.simulated,
            )
            chart = site.chart(
                drawn,
                f"history-{site.slug('history-charts', f'{metric}-{system}')}",
                f"{metric} of {system} across runs",
                figure=False,
            )
            found.sections.append(
                {
                    "metric": str(metric),
                    "system": str(system),
                    "chart": chart,
                    "rows": [
                        dict(_row(r), href=hrefs[r["run"]], label=labels[r["run"]])
                        for r in mine.to_dict("records")
                    ],
                    "marked": int(mine["significant"].fillna(False).astype(bool).sum()),
                }
            )


def _row(record: dict[str, Any]) -> dict[str, Any]:
    """One history row as the tables write it (texts from :mod:`kagreport._format`)."""
    proportion = record.get("interval") == "wilson" or is_proportion(str(record["metric"]))
    interval = percent_interval if proportion else score_interval
    change = record["change"]
    defined = isinstance(change, float) and not math.isnan(change)
    significant = record["significant"]
    return {
        "run": str(record["run"]),
        "system": str(record["system"]),
        "metric": str(record["metric"]),
        "value": interval(record["value"], record["low"], record["high"]),
        "n_items": int(record["n_items"]),
        "previous": None if not isinstance(record["previous"], str) else record["previous"],
        "change": difference_interval(
            change, record["change_low"], record["change_high"], proportion=proportion
        )
        if defined
        else "—",
        "p": p_value(record["p_value_holm"]) if defined else "—",
        "method": record["method"] if isinstance(record["method"], str) else "—",
        "pairs": None if _na(record["n_pairs"]) else int(record["n_pairs"]),
        "significant": bool(significant) if not _na(significant) else False,
    }


def _na(value: Any) -> bool:
    import pandas as pd

    return value is None or bool(pd.isna(value))


def _time_text(moment: datetime | None) -> str:
    """``"2026-01-02T10:58:47Z"`` (to the second), or "—" without a time."""
    if moment is None:
        return "—"
    return moment.astimezone(UTC).isoformat(timespec="seconds").replace("+00:00", "Z")


def history_folder(path: str | os.PathLike[str]) -> Path:
    """``path`` as the history folder, or a :class:`SiteError` naming it."""
    folder = Path(path)
    if not folder.exists():
        raise SiteError(f"--history {folder}: no such folder", path=folder)
    if not folder.is_dir():
        raise SiteError(f"--history {folder}: not a folder", path=folder)
    return folder
