# Every target sets itself up from nothing: a virtual environment in .venv, the native core
# built in place (python/rocprof/*.so), so the package imports straight from the checkout.
PYTHON ?= python3
VENV   := .venv
VPY    := $(VENV)/bin/python
BUILD  := build/dev
export PYTHONPATH := $(CURDIR)/python:$(CURDIR)
export PYTHONUNBUFFERED := 1

# The one CMake configuration of a development build; `make gpu-check` builds with it too.
CMAKE_FLAGS := -DCMAKE_BUILD_TYPE=Release -DROCPROF_INPLACE=ON -DROCPROF_BUILD_TESTS=ON

.PHONY: demo test test-cpp test-py bench lint native native-deps clean system-deps gpu-check

# The venv sees the checkout as installed (editable): a .pth file puts python/ and the root
# on its sys.path, and `rocprof`/`rocpd` commands land in .venv/bin, so after any target
# `. .venv/bin/activate` gives the README's commands as written.
$(VENV)/.stamp: pyproject.toml Makefile
	$(PYTHON) -m venv $(VENV)
	$(VPY) -m pip install -q --upgrade pip
	$(VPY) -m pip install -q $$($(VPY) -c 'import re; t = open("pyproject.toml").read(); \
		print(" ".join(re.findall(r"\"([^\"]+)\"", re.search(r"^dev = \[(.*?)\]", t, re.M | re.S)[1])))')
	printf '%s\n%s\n' "$(CURDIR)/python" "$(CURDIR)" > \
		"$$($(VPY) -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')/rocprof-checkout.pth"
	for cmd in rocprof:rocprof.__main__ rocpd:rocpd.cli; do \
		printf '#!%s\nimport sys\nfrom %s import main\nsys.exit(main())\n' \
			"$(CURDIR)/$(VPY)" "$${cmd#*:}" > $(VENV)/bin/$${cmd%%:*}; \
		chmod +x $(VENV)/bin/$${cmd%%:*}; done
	touch $@

$(VENV)/.torch: $(VENV)/.stamp
	$(VPY) -m pip install -q torch==2.13.0
	touch $@

# Debian packages: libunwind-dev (native frames for --native-stacks; needed by the build),
# librocm-smi-dev (ROCm SMI headers for AMD GPU metrics, --process-freq; the library is opened
# at run time), GoogleTest (C++ suite) and Chromium (renders the HTML report; tests only). Installed with
# apt-get when missing and we are root, announced first; otherwise the build leaves native
# stacks out and those tests are skipped, each with a visible reason.
NATIVE_PKGS := $(if $(wildcard /usr/include/libunwind.h /usr/include/*/libunwind.h),,libunwind-dev)
# ROCm 5.2 headers (Debian): the AMD backend is compiled against them (its libraries are opened
# at run time) and tested on the software stand-in of tests/amd_standin. ROCm SMI for the metrics.
AMD_PKGS    := $(if $(wildcard /usr/include/hsa/hsa_api_trace.h /opt/rocm/include/hsa/hsa_api_trace.h),,libhsa-runtime-dev) \
               $(if $(wildcard /usr/include/hip/amd_detail/hip_prof_str.h /opt/rocm/include/hip/amd_detail/hip_prof_str.h),,libamdhip64-dev) \
               $(if $(wildcard /usr/include/rocm_smi/rocm_smi.h /opt/rocm/include/rocm_smi/rocm_smi.h),,librocm-smi-dev)
TEST_PKGS   := $(if $(wildcard /usr/include/gtest/gtest.h),,libgtest-dev) \
               $(if $(shell command -v chromium),,chromium)
define apt_install
	@if [ -n "$(strip $(1))" ]; then \
		if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
			echo "make: installing Debian packages with apt-get (as root): $(strip $(1))"; \
			(apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $(1)) >/dev/null 2>&1 \
				|| echo "make: could not install $(strip $(1)): $(2)"; \
		else echo "make: missing Debian packages $(strip $(1)) (not root or no apt-get): $(2)"; fi; fi
endef
native-deps:
	$(call apt_install,$(NATIVE_PKGS),--native-stacks is left out of the build)
	$(call apt_install,$(AMD_PKGS),the AMD backend or ROCm SMI device metrics are left out of the build)
system-deps:
	$(call apt_install,$(TEST_PKGS),the tests that need them will be skipped)

native: $(VENV)/.stamp native-deps
	$(VENV)/bin/cmake -S . -B $(BUILD) -G Ninja $(CMAKE_FLAGS) \
		-DCMAKE_MAKE_PROGRAM=$(CURDIR)/$(VENV)/bin/ninja -DPython_EXECUTABLE=$(CURDIR)/$(VPY) \
		-Dpybind11_DIR=$$($(VPY) -m pybind11 --cmakedir) >/dev/null
	$(VENV)/bin/cmake --build $(BUILD)

# On a GPU host: build the checkout there with the host's own compiler, CMake and Python (no
# package registry needed), then the GPU tests, the demo and a 2-rank torchrun when 2 GPUs exist.
gpu-check:
	CMAKE_FLAGS="$(CMAKE_FLAGS)" bash tests/gpu/run_on_gpu_host.sh

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

# Python (ruff) and C++ (clang-format, style in .clang-format) are both checked; CI runs it.
CXX_SOURCES = $(shell git ls-files 'cpp/*.cpp' 'cpp/*.hpp' 'cpp/*.h' 'cpp/*.c' 'tests/*.c' 'tests/*.cu' 2>/dev/null)
lint: $(VENV)/.stamp
	$(VENV)/bin/ruff check python rocpd tests benchmarks examples
	$(VENV)/bin/clang-format --dry-run -Werror $(CXX_SOURCES)

clean:
	rm -rf build $(VENV) python/rocprof/*.so rocprof-output
