# paperlab — two commands do all set-up:
#   make run    start the lab (embedded default: SQLite + embedded Redis, no servers needed)
#   make test   run the whole test suite against PostgreSQL and Redis on 127.0.0.1
PYTHON ?= python3
VENV   ?= .venv
PY      = $(VENV)/bin/python

.PHONY: run test venv lint bench clean

$(VENV)/.installed: requirements.txt requirements-nodeps.txt
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -r requirements.txt
	$(PY) -m pip install -q --no-deps -r requirements-nodeps.txt
	touch $@

venv: $(VENV)/.installed

run: venv
	$(PY) scripts/lab.py

test: venv
	bash scripts/test.sh

lint: venv
	$(VENV)/bin/ruff check . && $(VENV)/bin/ruff format --check .

clean:
	rm -rf data/ .pytest_cache
