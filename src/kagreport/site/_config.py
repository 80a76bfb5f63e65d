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

import json
import os
import typing
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Literal

import msgspec

from kagreport._document._config import decode_config, read_toml
from kagreport._errors import SiteError

if TYPE_CHECKING:
    from kagreport.evaluation import AnswerEvaluation, EvaluationComparison, RetrievalEvaluation

    Report = AnswerEvaluation | RetrievalEvaluation | EvaluationComparison

__all__ = ["COMPARE_MODES", "EvaluationSource", "RunConfig", "SiteConfig", "SourceConfig"]

# The file's shape (types only; relative paths resolved when the config is built).
# A name holds a character other than white space; a path is not empty.
_Name = Annotated[str, msgspec.Meta(pattern=r"\S")]
_PathText = Annotated[str, msgspec.Meta(min_length=1)]
_Compare = Literal["baseline", "all-pairs"]

#: The values of a run's ``compare`` key.
COMPARE_MODES: tuple[str, ...] = typing.get_args(_Compare)


class _RunTable(msgspec.Struct, forbid_unknown_fields=True, frozen=True):
    name: _Name
    datasets: _PathText
    results: _PathText
    prefix: str = ""
    baseline: _Name | None = None
    compare: _Compare = "baseline"
    attribution: str = ""


class _SourceTable(msgspec.Struct, forbid_unknown_fields=True, frozen=True):
    path: _PathText
    format: str | None = None
    name: _Name | None = None
    baseline: _Name | None = None
    compare: _Compare = "baseline"
    attribution: str = ""


class _SiteFile(msgspec.Struct, forbid_unknown_fields=True, frozen=True):
    title: str = "kagreport"
    runs: tuple[_RunTable, ...] = ()
    sources: tuple[_SourceTable, ...] = ()
    evaluations: tuple[_PathText, ...] = ()
    notebooks: tuple[_PathText, ...] = ()
    templates: _PathText | None = None


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
        A format name :func:`kagreport.read_run` takes (``"kagreport"``, ``"kag"``,
        ``"lm-eval"``, ``"helm"``, ``"promptfoo"``, ``"openai-evals"``, ``"inspect"``,
        ``"eee"``); None: detected from the path.
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
    history : Path or None
        A folder of runs (any format :func:`kagreport.read_run` reads) whose history page
        the site adds (``kagreport site build --history``).
    """

    title: str = "kagreport"
    runs: tuple[RunConfig, ...] = ()
    sources: tuple[SourceConfig, ...] = ()
    evaluations: tuple[EvaluationSource, ...] = ()
    notebooks: tuple[Path, ...] = ()
    templates: Path | None = None
    source: Path | None = None
    history: Path | None = None

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
        SiteError
            If the file cannot be read or parsed, or a key is missing, unknown or has a bad
            value; one line naming the file and the key path (``runs[0].compare``).
        """
        source = Path(path)
        data = read_toml(source, "the site configuration", SiteError)
        return cls.from_mapping(data, base=source.parent, source=source)

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
        SiteError
            For a missing, unknown or invalid key (named, with the file).
        """
        where = str(source) if source is not None else "the site configuration"
        root = Path(base)
        parsed = decode_config(data, _SiteFile, where, SiteError, path=source)
        names: set[str] = set()
        for index, run in enumerate(parsed.runs):
            if run.name in names:
                raise SiteError(
                    f"{where}: `runs[{index}].name` repeats the run name {json.dumps(run.name)}",
                    path=source,
                )
            names.add(run.name)
        for index, table in enumerate(parsed.sources):
            if table.format is not None:
                from kagreport.sources._registry import FORMATS

                if table.format not in FORMATS:
                    raise SiteError(
                        f"{where}: `sources[{index}].format` must be one of "
                        f"{', '.join(FORMATS)}, not {json.dumps(table.format)}",
                        path=source,
                    )
        return cls(
            title=parsed.title,
            runs=tuple(
                RunConfig(
                    name=r.name,
                    datasets=root / r.datasets,
                    results=root / r.results,
                    prefix=r.prefix,
                    baseline=r.baseline,
                    compare=r.compare,
                    attribution=r.attribution,
                )
                for r in parsed.runs
            ),
            sources=tuple(
                SourceConfig(
                    root / t.path, t.name or "", t.format, t.baseline, t.compare, t.attribution
                )
                for t in parsed.sources
            ),
            evaluations=tuple(EvaluationSource.of(root / p) for p in parsed.evaluations),
            notebooks=tuple(root / n for n in parsed.notebooks),
            templates=None if parsed.templates is None else root / parsed.templates,
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
            fast_graphrag_2wiki,
            inspect_popularity,
            llmbar_natural,
            mmlu_pro_philosophy,
            simulated_rag,
        )
        from kagreport.examples._attribution import FAST_GRAPHRAG_ATTRIBUTION, LLMBAR_ATTRIBUTION

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


def _with_metadata(report: Any, **extra: str) -> Any:
    import dataclasses

    return dataclasses.replace(report, metadata={**report.metadata, **extra})
