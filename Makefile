# Two commands do all set-up on a fresh machine: `make run` and `make test`.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
HANDBOOK := examples/handbook

.PHONY: run test install install-dev services clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip

# Stamp files so that re-running only reinstalls when pyproject.toml changes.
$(VENV)/.installed: pyproject.toml | $(BIN)/python
	$(BIN)/pip install --quiet -e .
	touch $@

$(VENV)/.installed-dev: pyproject.toml | $(BIN)/python
	$(BIN)/pip install --quiet -e '.[dev]'
	touch $@ $(VENV)/.installed

install: $(VENV)/.installed
install-dev: $(VENV)/.installed-dev

run: install
	$(BIN)/threadsage run --demo $(HANDBOOK)

# PostgreSQL and Redis are part of the suite: start them when they are down (see .ci/run).
services:
	@bash scripts/ensure-services.sh

test: install-dev services
	$(BIN)/python -m pytest

clean:
	rm -rf $(VENV) data .pytest_cache
