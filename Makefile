# Targets mirror CI: `make install`, `make lint`, `make docs` then `make test` is exactly what .ci/run does.
VENV ?= .venv
PYTHON ?= python3
BIN := $(VENV)/bin
# DeepEval, which tests/peers drives through `localjudge serve`, in an environment of its own (see its requirements file)
PEERS_VENV := .venv-peers
# promptfoo (npm, pinned by its lock file), which tests/peers drives through `localjudge serve`
PROMPTFOO_DIR := tests/peers/promptfoo

.PHONY: install promptfoo test test-fast lint docs defaults-page demo check-judge calibrations pair-weights bench-judging bench bench-batch bench-memory bench-threads bench-agreement bench-view bench-injection stress stress-faults agreement grammars clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --upgrade pip

$(PEERS_VENV)/bin/python:
	$(PYTHON) -m venv $(PEERS_VENV)
	$(PEERS_VENV)/bin/python -m pip install --upgrade pip

install: $(BIN)/python $(PEERS_VENV)/bin/python
	$(BIN)/python -m pip install -e '.[dev]'
	$(BIN)/localjudge models fetch default
	$(BIN)/localjudge models fetch tiny
	$(PEERS_VENV)/bin/python -m pip install -r tests/peers/requirements-deepeval.txt

# About 1.5 GB and several minutes of npm, so a target of its own, which CI runs before the tests
promptfoo: $(PROMPTFOO_DIR)/node_modules/.bin/promptfoo  ## promptfoo for the test of its llm-rubric graded through serve

$(PROMPTFOO_DIR)/node_modules/.bin/promptfoo: $(PROMPTFOO_DIR)/package-lock.json
	cd $(PROMPTFOO_DIR) && npm ci --no-audit --no-fund
	touch $@  # npm leaves the link its package's date: newer than the lock file, so a second make does nothing

# The coverage of the localjudge package (pyproject's [tool.coverage], `localjudge` subprocesses included) may not
# fall below the floor: today's figure of the whole suite (94.75% on 2026-12-05, in CI), rounded down.
COVERAGE_FLOOR := 94
test: $(BIN)/python
	$(BIN)/python -m pytest --cov --cov-report=term --cov-fail-under=$(COVERAGE_FLOOR)

# Run where every model file, torch and socket is hidden (tests/support/offline): a test that needs one unmarked fails.
FAST := not model and not server and not torch and not slow and not browser and not docs
test-fast: $(BIN)/python  ## the tests that need no model file, server, torch, browser or docs' examples and are not slow (pyproject's markers)
	home=$$(mktemp -d) && LOCALJUDGE_HOME=$$home PYTHONPATH=$(CURDIR)/tests/support/offline$${PYTHONPATH:+:$$PYTHONPATH} \
		$(BIN)/python -m pytest -m "$(FAST)"; status=$$?; rm -rf "$$home"; exit $$status

lint: $(BIN)/python
	$(BIN)/ruff check localjudge tests benchmarks examples
	$(BIN)/ruff format --check localjudge tests benchmarks examples
	$(BIN)/mypy

docs: $(BIN)/python  ## the docs site, built offline with --strict into build/site
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs build --strict

defaults-page: $(BIN)/python  ## rewrite docs/defaults.md from the check-judge records in docs/records/
	$(BIN)/python benchmarks/defaults_page.py

demo: $(BIN)/python  ## score one answer with the default judge
	$(BIN)/localjudge score --inputs "What is 2+2?" --outputs "4"

check-judge: $(BIN)/python  ## how far the judge can be trusted: every shipped labelled set, held-out split (MODEL=SPEC)
	$(BIN)/localjudge check-judge --model $(or $(MODEL),default) --split test --no-reasoning -j 2

calibrations: $(BIN)/python  ## fit the calibrations that ship for the default judge, on the check sets' dev rows only
	$(BIN)/python benchmarks/fit_shipped_calibration.py
	$(BIN)/python benchmarks/fit_shipped_calibration.py --set answers-reference
	$(BIN)/python benchmarks/fit_shipped_calibration.py --set graded --folds 3
	$(BIN)/python benchmarks/fit_shipped_calibration.py --set conciseness --folds 4
	$(BIN)/python benchmarks/fit_shipped_calibration.py --set hallucination --folds 4
	$(BIN)/python benchmarks/fit_shipped_calibration.py --set answer-relevance --folds 4
	$(BIN)/python benchmarks/fit_shipped_calibration.py --set answers-reference --evaluator same_answer
	$(BIN)/python benchmarks/fit_shipped_calibration.py --self-reference
	$(BIN)/python benchmarks/fit_shipped_calibration.py --likelihood
	$(BIN)/python benchmarks/fit_shipped_calibration.py --checklist

PAIR_RUNS ?= build/pair-runs
pair-weights: $(BIN)/python  ## the weighed way's weights: both ways on every pair set, fitted on dev, shown held out
	$(BIN)/localjudge check-judge --set llmbar-natural --set adversarial --set llmbar-adversarial --split all \
		--checklist --on-disagreement probabilities -j 2 --results $(PAIR_RUNS)/checklist
	$(BIN)/localjudge check-judge --set llmbar-natural --set adversarial --set llmbar-adversarial --split all \
		--likelihood -j 2 --results $(PAIR_RUNS)/likelihood
	$(BIN)/python benchmarks/fit_pair_weights.py --checklist $(PAIR_RUNS)/checklist --likelihood $(PAIR_RUNS)/likelihood --write

bench-judging: $(BIN)/python  ## ways of judging on the dev split, a table of variants x figures (MODEL=SPEC)
	$(BIN)/python benchmarks/bench_judging.py --model $(or $(MODEL),default) --split dev

bench-view: $(BIN)/python  ## localjudge view on a 100,000-row results file: time to the first page and to a filtered page
	$(BIN)/python benchmarks/bench_view.py --rows 100000

bench: $(BIN)/python  ## decoding speed against outlines and llama.cpp's grammar path; what a verdict costs
	$(BIN)/python benchmarks/bench_decoding.py --model $(or $(MODEL),default)
	$(BIN)/python benchmarks/bench_verdicts.py --model $(or $(MODEL),default)

bench-threads: $(BIN)/python  ## a verdict's time with 1 thread, every CPU and the default rule, idle and busy (MODEL=SPEC)
	$(BIN)/python benchmarks/bench_threads.py --model $(or $(MODEL),default)

bench-batch: $(BIN)/python  ## rows/s of `localjudge batch`: local -j 1/-j 8, a pool of 2 servers, Ray with 2 actors
	$(BIN)/python benchmarks/bench_batch.py

bench-memory: $(BIN)/python  ## peak RSS of `localjudge batch` at 10k, 100k and 1M cached rows, fresh and resumed
	$(BIN)/python benchmarks/bench_memory.py

bench-agreement: $(BIN)/python  ## the pairwise judge on LLMBar's 100 human-labelled pairs (MODEL=SPEC for another judge)
	$(BIN)/python benchmarks/bench_agreement.py --model $(or $(MODEL),default)

bench-injection: $(BIN)/python  ## the injection set: the share of wrong and empty answers judged true, per screen and kind
	$(BIN)/python benchmarks/bench_injection.py --model $(or $(MODEL),default) --split $(or $(SPLIT),dev) --screen off --screen full

stress: $(BIN)/python  ## 10,000 generations from random logits under 22 schemas; prints the counts
	$(BIN)/python benchmarks/stress_grammar.py --generations 10000

stress-faults: $(BIN)/python  ## hostile schemas, rows, files and clients of `serve`: a table of probe, outcome, time
	$(BIN)/python benchmarks/stress_faults.py

agreement: $(BIN)/python  ## the tiny model's verdicts through llama.cpp and transformers, side by side
	$(BIN)/python benchmarks/engine_agreement.py

grammars: $(BIN)/python  ## regenerate grammars/ from the six default score schemas
	$(BIN)/localjudge grammar --write grammars

clean:
	rm -rf $(VENV) $(PEERS_VENV) $(PROMPTFOO_DIR)/node_modules .pytest_cache build dist *.egg-info
