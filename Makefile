# mklcore: two commands do everything (see README.md)
#   make reproduce   run every paper notebook in full mode (writes figures/<paper_id>/)
#   make test        unit tests + notebooks in quick mode (nbval)

PY ?= python3
VENV ?= .venv
PYTHON := $(VENV)/bin/python
STAMP := $(VENV)/.mklcore-installed
export TQDM_DISABLE ?=
export MPLBACKEND := Agg
export PYTHONHASHSEED := 0
NOTEBOOKS := $(wildcard notebooks/*.ipynb)
# two test processes (the CI machine has 2 cores); loadscope keeps each notebook's cells, and
# each test module, in one process (a notebook's cells share one kernel); the processes take
# the scopes longest first, in the order tests/conftest.py gives them (not xdist's: most tests
# first), so that neither idles at the end while the other runs a long notebook
XDIST := -n 2 --dist loadscope --no-loadscope-reorder
NBVAL := --nbval-lax --nbval-current-env --nbval-sanitize-with tests/nbval_sanitize.cfg
STRIP := nbstripout --keep-count --extra-keys "metadata.papermill cell.metadata.papermill"

.PHONY: install test unit notebooks reproduce strip verify-strip bench clean

$(STAMP): pyproject.toml
	test -x $(PYTHON) || $(PY) -m venv $(VENV)
	$(PYTHON) -m pip install --quiet --upgrade pip
	$(PYTHON) -m pip install --quiet -e ".[repro,notebooks,test]"
	$(PYTHON) -m ipykernel install --sys-prefix --name python3 > /dev/null
	touch $(STAMP)

install: $(STAMP)

# (the committed notebooks' stripping is checked inside the run: test_notebooks.py's
# test_nbstripout_verify runs `$(STRIP) --verify` with these flags; alone: `make verify-strip`)
test: install
	TQDM_DISABLE=1 $(PYTHON) -m pytest $(XDIST) tests $(NBVAL) notebooks -p no:cacheprovider -q -rs

unit: install
	TQDM_DISABLE=1 $(PYTHON) -m pytest $(XDIST) tests -p no:cacheprovider -q

notebooks: install
	TQDM_DISABLE=1 $(PYTHON) -m pytest $(XDIST) $(NBVAL) notebooks -p no:cacheprovider -q

reproduce: install
	$(PYTHON) scripts/run_notebooks.py --full $(NOTEBOOKS)

reproduce-%: install
	$(PYTHON) scripts/run_notebooks.py --full notebooks/$*.ipynb

strip: install
	$(VENV)/bin/$(STRIP) $(NOTEBOOKS)

verify-strip: install
	$(VENV)/bin/$(STRIP) --verify $(NOTEBOOKS)

bench: install
	for f in benchmarks/bench_*.py; do echo "== $$f"; $(PYTHON) $$f --quick || exit 1; done

clean:
	rm -rf build .pytest_cache

# The book (docs/README.md): `make book` renders the executed notebooks of figures/ with
# Sphinx + MyST-NB into build/book/html; `make test` also builds it and checks every page in
# headless Chromium (tests/test_book.py), so both need the docs extra and Debian's chromium.
BOOK_STAMP := $(VENV)/.mklcore-book-installed
SUDO := $(if $(filter 0,$(shell id -u)),,sudo)
.PHONY: book book-deps

$(BOOK_STAMP): $(STAMP) pyproject.toml
	$(PYTHON) -m pip install --quiet -e ".[docs]"
	test -x /usr/bin/chromium -a -x /usr/bin/chromedriver || { $(SUDO) apt-get update -qq && \
	  $(SUDO) env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium chromium-driver; } || \
	  echo "book-deps: could not install Debian's chromium and chromium-driver (needs root or sudo):" \
	       "the book's browser test (tests/test_book.py) will be skipped"
	test ! -x /usr/bin/chromium || touch $(BOOK_STAMP)

book-deps: $(BOOK_STAMP)

book: book-deps
	$(PYTHON) docs/build_book.py

test: book-deps
