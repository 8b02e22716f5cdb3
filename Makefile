# specsim — one entry point. `make` builds build/specsim and build/calibrate
# (CUDA parts only when nvcc is found); `make SAN=1` builds the same tree under
# build/asan with AddressSanitizer and UBSan; `make run` builds build/specsim
# alone and runs the default scenario.
#
# Layout rules, so modules can be added without touching this file:
#   sim/LAYER/*.c      -> libspecsim.a, one folder per layer (docs/design.md,
#                         "Layers"; tests/cli/layers.sh checks the direction),
#                         except the command line: sim/cli/*.c go into
#                         build/specsim only (they print and exit; library
#                         code never does). Includes name the layer:
#                         #include "model/accept.h" with -Isim.
#   kernels/*.c        -> libkernels.a (kernels/calibrate_main.c is the CLI)
#   kernels/*_avx2.c   compiled with -mavx2 -mfma -mf16c
#   kernels/*_avx512.c compiled with -mavx512f -mavx512bw -mavx512vl -mfma -mf16c
#   kernels/cuda/*.cu  -> libkernels_cuda.a when nvcc exists
#   kernels/llm/*.c    -> libllm.a, the real-model runtime (GGUF, tokenizer,
#                         forward pass, speculative decoding) over
#                         libkernels.a; kernels/llm/main.c and
#                         kernels/llm/cli_*.c go into build/llm only
#   tests/unit/test_*.c, tests/kernels/test_*.c, tests/llm/test_*.c
#                      -> one test binary each (tests/llm/ also link libllm.a)
#   tests/cli/*.sh     shell tests run by tests/run.sh
#   tests/fuzz/fuzz_*.c fuzz targets (tests/fuzz/fuzz.h): linked in every
#                      build with a replay main() for `make test`, and by
#                      `make fuzz` with clang's libFuzzer
#
# VERSION holds the version number; scripts/version.sh writes it with the git
# commit into build/gen/version.c (in libspecsim.a) on every make, but only
# touches the file when the text changes, so a new commit relinks and
# recompiles nothing else.

SAN      ?= 0
ifeq ($(SAN),1)
BUILD    ?= build/asan
SANFLAGS := -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all
OPT      := -O1 -g
else
BUILD    ?= build
SANFLAGS :=
OPT      := -O2 -g
endif

CC       ?= gcc
PKGS     := gsl yaml-0.1
PKG_CFLAGS := $(shell pkg-config --cflags $(PKGS) 2>/dev/null)
PKG_LIBS   := $(shell pkg-config --libs $(PKGS) 2>/dev/null || echo -lgsl -lgslcblas -lyaml -lm)
WARN     := -Wall -Wextra -Werror
CFLAGS   := -std=c11 $(OPT) $(WARN) -D_POSIX_C_SOURCE=200809L -D_DEFAULT_SOURCE \
            $(PKG_CFLAGS) $(SANFLAGS) -Isim -Ikernels -MMD -MP \
            -DSPECSIM_ROOT='"$(CURDIR)"'
KCFLAGS  := $(filter-out -O1 -O2,$(CFLAGS)) -O3
# The ISA kernels (kernels/*_avx2.c, *_avx512.c) under the sanitizers: -O1,
# like the rest of the tree. ASan+UBSan at -O3 spent about 250 of the
# sanitizer build's 380 CPU seconds on gemv_avx2.c and gemv_avx512.c alone
# (about 40 at -O1); the sanitizer runs look for memory errors, not speed.
# The cost: the real-model runs under asan are slower (one `llm spec` run
# 13.8 -> 23.1 s, AVX-512 host); net about 150 s less per `make test`.
ifeq ($(SAN),1)
ISA_OPT  := -O1
endif
LDFLAGS  := $(SANFLAGS)
LDLIBS   := $(PKG_LIBS) -lpthread -lm

NVCC     := $(shell command -v nvcc 2>/dev/null)
CUDA_HOME ?= $(patsubst %/bin/nvcc,%,$(NVCC))
NVFLAGS  := -O3 -std=c++17 -Ikernels -Isim --generate-code arch=compute_90,code=sm_90 \
            --generate-code arch=compute_80,code=sm_80 -Xcompiler -Wall,-Wextra,-Werror
CUDA_LIBS := -L$(CUDA_HOME)/lib64 -lcublasLt -lcublas -lcudart

CLI_SRC  := $(wildcard sim/cli/*.c)
CLI_OBJ  := $(CLI_SRC:%.c=$(BUILD)/%.o)
SIM_SRC  := $(filter-out $(CLI_SRC),$(wildcard sim/*/*.c))
SIM_OBJ  := $(SIM_SRC:%.c=$(BUILD)/%.o) $(BUILD)/gen/version.o
KER_SRC  := $(filter-out kernels/calibrate_main.c,$(wildcard kernels/*.c))
KER_OBJ  := $(KER_SRC:%.c=$(BUILD)/%.o)
LLM_CLI_SRC := kernels/llm/main.c $(wildcard kernels/llm/cli_*.c)
LLM_SRC  := $(filter-out $(LLM_CLI_SRC),$(wildcard kernels/llm/*.c))
LLM_OBJ  := $(LLM_SRC:%.c=$(BUILD)/%.o)
LLM_CLI_OBJ := $(LLM_CLI_SRC:%.c=$(BUILD)/%.o)
CU_SRC   := $(wildcard kernels/cuda/*.cu)
CU_OBJ   := $(CU_SRC:%.cu=$(BUILD)/%.o)
# testbed/*.c -> build/testbed (testbed/main.c) over libtestbed.a (the rest,
# objects in build/tb/ since build/testbed is the binary);
# tests/unit/test_tb_*.c also link libtestbed.a.
TB_SRC   := $(filter-out testbed/main.c,$(wildcard testbed/*.c))
TB_OBJ   := $(TB_SRC:testbed/%.c=$(BUILD)/tb/%.o)
UNIT_SRC := $(wildcard tests/unit/test_*.c) $(wildcard tests/kernels/test_*.c)
UNIT_BIN := $(patsubst tests/%.c,$(BUILD)/tests/%,$(UNIT_SRC))
LLMT_SRC := $(wildcard tests/llm/test_*.c)
LLMT_BIN := $(patsubst tests/%.c,$(BUILD)/tests/%,$(LLMT_SRC))
FUZZ_SRC := $(wildcard tests/fuzz/fuzz_*.c)
FUZZ_REPLAY := $(patsubst tests/%.c,$(BUILD)/tests/%,$(FUZZ_SRC))
CUT_SRC  := $(wildcard tests/cuda/test_*.cu)
CUT_BIN  := $(patsubst tests/%.cu,$(BUILD)/tests/%,$(CUT_SRC))

BINS := $(BUILD)/specsim $(BUILD)/calibrate $(BUILD)/testbed $(BUILD)/llm
ifneq ($(NVCC),)
ifneq ($(CU_SRC),)
# CUDA test binaries are linked by nvcc, which cannot link sanitizer builds.
ifeq ($(SAN),0)
BINS += $(CUT_BIN)
endif
CAL_CUDA_OBJ := $(CU_OBJ)
CAL_CUDA_LIBS := $(CUDA_LIBS) -lstdc++
CFLAGS += -DSPECSIM_HAVE_CUDA=1
KCFLAGS += -DSPECSIM_HAVE_CUDA=1
endif
endif

.PHONY: all deps run test test-gpu test-slurm bench figures fuzz fuzz-bins clean asan FORCE
all: $(BINS) $(UNIT_BIN) $(LLMT_BIN) $(FUZZ_REPLAY)

deps:
	@./scripts/install-deps.sh

# A newcomer's first command: it installs and builds only what running the
# default scenario needs (build/specsim and the libraries it links), not
# the test programs, calibrate, testbed, llm, CUDA code or the optional
# packages of the tests, so that it takes seconds, not minutes. `make test`
# installs and builds the rest. A sub-make, as for test: pkg-config is only
# asked for the flags once the packages are there.
run:
	@./scripts/install-deps.sh run
	@$(MAKE) --no-print-directory $(BUILD)/specsim
	$(BUILD)/specsim run scenarios/default.yaml

# The whole suite twice: optimised, then under ASan+UBSan. tests/run.sh prints
# the closing `N passed, N failed` line over both.
#
# The two trees are built side by side, on every core: a plain `make test`
# (no -j) built them one after the other on one core, about 8 of CI's 20
# minutes on 2 cores. A -j given on the command line is kept (the jobserver
# then shares its slots between the two builds); -j1 builds one at a time.
TEST_JOBS = $(if $(filter -j%,$(MAKEFLAGS)),,-j$(shell nproc 2>/dev/null || echo 2))
test: deps
	@$(MAKE) --no-print-directory $(TEST_JOBS) test-builds
	@./tests/run.sh build build/asan

.PHONY: test-builds test-build-opt test-build-asan
test-builds: test-build-opt test-build-asan
test-build-opt:
	@$(MAKE) --no-print-directory all
test-build-asan:
	@$(MAKE) --no-print-directory SAN=1 all

test-gpu: all
	@./tests/run-gpu.sh $(BUILD)

# scripts/slurm-sweep.sh on a real single-node Slurm started and stopped by
# the test (root; installs slurm-wlm and munge when missing). `make test`
# runs it too, through tests/cli/slurm_real.sh.
test-slurm: deps
	@$(MAKE) --no-print-directory all
	@SLURM_REQUIRED=1 sh tests/slurm/run.sh $(BUILD)

bench: deps
	@$(MAKE) --no-print-directory all
	@./scripts/bench.sh $(BUILD)

figures: deps
	@$(MAKE) --no-print-directory all
	@./scripts/figures.sh $(BUILD)

# Coverage-guided fuzzing of the input readers (tests/fuzz/): builds each
# target with clang's libFuzzer under ASan+UBSan in build/fuzz and runs it
# for FUZZ_SECONDS on a scratch copy of its corpus (scripts/fuzz.sh).
FUZZ_SECONDS ?= 60
FUZZ_CC  ?= clang
FUZZ_SAN := -fsanitize=fuzzer-no-link,address,undefined -fno-omit-frame-pointer \
            -fno-sanitize-recover=all
fuzz:
	@./scripts/install-deps.sh fuzz
	@$(MAKE) --no-print-directory CC=$(FUZZ_CC) BUILD=build/fuzz SAN=1 \
	    SANFLAGS='$(FUZZ_SAN)' fuzz-bins
	@./scripts/fuzz.sh build/fuzz $(FUZZ_SECONDS)

FUZZERS  := $(patsubst tests/fuzz/%.c,$(BUILD)/fuzzers/%,$(FUZZ_SRC))
fuzz-bins: $(FUZZERS)

clean:
	rm -rf build

# Archives are rebuilt from scratch: `ar rcs` into an existing archive would
# keep the members of sources since deleted or moved.
#
# libspecsim.a is the library as a program outside the tree sees it: its
# objects linked into one with every hidden symbol made local, so that only
# the SPECSIM_API functions of sim/specsim.h link (sim/base/api.h).
# build/specsim links it; the in-tree tools that are part of the simulator
# (testbed, calibrate, llm, tests) link libspecsim_all.a, every symbol kept.
LD      ?= ld
OBJCOPY ?= objcopy
$(BUILD)/libspecsim.a: $(SIM_OBJ)
	@mkdir -p $(@D)
	rm -f $@ $(BUILD)/libspecsim.o
	$(LD) -r -o $(BUILD)/libspecsim.o $^
	$(OBJCOPY) --localize-hidden $(BUILD)/libspecsim.o
	$(AR) rcs $@ $(BUILD)/libspecsim.o
	rm -f $(BUILD)/libspecsim.o

$(BUILD)/libspecsim_all.a: $(SIM_OBJ)
	@mkdir -p $(@D)
	rm -f $@
	$(AR) rcs $@ $^

$(BUILD)/libkernels.a: $(KER_OBJ)
	@mkdir -p $(@D)
	rm -f $@
	$(AR) rcs $@ $^

$(BUILD)/libllm.a: $(LLM_OBJ)
	@mkdir -p $(@D)
	rm -f $@
	$(AR) rcs $@ $^

$(BUILD)/llm: $(LLM_CLI_OBJ) $(BUILD)/libllm.a $(BUILD)/libkernels.a $(BUILD)/libspecsim_all.a
	$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS)

$(BUILD)/tests/llm/%: tests/llm/%.c $(BUILD)/libllm.a $(BUILD)/libkernels.a $(BUILD)/libspecsim_all.a tests/check.h
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) -Itests -Ikernels/llm $(LDFLAGS) -o $@ $< $(BUILD)/libllm.a $(BUILD)/libkernels.a $(BUILD)/libspecsim_all.a $(LDLIBS)

$(BUILD)/libkernels_cuda.a: $(CU_OBJ)
	@mkdir -p $(@D)
	rm -f $@
	$(AR) rcs $@ $^

# scenarios/default.yaml becomes a C string so `specsim run` needs no file.
$(BUILD)/gen/default_scenario.c: scenarios/default.yaml scripts/embed.sh
	@mkdir -p $(@D)
	./scripts/embed.sh specsim_default_scenario $< > $@.tmp && mv $@.tmp $@

# Run every time; the script leaves the file alone when nothing changed.
$(BUILD)/gen/version.c: FORCE
	@mkdir -p $(@D)
	@./scripts/version.sh $(CURDIR) $@

$(BUILD)/gen/%.o: $(BUILD)/gen/%.c
	$(CC) $(CFLAGS) -fvisibility=hidden -c -o $@ $<

$(BUILD)/specsim: $(CLI_OBJ) $(BUILD)/gen/default_scenario.o $(BUILD)/libspecsim.a
	$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS)

$(BUILD)/libtestbed.a: $(TB_OBJ)
	@mkdir -p $(@D)
	rm -f $@
	$(AR) rcs $@ $^

# The testbed links no command-line object of specsim: --set/--seed/--reps
# are read by the library (sim/config/overrides.c), as specsim reads them.
$(BUILD)/testbed: $(BUILD)/tb/main.o $(BUILD)/libtestbed.a $(BUILD)/libllm.a $(BUILD)/libkernels.a $(BUILD)/libspecsim_all.a
	$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS)

$(BUILD)/tb/%.o: testbed/%.c
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) -Itestbed -Ikernels/llm -c -o $@ $<

# test_tb_realverify records every allocation the real forward pass makes.
$(BUILD)/tests/unit/test_tb_realverify: LDFLAGS += -Wl,--wrap=malloc,--wrap=calloc,--wrap=realloc,--wrap=posix_memalign,--wrap=aligned_alloc

$(BUILD)/tests/unit/test_tb_%: tests/unit/test_tb_%.c $(BUILD)/libtestbed.a $(BUILD)/libllm.a $(BUILD)/libkernels.a $(BUILD)/libspecsim_all.a tests/check.h
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) -Itests -Itestbed -Ikernels/llm $(LDFLAGS) -o $@ $< $(BUILD)/libtestbed.a $(BUILD)/libllm.a $(BUILD)/libkernels.a $(BUILD)/libspecsim_all.a $(LDLIBS)

# libkernels_cuda.a first: it calls into the C libraries after it.
$(BUILD)/calibrate: $(BUILD)/kernels/calibrate_main.o $(if $(CAL_CUDA_OBJ),$(BUILD)/libkernels_cuda.a) $(BUILD)/libkernels.a $(BUILD)/libspecsim_all.a
	$(CC) $(LDFLAGS) -o $@ $^ $(CAL_CUDA_LIBS) $(LDLIBS)

# libkernels.a before libspecsim_all.a: the kernels use its error and card code.
$(BUILD)/tests/%: tests/%.c $(BUILD)/libspecsim_all.a $(BUILD)/libkernels.a tests/check.h
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) -Itests $(LDFLAGS) -o $@ $< $(BUILD)/libkernels.a $(BUILD)/libspecsim_all.a $(LDLIBS)

# Fuzz targets read files only through tests/fuzz/sandbox.c: their copy of
# the library has its fopen and open calls renamed to the sandbox's.
$(BUILD)/tests/fuzz/libspecsim-sandbox.a: $(BUILD)/libspecsim_all.a
	@mkdir -p $(@D)
	$(OBJCOPY) --redefine-sym fopen=fuzz_sandbox_fopen \
	    --redefine-sym open=fuzz_sandbox_open $< $@

$(BUILD)/tests/fuzz/%.o: tests/fuzz/%.c tests/fuzz/fuzz.h
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) -Itests/fuzz -c -o $@ $<

$(BUILD)/tests/fuzz/libllm-sandbox.a: $(BUILD)/libllm.a
	@mkdir -p $(@D)
	$(OBJCOPY) --redefine-sym fopen=fuzz_sandbox_fopen \
	    --redefine-sym open=fuzz_sandbox_open $< $@

FUZZ_COMMON := $(BUILD)/tests/fuzz/sandbox.o $(BUILD)/tests/fuzz/libllm-sandbox.a \
               $(BUILD)/tests/fuzz/libspecsim-sandbox.a

# Static pattern rules: they take precedence over $(BUILD)/tests/% above.
$(FUZZ_REPLAY): $(BUILD)/tests/fuzz/%: $(BUILD)/tests/fuzz/%.o $(BUILD)/tests/fuzz/replay.o $(FUZZ_COMMON)
	$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS)

$(FUZZERS): $(BUILD)/fuzzers/%: $(BUILD)/tests/fuzz/%.o $(FUZZ_COMMON)
	@mkdir -p $(@D)
	$(CC) $(LDFLAGS) -fsanitize=fuzzer -o $@ $^ $(LDLIBS)

CU_HDR := $(wildcard kernels/cuda/*.cuh) $(wildcard tests/cuda/*.h)

$(BUILD)/tests/cuda/%: tests/cuda/%.cu $(CU_HDR) $(BUILD)/libkernels_cuda.a $(BUILD)/libkernels.a $(BUILD)/libspecsim_all.a
	@mkdir -p $(@D)
	$(NVCC) $(NVFLAGS) -Itests -o $@ $< $(BUILD)/libkernels_cuda.a $(BUILD)/libkernels.a $(BUILD)/libspecsim_all.a $(CUDA_LIBS) $(PKG_LIBS)

# Hidden by default: only SPECSIM_API functions are the library's interface.
$(BUILD)/sim/%.o: sim/%.c
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) -fvisibility=hidden -c -o $@ $<

# ISA flags only where the compiler targets x86-64; elsewhere these files
# compile to nothing (they test the ISA macros) and the dispatcher skips them.
ifneq ($(filter x86_64 amd64 i%86,$(shell $(CC) -dumpmachine | cut -d- -f1)),)
AVX2_FLAGS   := -mavx2 -mfma -mf16c
AVX512_FLAGS := -mavx512f -mavx512bw -mavx512vl -mfma -mf16c
endif

$(BUILD)/kernels/%_avx2.o: kernels/%_avx2.c
	@mkdir -p $(@D)
	$(CC) $(KCFLAGS) $(ISA_OPT) $(AVX2_FLAGS) -c -o $@ $<

$(BUILD)/kernels/%_avx512.o: kernels/%_avx512.c
	@mkdir -p $(@D)
	$(CC) $(KCFLAGS) $(ISA_OPT) $(AVX512_FLAGS) -c -o $@ $<

$(BUILD)/kernels/llm/%.o: kernels/llm/%.c
	@mkdir -p $(@D)
	$(CC) $(KCFLAGS) -Ikernels/llm -c -o $@ $<

$(BUILD)/kernels/%.o: kernels/%.c
	@mkdir -p $(@D)
	$(CC) $(KCFLAGS) -c -o $@ $<

$(BUILD)/kernels/cuda/%.o: kernels/cuda/%.cu $(CU_HDR)
	@mkdir -p $(@D)
	$(NVCC) $(NVFLAGS) -c -o $@ $<

# Not the dependency files of the sanitizer and fuzz trees below build/: the
# other build may be writing them while this one starts (`make test`).
-include $(shell find $(BUILD) \( -path $(BUILD)/asan -o -path $(BUILD)/fuzz \) -prune -o -name '*.d' -print 2>/dev/null)
