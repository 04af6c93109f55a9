# Two entry points: `make run` (the app, with demo schedules) and `make test` (everything CI checks).
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: run test lint typecheck pytest bench clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip

$(STAMP): $(BIN)/python pyproject.toml
	$(BIN)/python -m pip install --quiet -e '.[test]'
	touch $(STAMP)

# Until the desktop window exists, `make run` shows what every demo schedule will do.
run: $(STAMP)
	@for spec in resources/demo/*.yaml; do \
		echo; echo "== $$spec"; \
		$(BIN)/schedctl explain "$$spec" || exit $$?; echo; \
		$(BIN)/schedctl preview "$$spec" --count 8 || exit $$?; \
	done

test: $(STAMP)
	$(BIN)/ruff check core scheduler_gui tests bench
	$(BIN)/ruff format --check core scheduler_gui tests bench
	$(BIN)/mypy
	QT_QPA_PLATFORM=offscreen $(BIN)/python -m pytest

lint: $(STAMP)
	$(BIN)/ruff check core scheduler_gui tests bench
	$(BIN)/ruff format --check core scheduler_gui tests bench

typecheck: $(STAMP)
	$(BIN)/mypy

pytest: $(STAMP)
	QT_QPA_PLATFORM=offscreen $(BIN)/python -m pytest

bench: $(STAMP)
	$(BIN)/python bench/preview_bench.py
	$(BIN)/python bench/materialize_bench.py
	$(BIN)/python bench/engine_bench.py
	$(BIN)/python bench/recovery_bench.py --days 1

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache
