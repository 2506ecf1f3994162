# microagg: `make demo` and `make test` do all set-up on a fresh machine.
PYTHON ?= python3
VENV   ?= .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed-stamp

.PHONY: install demo test test-exhaustive lint typecheck unit nojit docs-cli docs-api docs-api-pages bench bench-scale reproduce-seed000 reproduce-seed001 reproduce-seed002 reproduce-seed004 clean

$(STAMP): pyproject.toml
	@test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[dev]'
	@echo "compiling numba kernels once, ahead of the first run (the default release's and the tutorial's: 20-60 s on 2 cores, with the machine's load)..."
	$(VENV)/bin/microagg doctor --warm-up
	@touch $(STAMP)

install: $(STAMP)

## demo: anonymize the bundled Census file at k=5; result, JSON summary and HTML report in demo-output/
## (the kernels were compiled by `make install`; a run that still has to compile them says so
## and reports that one-time compilation apart from the release's time)
demo: $(STAMP)
	@mkdir -p demo-output
	$(VENV)/bin/microagg anonymize --dataset census -k 5 --method mdav --random-state 0 \
	    -o demo-output/census_k5.csv --summary-json demo-output/census_k5.json \
	    --report demo-output/census_k5.html
	@echo "The microagg command is in $(VENV)/bin: run 'source $(VENV)/bin/activate' to call it"
	@echo "by name in this shell; then docs/tutorial.md walks through a survey file."

## test: lint, type-check, the whole suite, then a fast subset again with numba's JIT off, then
## the API reference (built with warnings as errors, so a broken docstring fails CI)
test: lint typecheck unit nojit docs-api

lint: $(STAMP)
	$(VENV)/bin/ruff check src tests benchmarks

typecheck: $(STAMP)
	$(VENV)/bin/mypy

# the suite in TEST_WORKERS processes (pytest-xdist), each test file whole in one of them
# (its module fixtures are built once); one process: `make unit TEST_WORKERS=0`
TEST_WORKERS ?= 2

unit: $(STAMP)
	$(PY) -m pytest -q -n $(TEST_WORKERS) --dist loadfile -m "not exhaustive" \
	    --durations=25 --doctest-modules src tests

## test-exhaustive: the sweeps too long for every run (each registered method at two k, each
## in a fresh process on a fresh kernel cache: 3-4 min)
test-exhaustive: $(STAMP)
	$(PY) -m pytest -q -m exhaustive tests

# Pure-Python kernels give readable tracebacks; a fast subset is enough to prove they run.
nojit: $(STAMP)
	NUMBA_DISABLE_JIT=1 $(PY) -m pytest -q -n $(TEST_WORKERS) --dist load -m "not slow" \
	    -p no:cacheprovider \
	    tests/partition/test_contract.py tests/partition/test_methods.py tests/aggregate/test_aggregate.py

## docs-cli: regenerate docs/cli.md from the app (a test fails when it is stale)
docs-cli: $(STAMP)
	$(PY) -m microagg.cli._reference > docs/cli.md.tmp && mv docs/cli.md.tmp docs/cli.md

## docs-api: the API reference from the public __all__ and the numpydoc docstrings, HTML in
## docs/reference/_build/html (git-ignored); every Sphinx warning is an error (about 20 s)
docs-api: $(STAMP)
	$(PY) -m sphinx -W --keep-going -q -b html -d docs/reference/_build/doctrees \
	    docs/reference docs/reference/_build/html

## docs-api-pages: rewrite docs/reference/api/ from the public __all__ (a test fails when stale)
docs-api-pages: $(STAMP)
	$(PY) docs/reference/pages.py

## bench: the speed/memory table of benchmarks/ (minutes; not part of make test)
bench: $(STAMP)
	$(PY) benchmarks/bench_mdav.py

## bench-scale: blocking vs exact, 10^6 in memory, 10^7 Parquet out of core (about 5 min)
bench-scale: $(STAMP)
	$(PY) benchmarks/bench_scale.py

## reproduce-seed000: seed 000's experiments, tables and figures (about 10 min; needs matplotlib)
reproduce-seed000: $(STAMP)
	$(PY) -m pip install --quiet -e '.[dev,plots]'
	$(PY) benchmarks/seed000_reproduction.py

## reproduce-seed001: Tables 1 and 3, the Census / Tarragona comparison, speed (about 1 min)
reproduce-seed001: $(STAMP)
	$(PY) benchmarks/seed001_reproduction.py

## reproduce-seed002: MAGE / l-diversity on Adult and the ARX side-by-side (about 5 min)
reproduce-seed002: $(STAMP)
	$(PY) benchmarks/seed002_adult.py

## reproduce-seed004: CDT on Adult samples and the comparison (about 1 min)
reproduce-seed004: $(STAMP)
	$(PY) benchmarks/seed004_cdt.py

clean:
	rm -rf $(VENV) demo-output .pytest_cache .mypy_cache .ruff_cache
	find . -name __pycache__ -type d -prune -exec rm -rf {} +
