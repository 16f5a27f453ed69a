# Two commands do all the set-up: `make run` and `make test` (see README).
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed
ARGS   ?=
PYTEST_ARGS ?=

.PHONY: run test test-fast screenshots bench clean system-tools

$(STAMP): pyproject.toml
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	@touch $(STAMP)

# The compiled core (build_native.py): the screen engine's hot modules through mypyc, built again when a
# module of polter/terminal changes. Without a C compiler the build fails and Polter runs them as Python.
NATIVE := polter/terminal/_compiled/sources.json
$(NATIVE): $(STAMP) build_native.py $(wildcard polter/terminal/*.py)
	@$(BIN)/python build_native.py || echo "the compiled core was not built: the screen engine runs as Python"

run: $(STAMP) $(NATIVE)
	$(BIN)/polter $(ARGS)

# less, vi and tmux, which tests and benchmarks drive for real (installed from Debian's packages if missing).
system-tools:
	@sh tests/support/system-tools.sh

# The whole suite, end-to-end tests included (they install what they need into ~/.cache/polter-test-tools,
# shared by every clone). An idle worker steals queued tests, so no worker ends last with a long tail. Three workers on the 2 cores it is sized for: most
# tests wait (for a CLI, a server, a screen) more than they compute, and a worker keeps a core only 13% of its
# time, so a third overlaps those waits. On a quiet 2-core machine: 2 workers 770 s, 3 workers 564 s. Four,
# tried when the suite was slower, were no faster than two (12-16 min against 13.8) and the team tests' timing
# failed more often. Three keep the 2 cores 87% busy (2026-12-07, process accounting over a whole run: 989 s of
# CPU in 570 s), so the suite gets faster only by doing less: the workers themselves took 196 s, 1,046 other
# Python processes (gateways, hosts, servers, hooks) 396, the 22 opencode runs 149 (7 s each), 216 Node.js
# processes (Claude Code, Gemini CLI, Qwen Code, npm, an MCP server) 161.
TEST_WORKERS ?= 3
# The suite starts hundreds of Python processes (gateways, hooks, servers) and each worker imports every test
# module: with PYTHONDONTWRITEBYTECODE set (some shells and containers set it) none of them keeps its compiled
# bytecode, and each compiles Polter and the tests again (a worker's collection alone: 10 s of CPU against 5).
test test-fast: export PYTHONDONTWRITEBYTECODE =
test: $(STAMP) $(NATIVE) system-tools
	$(BIN)/pytest -n $(TEST_WORKERS) --dist worksteal $(PYTEST_ARGS)

# The fast inner loop: everything but the tests marked e2e.
test-fast: $(STAMP) $(NATIVE)
	$(BIN)/pytest -n $(TEST_WORKERS) --dist worksteal -m "not e2e" $(PYTEST_ARGS)

# Regenerate the README's screenshots (SVG) from the real app, headless.
screenshots: $(STAMP)
	$(BIN)/python screenshots/generate.py

# Every benchmark in benchmarks/, one after another; each prints its figures and a JSON line last
# (BENCHMARKS="benchmarks/terminal.py" runs a chosen few).
BENCHMARKS ?= $(sort $(filter-out benchmarks/_%,$(wildcard benchmarks/*.py)))
bench: $(STAMP) $(NATIVE) system-tools
	@set -e; for script in $(BENCHMARKS); do echo "== $$script"; $(BIN)/python $$script; done

clean:
	rm -rf $(VENV) .cache polter/terminal/_compiled
