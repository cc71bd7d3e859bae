# Two entry points a new user needs: `make demo` and `make test`. Both bootstrap the
# virtualenv and the local OpenSearch node (deploy/local/opensearch.sh) themselves.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.bloomspan-installed

.PHONY: demo test test-unit test-explore test-nojit node-start node-stop bench clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip
	$(BIN)/pip install -q -e '.[test,bench]'
	touch $(STAMP)

# Starts (or reuses) the local node and leaves it running for exploring; stop it with
# `make node-stop`.
demo: $(STAMP)
	$(BIN)/bloomspan warmup
	$(BIN)/bloomspan demo --url "$$(deploy/local/opensearch.sh start | tail -n 1)"

# The full suite against a real node (started by tests/conftest.py unless OPENSEARCH_URL is
# set), then the unit tests of the rooms that hold numba kernels once more as plain Python
# (NUMBA_DISABLE_JIT=1: every kernel body runs as the Python its twin is compared with). The
# other rooms (the CLI, the proxy, publication, deploy) reach kernels only through these rooms'
# code, which the first pass ran compiled; as plain Python they only ran slower.
# tests/unit/test_nojit_rooms.py checks that every module with a kernel is in the list.
NOJIT_TESTS := tests/unit/engine tests/unit/ingest tests/unit/sidecar/run/test_snapshot.py tests/unit/bench/corpora
test: $(STAMP)
	$(BIN)/python -m pytest tests
	NUMBA_DISABLE_JIT=1 $(BIN)/python -m pytest $(NOJIT_TESTS) -q

test-unit: $(STAMP)
	$(BIN)/python -m pytest tests/unit

# The property tests with fresh random examples, ten times as many (tests/support/
# hypothesis_profiles.py); `make test` and CI run them deterministically.
test-explore: $(STAMP)
	HYPOTHESIS_PROFILE=explore $(BIN)/python -m pytest tests/unit -m hypothesis -q

node-start:
	deploy/local/opensearch.sh start

node-stop:
	deploy/local/opensearch.sh stop

# The README's headline benchmark: BloomSpan vs FHK on a 10 M-token crawl (its figure goes to
# bench/results/mining-web-10M.json, then `python -m bench.results_page` regenerates
# bench/RESULTS.md; see the README's Benchmarks section for the others).
bench: $(STAMP)
	$(BIN)/python -m bench.mining_bench --corpus web --tokens 10M --sigma 20 --min-length 10 --recovery

clean:
	rm -rf $(VENV) build *.egg-info .pytest_cache .hypothesis
