# ctxc entry points (the build itself is CMake, driven by project.yml).
#
#   make            install build deps if missing, build the host CLI: build/host/ctxc
#   make run        build, then run the main job (RUN_CMD)
#   make test       install test deps if missing, build host + cortex-m4, print
#                   the cortex-m4 size table, run every test (ctest, last)
#   make bench      build the host tree, run the benchmark (summary on stdout,
#                   all rows in build/host/bench.md; corpus: $CTXC_CORPUS)
#   make cortex-m4  the cross library only: build/cortex-m4/src/libctxc.a
#   make size       the cortex-m4 size table
#   make clean      remove build/
#   make help       this list

SHELL := /bin/bash
.SHELLFLAGS := -o pipefail -c
.DEFAULT_GOAL := all
.NOTPARALLEL:
.SUFFIXES:
MAKEFLAGS += --no-print-directory

JOBS  ?= $(shell nproc 2>/dev/null || echo 2)
CMAKE ?= cmake
CTEST ?= ctest

BUILD     := build
HOST_DIR  := $(BUILD)/host
CROSS     := cortex-m4
CROSS_DIR := $(BUILD)/$(CROSS)
CLI       := $(HOST_DIR)/ctxc

# The main job of `make run`. Change it here.
EXAMPLE := boards/host/examples/coding-session.jsonl
# Compresses the example with the LLM-free high-density strategy for a
# 16000-token context window: the density step, then one-line summaries of
# older tool results; the before/after table goes to the terminal.
RUN_OUT := $(HOST_DIR)/coding-session.compressed.jsonl
RUN_CMD  = $(CLI) compress $(EXAMPLE) --strategy high-density --context-limit 16000 -o $(RUN_OUT) && echo "make run: wrote $(RUN_OUT)"

# The benchmark of `make bench` (test/bench).
BENCH_TARGET := bench_strategies
BENCH        := $(HOST_DIR)/test/bench/$(BENCH_TARGET)

# Debian packages.
# libmbedtls-dev: the POSIX transport's TLS (port/posix); openssl and python3:
# the test fixture (test/fixtures: certificates made at test time, the local
# HTTPS server).
BUILD_DEPS := cmake make gcc libc6-dev libedit-dev libmbedtls-dev
CROSS_DEPS := cmake make gcc-arm-none-eabi libnewlib-arm-none-eabi binutils-arm-none-eabi
TEST_DEPS  := $(BUILD_DEPS) python3 openssl libcmocka-dev gcc-arm-none-eabi libnewlib-arm-none-eabi binutils-arm-none-eabi
# jsmn: the bench's tokenise-only baseline (test/bench/bench_tokenise.c).
BENCH_DEPS := libjsmn-dev

# $(call install_deps,<what>,<packages>): install the missing packages (one
# apt-get run, only when something is missing), then print one line.
define install_deps
@set -e; what="$(1)"; pkgs="$(strip $(2))"; \
if ! command -v dpkg-query >/dev/null 2>&1; then \
    echo "deps ($$what): no dpkg-query (not Debian); assuming installed: $$pkgs"; exit 0; \
fi; \
missing=""; \
for p in $$pkgs; do \
    dpkg-query -W -f='$${Status}' "$$p" 2>/dev/null | grep -q 'ok installed' || missing="$$missing $$p"; \
done; \
if [ -z "$$missing" ]; then \
    echo "deps ($$what): installed: $$pkgs"; exit 0; \
fi; \
sudo=""; \
if [ "$$(id -u)" -ne 0 ]; then \
    if command -v sudo >/dev/null 2>&1; then sudo="sudo"; \
    else echo "deps ($$what): missing:$$missing; run as root or install sudo" >&2; exit 1; fi; \
fi; \
echo "deps ($$what): installing:$$missing"; \
$$sudo env DEBIAN_FRONTEND=noninteractive apt-get update; \
$$sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends $$missing; \
echo "deps ($$what): installed: $$pkgs (newly:$$missing)"
endef

HOST_CMAKE_ARGS  := -DCTXC_TARGET=host
# The host test tree checks the cross library too (test/embedded).
TEST_CMAKE_ARGS  := -DCTXC_BUILD_TESTS=ON -DCTXC_LIB_CORTEX_M4=$(abspath $(CROSS_DIR))/src/libctxc.a
CROSS_CMAKE_ARGS := -DCTXC_TARGET=$(CROSS)
# Drops CMake's "[100%] Built target x" lines around the report targets.
NO_PROGRESS := grep -v '^\[ *[0-9]*%\] Built target'

.PHONY: all run test bench cortex-m4 size clean help deps-build deps-cross deps-test deps-bench

all: deps-build
	$(CMAKE) -S . -B $(HOST_DIR) $(HOST_CMAKE_ARGS)
	$(CMAKE) --build $(HOST_DIR) --target ctxc_cli -j $(JOBS)
	@echo "make: built $(CLI)"

run: all
	$(RUN_CMD)

test: deps-test
	$(CMAKE) -S . -B $(HOST_DIR) $(HOST_CMAKE_ARGS) $(TEST_CMAKE_ARGS)
	$(CMAKE) --build $(HOST_DIR) -j $(JOBS)
	$(CMAKE) -S . -B $(CROSS_DIR) $(CROSS_CMAKE_ARGS)
	$(CMAKE) --build $(CROSS_DIR) -j $(JOBS)
	@# Informational here; a failure shows up again in ctest (symbols_cortex-m4).
	-@$(CMAKE) --build $(CROSS_DIR) --target size ram symbols | $(NO_PROGRESS)
	$(CTEST) --test-dir $(HOST_DIR) --output-on-failure --no-tests=error --no-label-summary -j $(JOBS)

# Not a test: prints times, asserts nothing about them.
bench: all deps-bench
	$(CMAKE) --build $(HOST_DIR) --target $(BENCH_TARGET) -j $(JOBS)
	$(BENCH)

cortex-m4: deps-cross
	$(CMAKE) -S . -B $(CROSS_DIR) $(CROSS_CMAKE_ARGS)
	$(CMAKE) --build $(CROSS_DIR) -j $(JOBS)
	@echo "make: built $(CROSS_DIR)/src/libctxc.a"

size: deps-cross
	@$(CMAKE) -S . -B $(CROSS_DIR) $(CROSS_CMAKE_ARGS) >/dev/null
	@$(CMAKE) --build $(CROSS_DIR) --target size ram | $(NO_PROGRESS)

clean:
	rm -rf $(BUILD)

help:
	@sed -n '3,12s/^# \{0,1\}//p' $(firstword $(MAKEFILE_LIST))

deps-build:
	$(call install_deps,build,$(BUILD_DEPS))

deps-cross:
	$(call install_deps,cortex-m4,$(CROSS_DEPS))

deps-test:
	$(call install_deps,test,$(TEST_DEPS))

deps-bench:
	$(call install_deps,bench,$(BENCH_DEPS))
