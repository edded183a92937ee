# dpfix: every target does its own set-up on a fresh Debian machine.
SHELL := /bin/bash
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.dpfix-installed
SYSTEM_PACKAGES := libcdd-dev libgmp-dev
COQ_PACKAGES := coq libcoq-mathcomp-ssreflect libcoq-mathcomp-algebra
COQC ?= coqc
COQFLAGS := -R . DpfixFormal -w -notation-overridden,-ambiguous-paths
RUN_OUT ?= out/run
# pytest-xdist workers for `make test`: one per core (`make test JOBS=0`: none, in one process).
JOBS ?= auto

.PHONY: test run verify verify-full lint bench notebooks sysdeps proofs coqdeps clean

# The package byte-compiled once: where PYTHONDONTWRITEBYTECODE is set, every process the
# tests start (the commands, the notebooks' kernels, the workers) would compile it again.
test: $(STAMP)
	$(BIN)/ruff check src tests proofs_checks benchmarks notebooks
	$(BIN)/python -m compileall -q src proofs_checks
	$(BIN)/python -m pytest -n $(JOBS) --dist worksteal
	$(BIN)/dpfix verify --quick --jobs $$(nproc)

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

# The Coq/MathComp proof of Theorem A (formal/, docs/formal.md): compile every
# file, then require Print Assumptions to report no axiom for any main statement.
proofs: coqdeps
	@if grep -nwE 'Admitted|admit|Axiom|Axioms|Conjecture|Parameter|Parameters' formal/*.v; then \
	  echo "dpfix: formal/ must hold no Admitted, admit, Axiom, Conjecture or Parameter" >&2; exit 1; fi
	cd formal && coq_makefile -f _CoqProject -o Makefile.coq && $(MAKE) --no-print-directory -f Makefile.coq
	@cd formal && out=$$($(COQC) $(COQFLAGS) Assumptions.v) && echo "$$out" && \
	  want=$$(grep -c '^Print Assumptions' Assumptions.v) && \
	  got=$$(echo "$$out" | grep -cx 'Closed under the global context') && \
	  lines=$$(echo "$$out" | wc -l) && \
	  if [ "$$got" != "$$want" ] || [ "$$lines" != "$$want" ]; then \
	    echo "dpfix: Print Assumptions: $$got of $$want statements closed under the global context" >&2; exit 1; fi; \
	  echo "dpfix: proofs checked: $$want statements closed under the global context"

# Coq and MathComp from Debian, installed only when coqc cannot load MathComp.
coqdeps:
	@if command -v $(COQC) >/dev/null 2>&1 && [ -d "$$($(COQC) -where)/user-contrib/mathcomp/algebra" ]; then exit 0; fi; \
	missing=""; \
	for p in $(COQ_PACKAGES); do dpkg -s $$p >/dev/null 2>&1 || missing="$$missing $$p"; done; \
	[ -n "$$missing" ] || missing=" $(COQ_PACKAGES)"; \
	if [ "$$(id -u)" != 0 ]; then \
	  echo "dpfix: missing system packages:$$missing; install them with: sudo apt-get install$$missing" >&2; exit 1; \
	fi; \
	echo "dpfix: installing system packages:$$missing"; \
	export DEBIAN_FRONTEND=noninteractive; \
	apt-get update -qq && apt-get install -y -qq $$missing >/dev/null

$(STAMP): pyproject.toml | sysdeps
	@$(PYTHON) -c 'import sys; sys.exit(sys.version_info < (3, 11))' || \
	  { echo "dpfix: Python >= 3.11 required ($(PYTHON) is older)" >&2; exit 1; }
	[ -x $(BIN)/python ] || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --disable-pip-version-check -e '.[dev]'
	touch $(STAMP)

clean:
	rm -rf $(VENV) out .pytest_cache .ruff_cache
	cd formal && rm -f Makefile.coq Makefile.coq.conf .Makefile.coq.d *.vo *.vok *.vos *.glob .*.aux
