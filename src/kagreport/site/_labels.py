"""The SIMULATED label of a run written by ``kagreport simulate``: on its name, on every
page of it and on every chart title, so its numbers are never taken for measurements."""

from __future__ import annotations

from typing import Any

from kagreport.charts._data import SIMULATED, label_title

__all__ = ["SIMULATED", "SIMULATED_NOTICE", "label_spec", "label_title"]

#: The notice of a run ``kagreport simulate`` wrote (``run.metadata["simulated"]``: it leaves
#: SIMULATED.md in the run's folder, beside its results).
SIMULATED_NOTICE = "SIMULATED data: no model was run (SIMULATED.md beside its results says how)."


def label_spec(spec: dict[str, Any]) -> dict[str, Any]:
    """A Vega-Lite ``spec`` whose title says SIMULATED (a shallow copy; ``spec`` is kept).

    The title is a string, or an object whose ``text`` is a string or a list of lines;
    a spec without one gets ``SIMULATED``. SIMULATED is said once: a run name's
    `` (SIMULATED)`` in the title goes.
    """
    labelled = dict(spec)
    title = spec.get("title")
    if isinstance(title, str):
        labelled["title"] = label_title(title)
    elif isinstance(title, dict):
        title = dict(title)
        text = title.get("text")
        if isinstance(text, list) and text:
            # A run name's " (SIMULATED)" may be on any line, or start one where it wrapped.
            joined = "\n".join(str(line) for line in text)
            for said in (f" ({SIMULATED})", f"\n({SIMULATED})"):
                joined = joined.replace(said, "")
            first, *rest = joined.split("\n")
            title["text"] = [label_title(first), *rest]
        elif isinstance(text, str) and text:
            title["text"] = label_title(text)
        else:
            title["text"] = SIMULATED
        labelled["title"] = title
    else:
        labelled["title"] = SIMULATED
    return labelled
