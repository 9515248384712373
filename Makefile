# Builds the jar, installs the Python package around it, runs every test.
#
#   make jar        build the jar with build/sbt, publish it to ~/.m2, bundle it into python/
#                   (python/delta_lifecycle/maven/, a Maven repository: scripts/bundle_jars.py)
#   make jar-all-lines  build and publish (~/.m2) the jar of every Spark line in JAR_LINES
#                   (one sbt run), collected in scala/target/lines/ (docs/spark-lines.md)
#   make jars       jar-all-lines, then bundle every line's jar into python/ (for the wheel)
#   make wheel      jars, then build the wheel (every line's jar inside) into dist/
#   make smoke-lines  the wheel of every line, installed into each line's own venv, runs the
#                   smoke suite there (every statement; stock delta-spark and delta-rs read it)
#   make test-all-lines  the full Scala and Python suites on every line, and the smoke suites
#   make venv       create .venv (if absent) and install the package with its test extras
#   make install    jar + venv
#   make typecheck  mypy --strict on python/delta_lifecycle
#   make docs-test  make docs, then the site's tests (its checks; every page in headless Chromium)
#   make docs       install the docs extra into .venv, build the site (mkdocs.yml, docs/) into
#                   site/ with mkdocs build --strict: a broken link or anchor, a page missing from
#                   nav, leaked markup or process text in a page fails (docs/site_checks.py)
#   make fmt        format the Scala and sbt sources (scalafmt, 100 columns)
#   make fmt-check  fail on unformatted sources or lines over 100 columns (part of make test)
#   make test       what CI runs (.ci/run): the format check and the jars of the primary line
#                   and CI_SMOKE_LINES in one sbt run, then the Scala tests beside the wheel of
#                   those jars installed into .venv-test (make test-venv) and the docs site,
#                   then the Python tests (PYTEST_WORKERS in parallel) against the installed
#                   wheel, with the smoke suite of the lines in CI_SMOKE_LINES (3.5 by default)
#                   and a Unity Catalog server; each step's time goes to target/ci-times/ (the
#                   crash, cluster and object-store suites run in their own targets)
#   make test-all   make test, then everything CI leaves behind a switch: the full reliability
#                   matrices, the whole differential corpus, the cluster and object-store suites,
#                   every line's smoke and suites, the client matrix (bench/README.md, "CI time")
#   make wheel-of-bundle  the wheel of the jars python/ holds now, into dist/
#   make test-venv  .venv-test: the wheel in dist/ installed (not editable) with its extras
#   make demo       install, then python/examples/demo.py
#   make bench      install, run the benchmarks (bench/README.md), redraw their plots
#   make crash-test  install, then the crash suites at one step of each kind
#   make reliability  install, then every reliability matrix at full size, every crash step
#                   included (docs/reliability.md)
#   make compat-matrix  install, then check every runnable client against the capability file
#                   (docs/compatibility.md)
#   make compat-docs  re-render docs/compatibility.md's matrix from the capability file
#   make differential  install, then the whole differential corpus, stock delta-spark against
#                   this extension, plain and redirected (docs/differential.md; CI runs a slice)
#   make cluster-test  install, then the full cluster suite on a standalone cluster on 127.0.0.1
#                   (tests/cluster/, docs/cluster.md; CI runs tests/cluster/test_cluster.py)
#   make objectstore  start a local S3-compatible server (MinIO) and print its settings
#   make objectstore-test  install, then every test on s3a:// tables (docs/object-stores.md)
#   make governance-test  install, then every statement on the tables of a Unity Catalog that
#                   holds the only keys of a MinIO bucket, with authorization on (docs/settings.md)
#
# Needs only Java 17, Python 3.10+ (with venv), curl and make: build/sbt fetches sbt. The
# object-store tests also use Go, to build MinIO; without Go they fall back to moto.

SHELL := /bin/bash

# versions.properties is the one place versions are pinned; derive the jar's name from it.
prop = $(shell sed -n 's/^$(1)=//p' versions.properties)
PROJECT_VERSION := $(call prop,project)
SPARK_VERSION := $(call prop,spark)
SCALA_VERSION := $(call prop,scala)
SPARK_LINE := $(shell echo '$(SPARK_VERSION)' | cut -d. -f1-2)
SCALA_BINARY := $(shell echo '$(SCALA_VERSION)' | cut -d. -f1-2)

JAR_NAME := delta-lifecycle_$(SPARK_LINE)_$(SCALA_BINARY)-$(PROJECT_VERSION).jar
BUILT_JAR := scala/target/scala-$(SCALA_BINARY)/$(JAR_NAME)
# The package carries its jars as a small Maven repository (scripts/bundle_jars.py), which
# configure_spark hands to Spark's package resolution.
BUNDLED_REPO := python/delta_lifecycle/maven
BUNDLE = $(PYTHON) scripts/bundle_jars.py

PYTHON ?= python3
VENV := .venv
VENV_PY := $(VENV)/bin/python
# make test's venv: the built wheel installed as a user installs it (make test-venv).
TEST_VENV := .venv-test
TEST_VENV_PY := $(TEST_VENV)/bin/python
WHEEL := dist/delta_lifecycle-$(PROJECT_VERSION)-py3-none-any.whl

SBT := build/sbt

.PHONY: crash-test jar jar-all-lines jars wheel wheel-of-bundle test-venv smoke-lines test-all-lines venv install typecheck fmt fmt-check \
	column-check ci-steps ci-scala-tests ci-python-setup \
	test test-all pytest demo bench reliability differential compat-matrix \
	objectstore objectstore-test governance-test cluster-test clean-jar docs site docs-test compat-docs

jar:
	$(SBT) lifecycle/package lifecycle/publishM2
	@test -f '$(BUILT_JAR)' || { echo "make jar: sbt did not produce $(BUILT_JAR)" >&2; exit 1; }
	$(BUNDLE) '$(BUILT_JAR)'

# The line is fixed when sbt loads the build, so one sbt run sets the sparkLine property and
# reloads before each line (saving a JVM start per line).
JAR_LINES ?= $(shell sed -n 's/^lines=//p' versions.properties | tr ',' ' ')
LINES_DIR := scala/target/lines

# SBT_FIRST: sbt commands to run in the same sbt first (make test's format check: one JVM start
# less).
SBT_FIRST ?=

jar-all-lines:
	mkdir -p $(LINES_DIR)
	$(SBT) $(SBT_FIRST) $(foreach line,$(JAR_LINES),'eval sys.props("sparkLine") = "$(line)"' reload \
	  lifecycle/package lifecycle/publishM2)
	set -e; for line in $(JAR_LINES); do \
	  if [ "$$line" = "$(SPARK_LINE)" ]; then dir=scala/target; else dir=scala/target/spark-$$line; fi; \
	  jar=$$(ls $$dir/scala-*/delta-lifecycle_$${line}_*-$(PROJECT_VERSION).jar); \
	  cp "$$jar" $(LINES_DIR)/; \
	done
	ls -l $(LINES_DIR)

jars: jar-all-lines
	$(BUNDLE) --clean $(LINES_DIR)/delta-lifecycle_*-$(PROJECT_VERSION).jar

wheel: jars
	$(MAKE) wheel-of-bundle

# The wheel of the jars python/ holds now (make test bundles only the lines CI runs). Stale
# files of an earlier build must not reach it (tests/test_wheel.py compares it with python/).
wheel-of-bundle:
	rm -rf dist target/python-build
	$(PYTHON) -m pip wheel --quiet --no-deps -w dist .
	ls -l dist

# What users install, installed as they do: the wheel (not editable) with the test and docs
# extras into a venv of its own; the package is reinstalled from every new wheel. Python
# compiles each module when a test first imports it, not every module of pyspark up front
# (--no-compile: a third of the install's time).
test-venv:
	test -x $(TEST_VENV_PY) || $(PYTHON) -m venv $(TEST_VENV)
	$(TEST_VENV_PY) -m pip install --quiet --upgrade pip
	$(TEST_VENV_PY) -m pip install --quiet --no-compile '$(WHEEL)[test,docs]'
	$(TEST_VENV_PY) -m pip install --quiet --no-compile --force-reinstall --no-deps '$(WHEEL)'

# The lines besides the primary one, each with its own cached venv (tests/client_venvs.py);
# make test runs the smoke suite for CI_SMOKE_LINES.
SMOKE_LINES ?= $(filter-out $(SPARK_LINE),$(JAR_LINES))

# The wheel users get (every line's jar), installed into each line's venv beside the line's
# pyspark and delta-spark, runs every statement there: the primary line's too. -rA
# --durations=0 print each line's time and where it went.
smoke-lines: venv
	$(MAKE) wheel
	DELTA_LIFECYCLE_WHEEL='$(abspath $(WHEEL))' DELTA_LIFECYCLE_SMOKE_LINES='$(JAR_LINES)' \
	  $(VENV)/bin/pytest -q -rA --durations=0 tests/test_spark_lines.py

# The Python modules that describe the primary environment (its pins, its published M2 artifact,
# its Connect client, mypy, the docstring examples' outputs) or run other clients' venvs of their
# own; every other module runs on every line.
PRIMARY_ONLY_MODULES := test_versions test_spark_submit test_connect test_typecheck \
	test_compatibility_clients test_spark_lines test_docstring_examples \
	test_docs_checks test_docs_rendered
LINE_PYTEST_MODULES ?= $(filter-out $(PRIMARY_ONLY_MODULES:%=tests/%.py),$(wildcard tests/test_*.py)) \
	tests/differential/test_differential.py

# The full Scala suites on every line, the smoke suites, then the Python suites on every line but
# the primary one, each in its line's venv (tests/pytest_on_line.py), and there every feature the
# line drops, dropped and read by stock delta-spark and delta-rs (the full matrix of
# tests/test_drop_every_feature.py).
# Differences between lines are asserted where they occur (docs/spark-lines.md).
test-all-lines: jars venv
	set -e; for line in $(JAR_LINES); do DELTA_LIFECYCLE_SPARK_LINE=$$line $(SBT) lifecycle/test; done
	DELTA_LIFECYCLE_SMOKE_LINES='$(SMOKE_LINES)' $(VENV)/bin/pytest -q tests/test_spark_lines.py
	set -e; for line in $(SMOKE_LINES); do \
	  $(VENV_PY) tests/pytest_on_line.py $$line -q -p no:cacheprovider \
	    -n $(PYTEST_WORKERS) --dist loadfile $(LINE_PYTEST_MODULES); \
	  DELTA_LIFECYCLE_FULL_MATRIX=1 $(VENV_PY) tests/pytest_on_line.py $$line -q \
	    -p no:cacheprovider tests/test_drop_every_feature.py; done

# An editable install reads the jars from python/delta_lifecycle/maven/, so a later
# `make jar` is picked up without reinstalling.
venv:
	test -x $(VENV_PY) || $(PYTHON) -m venv $(VENV)
	$(VENV_PY) -m pip install --quiet --upgrade pip
	$(VENV_PY) -m pip install --quiet -e '.[test]'

# The site's tools live in the docs extra; the build reads the sources, it needs no jar.
docs: venv
	$(VENV_PY) -m pip install --quiet -e '.[docs]'
	$(MAKE) site DOCS_VENV=$(VENV)

# The site built with the mkdocs of $(DOCS_VENV) (make test: the wheel's venv, whose docs extra
# has it); the build reads python/ as source, it imports nothing.
DOCS_VENV ?= $(VENV)
site:
	NO_MKDOCS_2_WARNING=1 $(DOCS_VENV)/bin/mkdocs build --strict --site-dir site

# The site's own tests: the checks make docs runs, and every page rendered in headless Chromium
# (installed by scripts/install_chromium.sh where apt-get can; the test skips without it).
docs-test: docs
	-scripts/install_chromium.sh
	$(VENV)/bin/pytest -q -p no:cacheprovider tests/test_docs_checks.py tests/test_docs_rendered.py

install: jar
	$(MAKE) venv

typecheck: venv
	$(VENV)/bin/mypy --strict python/delta_lifecycle

fmt:
	$(SBT) scalafmtAll scalafmtSbt

# scalafmt does not split string literals or comments, so the column limit is checked apart.
SBT_FMT_CHECK := scalafmtCheckAll scalafmtSbtCheck
fmt-check: column-check
	$(SBT) $(SBT_FMT_CHECK)

column-check:
	@long=$$(git ls-files '*.scala' '*.sbt' | LC_ALL=C.UTF-8 xargs grep -nE '^.{101,}' || true); \
	if [ -n "$$long" ]; then echo "Lines over 100 columns:"; echo "$$long"; exit 1; fi

# The other lines whose smoke suite CI runs (tests/test_spark_lines.py): each line's jar is
# built in the same sbt run as the primary one, and the smoke runs as one more test module in
# the parallel pytest run. CI keeps to Spark 3.5, the line that differs most (Scala 2.12,
# delta-spark 3.3), to stay under an hour on two cores; `make smoke-lines` runs every line.
CI_SMOKE_LINES ?= 3.5

# pytest runs test modules in this many worker processes (pytest-xdist; a module and its
# shared session stay on one worker). The tests mostly wait on JVM starts, subprocess
# clients and Spark jobs, so three workers keep two cores busy. --no-loadscope-reorder keeps
# the collection order, which starts the longest modules first (tests/scheduling.py); xdist
# would otherwise start the modules with the most tests first.
PYTEST_WORKERS ?= 3
PYTEST_PARALLEL := -n $(PYTEST_WORKERS) --dist loadfile --no-loadscope-reorder --durations=25

# What make test runs, each step timed into $(CI_TIMES)/phases.csv (scripts/timed.sh; pytest's and
# scalatest's reports hold each test's time: bench/ci_time.py turns them into the breakdown).
# The tests run what users install: the wheel, built once from the jars of the lines CI runs
# and installed (not editable) into $(TEST_VENV), where the end-to-end, smoke and docstring
# tests import it from (DELTA_LIFECYCLE_WHEEL; tests/test_wheel.py checks both).
# The browser test of the site (tests/test_docs_rendered.py) needs Debian's chromium, and the
# Unity Catalog tests a UC server built from its source (tests/unitycatalog/server.py): both are
# installed where they can be, and their tests skip, saying how to provide them, where not.
# One sbt run checks the format and builds the jars; then the Scala tests run beside the Python
# side's setup (the wheel, its venv, the site, the UC server, the JVM class-data archive of
# tests/jvm_archive.py), which mostly waits on the disk and the network; then the Python tests.
CI_TIMES := target/ci-times
TIMED := CI_TIMES=$(CI_TIMES) scripts/timed.sh

test:
	rm -rf $(CI_TIMES) scala/target/test-reports
	$(TIMED) total $(MAKE) --no-print-directory ci-steps
	@echo "make test: where the time went (phase,seconds,status)"; cat $(CI_TIMES)/phases.csv

ci-steps:
	$(TIMED) column-check $(MAKE) --no-print-directory column-check
	$(TIMED) fmt-check-and-jars $(MAKE) jars JAR_LINES='$(SPARK_LINE) $(CI_SMOKE_LINES)' \
	  SBT_FIRST='$(SBT_FMT_CHECK)'
	$(MAKE) --no-print-directory -j2 ci-scala-tests ci-python-setup
	$(TIMED) python-tests env DELTA_LIFECYCLE_WHEEL='$(abspath $(WHEEL))' \
	  DELTA_LIFECYCLE_SMOKE_LINES='$(CI_SMOKE_LINES)' \
	  $(TEST_VENV)/bin/pytest tests -q $(PYTEST_PARALLEL) --junitxml=$(CI_TIMES)/pytest.xml

ci-scala-tests:
	$(TIMED) scala-tests $(SBT) lifecycle/test

ci-python-setup:
	-$(TIMED) chromium scripts/install_chromium.sh
	$(TIMED) wheel $(MAKE) --no-print-directory wheel-of-bundle
	$(TIMED) test-venv $(MAKE) --no-print-directory test-venv
	$(TIMED) docs $(MAKE) --no-print-directory site DOCS_VENV=$(TEST_VENV)
	-$(TIMED) unity-catalog $(TEST_VENV_PY) tests/unitycatalog/server.py build
	-$(TIMED) jvm-archive $(TEST_VENV_PY) tests/jvm_archive.py

# Everything behind a switch, after what CI runs; the time each part takes is in
# bench/README.md ("CI time"). Several hours on 2 cores.
test-all: test
	$(MAKE) reliability
	$(MAKE) differential
	$(MAKE) cluster-test
	$(MAKE) objectstore-test
	$(MAKE) governance-test
	$(MAKE) compat-matrix
	$(MAKE) test-all-lines

# The Python tests alone, against the jar already built (no sbt run).
pytest:
	$(VENV)/bin/pytest tests -q $(PYTEST_PARALLEL)

demo: install
	$(VENV_PY) python/examples/demo.py

# Benchmarks write bench/results/*.csv and bench/work/ (scratch tables, reused between runs).
bench: install
	$(VENV_PY) -m pip install --quiet matplotlib
	$(SBT) "lifecycle/Test/runMain io.github.deltalifecycle.bench.FoundationBenchmark 10000 5"
	$(VENV_PY) bench/plot_foundation.py
	$(SBT) "lifecycle/Test/runMain io.github.deltalifecycle.bench.CompactionBenchmark 5 100000 1000"
	$(VENV_PY) bench/delta_rs_open.py
	$(VENV_PY) bench/plot_compaction.py
	$(SBT) "lifecycle/Test/runMain io.github.deltalifecycle.bench.LevelsBenchmark 5 100000 1000 40"
	$(VENV_PY) bench/delta_rs_levels.py
	$(VENV_PY) bench/plot_levels.py
	$(VENV_PY) bench/drop_feature.py 3
	$(VENV_PY) bench/redirect.py 21
	$(VENV_PY) bench/objectstore_requests.py
	$(VENV_PY) bench/plot_objectstore.py
	$(VENV_PY) bench/driver_memory.py
	$(VENV_PY) bench/plot_driver_memory.py
	$(VENV_PY) bench/redirect_copy.py
	$(VENV_PY) bench/plot_redirect_copy.py
	$(VENV_PY) bench/redirect_copy_s3.py
	$(VENV_PY) bench/plot_redirect_copy_s3.py
	$(VENV_PY) bench/on_cluster.py
	$(VENV_PY) bench/differential.py 5

# CI runs these at a size that fits its budget; this runs all of them (about an hour).
reliability: install
	DELTA_LIFECYCLE_FULL_MATRIX=1 $(SBT) "lifecycle/testOnly *ConformanceSuite"
	DELTA_LIFECYCLE_FULL_MATRIX=1 DELTA_LIFECYCLE_CRASHES=1 $(VENV)/bin/pytest -q -s $(CRASH_TESTS) \
		tests/test_concurrent_writers.py tests/test_bad_input.py

# The crash suites at one step of each kind (make reliability runs every step): each crashes a
# JVM mid-statement and re-runs it, or runs a driver out of memory, which CI leaves out to keep
# within its time.
CRASH_TESTS := tests/test_drop_feature_crashes.py tests/test_redirect_crashes.py tests/test_log_crashes.py \
	tests/test_out_of_memory.py
crash-test: install
	DELTA_LIFECYCLE_CRASHES=1 $(VENV)/bin/pytest -q $(PYTEST_PARALLEL) $(CRASH_TESTS)

# The whole differential corpus on the primary line (CI runs the operations marked ci), with
# Spark's code generation (the test sessions evaluate interpreted otherwise: tests/spark_sessions.py);
# on another line: python tests/pytest_on_line.py 3.5 tests/differential.
differential: install
	DELTA_LIFECYCLE_FULL_MATRIX=1 DELTA_LIFECYCLE_CODEGEN=1 $(VENV)/bin/pytest -q tests/differential

# MinIO is built from its Go module on first use (4 to 10 minutes) and cached outside the
# repository; tests/objectstore/server.py says where. CI runs none of it.
objectstore: venv
	$(VENV_PY) tests/objectstore/server.py start

objectstore-test: install
	DELTA_LIFECYCLE_OBJECTSTORE=1 $(VENV)/bin/pytest -q tests/objectstore

# Unity Catalog (built from ../shared/vendor), MinIO and mc (from their Go modules) are built on
# first use and cached outside the repository. CI runs none of it.
governance-test: install
	DELTA_LIFECYCLE_GOVERNANCE=1 $(VENV)/bin/pytest -q -rA tests/unitycatalog/test_governed.py

# The full cluster suite: every statement, executor and worker kills, the 3.5 line's smoke on
# the cluster (its jar too). CI runs none of it.
cluster-test: venv
	$(MAKE) jars JAR_LINES='$(SPARK_LINE) 3.5'
	DELTA_LIFECYCLE_CLUSTER=1 $(VENV)/bin/pytest -q -rA --durations=0 tests/cluster

clean-jar:
	rm -rf $(BUNDLED_REPO)

compat-matrix: install
	DELTA_LIFECYCLE_FULL_MATRIX=1 $(VENV)/bin/pytest tests/test_compatibility_clients.py -v

compat-docs:
	$(PYTHON) scripts/render_compatibility.py
