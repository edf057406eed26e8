# ctxc entry points (the build itself is CMake, driven by project.yml).
#
#   make            install build deps if missing, build the host CLI: build/host/ctxc
#   make run        build, then run the main job (RUN_CMD)
#   make test       install test deps if missing, fetch lwIP + mbedTLS (once),
#                   build the clang fuzz tree (build/fuzz), host + cortex-m4
#                   (+ the lwIP image in the lab TLS profile, build/cortex-m4-lab),
#                   print the cortex-m4 size table, run every test (ctest,
#                   last; libfuzzer_<target>: each fuzz target briefly)
#   make bench      build the host tree, run the benchmark (summary on stdout,
#                   all rows in build/host/bench.md; input: $CTXC_CORPUS, or
#                   without it sessions generated under build/host/bench/),
#                   then the instruction-count linearity check (valgrind)
#   make fuzz       build the libFuzzer targets with clang (build/fuzz) and run
#                   each for FUZZ_SECONDS (default 60); crashes are kept in
#                   build/fuzz/crashes/<target>/ (test/fuzz/regressions/README.md)
#   make cortex-m4  the cross tree: build/cortex-m4/src/libctxc.a, the images
#   make size       the cortex-m4 size table, the RAM table, the flash per
#                   profile (full, voice, minimal)
#   make dist       the self-contained source tree build/dist/ctxc-<version>/
#                   and its tarball (docs/building.md "Using ctxc in your build";
#                   docs/firmware-quickstart.md); needs cmake and make only
#   make docs       the API reference of include/ctxc/*.h (Doxygen, warnings
#                   as errors) into build/docs/api/html
#   make readme-tables  run the cortex-m4 images under QEMU and write the
#                   generated tables of docs/footprint.md (output, stack,
#                   footprint, library flash and RAM, flash per profile, the
#                   lwIP image) and README.md's footprint headline
#   make device-tables  build the lwIP image in both TLS profiles (production
#                   in build/cortex-m4, lab in build/cortex-m4-lab), run its
#                   test under QEMU -icount against the fixture and the
#                   front-end server, write the cost tables and the
#                   image's stack and TLS pool budgets into docs/device.md
#                   (test/embedded/device_tables.py; slow), and the
#                   scenario image's entry points under -icount
#   make device-tables-scenario  only the scenario image's entry-point
#                   table of docs/device.md (seconds)
#   make flash-walk the core's cortex-m4 flash at every first-parent commit
#                   since FLASH_BASE (default f4b8370, before issue 10), one
#                   row per change (test/embedded/flash_walk.py; slow: a
#                   build per commit; table in build/flash-walk/flash_walk.md)
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
# the lwIP image in the lab TLS profile (-DMPS2_TLS_PROFILE=lab)
LAB_DIR   := $(BUILD)/$(CROSS)-lab
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
# Without a corpus: generated sessions of these sizes (entries; the bench
# also runs each 10 times over, so 1000 becomes 10000) and the example.
BENCH_GEN       := $(HOST_DIR)/bench/generated
BENCH_GEN_SIZES ?= 50,200,1000

# The clang fuzz tree (build/fuzz), built by `make fuzz` and `make test`:
# the library and the CLI with clang and the project's warnings (-Werror),
# and the libFuzzer targets of test/fuzz (their names). `make fuzz` runs
# each for FUZZ_SECONDS; `make test` for FUZZ_TEST_SECONDS (ctest entries
# libfuzzer_<target>, after replaying the seeds and the regressions).
FUZZ_DIR     := $(BUILD)/fuzz
FUZZ_TARGETS := jsonl openai json settings_file commands manifest strategies sse http provider import_job restore_ids
FUZZ_BUILD   := fuzz_seeds ctxc ctxc_cli $(addprefix fuzz_,$(FUZZ_TARGETS))
FUZZ_SECONDS ?= 60
FUZZ_TEST_SECONDS ?= 5

# Debian packages.
# libmbedtls-dev: the POSIX transport's TLS (port/posix); openssl and python3:
# the test fixture (test/fixtures: certificates made at test time, the local
# HTTPS server).
BUILD_DEPS := cmake make gcc libc6-dev libedit-dev libmbedtls-dev
# python3 (cross): generates the scenario image's histories (boards/mps2-an386).
# qemu-system-arm (test): runs the scenario image (ctest label target).
# pkgconf (test): pkg-config for the consumption tests (test/consume).
# dpkg-dev (cross): `apt-get source` of lwIP and mbedTLS for the lwIP
# image (port/lwip/fetch_sources.sh, into build/third_party).
# ca-certificates (cross): the lwIP image's trust store, picked by name
# (boards/mps2-an386/net/trust_store.txt).
CROSS_DEPS := cmake make gcc-arm-none-eabi libnewlib-arm-none-eabi binutils-arm-none-eabi python3 dpkg-dev ca-certificates
# clang + its runtime (test): the fuzz tree, libFuzzer and its sanitizers.
# golang-go (test): the lwIP image's front-end TLS server
# (test/fixtures/frontend_server.go: Go's crypto/tls, which writes 16 KiB
# records and does not negotiate max_fragment_length).
TEST_DEPS  := $(BUILD_DEPS) doxygen ca-certificates python3 openssl valgrind libcmocka-dev gcc-arm-none-eabi libnewlib-arm-none-eabi binutils-arm-none-eabi qemu-system-arm pkgconf dpkg-dev clang libclang-rt-14-dev golang-go
# `make fuzz` builds the fuzz tree with its tests configured: all of TEST_DEPS.
FUZZ_DEPS  := $(TEST_DEPS)
# doxygen: the API reference (`make docs`, ctest api_docs; docs/Doxyfile).
DOCS_DEPS  := doxygen python3
# jsmn: the bench's tokenise-only baseline (test/bench/bench_tokenise.c);
# valgrind: its instruction counts (test/bench/instr_linearity.sh);
# python3: the generated sessions (test/bench/gen_sessions.py).
BENCH_DEPS := libjsmn-dev valgrind python3

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
# It runs the fuzz tree's libFuzzer binaries too (test/fuzz).
TEST_CMAKE_ARGS  := -DCTXC_BUILD_TESTS=ON -DCTXC_LIB_CORTEX_M4=$(abspath $(CROSS_DIR))/src/libctxc.a \
                    -DCTXC_FUZZ_BIN_DIR=$(abspath $(FUZZ_DIR))/fuzz -DCTXC_FUZZ_SECONDS=$(FUZZ_TEST_SECONDS)
FUZZ_CMAKE_ARGS  := -DCTXC_TARGET=host-fuzz -DCTXC_BUILD_TESTS=ON -DCTXC_FUZZ=ON
# lwIP + mbedTLS sources of the lwIP image (boards/mps2-an386/net), fetched
# by `make test` / `make cortex-m4` (target net-sources).
NET_SRC          := $(BUILD)/third_party
CROSS_CMAKE_ARGS := -DCTXC_TARGET=$(CROSS) -DCTXC_NET_SOURCES=$(abspath $(NET_SRC))
# The host test tree builds them too, for port/lwip's NO_SYS=0 test
# (test/lwip_sys: lwIP's tcpip thread on the host).
TEST_CMAKE_ARGS  += -DCTXC_NET_SOURCES=$(abspath $(NET_SRC))
# Drops CMake's "[100%] Built target x" lines around the report targets.
NO_PROGRESS := grep -v '^\[ *[0-9]*%\] Built target'

.PHONY: all run test bench fuzz fuzz-build cortex-m4 size dist docs readme-tables device-tables device-tables-scenario flash-walk clean help deps-build deps-dist deps-cross deps-test deps-bench deps-fuzz deps-docs net-sources

all: deps-build
	$(CMAKE) -S . -B $(HOST_DIR) $(HOST_CMAKE_ARGS)
	$(CMAKE) --build $(HOST_DIR) --target ctxc_cli -j $(JOBS)
	@echo "make: built $(CLI)"

run: all
	$(RUN_CMD)

test: deps-test net-sources fuzz-build
	$(CMAKE) -S . -B $(HOST_DIR) $(HOST_CMAKE_ARGS) $(TEST_CMAKE_ARGS)
	$(CMAKE) --build $(HOST_DIR) -j $(JOBS)
	$(CMAKE) -S . -B $(CROSS_DIR) $(CROSS_CMAKE_ARGS)
	$(CMAKE) --build $(CROSS_DIR) -j $(JOBS)
	@# the lwIP image in the lab TLS profile (ctest lwip_target_lab)
	$(CMAKE) -S . -B $(LAB_DIR) $(CROSS_CMAKE_ARGS) -DMPS2_TLS_PROFILE=lab
	$(CMAKE) --build $(LAB_DIR) -j $(JOBS) --target ctxc_lwip
	@# Informational here; a failure shows up again in ctest (symbols_cortex-m4).
	-@$(CMAKE) --build $(CROSS_DIR) --target size ram minimal-size flash-profiles symbols | $(NO_PROGRESS)
	$(CTEST) --test-dir $(HOST_DIR) --output-on-failure --no-tests=error --no-label-summary -j $(JOBS)

# Not a test: prints times, asserts nothing about them.
# Its input: the corpus in $$CTXC_CORPUS when set, else the sessions
# test/bench/gen_sessions.py generates (fixed seed) into BENCH_GEN with a
# copy of the shipped example; never committed.
bench: deps-bench all
	$(CMAKE) --build $(HOST_DIR) --target $(BENCH_TARGET) -j $(JOBS)
	@set -e; corpus="$${CTXC_CORPUS:-}"; \
	if [ -z "$$corpus" ]; then \
	    echo "bench: CTXC_CORPUS not set: generated sessions in $(BENCH_GEN) (test/bench/gen_sessions.py)"; \
	    python3 test/bench/gen_sessions.py $(BENCH_GEN) --sizes $(BENCH_GEN_SIZES); \
	    corpus=$(abspath $(BENCH_GEN)); \
	fi; \
	CTXC_CORPUS="$$corpus" $(BENCH); \
	test/bench/instr_linearity.sh $(CLI) $(HOST_DIR)/bench "$$corpus" | tee -a $(HOST_DIR)/bench.md
	@$(CMAKE) --build $(HOST_DIR) --target turn_cost turn_cost_noindex -j $(JOBS) >/dev/null
	@set -e; for n in 256 2560; do \
	    $(HOST_DIR)/test/bench/turn_cost $$n 20 high-density; \
	    $(HOST_DIR)/test/bench/turn_cost $$n 20 top-down-truncation; \
	done | tee -a $(HOST_DIR)/bench.md; \
	test/bench/turn_cost.sh $(HOST_DIR)/test/bench/turn_cost \
	    $(HOST_DIR)/test/bench/turn_cost_noindex | tee -a $(HOST_DIR)/bench.md

# The fuzz tree; no deps of its own (those of `make test` or `make fuzz`).
fuzz-build:
	$(CMAKE) -S . -B $(FUZZ_DIR) $(FUZZ_CMAKE_ARGS)
	$(CMAKE) --build $(FUZZ_DIR) -j $(JOBS) --target $(FUZZ_BUILD)

# Each target (test/fuzz/libfuzzer.sh): its seeds and regressions replayed,
# then FUZZ_SECONDS of libFuzzer over its working corpus (build/fuzz/corpus/<t>,
# grown across runs), the seeds and the regressions; one summary line per
# target (runs, exec/s, coverage, features); fails when one crashed.
fuzz: deps-fuzz fuzz-build
	@set -e; failed=0; summary=""; \
	for t in $(FUZZ_TARGETS); do \
	    echo "fuzz: $$t for $(FUZZ_SECONDS) s"; \
	    if test/fuzz/libfuzzer.sh $(FUZZ_DIR)/fuzz/fuzz_$$t $$t $(FUZZ_SECONDS) \
	        $(FUZZ_DIR)/test/fuzz/seeds/$$t $(FUZZ_DIR)/corpus/$$t $(FUZZ_DIR)/crashes/$$t \
	        > $(FUZZ_DIR)/$$t.log 2>&1; then res=ok; else res=CRASH; failed=1; fi; \
	    runs=$$(sed -n 's/^stat::number_of_executed_units: *//p' $(FUZZ_DIR)/$$t.log); \
	    eps=$$(sed -n 's/^stat::average_exec_per_sec: *//p' $(FUZZ_DIR)/$$t.log); \
	    cov=$$(grep -o 'cov: [0-9]*' $(FUZZ_DIR)/$$t.log | tail -1); \
	    ft=$$(grep -o 'ft: [0-9]*' $(FUZZ_DIR)/$$t.log | tail -1); \
	    summary="$$summary$$(printf '%-14s %-6s %10s runs %7s exec/s  %-10s %s' $$t $$res "$$runs" "$$eps" "$$cov" "$$ft")\n"; \
	done; \
	printf "\nfuzz summary ($(FUZZ_SECONDS) s per target; logs in $(FUZZ_DIR)/<target>.log):\n$$summary"; \
	if [ $$failed -ne 0 ]; then echo "fuzz: a target crashed: see its log and $(FUZZ_DIR)/crashes/"; exit 1; fi

cortex-m4: deps-cross net-sources
	$(CMAKE) -S . -B $(CROSS_DIR) $(CROSS_CMAKE_ARGS)
	$(CMAKE) --build $(CROSS_DIR) -j $(JOBS)
	@echo "make: built $(CROSS_DIR)/src/libctxc.a"

size: deps-cross
	@$(CMAKE) -S . -B $(CROSS_DIR) $(CROSS_CMAKE_ARGS) >/dev/null
	@$(CMAKE) --build $(CROSS_DIR) --target size ram minimal-size flash-profiles | $(NO_PROGRESS)

# The dist tree (cmake/ctxc_dist.cmake): a tree of its own that only
# generates the manifest header and the prompt table and packs (CMake with
# CTXC_DIST_ONLY: no compiler, libedit or mbedTLS needed; cmake and make).
DIST_GEN_DIR := $(BUILD)/dist-gen
dist: deps-dist
	@$(CMAKE) -S . -B $(DIST_GEN_DIR) -DCTXC_DIST_ONLY=ON >/dev/null
	@$(CMAKE) --build $(DIST_GEN_DIR) --target dist | $(NO_PROGRESS)

# The API reference: Doxygen over the public headers (docs/Doxyfile), any
# warning (an undocumented name, a markup error) fails it, as ctest api_docs.
DOCS_OUT := $(BUILD)/docs/api
docs: deps-docs
	@python3 test/docs/check_api_docs.py --doxyfile docs/Doxyfile --headers include/ctxc \
	    --out $(DOCS_OUT) --version "$$(sed -n 's/^  version: *//p' project.yml)"
	@echo "make docs: $(DOCS_OUT)/html/index.html"

# The generated tables of docs/footprint.md (boards/mps2-an386): the
# scenario image's output, stack and footprint, the library's flash and RAM,
# the flash per profile, the summary (also README.md's footprint headline)
# and the lwIP image.
readme-tables: deps-cross net-sources
	@$(CMAKE) -S . -B $(CROSS_DIR) $(CROSS_CMAKE_ARGS) >/dev/null
	@$(CMAKE) --build $(CROSS_DIR) --target readme-tables | $(NO_PROGRESS)
	@$(CMAKE) --build $(CROSS_DIR) --target lwip-readme-table | $(NO_PROGRESS)

# The lwIP image's cost tables in docs/device.md (docs/device.md, "Cost on
# the target"): both TLS profiles built, the production image's test run
# under QEMU -icount shift=0.
LWIP_ELF := boards/mps2-an386/ctxc_lwip.elf
device-tables: deps-test net-sources
	$(CMAKE) -S . -B $(CROSS_DIR) $(CROSS_CMAKE_ARGS)
	$(CMAKE) --build $(CROSS_DIR) -j $(JOBS) --target ctxc_lwip ctxc_scenario
	$(CMAKE) -S . -B $(LAB_DIR) $(CROSS_CMAKE_ARGS) -DMPS2_TLS_PROFILE=lab
	$(CMAKE) --build $(LAB_DIR) -j $(JOBS) --target ctxc_lwip
	python3 test/embedded/device_tables.py run arm-none-eabi-objcopy $(CROSS_DIR)/$(LWIP_ELF) \
	    $(LAB_DIR)/$(LWIP_ELF) $(CROSS_DIR)/boards/mps2-an386/ctxc_scenario.elf $(EXAMPLE) docs/device.md \
	    qemu-system-arm -M mps2-an386 -nographic -semihosting-config enable=on,target=native -kernel

device-tables-scenario: deps-cross deps-test
	$(CMAKE) -S . -B $(CROSS_DIR) $(CROSS_CMAKE_ARGS)
	$(CMAKE) --build $(CROSS_DIR) -j $(JOBS) --target ctxc_scenario
	python3 test/embedded/device_tables.py scenario $(CROSS_DIR)/boards/mps2-an386/ctxc_scenario.elf \
	    docs/device.md qemu-system-arm -M mps2-an386 -nographic -semihosting-config enable=on,target=native -kernel
	@# the steady-state turn at 256 and 2,048 entries (host builds, callgrind)
	$(CMAKE) -S . -B $(HOST_DIR) $(HOST_CMAKE_ARGS) $(TEST_CMAKE_ARGS) >/dev/null
	$(CMAKE) --build $(HOST_DIR) -j $(JOBS) --target turn_cost turn_cost_noindex >/dev/null
	test/bench/turn_cost.sh $(HOST_DIR)/test/bench/turn_cost $(HOST_DIR)/test/bench/turn_cost_noindex \
	    | python3 test/bench/turn_cost_doc.py docs/device.md

# Commit by commit (issue 10's rule: the core's flash does not grow). The
# oldest commits build with jsmn (libjsmn-dev, a bench package).
FLASH_BASE ?= f4b8370
flash-walk: deps-cross deps-bench
	python3 test/embedded/flash_walk.py --base $(FLASH_BASE) --dir $(BUILD)/flash-walk

clean:
	rm -rf $(BUILD)

help:
	@sed -n '3,/^$$/s/^# \{0,1\}//p' $(firstword $(MAKEFILE_LIST))

# lwIP 2.1.3 + mbedTLS 2.28 from Debian (apt-get source), once.
net-sources:
	@port/lwip/fetch_sources.sh $(NET_SRC)

deps-build:
	$(call install_deps,build,$(BUILD_DEPS))

# cmake (the generator and tar) and make: all that packing needs.
DIST_DEPS := cmake make
deps-dist:
	$(call install_deps,dist,$(DIST_DEPS))

deps-cross:
	$(call install_deps,cortex-m4,$(CROSS_DEPS))

deps-test:
	$(call install_deps,test,$(TEST_DEPS))

deps-fuzz:
	$(call install_deps,fuzz,$(FUZZ_DEPS))

deps-bench:
	$(call install_deps,bench,$(BENCH_DEPS))

deps-docs:
	$(call install_deps,docs,$(DOCS_DEPS))
