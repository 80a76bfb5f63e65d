# Entry points people type. Each one creates .venv on first use.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP_RUN := $(VENV)/.installed-run
STAMP_DEV := $(VENV)/.installed-dev
STAMP_DOCS := $(VENV)/.installed-docs
# Debian's Chromium drives the browser tests (Playwright's own browser download is not used).
CHROMIUM ?= /usr/bin/chromium

.PHONY: demo test test-fast test-soak lint typecheck pytest docs chromium tex eee bench examples example-archive lab clean

# The packages go in with uv (from PyPI, into .venv by pip): it fetches, unpacks and compiles
# in parallel. Compiled at install as pip does: where PYTHONDONTWRITEBYTECODE is set, every
# process would otherwise compile what it imports anew.
UV := $(BIN)/uv
INSTALL = $(UV) pip install --quiet --compile-bytecode --python

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)

$(UV): $(BIN)/python
	$(BIN)/python -m pip install --quiet uv

$(STAMP_RUN): $(UV) pyproject.toml
	$(INSTALL) $(BIN)/python -e '.[all]'
	touch $@

$(STAMP_DEV): $(UV) pyproject.toml
	$(INSTALL) $(BIN)/python -e '.[all,dev]'
	touch $@ $(STAMP_RUN) $(STAMP_LAB) $(STAMP_DOCS)

$(STAMP_DOCS): $(UV) pyproject.toml
	$(INSTALL) $(BIN)/python -e '.[docs]'
	touch $@

# The compiled result-file scanner (src/kagreport/kag/_scan*.c; `kagreport stats` and `find`
# read with it): an install builds it (hatch_build.py), and this rebuilds it when its source
# changes. Without a C compiler kagreport decodes in pure Python (same output, slower): said
# here in one line, not an error.
SCANNER_STAMP := $(VENV)/.scanner
$(SCANNER_STAMP): $(wildcard src/kagreport/kag/_scan*.c src/kagreport/kag/_scan.h) hatch_build.py $(STAMP_RUN)
	@$(BIN)/python hatch_build.py || echo "make: continuing without the C scanner (install a C compiler and Python's headers, e.g. apt-get install gcc python3-dev, for the fast path)" >&2
	@touch $@

## demo: grade the bundled MMLU-Pro philosophy example, print the kag stats table, build the site
demo: $(STAMP_RUN) $(SCANNER_STAMP)
	$(BIN)/kagreport demo
	$(BIN)/kagreport site build -o site/_build

## test: lint, type-check and run the test suite
PYTEST_NEEDS = $(STAMP_DEV) $(SCANNER_STAMP) chromium tex eee
# The three run at once once pytest's prerequisites are in (installs one at a time: apt-get
# holds a lock): mypy's cold run (~40 s) overlaps the tests' start. Each one's output is
# printed whole when it ends (--output-sync); -k: a quick failure (lint) does not stop the
# others, and test fails when any of them fails.
test: $(PYTEST_NEEDS)
	+@$(MAKE) --no-print-directory -j3 -k --output-sync=target PYTEST_NEEDS= lint typecheck pytest

lint: $(STAMP_DEV)
	$(BIN)/ruff check src tests examples benchmarks docs/conf.py docs/_ext hatch_build.py
	$(BIN)/ruff format --check src tests examples benchmarks docs/conf.py docs/_ext hatch_build.py

typecheck: $(STAMP_DEV)
	$(BIN)/mypy

# Two worker processes, each taking whole modules (so module fixtures are built once); the
# suite spends much of its time waiting on kernels, browsers and subprocesses. TEST_WORKERS=0
# runs it in one process. A notebook cell may take 60 s (the tests' cells take seconds): a
# kernel that stops answering, which nbclient sometimes does around widgets (jupyter/nbclient
# issue 312), is retried on a fresh kernel after that, not after the default 10 minutes.
# The suite starts hundreds of Python processes: with PYTHONDONTWRITEBYTECODE set (some CI
# images set it) each would compile kagreport's modules anew, so it is unset here.
# --no-loadscope-reorder: xdist would otherwise hand out modules by their number of tests,
# not in the longest-first order tests/conftest.py sorts them in (LONGEST_FIRST).
TEST_WORKERS ?= 2
pytest: $(PYTEST_NEEDS)
	PYTHONDONTWRITEBYTECODE= KAGREPORT_CHROMIUM=$(CHROMIUM) KAGREPORT_NOTEBOOK_CELL_TIMEOUT=60 \
		$(BIN)/python -m pytest -q -n $(TEST_WORKERS) --dist loadfile --no-loadscope-reorder

## docs: the documentation site in docs/_build/html, opened from disk (offline; a warning or a broken reference fails it)
# -W: warnings are errors; -n: every reference must resolve; --keep-going: all of them are
# reported at once; -E: every page is read again, so a warning is never hidden by a cache.
# tests/test_docs.py builds it the same way.
docs: $(STAMP_DOCS)
	$(BIN)/python -m sphinx -W --keep-going -n -E -q -b html -d docs/_build/doctrees docs docs/_build/html
	@echo "make: the documentation is in docs/_build/html/index.html"

## test-soak: the long soak runs make test leaves out (signals at many random moments, long property runs; minutes, not in CI)
test-soak: $(STAMP_DEV)
	KAGREPORT_NOTEBOOK_CELL_TIMEOUT=60 $(BIN)/python -m pytest -q -m soak

## test-fast: the inner loop: the tests not marked slow (no browser, notebook kernels or signals), first failure stops
test-fast: $(STAMP_DEV)
	$(BIN)/python -m pytest -x -q -m "not slow"

# System packages the tests use, from Debian's packages: each says what it installs and why
# before apt-get runs, and without apt-get or root the tests that need it skip, saying how to
# enable them.
APT_INSTALL = SUDO=; if [ "$$(id -u)" != 0 ]; then \
		if command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then SUDO=sudo; \
		else echo "make: $(1) needs root to install with apt-get: $(2) To run them: sudo apt-get install $(3)" >&2; exit 0; fi; fi; \
	echo "make: installing $(1) for $(4): apt-get install $(3). Stop now (Ctrl-C) and run make test-fast to test without it." >&2; \
	$$SUDO apt-get update -q && \
	$$SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -q $(3)

## chromium: Debian's Chromium for the browser tests (CHROMIUM=/path/to/chromium uses another)
chromium:
	@if [ -x "$(CHROMIUM)" ] || command -v "$(CHROMIUM)" >/dev/null 2>&1; then exit 0; fi; \
	if ! command -v apt-get >/dev/null 2>&1; then \
		echo "make: no Chromium at $(CHROMIUM) and no apt-get to install it: the browser tests (tests/browser) will skip. To run them: make test CHROMIUM=/path/to/chromium" >&2; \
		exit 0; fi; \
	$(call APT_INSTALL,Chromium (about 100 MB),the browser tests (tests/browser) will skip.,chromium,the browser tests (the site and JupyterLab in headless Chromium))

## tex: pdflatex and booktabs for the test that compiles the LaTeX tables (Debian's TeX Live, ~140 MB)
# tests/frames/test_latex.py skips, saying why, where they are missing.
tex:
	@if command -v pdflatex >/dev/null 2>&1 && kpsewhich booktabs.sty >/dev/null 2>&1; then exit 0; fi; \
	if ! command -v apt-get >/dev/null 2>&1; then \
		echo "make: no pdflatex with booktabs.sty, and no apt-get to install them: the LaTeX compile test will skip. To run it, install TeX Live with booktabs." >&2; \
		exit 0; fi; \
	$(call APT_INSTALL,TeX Live (about 140 MB),the LaTeX compile test will skip.,--no-install-recommends texlive-latex-base texlive-latex-recommended,the test that compiles the LaTeX tables (tests/frames/test_latex.py))

## eee: Every Eval Ever's validator in its own .venv-eee (it needs Python >= 3.12; pinned)
# tests/sources/test_eee_validator.py runs it on what `kagreport convert` writes; it skips, saying
# why, only where no Python >= 3.12 is found (python3.12, python3.13 on PATH, or pyenv's).
EEE_VERSION := 0.3.0
EEE_VENV := .venv-eee
STAMP_EEE := $(EEE_VENV)/.installed-$(EEE_VERSION)

eee: $(STAMP_EEE)

$(STAMP_EEE): $(UV)
	@for c in python3.12 python3.13 $${PYENV_ROOT:-$$HOME/.pyenv}/versions/3.12*/bin/python \
			$${PYENV_ROOT:-$$HOME/.pyenv}/versions/3.13*/bin/python; do \
		if "$$c" -c 'import sys; sys.exit(sys.version_info < (3, 12))' >/dev/null 2>&1; then PY=$$c; break; fi; \
	done; \
	if [ -z "$$PY" ]; then \
		echo "No Python >= 3.12 found: the EEE validator test will skip." >&2; exit 0; fi; \
	echo "Installing every-eval-ever $(EEE_VERSION) from PyPI into $(EEE_VENV) ($$PY), once: the EEE validator test runs it." >&2; \
	rm -rf $(EEE_VENV) && "$$PY" -m venv --without-pip $(EEE_VENV) && \
		$(INSTALL) $(EEE_VENV)/bin/python "every-eval-ever==$(EEE_VERSION)" && touch $@

# JupyterLab on this machine only and offline: no news feed, no update check and no extension
# manager asking PyPI; etc/jupyter turns off the front end's news prompt (tests/browser/
# test_jupyterlab.py starts JupyterLab with these flags and that folder).
LAB_FLAGS := --ServerApp.ip=127.0.0.1 --LabApp.news_url=None \
	--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate --LabApp.extension_manager=readonly
LAB_PORT ?= 8888
STAMP_LAB := $(VENV)/.installed-lab

$(STAMP_LAB): $(STAMP_RUN)
	$(INSTALL) $(BIN)/python -e '.[all,lab]'
	touch $@

## lab: open the analyst notebooks in JupyterLab on 127.0.0.1 (installs it into .venv; a browser opens only where there is a display)
lab: $(STAMP_LAB)
	@ROOT=; [ "$$(id -u)" != 0 ] || ROOT=--allow-root; \
		OPEN=--no-browser; [ -z "$$DISPLAY$$WAYLAND_DISPLAY" ] || OPEN=; [ "$$(uname)" != Darwin ] || OPEN=; \
		JUPYTER_CONFIG_PATH="$(CURDIR)/etc/jupyter$${JUPYTER_CONFIG_PATH:+:$$JUPYTER_CONFIG_PATH}" \
		$(BIN)/jupyter lab $$ROOT $$OPEN $(LAB_FLAGS) --ServerApp.port=$(LAB_PORT) --ServerApp.root_dir=notebooks

## bench: speed and memory measurements (not part of the tests)
bench: $(STAMP_DEV) chromium
	$(BIN)/python benchmarks/bench_stats.py
	$(BIN)/python benchmarks/bench_compare.py
	KAGREPORT_CHROMIUM=$(CHROMIUM) $(BIN)/python benchmarks/bench_site.py

## examples: rebuild the MMLU-Pro example (examples/mmlu-pro-philosophy/) from examples/sources/ and pack the archive the package ships
examples: $(STAMP_DEV)
	$(BIN)/python examples/build_mmlu_pro_philosophy.py
	$(BIN)/python examples/pack_mmlu_pro_philosophy.py

## example-archive: pack examples/mmlu-pro-philosophy/ (after editing it) into the package's archive
example-archive: $(STAMP_DEV)
	$(BIN)/python examples/pack_mmlu_pro_philosophy.py

clean:
	rm -rf $(VENV) $(EEE_VENV) build dist docs/_build .pytest_cache .mypy_cache .ruff_cache

## figures: redraw the README's picture (docs/images/accuracy-cost.svg) from the SIMULATED example
.PHONY: figures
figures: $(STAMP_RUN)
	$(BIN)/python examples/build_readme_figure.py
