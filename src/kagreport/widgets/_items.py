""":class:`ItemBrowser`: filter and page through a run's items, responses read lazily."""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import ipywidgets as widgets
import numpy as np
import numpy.typing as npt

from kagreport._errors import KagreportError
from kagreport._format import MISSING, quantity
from kagreport.runs import Run
from kagreport.runs._columns import OUTCOMES
from kagreport.runs._search import response_matcher
from kagreport.sources import as_run
from kagreport.widgets._base import View, describe
from kagreport.widgets._html import (
    RESPONSE_LIMIT,
    esc,
    html_table,
    message_html,
    truncated_html,
)
from kagreport.widgets._runs import lacks_note

__all__ = ["ItemBrowser"]

#: The value of a filter that keeps everything.
ALL = ""

_UNKNOWN, _HIT, _MISS = 0, 1, 2


class ItemBrowser(View):
    """Browse a run's items: filter by setup, dataset, outcome and a regex over responses.

    Filters work on the run's code columns (NumPy, fast at 100,000 items and more).
    Texts come from the run: a kag tree's responses are read from its result files only
    for the rows of the visible page, and, when a pattern is set, for the items the
    other filters keep (as ``kagreport stats find`` reads every file); a run that keeps
    no responses says so. Search results are remembered per pattern, so changing
    another filter does not read again.

    Parameters
    ----------
    report : Run, or what :func:`kagreport.sources.as_run` takes
        A run (a ``StatsReport`` becomes ``Run.from_stats(report)``): its rows are the
        items, its references (with the options' text) the expected answers, its
        ``generation_secs`` cost the generation time.
    page_size : int
        Rows per page.
    max_chars : int
        Characters of a response (and of an error message) shown; the full length
        is stated (PITFALLS.md B15).

    Attributes
    ----------
    setup, dataset, outcome : ipywidgets.Dropdown
        Filters; the value ``""`` keeps everything.
    pattern : ipywidgets.Text
        Regular expression (Rust ``regex`` syntax) searched in each response trimmed
        of Unicode White_Space (as ``stats find``; error records never match). Applied on
        Enter. An invalid pattern shows an error in :attr:`message` and no rows.
    prev_button, next_button : ipywidgets.Button
    matches : numpy.ndarray of int
        The run's rows of every item that passes the filters, sorted by dataset,
        question and setup (in rank order).
    page : int
        The current page, from 0 (settable; clamped).
    rows : list of dict
        The visible rows: setup, dataset, question, outcome, expected, response
        (cut to ``max_chars``), response_length, error (cut), error_length,
        generation_secs.
    error : str or None
        The current problem (an invalid pattern), also shown in :attr:`message`.
    table_html : str
        The visible page as escaped HTML.

    Notes
    -----
    Static fallback (:meth:`to_html`): the filter values, the match count and the
    visible page only (never the whole table, so a saved notebook stays small).
    """

    title = "kagreport ItemBrowser"

    def __init__(
        self, report: Run | Any, *, page_size: int = 50, max_chars: int = RESPONSE_LIMIT
    ) -> None:
        super().__init__()
        if page_size < 1:
            raise ValueError(f"page_size must be at least 1, not {page_size!r}")
        self.page_size = page_size
        self.max_chars = max_chars
        #: The run browsed.
        self.run: Run = as_run(report)
        setups = self._columns(self.run)
        self._n = len(self._outcomes)
        self._order = self._display_order(setups)
        self.setup = widgets.Dropdown(
            options=[("(all)", ALL), *((s, s) for s in setups)], value=ALL, description="Setup"
        )
        self.dataset = widgets.Dropdown(
            options=[("(all)", ALL), *((d, d) for d in sorted(self._names["dataset"]))],
            value=ALL,
            description="Dataset",
        )
        self.outcome = widgets.Dropdown(
            options=[("(all)", ALL), *((o, o) for o in OUTCOMES)],
            value=ALL,
            description="Outcome",
        )
        self.pattern = widgets.Text(
            value="",
            placeholder="Regular expression over responses (Enter)",
            description="Response",
            continuous_update=False,
        )
        self.prev_button = widgets.Button(description="◀ Previous", tooltip="previous page")
        self.next_button = widgets.Button(description="Next ▶", tooltip="next page")
        self.page_label = widgets.HTML()
        self.table_widget = widgets.HTML()
        self.matches: npt.NDArray[np.int64] = np.zeros(0, dtype=np.int64)
        self.rows: list[dict[str, Any]] = []
        self.error: str | None = None
        self.table_html = ""
        self.unreadable = 0
        self._page = 0
        self._searched: str | None = None
        self._search = np.zeros(0, dtype=np.uint8)
        for control in (self.setup, self.dataset, self.outcome, self.pattern):
            control.observe(self._changed, names="value")
        self.prev_button.on_click(lambda _: self.prev_page())
        self.next_button.on_click(lambda _: self.next_page())
        self.children = [
            widgets.HBox([self.setup, self.dataset, self.outcome]),
            self.pattern,
            self.message,
            widgets.HBox([self.prev_button, self.page_label, self.next_button]),
            self.table_widget,
        ]
        self.refresh()

    # ------------------------------------------------------------------ filtering

    def _columns(self, run: Run) -> list[str]:
        """Take the filter columns of the run; return its setups in rank order."""
        self._names = {
            "setup": run.systems,
            "dataset": run.dataset_names,
            "question": run.question_names,
        }
        self._codes = {"setup": run.system, "dataset": run.dataset, "question": run.question}
        self._outcomes = run.outcome
        return list(run.systems)

    def _display_order(self, setups: list[str]) -> npt.NDArray[np.int64]:
        """Item indices sorted by dataset, question (names) and setup (rank order)."""
        if not self._n:
            return np.zeros(0, dtype=np.int64)
        names = self._names

        def ranks(names: tuple[str, ...], order: list[str]) -> npt.NDArray[np.int64]:
            position = {name: k for k, name in enumerate(order)}
            return np.array([position[name] for name in names], dtype=np.int64)

        keys = (
            ranks(names["setup"], setups)[self._codes["setup"]],
            ranks(names["question"], sorted(names["question"]))[self._codes["question"]],
            ranks(names["dataset"], sorted(names["dataset"]))[self._codes["dataset"]],
        )
        return np.lexsort(keys).astype(np.int64)

    def _changed(self, change: Mapping[str, Any]) -> None:
        self.refresh()

    def _code_mask(self, column: str, value: str) -> Any:
        try:
            code = self._names[column].index(value)
        except ValueError:
            return np.zeros(len(self._codes[column]), dtype=bool)
        return self._codes[column] == code

    def refresh(self) -> None:
        """Filter again from the controls, go to the first page and render it."""
        mask = np.ones(self._n, dtype=bool)
        if self.setup.value != ALL:
            mask &= self._code_mask("setup", self.setup.value)
        if self.dataset.value != ALL:
            mask &= self._code_mask("dataset", self.dataset.value)
        if self.outcome.value != ALL:
            mask &= self._outcomes == OUTCOMES.index(self.outcome.value)
        indices = self._order[mask[self._order]]
        self.error = None
        pattern = self.pattern.value
        unsearchable = self._unsearchable()
        if pattern and unsearchable:
            self.error = f"Responses cannot be searched: {unsearchable}."
            indices = indices[:0]
        elif pattern:
            try:
                matches = response_matcher(pattern)
            except KagreportError as exc:  # UsageError: shown, never raised
                self.error = str(exc)
                indices = indices[:0]
            else:
                indices = indices[self._search_hits(pattern, matches, indices)]
        self.matches = indices
        self._page = 0
        self._render()

    def _unsearchable(self) -> str | None:
        """Why the responses cannot be searched, or None."""
        if self.run.responses is None:
            return "the run keeps no responses"
        return None

    def _search_hits(
        self, pattern: str, matches: Any, indices: npt.NDArray[np.int64]
    ) -> npt.NDArray[np.bool_]:
        """Which of ``indices`` have a response that matches; reads only unknown items."""
        if self._searched != pattern:
            self._searched = pattern
            self._search = np.zeros(self._n, dtype=np.uint8)
            self.unreadable = 0
        state = self._search
        responses = self.run.responses
        if responses is not None:
            unknown = indices[state[indices] == _UNKNOWN]
            if len(unknown) > 1000:  # feedback while the kernel reads (the front end shows it)
                self._notify(f"Searching the responses of {len(unknown):,} items…")
            error = OUTCOMES.index("error")
            for i in unknown.tolist():
                hit = False
                if self._outcomes[i] != error:  # an error record never matches, as in find
                    response = responses[i]
                    if response is None:
                        self.unreadable += 1
                    hit = matches(response)
                state[i] = _HIT if hit else _MISS
        hits: npt.NDArray[np.bool_] = state[indices] == _HIT
        return hits

    # ------------------------------------------------------------------ paging

    @property
    def n_pages(self) -> int:
        """Pages of the current matches (at least 1)."""
        return max(1, math.ceil(len(self.matches) / self.page_size))

    @property
    def page(self) -> int:
        """The current page, from 0."""
        return self._page

    @page.setter
    def page(self, value: int) -> None:
        self._page = min(max(0, int(value)), self.n_pages - 1)
        self._render()

    def next_page(self) -> None:
        """Go to the next page (no-op on the last)."""
        self.page = self._page + 1

    def prev_page(self) -> None:
        """Go to the previous page (no-op on the first)."""
        self.page = self._page - 1

    # ------------------------------------------------------------------ rendering

    def _expected(self, index: int) -> str:
        """The gold answer of a row; an option key with the option's text (cut)."""
        run = self.run
        expected = None if run.references is None else run.references[index]
        if expected is None:
            return MISSING
        options = dict(run.options[index] or ()) if run.options is not None else {}
        option = options.get(expected)
        if option is None:
            return expected
        return f"{expected}: {option[:200]}" + ("…" if len(option) > 200 else "")

    def _read(self, index: int) -> dict[str, Any]:
        """A visible row: the run's own texts (a run that keeps none shows the gap)."""
        run = self.run
        seconds = run.costs.get("generation_secs")
        generation = None if seconds is None else float(seconds[index])
        outcome = int(self._outcomes[index])
        response = None if run.responses is None else run.responses[index]
        error = None if run.errors is None else run.errors[index]
        if run.responses is None and error is None:
            error = "(the run keeps no responses)"
        return {
            "setup": run.systems[run.system[index]],
            "dataset": run.dataset_names[run.dataset[index]],
            "question": run.question_names[run.question[index]],
            "outcome": OUTCOMES[outcome] if outcome >= 0 else MISSING,
            "expected": self._expected(index),
            "response": None if response is None else response[: self.max_chars],
            "response_length": None if response is None else len(response),
            "error": None if error is None else error[: self.max_chars],
            "error_length": None if error is None else len(error),
            "generation_secs": None if generation is None or math.isnan(generation) else generation,
        }

    def _render(self) -> None:
        start = self._page * self.page_size
        visible = self.matches[start : start + self.page_size]
        self.rows = [self._read(int(i)) for i in visible]
        total = len(self.matches)
        if self.error is not None:
            self._notify(self.error, kind="error")
        else:
            note = f"{total:,} of {self._n:,} items match"
            if self.unreadable and self.pattern.value:
                note += f" ({self.unreadable:,} responses could not be read)"
            lacking = lacks_note(self.run)
            self._notify(f"{note}. {lacking}".rstrip())
        first = start + 1 if total else 0
        self.page_label.value = esc(
            f"page {self._page + 1} of {self.n_pages} (items {first:,}–{start + len(visible):,})"
        )
        self.prev_button.disabled = self._page == 0
        self.next_button.disabled = self._page >= self.n_pages - 1
        self.table_html = self._table(start)
        self.table_widget.value = self.table_html

    def _table(self, start: int) -> str:
        if not self.rows:
            return message_html("No item to show.")
        rows = [{"n": start + k + 1, **row} for k, row in enumerate(self.rows)]
        columns = [
            ("n", "#"),
            ("setup", "setup"),
            ("dataset", "dataset"),
            ("question", "question"),
            ("outcome", "outcome"),
            ("expected", "expected"),
            ("response", "response"),
            ("error", "error"),
            ("generation_secs", "generation (s)"),
        ]
        formatters = {
            "response": lambda r: self._cut(r["response"], r["response_length"]),
            "error": lambda r: self._cut(r["error"], r["error_length"]) if r["error"] else "",
            "generation_secs": lambda r: quantity(r["generation_secs"]),
        }
        return html_table(rows, columns, raw=("response", "error"), formatters=formatters)

    def _cut(self, text: str | None, length: int | None) -> str:
        """Escaped ``<pre>`` of a text cut to ``max_chars``, stating its full length."""
        return truncated_html(text, self.max_chars, length=length)

    def _controls_state(self) -> dict[str, str]:
        return {
            "setup": self.setup.value or "(all)",
            "dataset": self.dataset.value or "(all)",
            "outcome": self.outcome.value or "(all)",
            "pattern": describe(self.pattern.value) or "(none)",
            "page": f"{self._page + 1} of {self.n_pages}",
        }

    def _sections(self) -> list[str]:
        return [self.table_html]
