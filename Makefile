# Two entry points (see README): `make run` and `make test`.
# `make test` also runs the linter and the formatter check (ruff, configured in pyproject.toml),
# the documentation's strict build (mkdocs.yml: a broken link between pages fails),
# and the tests on every core (pytest-xdist, one test file per worker, the longest files first:
# tests/conftest.py), printing the 25 slowest
# (the suite has a 10-minute goal on the 2-core CI machine). It leaves out the extended tier
# (tests marked `extended`: expensive, their code also run by a cheaper test; tests/conftest.py);
# `make test-all` runs every test (run it before a release or a stop).
# Each creates .venv in the checkout on first use and installs the package into it.
PY ?= python3
VENV := .venv
BIN := $(VENV)/bin

.PHONY: run test test-all install clean

$(BIN)/.installed: pyproject.toml constraints.txt
	$(PY) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip
	$(BIN)/python -m pip install -q -c constraints.txt -e '.[test]'
	touch $@

install: $(BIN)/.installed

run: $(BIN)/.installed
	$(BIN)/jaxsched demo

test: $(BIN)/.installed
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mkdocs build --strict --quiet
	$(BIN)/python -m pytest -n auto --dist loadfile --no-loadscope-reorder --durations=25 \
		-m "not extended" tests

test-all: $(BIN)/.installed
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/python -m pytest -n auto --dist loadfile --no-loadscope-reorder --durations=25 tests

clean:
	rm -rf $(VENV)
