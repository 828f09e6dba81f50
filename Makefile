# Every target sets itself up from nothing: a virtual environment in .venv, the native core
# built in place (python/rocprof/*.so), so the package imports straight from the checkout.
# Each step says what it does and about how long it takes on a 2-core machine with a warm pip
# cache (the first download of PyTorch takes longer).
PYTHON ?= python3
VENV   := .venv
VPY    := $(VENV)/bin/python
BUILD  := build/dev
# --no-compile, then BYTECOMPILE: pip byte-compiles on one core (most of PyTorch's install
# time: 39 s -> 12 s on 2 cores); compileall does it on every core. Compiled they must be: where
# PYTHONDONTWRITEBYTECODE is set (CI images set it) Python never caches what it compiles, and
# every `import torch` compiled torch's sources again (7.3 s instead of 3.6 s; pandas 3.0 s
# instead of 0.8). Its status is not the set-up's: packages ship files for newer Pythons
# (torch's py312_intrinsics.py), which pip's compile skips too.
PIP    := $(VPY) -m pip install --disable-pip-version-check --no-compile
BYTECOMPILE = @$(VPY) -m compileall -qq -j0 \
	"$$($(VPY) -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')" python rocpd rocshared || true
export PYTHONPATH := $(CURDIR)/python:$(CURDIR)
export PYTHONUNBUFFERED := 1

# The one CMake configuration of a development build; `make gpu-check` builds with it too.
CMAKE_FLAGS := -DCMAKE_BUILD_TYPE=Release -DROCPROF_INPLACE=ON -DROCPROF_BUILD_TESTS=ON

# A step's announcement: what it does and how long it takes.
say = @printf '\n==> make: %s\n' "$(1)"
# Package lists of pyproject.toml by name: [project] dependencies, an extra, or a list of
# [tool.rocprof.make]; the file is the one place they are written. Shell-quoted (`>=`). A list
# ends at a `]` that ends its line: an item may hold an extra (`mkdocstrings[python]`).
PYLIST = $(shell $(PYTHON) -c 'import re, shlex, sys; t = open("pyproject.toml").read(); \
	print(" ".join(shlex.quote(x) for n in sys.argv[1:] for x in re.findall(r"\"([^\"]+)\"", \
	re.search(r"^" + re.escape(n) + r" = \[(.*?)\]\s*$$", t, re.M | re.S)[1])))' $(1))
BUILD_PKGS = $(call PYLIST,make-build)
DEPS = $(call PYLIST,dependencies)
TEST_PY_PKGS = $(call PYLIST,test make-test)
DOCS_PKGS = $(call PYLIST,make-docs)

.PHONY: demo test test-cpp test-py test-packages bench lint native native-all native-torch native-deps clean \
	system-deps gpu-check gpu-oracle docs sdk-compile-check

# The venv sees the checkout as installed (editable): a .pth file puts python/ and the root
# on its sys.path, and `rocprof`/`rocpd` commands land in .venv/bin, so after any target
# `. .venv/bin/activate` gives the README's commands as written. The commands start as shell
# scripts that exec the venv's Python (pip's form): a #! line cannot hold a path with spaces.
# The build tools come first: the native build then runs beside the other installs (demo, test).
$(VENV)/.tools: pyproject.toml Makefile
	$(call say,[set-up] virtual environment .venv and the build tools: $(subst ',,$(BUILD_PKGS)) (~15 s))
	test -x $(VPY) || $(PYTHON) -m venv $(VENV)
	$(PIP) $(BUILD_PKGS)
	@printf '%s\n%s\n' "$(CURDIR)/python" "$(CURDIR)" > \
		"$$($(VPY) -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')/rocprof-checkout.pth"
	@for cmd in rocprof:rocprof.__main__ rocpd:rocpd.cli; do \
		printf '#!/bin/sh\n\047\047\047exec\047 "%s" "$$0" "$$@"\n\047 \047\047\047\nimport sys\nfrom %s import main\nsys.exit(main())\n' \
			"$(CURDIR)/$(VPY)" "$${cmd#*:}" > $(VENV)/bin/$${cmd%%:*}; \
		chmod +x $(VENV)/bin/$${cmd%%:*}; done
	touch $@

$(VENV)/.stamp: $(VENV)/.tools
	$(call say,[set-up] rocprof's dependencies: $(subst ',,$(DEPS)) (~45 s, beside the build))
	$(PIP) $(DEPS)
	$(BYTECOMPILE)
	touch $@

$(VENV)/.torch: $(VENV)/.stamp
	$(call say,[set-up] PyTorch 2.13 (CPU build) for the examples (~15 s from the pip cache, beside the build; the first download is ~200 MB))
	$(PIP) torch==2.13.0
	$(BYTECOMPILE)
	touch $@

$(VENV)/.docs: $(VENV)/.stamp
	$(call say,[set-up] the manual's builder: $(subst ',,$(DOCS_PKGS)) (~30 s))
	$(PIP) $(DOCS_PKGS)
	touch $@

$(VENV)/.test: $(VENV)/.stamp
	$(call say,[set-up] test and lint packages: $(subst ',,$(TEST_PY_PKGS)) (~30 s))
	$(PIP) $(TEST_PY_PKGS)
	$(BYTECOMPILE)
	touch $@

# pip installs one after another (two at once into one venv is not safe); the build beside them.
test-packages: $(VENV)/.torch
	@$(MAKE) --no-print-directory $(VENV)/.test

# Debian packages: libunwind-dev (native frames for --native-stacks; needed by the build),
# libhsa-runtime-dev and libamdhip64-dev (ROCm 5.2 HSA/HIP headers: the AMD backend is compiled
# against them, its libraries are opened at run time, and it is tested on the software stand-in
# of tests/amd_standin), librocm-smi-dev (ROCm SMI headers for AMD GPU metrics, --process-freq);
# for the tests GoogleTest (C++ suite), Chromium (renders the HTML report) and zsh (its
# completion is tested). Installed with apt-get when missing and we are root, announced first;
# otherwise the build leaves those parts out and those tests are skipped, each with a visible
# reason. The README lists the same packages.
NATIVE_PKGS := $(if $(wildcard /usr/include/libunwind.h /usr/include/*/libunwind.h),,libunwind-dev)
AMD_PKGS    := $(if $(wildcard /usr/include/hsa/hsa_api_trace.h /opt/rocm/include/hsa/hsa_api_trace.h),,libhsa-runtime-dev) \
               $(if $(wildcard /usr/include/hip/amd_detail/hip_prof_str.h /opt/rocm/include/hip/amd_detail/hip_prof_str.h),,libamdhip64-dev) \
               $(if $(wildcard /usr/include/rocm_smi/rocm_smi.h /opt/rocm/include/rocm_smi/rocm_smi.h),,librocm-smi-dev)
TEST_PKGS   := $(if $(wildcard /usr/include/gtest/gtest.h),,libgtest-dev) \
               $(if $(shell command -v chromium),,chromium) \
               $(if $(shell command -v zsh),,zsh)
define apt_install
	@if [ -n "$(strip $(1))" ]; then \
		if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
			printf '\n==> make: installing Debian packages with apt-get (as root): %s (~1 min)\n' "$(strip $(1))"; \
			(apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $(1)) >/dev/null 2>&1 \
				|| echo "make: could not install $(strip $(1)): $(2)"; \
		else echo "make: missing Debian packages $(strip $(1)) (not root or no apt-get): $(2)"; fi; fi
endef
native-deps:
	$(call apt_install,$(NATIVE_PKGS),--native-stacks is left out of the build)
	$(call apt_install,$(AMD_PKGS),the AMD backend or ROCm SMI device metrics are left out of the build)
system-deps:
	$(call apt_install,$(TEST_PKGS),the tests that need them will be skipped)

# One configuration for everything (quick when nothing changed); `native` builds what a
# profiled program loads (the demo's need), `native-all` adds the C++ tests. Ninja runs one
# compile per core; it is not handed make's jobserver (MAKEFLAGS=): under `make -j2` it would
# try to join it without its file descriptors and say so as an error.
NATIVE_NOTE = ~1 min the first time; seconds after
native: $(VENV)/.tools native-deps
	$(call say,[build] native core: libraries and the Python extension with CMake and Ninja ($(NATIVE_NOTE)))
	@$(VENV)/bin/cmake -S . -B $(BUILD) -G Ninja $(CMAKE_FLAGS) \
		-DCMAKE_MAKE_PROGRAM="$(CURDIR)/$(VENV)/bin/ninja" -DPython_EXECUTABLE="$(CURDIR)/$(VPY)" \
		-Dpybind11_DIR="$$($(VPY) -m pybind11 --cmakedir)" >/dev/null
	MAKEFLAGS= $(VENV)/bin/cmake --build $(BUILD) --target rocprof_runtime
native-all: native
	$(call say,[build] C++ test suite (~30 s the first time))
	MAKEFLAGS= $(VENV)/bin/cmake --build $(BUILD)

# On a GPU host: build the checkout there with the host's own compiler, CMake and Python (no
# package registry needed), then the GPU tests, the demo and a 2-rank torchrun when 2 GPUs exist.
gpu-check:
	CMAKE_FLAGS="$(CMAKE_FLAGS)" bash tests/gpu/run_on_gpu_host.sh

# ROCm's rocpd package and views (the tests' external judge) lie beside the checkout, in
# ../shared, which a device call does not carry: this copies them into the ignored .oracle/,
# which the call carries (carry: [".oracle"]) and tests/oracle.py finds there.
gpu-oracle:
	rm -rf .oracle && mkdir -p .oracle && cp -r ../shared/oracles/rocm-rocpd .oracle/rocm-rocpd

# The set-up runs the native build and the pip installs side by side (make -j2), then the
# demo or the tests one at a time. rocprof._torch_observer (cpp/capture/torch) is built against
# the venv's PyTorch, which arrives beside the first build, whose configure found none: `native`
# runs again once it is there and adds the observer (`make test` does so in test-cpp/test-py).
native-torch:
	@$(MAKE) --no-print-directory -j2 native $(VENV)/.torch
	@$(MAKE) --no-print-directory native NATIVE_NOTE="again, with PyTorch installed: the torch observer (~1 min the first time; seconds after)"

demo: native-torch
	$(call say,[demo] profiling examples/train_cifar.py (one epoch on the CPU, ~30 s))
	$(VPY) -m rocprof run -d rocprof-output/demo -o train_cifar --stats -S examples/train_cifar.py --epochs 1

# The manual (docs/, mkdocs.yml) as a site in site/: strict, so a warning (a broken link or
# anchor, a page left out of the navigation) fails it; the options reference is generated from
# the option table, so the native core is built first. Open site/index.html.
docs: native $(VENV)/.docs
	$(call say,[docs] the manual: MkDocs into site/ (strict; ~10 s))
	NO_MKDOCS_2_WARNING=1 $(VENV)/bin/mkdocs build --strict
	@echo "make: the manual is in site/ (open site/index.html)"

# The rocprofiler-sdk backend (AMD PC sampling, AMD --gpu-metrics) against a header set, in a
# build folder of its own: CI has no such headers, so its default build leaves it out.
#   make sdk-compile-check SDK_INCLUDE=/opt/rocm/include   (or a set that
#   tests/amd_standin/rocprofiler_sdk_headers.sh PREFIX makes: SDK_INCLUDE=PREFIX/include)
sdk-compile-check: $(VENV)/.tools
	@test -n "$(SDK_INCLUDE)" || { echo "make: give SDK_INCLUDE=DIR (a rocprofiler-sdk include folder)"; exit 2; }
	PATH="$(CURDIR)/$(VENV)/bin:$$PATH" CMAKE="$(CURDIR)/$(VENV)/bin/cmake" PYTHON="$(CURDIR)/$(VPY)" \
		bash tests/amd_standin/sdk_compile_check.sh "$(SDK_INCLUDE)" $(SDK_BUILD)

test-cpp: system-deps native-all
	$(call say,[test] C++ suite (ctest, ~5 s))
	@if [ -f $(BUILD)/cpp/tests/CTestTestfile.cmake ]; then \
		cd $(BUILD) && "$(CURDIR)/$(VENV)/bin/ctest" --output-on-failure; \
	else echo "SKIPPED C++ tests: GoogleTest (libgtest-dev) is not installed"; fi

PYTEST_ARGS ?= tests
# One pytest worker per core (pytest-xdist; at most 4: each test starts Python processes of its
# own), then the `timing` tests alone: they compare times within their own run, which a test
# beside them would skew. Exit status 5 is pytest's "no test selected" (PYTEST_ARGS may select
# none of one kind).
PYTEST_WORKERS ?= $(shell n=$$(nproc 2>/dev/null || echo 1); [ $$n -gt 4 ] && n=4; echo $$n)
# The timing tests live in one folder: the whole suite is not collected again to find them.
TIMING_TESTS = $(if $(filter tests tests/,$(PYTEST_ARGS)),tests/regression_guards,$(PYTEST_ARGS))
pytest_ok = status=0; $(1) || status=$$?; [ $$status -eq 0 ] || [ $$status -eq 5 ]
# Bytecode is cached while the suite runs, whatever PYTHONDONTWRITEBYTECODE says: pytest would
# otherwise rewrite every test module's asserts again in each worker (collection 22 s -> 12 s).
test-py: export PYTHONDONTWRITEBYTECODE =
test-py: system-deps native $(VENV)/.torch $(VENV)/.test
	$(call say,[test] Python suite (pytest on every core, ~8-11 min on 2 cores; s = skipped, each with its reason at the end))
	@$(call pytest_ok,$(VPY) -m pytest -q -n $(PYTEST_WORKERS) -m "not timing" $(PYTEST_ARGS))
	$(call say,[test] the timing tests (alone: they time themselves; ~20 s))
	@$(call pytest_ok,$(VPY) -m pytest -q -p no:xdist -m timing $(TIMING_TESTS))

test:
	@$(MAKE) --no-print-directory -j2 system-deps native-all test-packages
	@$(MAKE) --no-print-directory test-cpp test-py

bench: native-torch
	$(VPY) benchmarks/b1_roctx.py
	$(VPY) benchmarks/b4_throughput.py
	$(VPY) benchmarks/b7_startup.py

# Python (ruff) and C++ (clang-format, style in .clang-format) are both checked; CI runs it.
CXX_SOURCES = $(shell git ls-files 'cpp/*.cpp' 'cpp/*.hpp' 'cpp/*.h' 'cpp/*.c' 'tests/*.c' 'tests/*.cu' 2>/dev/null)
lint: $(VENV)/.test
	$(VENV)/bin/ruff check python rocpd rocshared tests benchmarks examples
	$(VENV)/bin/clang-format --dry-run -Werror $(CXX_SOURCES)

clean:
	rm -rf build $(VENV) python/rocprof/*.so rocprof-output
