# dpfix: every target does its own set-up on a fresh Debian machine.
SHELL := /bin/bash
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.dpfix-installed
SYSTEM_PACKAGES := libcdd-dev libgmp-dev
RUN_OUT ?= out/run
# pytest-xdist workers for `make test`: one per core (`make test JOBS=0`: none, in one process).
JOBS ?= auto

.PHONY: test run verify verify-full lint bench notebooks sysdeps clean

test: $(STAMP)
	$(BIN)/ruff check src tests proofs_checks benchmarks notebooks
	$(BIN)/python -m pytest -n $(JOBS) --dist worksteal
	$(BIN)/dpfix verify --quick

run: $(STAMP)
	$(BIN)/dpfix privatize --demo --out-dir $(RUN_OUT) --force
	$(BIN)/dpfix explore --n 3 --lam 2 --z 1/2 1/3 1/6
	$(BIN)/dpfix explore example1

verify-full: $(STAMP)
	$(BIN)/dpfix verify --full

lint: $(STAMP)
	$(BIN)/ruff check src tests proofs_checks benchmarks notebooks

bench: $(STAMP)
	$(BIN)/python benchmarks/run.py

# Re-execute the notebooks in place: they are committed with their outputs.
notebooks: $(STAMP)
	$(BIN)/python notebooks/execute.py

# System packages: libcdd and GMP for pycddlib's exact arithmetic, a C compiler
# and the Python headers to build it, venv support. Installed only when missing.
sysdeps:
	@missing=""; \
	for p in $(SYSTEM_PACKAGES); do dpkg -s $$p >/dev/null 2>&1 || missing="$$missing $$p"; done; \
	command -v cc >/dev/null 2>&1 || missing="$$missing gcc"; \
	if command -v $(PYTHON) >/dev/null 2>&1; then \
	  inc=$$($(PYTHON) -c 'import sysconfig; print(sysconfig.get_paths()["include"])'); \
	  [ -f "$$inc/Python.h" ] || missing="$$missing python3-dev"; \
	  $(PYTHON) -c 'import ensurepip, venv' >/dev/null 2>&1 || missing="$$missing python3-venv"; \
	else missing="$$missing python3 python3-dev python3-venv"; fi; \
	if [ -n "$$missing" ]; then \
	  if [ "$$(id -u)" != 0 ]; then \
	    echo "dpfix: missing system packages:$$missing; install them with: sudo apt-get install$$missing" >&2; exit 1; \
	  fi; \
	  echo "dpfix: installing system packages:$$missing"; \
	  export DEBIAN_FRONTEND=noninteractive; \
	  apt-get update -qq && apt-get install -y -qq $$missing >/dev/null; \
	fi

$(STAMP): pyproject.toml | sysdeps
	@$(PYTHON) -c 'import sys; sys.exit(sys.version_info < (3, 11))' || \
	  { echo "dpfix: Python >= 3.11 required ($(PYTHON) is older)" >&2; exit 1; }
	[ -x $(BIN)/python ] || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --disable-pip-version-check -e '.[dev]'
	touch $(STAMP)

clean:
	rm -rf $(VENV) out .pytest_cache .ruff_cache
