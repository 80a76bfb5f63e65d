"""The site configuration: which runs, evaluations and notebooks a site shows.

A configuration is a frozen :class:`SiteConfig`, built in code or read from TOML by
:meth:`SiteConfig.from_toml`::

    title = "Our KAG benchmark"
    templates = "templates"          # optional: templates here replace the package's
    evaluations = ["judged.json"]    # AnswerEvaluation / RetrievalEvaluation / EvaluationComparison
    notebooks = ["../notebooks/01-grading-a-run.ipynb"]

    [[runs]]
    name = "MMLU-Pro philosophy"     # display name
    datasets = "datasets.json"
    results = "results"
    prefix = ""                      # optional
    baseline = "some-setup"          # optional; default: the top-ranked setup
    compare = "baseline"             # or "all-pairs"

    [[sources]]                      # a run of another tool (kagreport.read_run)
    path = "promptfoo/results.json"  # its file or folder
    format = "promptfoo"             # optional; detected from the path
    name = "Prompt A/B"              # optional; default: the file or folder stem
    baseline = "some-system"         # optional; default: the top-ranked system
    compare = "baseline"             # or "all-pairs"

Relative paths are relative to the TOML file.
"""

from __future__ import annotations

import os
import tomllib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from kagreport._errors import KagreportError, NotUTF8Error, SiteError
from kagreport._io import read_regular_file

if TYPE_CHECKING:
    from kagreport.evaluation import AnswerEvaluation, EvaluationComparison, RetrievalEvaluation

    Report = AnswerEvaluation | RetrievalEvaluation | EvaluationComparison

__all__ = ["COMPARE_MODES", "EvaluationSource", "RunConfig", "SiteConfig", "SourceConfig"]

#: The values of a run's ``compare`` key.
COMPARE_MODES = ("baseline", "all-pairs")

_RUN_KEYS = ("name", "datasets", "results", "prefix", "baseline", "compare", "attribution")
_SOURCE_KEYS = ("path", "format", "name", "baseline", "compare", "attribution")
_TOP_KEYS = ("title", "runs", "sources", "evaluations", "notebooks", "templates")


@dataclass(frozen=True)
class RunConfig:
    """One kag run shown by the site.

    Attributes
    ----------
    name : str
        Display name; its slug names the run's pages and files.
    datasets : Path
        The datasets (ground truth) file.
    results : Path
        The results root.
    prefix : str
        The file-name prefix of the run.
    baseline : str or None
        Setup every other is compared against; ``None``: the top-ranked setup.
    compare : {"baseline", "all-pairs"}
        Compare each setup with the baseline, or every pair of setups.
    attribution : str
        Source and licence of the data, shown with it (may be empty).
    """

    name: str
    datasets: Path
    results: Path
    prefix: str = ""
    baseline: str | None = None
    compare: Literal["baseline", "all-pairs"] = "baseline"
    attribution: str = ""

    def __post_init__(self) -> None:
        if self.compare not in COMPARE_MODES:
            raise ValueError(
                f"`compare` must be one of {', '.join(COMPARE_MODES)}, not {self.compare!r}"
            )
        if not self.name.strip():
            raise ValueError("`name` must not be empty")


@dataclass(frozen=True)
class SourceConfig:
    """A run of another tool (any format :func:`kagreport.read_run` reads) shown by the site.

    Attributes
    ----------
    path : Path
        The run's file or folder.
    name : str
        Display name; its slug names the run's pages and files. Default: the stem of
        ``path`` (a folder's name).
    format : str or None
        A format name of :data:`kagreport.sources.FORMATS`; None: detected from the path.
    baseline : str or None
        System every other is compared against; None: the top-ranked system.
    compare : {"baseline", "all-pairs"}
    attribution : str
        Source and licence of the data, shown on the run's page.
    """

    path: Path
    name: str = ""
    format: str | None = None
    baseline: str | None = None
    compare: Literal["baseline", "all-pairs"] = "baseline"
    attribution: str = ""

    def __post_init__(self) -> None:
        object.__setattr__(self, "path", Path(self.path))
        if not self.name.strip():
            name = self.path.stem or self.path.name or "run"
            object.__setattr__(self, "name", os.fsencode(name).decode("utf-8", "replace"))
        if self.compare not in COMPARE_MODES:
            raise ValueError(
                f"`compare` must be one of {', '.join(COMPARE_MODES)}, not {self.compare!r}"
            )


@dataclass(frozen=True)
class EvaluationSource:
    """An evaluation report shown on its own page: a file, or a report object already built.

    Attributes
    ----------
    name : str
        Names the page (``evaluations/<slug>.html``) and the data file.
    path : Path or None
        The report file (JSON, JSONL, YAML or TOML), read at build time.
    report : AnswerEvaluation, RetrievalEvaluation or EvaluationComparison, optional
        The report itself, when not read from ``path``.
    """

    name: str
    path: Path | None = None
    report: Report | None = field(default=None, repr=False, compare=False)

    @classmethod
    def of(cls, source: str | os.PathLike[str] | EvaluationSource) -> EvaluationSource:
        """A source from a path (named after the file's stem) or an existing source."""
        if isinstance(source, EvaluationSource):
            return source
        path = Path(source)
        return cls(path.stem, path)


@dataclass(frozen=True)
class SiteConfig:
    """What a site shows (see the module docstring for the TOML form).

    Attributes
    ----------
    title : str
        The site's title.
    runs : tuple of RunConfig
        The kag runs; the first is the one ``data/report.json`` holds.
    sources : tuple of SourceConfig
        Runs of other tools, each with its own pages.
    evaluations : tuple of EvaluationSource
        Evaluation reports, each with a page.
    notebooks : tuple of Path
        Notebooks to execute and convert, each with a page.
    templates : Path or None
        A folder of templates that replace the package's of the same name.
    source : Path or None
        The TOML file this configuration was read from (for messages).
    """

    title: str = "kagreport"
    runs: tuple[RunConfig, ...] = ()
    sources: tuple[SourceConfig, ...] = ()
    evaluations: tuple[EvaluationSource, ...] = ()
    notebooks: tuple[Path, ...] = ()
    templates: Path | None = None
    source: Path | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "runs", tuple(self.runs))
        object.__setattr__(self, "sources", tuple(self.sources))
        object.__setattr__(
            self, "evaluations", tuple(EvaluationSource.of(e) for e in self.evaluations)
        )
        object.__setattr__(self, "notebooks", tuple(Path(n) for n in self.notebooks))
        if self.templates is not None:
            object.__setattr__(self, "templates", Path(self.templates))

    @classmethod
    def from_toml(cls, path: str | os.PathLike[str]) -> SiteConfig:
        """Read a site configuration file.

        Raises
        ------
        KagreportError
            If the file cannot be read or parsed, or a key is missing, unknown or has a bad
            value; the message names the file and the key.
        """
        source = Path(path)
        try:
            data = tomllib.loads(read_regular_file(source).decode())
        except OSError as exc:
            raise SiteError(
                f"cannot read the site configuration {source}: {exc.strerror or exc}", path=source
            ) from None
        except UnicodeDecodeError as exc:  # tomllib decodes the whole file: the file's offset
            raise NotUTF8Error("the site configuration", source, exc.start) from None
        except tomllib.TOMLDecodeError as exc:
            raise SiteError(
                f"the site configuration {source} is not valid TOML: {exc}", path=source
            ) from None
        return cls.from_mapping(data, base=source.parent, source=source)

    # Over 80 lines with its docstring: each key of the configuration checked in turn.
    @classmethod
    def from_mapping(
        cls,
        data: Mapping[str, Any],
        *,
        base: str | os.PathLike[str] = ".",
        source: str | os.PathLike[str] | None = None,
    ) -> SiteConfig:
        """Build from the parsed TOML document; relative paths are resolved against ``base``.

        Raises
        ------
        KagreportError
            For a missing, unknown or invalid key (named, with the file).
        """
        where = str(source) if source is not None else "the site configuration"
        root = Path(base)

        def fail(key: str, problem: str) -> KagreportError:
            return KagreportError(f"{where}: `{key}` {problem}", path=source)

        def text(table: Mapping[str, Any], key: str, name: str, default: str | None) -> str:
            value = table.get(key, default)
            if value is None:
                raise fail(name, "is required")
            if not isinstance(value, str):
                raise fail(name, f"must be a string, not {type(value).__name__}")
            return value

        def a_path(table: Mapping[str, Any], key: str, name: str) -> Path:
            value = text(table, key, name, None)
            if not value:
                raise fail(name, "must not be empty")
            return root / value

        def paths(key: str) -> list[Path]:
            value = data.get(key, [])
            if not isinstance(value, list) or not all(isinstance(v, str) and v for v in value):
                raise fail(key, "must be a list of file paths (strings)")
            return [root / v for v in value]

        unknown = sorted(set(data) - set(_TOP_KEYS))
        if unknown:
            raise fail(unknown[0], f"is not a known key; known keys: {', '.join(_TOP_KEYS)}")
        title = text(data, "title", "title", "kagreport")
        raw_runs = data.get("runs", [])
        if not isinstance(raw_runs, list) or not all(isinstance(r, dict) for r in raw_runs):
            raise fail("runs", "must be an array of tables ([[runs]])")
        runs = []
        names: set[str] = set()
        for index, table in enumerate(raw_runs):
            at = f"runs[{index}]"
            extra = sorted(set(table) - set(_RUN_KEYS))
            if extra:
                raise fail(f"{at}.{extra[0]}", f"is not a known key; known: {', '.join(_RUN_KEYS)}")
            name = text(table, "name", f"{at}.name", None)
            if not name.strip():
                raise fail(f"{at}.name", "must not be empty")
            if name in names:
                raise fail(f"{at}.name", f"repeats the run name {name!r}")
            names.add(name)
            compare, baseline = _comparing(table, at, fail, text, "setup")
            runs.append(
                RunConfig(
                    name=name,
                    datasets=a_path(table, "datasets", f"{at}.datasets"),
                    results=a_path(table, "results", f"{at}.results"),
                    prefix=text(table, "prefix", f"{at}.prefix", ""),
                    baseline=baseline,
                    compare="all-pairs" if compare == "all-pairs" else "baseline",
                    attribution=text(table, "attribution", f"{at}.attribution", ""),
                )
            )
        sources = _sources(data, fail, text, a_path)
        templates = data.get("templates")
        if templates is not None and (not isinstance(templates, str) or not templates):
            raise fail("templates", "must be a folder path (a non-empty string)")
        return cls(
            title=title,
            runs=tuple(runs),
            sources=sources,
            evaluations=tuple(EvaluationSource.of(p) for p in paths("evaluations")),
            notebooks=tuple(paths("notebooks")),
            templates=None if templates is None else root / templates,
            source=None if source is None else Path(source),
        )

    @classmethod
    def default(
        cls, *, notebooks: bool = False, notebooks_dir: str | os.PathLike[str] | None = None
    ) -> SiteConfig:
        """The bundled examples: the MMLU-Pro philosophy run, a SIMULATED kag run (the
        one with costs: retrieval time, context length, graph elements, so the
        accuracy-against-cost chart has data), the LLMBar judges, the fast-graphrag
        retrievals, two Inspect AI logs and SIMULATED retrieval and answers of two setups
        (:func:`kagreport.examples.simulated_rag`, for retrieval against answer).

        The simulated run is written by :func:`kagreport.examples.simulated_kag_run` (fixed seed:
        the same bytes every time) into a temporary folder removed when the process
        exits; its name, attribution and charts say SIMULATED.

        Parameters
        ----------
        notebooks : bool
            Also the analyst notebooks (``*.ipynb`` of ``notebooks_dir``, when it exists).
        notebooks_dir : path, optional
            Default: the repository's ``notebooks/`` folder, found beside ``src/`` of a
            source checkout (absent from an installed package).
        """
        from kagreport.examples import (
            FAST_GRAPHRAG_ATTRIBUTION,
            LLMBAR_ATTRIBUTION,
            fast_graphrag_2wiki,
            inspect_popularity,
            llmbar_natural,
            mmlu_pro_philosophy,
            simulated_rag,
        )

        example = mmlu_pro_philosophy()
        run = RunConfig(
            name=example.name,
            datasets=example.datasets,
            results=example.results,
            attribution=example.attribution,
        )
        judged = llmbar_natural(agreement_resamples=200)
        judged = _with_metadata(judged, name="LLMBar Natural", attribution=LLMBAR_ATTRIBUTION)
        sources = [EvaluationSource("llmbar-natural", report=judged)]
        for system, retrieval in fast_graphrag_2wiki().items():
            report = _with_metadata(
                retrieval, name=f"fast-graphrag {system}", attribution=FAST_GRAPHRAG_ATTRIBUTION
            )
            sources.append(EvaluationSource(f"fast-graphrag-{system}", report=report))
        # SIMULATED: retrieval and answers of the same questions per setup, so that the
        # site shows retrieval against answer (no real example records both).
        for setup, (retrieval, answers) in simulated_rag().items():
            slug = setup.lower().replace(" ", "-")
            sources.append(EvaluationSource(f"{slug}-retrieval", report=retrieval))
            sources.append(EvaluationSource(f"{slug}-answers", report=answers))
        found: Sequence[Path] = ()
        if notebooks:
            folder = (
                Path(notebooks_dir)
                if notebooks_dir is not None
                else Path(__file__).resolve().parents[3] / "notebooks"
            )
            if folder.is_dir():
                found = sorted(folder.glob("*.ipynb"))
        logs = inspect_popularity()
        inspect = SourceConfig(
            logs.logs[0].parent,
            name="inspect-popularity",
            format="inspect",
            attribution=logs.attribution,
        )
        return cls(
            title="kagreport: the bundled examples",
            runs=(run, simulated_run()),
            sources=(inspect,),
            evaluations=tuple(sources),
            notebooks=tuple(found),
        )


#: The display name of the default site's simulated run (its slug names its pages).
SIMULATED_RUN_NAME = "SIMULATED KAG run"


def simulated_run() -> RunConfig:
    """The default site's SIMULATED kag run (:func:`kagreport.examples.simulated_kag_run`),
    written into a new temporary folder that is removed when the process exits.

    The folder's path appears nowhere in the site (the results root is not shown), so
    the site stays byte-identical across builds.
    """
    from kagreport.examples import simulated_kag_run

    written = simulated_kag_run()
    return RunConfig(
        name=SIMULATED_RUN_NAME,
        datasets=written.datasets,
        results=written.results,
        compare="baseline",
        attribution=written.attribution,
    )


def _sources(
    data: Mapping[str, Any],
    fail: Callable[[str, str], KagreportError],
    text: Callable[[Mapping[str, Any], str, str, str | None], str],
    a_path: Callable[[Mapping[str, Any], str, str], Path],
) -> tuple[SourceConfig, ...]:
    """The ``[[sources]]`` tables of a configuration, each key checked in turn."""
    raw = data.get("sources", [])
    if not isinstance(raw, list) or not all(isinstance(r, dict) for r in raw):
        raise fail("sources", "must be an array of tables ([[sources]])")
    found = []
    for index, table in enumerate(raw):
        at = f"sources[{index}]"
        extra = sorted(set(table) - set(_SOURCE_KEYS))
        if extra:
            raise fail(f"{at}.{extra[0]}", f"is not a known key; known: {', '.join(_SOURCE_KEYS)}")
        path = a_path(table, "path", f"{at}.path")
        name = text(table, "name", f"{at}.name", "")
        if "name" in table and not name.strip():
            raise fail(f"{at}.name", "must not be empty")
        fmt = table.get("format")
        if fmt is not None:
            from kagreport.sources import FORMATS

            if not isinstance(fmt, str) or fmt not in FORMATS:
                raise fail(f"{at}.format", f"must be one of {', '.join(FORMATS)}, not {fmt!r}")
        compare, baseline = _comparing(table, at, fail, text, "system")
        found.append(
            SourceConfig(
                path,
                name,
                fmt,
                baseline,
                "all-pairs" if compare == "all-pairs" else "baseline",
                text(table, "attribution", f"{at}.attribution", ""),
            )
        )
    return tuple(found)


def _comparing(
    table: Mapping[str, Any],
    at: str,
    fail: Callable[[str, str], KagreportError],
    text: Callable[[Mapping[str, Any], str, str, str | None], str],
    noun: str,
) -> tuple[str, str | None]:
    """A run table's ``compare`` mode and ``baseline`` (a ``noun`` name), checked."""
    compare = text(table, "compare", f"{at}.compare", "baseline")
    if compare not in COMPARE_MODES:
        raise fail(f"{at}.compare", f"must be one of {', '.join(COMPARE_MODES)}, not {compare!r}")
    baseline = table.get("baseline")
    if baseline is not None and (not isinstance(baseline, str) or not baseline):
        raise fail(f"{at}.baseline", f"must be a {noun} name (a non-empty string)")
    return compare, baseline


def _with_metadata(report: Any, **extra: str) -> Any:
    import dataclasses

    return dataclasses.replace(report, metadata={**report.metadata, **extra})
