# Two commands do all the set-up on a fresh machine (see README):
#   make run    create .venv, install mqspec, run the main job on embedded defaults
#   make test   create .venv, install mqspec, run the tests and build the docs with -W
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed-stamp
#: Sphinx's pickled environment, kept out of the published html/ folder
DOCTREES := docs/_build/doctrees

.PHONY: run test test-slow docs bench clean

$(STAMP): pyproject.toml
	@command -v java >/dev/null 2>&1 || { \
	  echo "mqspec: 'java' was not found on PATH. The Spark pipeline needs Java 17:" >&2; \
	  echo "        install it (Debian/Ubuntu: apt-get install openjdk-17-jre-headless) and run make again." >&2; \
	  exit 1; }
	@java -version 2>&1 | head -1 | grep -Eq '"(1[7-9]|[2-9][0-9])' || { \
	  echo "mqspec: Java 17 or newer is required by pyspark 4; found: $$(java -version 2>&1 | head -1)" >&2; exit 1; }
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	@# PYTHONWARNINGS: setuptools' informational note ("InformationOnly") that an editable install of a
	@# package-dir layout uses an import finder; the layout is the design card's, and the note asks nothing
	PYTHONWARNINGS="ignore:Editable installation" $(BIN)/python -m pip install --quiet --no-compile -e ".[dev]"
	@# pip byte-compiles what it installs one file at a time; compileall does the same files on both cores
	@# (the same 6,365 .pyc files; the install took 65 s, now 28 s and 19 s)
	$(BIN)/python -m compileall -q -j 2 $(VENV)/lib
	@touch $(STAMP)

run: $(STAMP)
	$(BIN)/mqspec demo

# the docs are built first: the browser tests (tests/docs) read the built site in Debian's chromium,
# which tools/browser.sh installs when run as root (CI) and otherwise says how to install; tools/node.sh
# does the same for Debian's nodejs, which runs the vectors' JavaScript consumer (tests/consumer)
# Sphinx runs two processes (-j 2): the serial build of the ~440 pages took 123 s on two cores, this one 89 s,
# and the site is the same file for file (diff -r)
test: $(STAMP)
	@sh tools/browser.sh
	@sh tools/node.sh
	@rm -rf docs/_build/html/.doctrees  # where builds before -d kept them
	$(BIN)/sphinx-build -j 2 -W --keep-going -q -b html -d $(DOCTREES) docs docs/_build/html
	MQSPEC_DOCS_HTML=docs/_build/html $(BIN)/pytest -q -p no:cacheprovider -n 2 --dist loadgroup --durations=20

test-slow: $(STAMP)
	$(BIN)/pytest -q -m slow

docs: $(STAMP)
	@rm -rf docs/_build/html/.doctrees  # where builds before -d kept them
	$(BIN)/sphinx-build -j 2 -W --keep-going -b html -d $(DOCTREES) docs docs/_build/html

bench: $(STAMP)
	$(BIN)/python bench/codec.py --json
	$(BIN)/python bench/simulate.py --json
	$(BIN)/python bench/check.py --json
	$(BIN)/python bench/check_memory.py --json

clean:
	rm -rf $(VENV) docs/_build build *.egg-info
