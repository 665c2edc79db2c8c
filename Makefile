# Two commands do all set-up on a fresh machine: `make run` and `make test`.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
HANDBOOK := demo/handbook
# The tests run with Python's bytecode caches written even where the environment turns them off
# (PYTHONDONTWRITEBYTECODE): otherwise each pytest worker compiles the package and rewrites the
# asserts of every test module and plugin package (hypothesis, anyio, langsmith) anew, about 6 s of
# CPU per worker and run (docs/performance.md, "The fast tier's CPU, third step").
TEST_ENV := PYTHONDONTWRITEBYTECODE=

.PHONY: run test test-fast lint install install-dev services model-server browser fonts clean

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

# The whole suite: the fast tier on four workers (its tests mostly wait on sockets), then the slow
# tier on three workers (its processes mostly wait too: on timeouts, restarts, a model's latency),
# then the slow tests marked `timed`, one at a time: their claim is a bound on elapsed time, which
# must not share the cores (docs/testing.md, "The slow tier").
test: test-fast model-server browser fonts
	$(TEST_ENV) $(BIN)/python -m pytest -m "slow and not timed" -n 3
	$(TEST_ENV) $(BIN)/python -m pytest -m "slow and timed"

# A real OpenAI-compatible model server for the slow tier (llama-cpp-python + SmolLM2-135M) in
# .venv-model; llama-cpp-python builds from source once (10-17 minutes) and its wheel is cached.
model-server:
	@bash scripts/model-server.sh

# Debian's Chromium for the console's browser test (slow tier), installed when missing.
browser:
	@bash scripts/ensure-browser.sh

# Debian's Chinese font for the screenshots the OCR tests draw (slow tier), installed when missing.
fonts:
	@bash scripts/ensure-fonts.sh

# The edit-test loop: everything but the tests marked slow — all of tests/system/ (real processes),
# and the modules and tests marked `slow` elsewhere (the local embedding model, the eval corpora,
# generated examples); see docs/testing.md. About 100 s of CPU on four workers (docs/performance.md,
# "The fast tier's CPU, third step").
test-fast: install-dev services
	$(TEST_ENV) $(BIN)/python -m pytest -m "not slow" -n 4

# The same checks as .pre-commit-config.yaml, and the import contracts (lint-imports); settings in
# pyproject.toml.
lint: install-dev
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy threadsage
	$(BIN)/lint-imports

clean:
	rm -rf $(VENV) .venv-model data .pytest_cache

# The Docker image's pinned dependencies (deploy/requirements.lock): a fresh venv on Python 3.11
# (the image's Python), the package with its `otel` extra (no torch) plus LOCK_EXTRA, then `pip freeze`.
# The package is built from a copy, so nothing is written into the working tree but the lock.
LOCK        := deploy/requirements.lock
LOCK_PYTHON ?= python3.11
LOCK_DIR    := /tmp/threadsage-lock
# Pins beyond pyproject.toml's ranges, if ever one is needed (`make lock LOCK_EXTRA='pkg==1.2'`).
LOCK_EXTRA  ?=

.PHONY: lock
lock:
	rm -rf $(LOCK_DIR)
	mkdir -p $(LOCK_DIR)/src
	cp -r pyproject.toml README.md threadsage $(LOCK_DIR)/src/
	$(LOCK_PYTHON) -m venv $(LOCK_DIR)/venv
	$(LOCK_DIR)/venv/bin/pip install --quiet --upgrade pip
	$(LOCK_DIR)/venv/bin/pip install --quiet "$(LOCK_DIR)/src[otel]" $(LOCK_EXTRA)
	{ echo "# Pinned dependencies of the Docker image (see Dockerfile). Do not edit by hand."; \
	  echo "# Produced by \`make lock\`: a fresh Python 3.11 venv, \`pip install '.[otel]'$(if $(LOCK_EXTRA), $(LOCK_EXTRA))\`"; \
	  echo "# (no \`local\` extra, so no torch), then \`pip freeze --exclude threadsage\`."; \
	  echo "# Regenerate with \`make lock\` whenever the dependencies in pyproject.toml change."; \
	  $(LOCK_DIR)/venv/bin/pip freeze --exclude threadsage; } > $(LOCK).tmp
	mv $(LOCK).tmp $(LOCK)
	rm -rf $(LOCK_DIR)
