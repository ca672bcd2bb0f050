# Two commands from a fresh clone: `make run` and `make test`. Both set everything up.
# `make docs` builds the manual (docs/) into build/site/.
VENV ?= .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed

.PHONY: install run test lint lint-imports typecheck pytest bench clean system-deps

install: $(STAMP)

# System packages the station needs (none are required by the core yet; later readers add
# theirs here). As root they are installed with apt-get; otherwise the command is printed.
SYSTEM_PACKAGES ?= gnome-cards-data librsvg2-bin libzbar0 chromium
system-deps:
	@if [ -n "$(SYSTEM_PACKAGES)" ]; then \
	  missing=$$(for p in $(SYSTEM_PACKAGES); do dpkg -s $$p >/dev/null 2>&1 || echo $$p; done); \
	  if [ -n "$$missing" ]; then \
	    if [ "$$(id -u)" = 0 ]; then apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $$missing; \
	    else echo "Missing system packages. Run: sudo apt-get install -y $$missing"; exit 1; fi; \
	  fi; \
	fi

$(STAMP): pyproject.toml | system-deps
	python3 -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	# Editable: a .pth file puts the checkout on sys.path (pyproject.toml's package-dir
	# "" = "." tells setuptools so, without its deprecated compat mode), no import hook:
	# `station replay` starts as fast, and scripts/ can import devkit/.
	$(PY) -m pip install -q -e '.[dev]'
	touch $(STAMP)
	$(MAKE) core

.PHONY: core
# The pure core's hot modules compiled with mypyc (mypy's, in the dev extras) into
# build/core/, beside the sources, not over them: station/core/__init__.py uses them while
# they are as new as their .py, unless STATION_PURE_CORE=1. No compiler: the pure core.
core: install
	$(PY) scripts/build_core.py

# Ctrl-C stops the demo cleanly: the station shuts down and exits 130, which make would
# report as "Error 130"; so the recipe's shell ignores SIGINT and takes 130 as done (the
# station still gets SIGINT and handles it). DEMO_CONFIG and RUN_ARGS: for tests.
DEMO_CONFIG ?= config/demo.toml
RUN_ARGS ?=
run: install
	@trap '' INT; $(VENV)/bin/station run --config $(DEMO_CONFIG) $(RUN_ARGS) || [ $$? -eq 130 ]

lint: install
	$(VENV)/bin/ruff check station drivers calibration tests benchmarks examples devkit scripts
	$(VENV)/bin/ruff format --check station drivers calibration tests benchmarks examples devkit scripts

# The layers of docs/architecture.md, as import-linter contracts in pyproject.toml.
lint-imports: install
	$(VENV)/bin/lint-imports --no-cache

typecheck: install
	$(VENV)/bin/mypy

# Everything once (the compiled core where it is built), then the pure suites again on the
# pure-Python core (STATION_PURE_CORE=1): both must decide alike.
pytest: install core
	$(VENV)/bin/pytest
	STATION_PURE_CORE=1 $(MAKE) --no-print-directory test-fast

.PHONY: lint-js
# The dashboard's JavaScript: Biome's recommended rules (biome.json); a warning fails too.
lint-js: install
	$(VENV)/bin/biome lint --error-on-warnings

test: lint lint-imports lint-js typecheck docs pytest

.PHONY: docs
# The manual (docs/, mkdocs.yml) as a site in build/site/: offline (the builtin theme), and
# --strict: a link to a missing page, anchor or file of the repository fails (about 1 s).
docs: install
	$(VENV)/bin/mkdocs build --strict --site-dir build/site

bench: install
	$(PY) -m benchmarks

.PHONY: test-fast
# The pure suites only (no server, broker, browser, camera, pty or slow test): under 30 s. The
# folders of the marked suites are not even collected (OpenCV, Playwright imports), nor is
# schemathesis's module (it builds its cases from the app's schema at collection: 4-5 s).
test-fast: install
	$(VENV)/bin/pytest -p no:cacheprovider --ignore=tests/hil --ignore=tests/browser \
	  --ignore=tests/camera --ignore=tests/service/test_schemathesis.py -m "not server and not hil and not browser and not camera and not slow and not floor"

clean:
	rm -rf $(VENV) build *.egg-info .pytest_cache .mypy_cache .ruff_cache

.PHONY: screenshots
# The manual's pictures of the dashboard, the floor view and the report (docs/*-1366.png,
# docs/*-390.png): demo stations at a dealer's pace, photographed by Chromium (5 to 15 min).
screenshots: install
	$(PY) scripts/dashboard_screenshot.py

.PHONY: floor-demo
# A whole floor on 127.0.0.1: a broker (the pinned nats-server wheel), four demo stations
# (the sim driver, as `make run`) and the floor service; prints the addresses and tokens.
# `make floor-demo CLUSTER=3`: a JetStream cluster of three brokers instead of one.
floor-demo: install
	$(PY) scripts/floor_demo.py $(if $(CLUSTER),--cluster $(CLUSTER))
