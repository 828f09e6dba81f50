# Every target sets itself up from nothing: a virtual environment in .venv, the native core
# built in place (python/rocprof/*.so), so the package imports straight from the checkout.
PYTHON ?= python3
VENV   := .venv
VPY    := $(VENV)/bin/python
BUILD  := build/dev
export PYTHONPATH := $(CURDIR)/python:$(CURDIR)
export PYTHONUNBUFFERED := 1

.PHONY: demo test test-cpp test-py bench lint native clean system-deps

$(VENV)/.stamp: pyproject.toml Makefile
	$(PYTHON) -m venv $(VENV)
	$(VPY) -m pip install -q --upgrade pip
	$(VPY) -m pip install -q "cmake>=3.20" ninja "pybind11>=2.12" "pandas>=2.0" numpy pytest \
		matplotlib nbclient nbformat ipykernel perfetto otf2 ruff
	touch $@

$(VENV)/.torch: $(VENV)/.stamp
	$(VPY) -m pip install -q torch==2.13.0
	touch $@

# Debian packages the tests use: GoogleTest (C++ suite) and Chromium (renders the HTML
# report). Installed when missing and we are root with apt; otherwise those tests are
# skipped with a visible reason.
SYSTEM_PKGS := $(if $(wildcard /usr/include/gtest/gtest.h),,libgtest-dev) \
               $(if $(shell command -v chromium),,chromium)
system-deps:
	@if [ -n "$(strip $(SYSTEM_PKGS))" ] && [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
		echo "installing Debian packages: $(strip $(SYSTEM_PKGS))"; \
		(apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $(SYSTEM_PKGS)) >/dev/null 2>&1 \
			|| echo "could not install $(strip $(SYSTEM_PKGS)): the tests that need them will be skipped"; fi

native: $(VENV)/.stamp
	$(VENV)/bin/cmake -S . -B $(BUILD) -G Ninja -DCMAKE_BUILD_TYPE=Release \
		-DCMAKE_MAKE_PROGRAM=$(CURDIR)/$(VENV)/bin/ninja \
		-DROCPROF_INPLACE=ON -DROCPROF_BUILD_TESTS=ON -DPython_EXECUTABLE=$(CURDIR)/$(VPY) \
		-Dpybind11_DIR=$$($(VPY) -m pybind11 --cmakedir) >/dev/null
	$(VENV)/bin/cmake --build $(BUILD)

demo: native $(VENV)/.torch
	$(VPY) -m rocprof run -d rocprof-output/demo -o train_cifar --stats -S examples/train_cifar.py

test-cpp: system-deps native
	@if [ -f $(BUILD)/cpp/tests/CTestTestfile.cmake ]; then \
		cd $(BUILD) && $(CURDIR)/$(VENV)/bin/ctest --output-on-failure; \
	else echo "SKIPPED C++ tests: GoogleTest (libgtest-dev) is not installed"; fi

test-py: system-deps native $(VENV)/.torch
	$(VPY) -m pytest -q tests

test: test-cpp test-py

bench: native $(VENV)/.torch
	$(VPY) benchmarks/b1_roctx.py
	$(VPY) benchmarks/b4_throughput.py
	$(VPY) benchmarks/b7_startup.py

lint: $(VENV)/.stamp
	$(VENV)/bin/ruff check python rocpd tests benchmarks examples

clean:
	rm -rf build $(VENV) python/rocprof/*.so rocprof-output
