"""The site configuration of ``kagreport site build``'s options, with their cross-checks."""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Literal, cast

from kagreport._errors import UsageError
from kagreport.site._config import (
    COMPARE_MODES,
    EvaluationSource,
    RunConfig,
    SiteConfig,
    SourceConfig,
)

__all__ = ["config_from_options", "run_name"]

_Path = str | os.PathLike[str]


def run_name(results: _Path) -> str:
    """The default display name of a run: its results folder's, or the folder above a
    folder called ``results`` (``kagreport simulate`` and kag write ``<run>/results``)."""
    folder = Path(results).resolve()
    name = folder.parent.name if folder.name == "results" and folder.parent.name else folder.name
    # A folder name's bytes that are not UTF-8 become U+FFFD, as kag shows such names.
    return os.fsencode(name).decode("utf-8", "replace")


def _check(
    *,
    config: _Path | None,
    results: _Path | None,
    datasets: _Path | None,
    prefix: str,
    name: str | None,
    baseline: str | None,
    compare: str,
    with_notebooks: bool,
) -> None:
    """Refuse options that do not go together (messages name the command's options)."""
    if config is not None and (results or datasets):
        raise UsageError("give either CONFIG or --results/--datasets, not both")
    if datasets and not results:
        raise UsageError("--datasets goes with --results")
    if results is None:
        given = [
            flag
            for flag, value in (
                ("--prefix", prefix),
                ("--name", name),
                ("--baseline", baseline),
                ("--compare", compare != "baseline"),
            )
            if value
        ]
        if given:
            raise UsageError(f"{', '.join(given)}: only for a run given with --results")
    if with_notebooks and (config is not None or results is not None):
        raise UsageError(
            "--with-notebooks goes with the bundled examples (no CONFIG, no --results)"
        )
    if name is not None and not name.strip():
        raise UsageError("--name must not be blank")
    if compare not in COMPARE_MODES:
        raise UsageError(f"--compare must be one of {', '.join(COMPARE_MODES)}, not {compare!r}")
    if results is not None and datasets is None:
        raise UsageError("--results needs --datasets")


# Over 80 lines only with its docstring (one parameter per command-line option).
def config_from_options(
    config: _Path | None = None,
    *,
    title: str | None = None,
    results: _Path | None = None,
    datasets: _Path | None = None,
    prefix: str = "",
    name: str | None = None,
    baseline: str | None = None,
    compare: str = "baseline",
    evaluations: Sequence[_Path] = (),
    notebooks: Sequence[_Path] = (),
    templates: _Path | None = None,
    with_notebooks: bool = False,
    sources: Sequence[_Path] = (),
    history: _Path | None = None,
) -> SiteConfig:  # over 80 lines with the docstring of its twelve options; the code is 30
    """The :class:`SiteConfig` that ``kagreport site build``'s options describe.

    One of three sources: a TOML file (``config``), one kag run (``results`` with
    ``datasets``, and ``prefix``, ``name``, ``baseline``, ``compare``), or, with neither,
    the bundled examples (:meth:`SiteConfig.default`, ``with_notebooks``) unless runs of
    other tools (``sources``) are given. ``title``, ``sources``, ``evaluations``,
    ``notebooks`` and ``templates`` then add to (or, for the title and the templates,
    replace) what that source gives.

    Parameters
    ----------
    config : path, optional
        A site configuration file (TOML).
    title : str, optional
        The site title (default: the configuration's, or ``"kagreport"``).
    results, datasets : path, optional
        The results root and datasets file of one kag run.
    prefix : str
        File-name prefix of the run.
    name : str, optional
        Display name of the run (default: ``run_name`` of ``results``).
    baseline : str, optional
        The setup to compare against.
    compare : {"baseline", "all-pairs"}
        Which pairs of setups to compare.
    evaluations, notebooks : sequence of paths
        Evaluation report files and notebooks to add.
    templates : path, optional
        A folder of templates that replace the package's.
    with_notebooks : bool
        With the bundled examples: also the repository's notebooks.
    sources : sequence of paths
        Runs of other tools (any format :func:`kagreport.read_run` detects), each named
        after its file or folder stem.
    history : path, optional
        A folder of runs whose history page the site adds; alone (no configuration, kag
        run or ``sources``), the site holds only the history.

    Returns
    -------
    SiteConfig

    Raises
    ------
    UsageError
        For options that do not go together (the message names the command's options):
        ``config`` with ``results`` or ``datasets``; ``datasets`` without ``results``, or
        ``results`` without ``datasets``; a run option without ``results``;
        ``with_notebooks`` with ``config`` or ``results``; a blank ``name``; an unknown
        ``compare``.
    KagreportError
        If ``config`` cannot be read or is not valid (:meth:`SiteConfig.from_toml`).
    """
    _check(
        config=config,
        results=results,
        datasets=datasets,
        prefix=prefix,
        name=name,
        baseline=baseline,
        compare=compare,
        with_notebooks=with_notebooks,
    )
    if with_notebooks and sources:
        raise UsageError("--with-notebooks goes with the bundled examples (no --run)")
    if config is not None:
        site = SiteConfig.from_toml(config)
    elif results is not None and datasets is not None:
        site = SiteConfig(
            title=title or "kagreport",
            runs=(
                RunConfig(
                    name=name or run_name(results) or "run",
                    datasets=Path(datasets),
                    results=Path(results),
                    prefix=prefix,
                    baseline=baseline,
                    compare=cast(Literal["baseline", "all-pairs"], compare),  # checked above
                ),
            ),
        )
    elif sources or history is not None:
        site = SiteConfig(title=title or "kagreport")
    else:
        site = SiteConfig.default(notebooks=with_notebooks)
    return dataclasses.replace(
        site,
        title=title or site.title,
        sources=site.sources + tuple(SourceConfig(Path(p)) for p in sources),
        evaluations=site.evaluations + tuple(EvaluationSource.of(Path(p)) for p in evaluations),
        notebooks=site.notebooks + tuple(Path(p) for p in notebooks),
        templates=Path(templates) if templates else site.templates,
        history=Path(history) if history is not None else site.history,
    )
