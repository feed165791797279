# Meadhall: `make run` serves http://localhost:8000 (SQLite under DATA_DIR; the `ready` log line names the
# address); `make test` runs lint and the whole suite.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
HOST   ?= 127.0.0.1
PORT   ?= 8000

.PHONY: install install-test run test lint bench docs clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip

$(VENV)/.installed: pyproject.toml | $(BIN)/python
	$(BIN)/pip install -q -e .
	touch $@

$(VENV)/.test-installed: pyproject.toml | $(BIN)/python
	$(BIN)/pip install -q -e '.[test]'
	touch $(VENV)/.installed $@

install: $(VENV)/.installed

install-test: $(VENV)/.test-installed

run: install
	$(BIN)/meadhall migrate
	$(BIN)/meadhall serve --host $(HOST) --port $(PORT)

lint: install-test
	$(BIN)/ruff check meadhall tests bench
	$(BIN)/mypy
	$(BIN)/lint-imports

test: install-test lint
	$(BIN)/pytest -q -p no:cacheprovider -n auto

bench: install-test
	$(BIN)/python -m bench

# docs/reference/ from the code's registries (tests/test_reference_docs.py fails when it is stale).
docs: install
	$(BIN)/python -m meadhall.reference docs/reference

clean:
	rm -rf $(VENV) .pytest_cache .ruff_cache
