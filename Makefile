# Two entry points: `make run` (the app, with demo schedules) and `make test` (everything CI checks).
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: run test lint typecheck pytest bench bench-gui screenshots clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip

$(STAMP): $(BIN)/python pyproject.toml
	$(BIN)/python -m pip install --quiet -e '.[test]'
	touch $(STAMP)

# The desktop app. On first start it copies the demo schedules into the workspace
# (Documents/Tidemark unless --workspace says otherwise), opens the ledger in the
# user's data folder, publishes the demo schedules to it and starts the engine
# (Engine > Start the Engine with the App turns that off). Flags go in ARGS:
# make run ARGS="--workspace ~/schedules --db ~/team-ledger.db"
run: $(STAMP)
	$(BIN)/scheduler-gui $(ARGS)

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

# The benchmarks, run by hand (docs/benchmarks.md); tests/test_benches.py runs each at a tiny size.
# scale_bench runs on PostgreSQL too when TIDEMARK_TEST_PG_URL names a server; pg_floor_bench only then.
bench: $(STAMP)
	$(BIN)/python bench/preview_bench.py
	$(BIN)/python bench/materialize_bench.py
	$(BIN)/python bench/engine_bench.py
	$(BIN)/python bench/job_cost_bench.py
	$(BIN)/python bench/recovery_bench.py --days 1
	$(BIN)/python bench/scale_bench.py --sizes 10,100,1000
	$(BIN)/python bench/pass_bench.py 10 100 1000
	$(BIN)/python bench/count_bench.py
	$(BIN)/python bench/apply_bench.py
	$(BIN)/python bench/alerts_bench.py
	$(BIN)/python bench/spawn_bench.py
	if [ -n "$$TIDEMARK_TEST_PG_URL" ]; then $(BIN)/python bench/pg_floor_bench.py --pg "$$TIDEMARK_TEST_PG_URL"; fi

bench-gui: $(STAMP)
	QT_QPA_PLATFORM=offscreen $(BIN)/python bench/gui_bench.py
	QT_QPA_PLATFORM=offscreen $(BIN)/python bench/monitor_bench.py
	QT_QPA_PLATFORM=offscreen $(BIN)/python bench/window_stress.py --minutes 3

# The README's pictures, rendered offscreen on a fixed clock and a demo ledger.
SCREENSHOT_VIEWS := designer preview timeline whatif monitor attention detail health engines
screenshots: $(STAMP)
	mkdir -p docs/screenshots
	@for view in $(SCREENSHOT_VIEWS); do \
		echo "docs/screenshots/$$view.png"; \
		QT_QPA_PLATFORM=offscreen $(BIN)/scheduler-gui --screenshot docs/screenshots/$$view.png --view $$view \
			|| exit $$?; \
	done
	@echo "docs/screenshots/business-days.png"
	QT_QPA_PLATFORM=offscreen $(BIN)/scheduler-gui --screenshot docs/screenshots/business-days.png --view designer \
		--spec docs/examples/invoice-first-business-day.yaml --size 1280x2000
	@echo "docs/screenshots/wake-alerts.png"
	QT_QPA_PLATFORM=offscreen $(BIN)/scheduler-gui --screenshot docs/screenshots/wake-alerts.png --view wake-alerts \
		--size 1280x1400
	@echo "docs/screenshots/alert-settings.png"
	QT_QPA_PLATFORM=offscreen $(BIN)/scheduler-gui --screenshot docs/screenshots/alert-settings.png --view alert-settings

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache
