# KernelFoundry build. `make` builds the five binaries into build/bin/;
# `make deps` installs the Debian packages they need; `make test` runs the
# whole suite (AddressSanitizer build, private PostgreSQL, real daemons).

PKGS      := libzmq3-dev libczmq-dev libjansson-dev libcurl4-openssl-dev \
             libpq-dev postgresql pkg-config iproute2 jq python3-torch \
             clang llvm-spirv-14 spirv-tools libze1 libze-dev stress-ng \
             pocl-opencl-icd ocl-icd-libopencl1 ocl-icd-opencl-dev \
             libxxhash-dev linux-perf chromium
PC_LIBS   := libczmq libzmq jansson libcurl libpq libxxhash

BUILD     ?= build
SAN       ?=
CC        ?= cc
OPT       ?= -O2
SANFLAGS  := -fsanitize=address,undefined -fno-omit-frame-pointer
CFLAGS    := -std=c11 -Wall -Wextra -Werror $(OPT) -g -D_GNU_SOURCE \
             -Icommon -Iproto -Ianalysis $(if $(SAN),$(SANFLAGS))
PC_CFLAGS  = $(shell pkg-config --cflags $(PC_LIBS) 2>/dev/null)
PC_LDLIBS  = $(shell pkg-config --libs $(PC_LIBS) 2>/dev/null)
# Full RELRO: the GOT is resolved at start and then read-only, so code
# loaded into a process (a candidate kernel) cannot redirect its calls
# (clock_gettime, say) by writing a GOT entry.
LDFLAGS   := -Wl,-z,relro,-z,now $(if $(SAN),$(SANFLAGS))
LDLIBS     = $(PC_LDLIBS) -lpthread -ldl -lm

OBJ        = $(BUILD)/obj
BIN        = $(BUILD)/bin

# Each folder's sources except its main.c form a library, so unit tests can
# link the modules without the daemons' entry points.
LIB_DIRS  := common proto analysis coordinator compile-worker exec-worker llm-gateway kfctl
lib_srcs   = $(filter-out $(1)/main.c,$(wildcard $(1)/*.c))
objs_of    = $(patsubst %.c,$(OBJ)/%.o,$(1))
# The offline generator's templates, each embedded as kf_tmpl_NAME_EXT
# (templates/softmax.cu: kf_tmpl_softmax_cu).
TEMPLATES := $(wildcard $(addprefix llm-gateway/templates/*.,c cu cl txt))
# kfctl's Python (kfctl/py/: the package `kfctl export --torch` writes),
# each embedded as kf_py_NAME (py/export_init.py: kf_py_export_init).
KFCTL_PY  := $(wildcard kfctl/py/*.py)
LIBKF     := $(BUILD)/libkf.a
LIBKF_OBJS = $(call objs_of,$(foreach d,$(LIB_DIRS),$(call lib_srcs,$(d)))) \
             $(OBJ)/gen/kf_contract_text.o $(OBJ)/gen/kf_torch_ref_py.o \
             $(OBJ)/gen/kf_profile_model_py.o \
             $(OBJ)/gen/kf_search_defaults_text.o $(OBJ)/gen/kf_cuda_judge_image.o \
             $(patsubst llm-gateway/templates/%,$(OBJ)/gen/tmpl/%.o,$(TEMPLATES)) \
             $(patsubst kfctl/py/%.py,$(OBJ)/gen/py/%.o,$(KFCTL_PY))

BINARIES  := $(BIN)/kf-coordinator $(BIN)/kf-llm-gateway $(BIN)/kf-compile-worker \
             $(BIN)/kf-exec-worker $(BIN)/kfctl
TEST_SRCS := $(wildcard tests/unit/test_*.c)
TESTS     := $(patsubst tests/unit/%.c,$(BUILD)/tests/%,$(TEST_SRCS))
TOOLS     := $(patsubst tests/tools/%.c,$(BUILD)/tools/%,$(wildcard tests/tools/*.c))

.PHONY: all deps test test-stress test-quiet unit bench-dispatch bench-gateway bench-eval bench-eval-floors bench-cuda-levels test-gpu clean check-deps docs fuzz
# Objects of tests and tools are intermediate files of a chain of pattern
# rules; keep them, or every make deletes and rebuilds them.
.SECONDARY:
all: check-deps $(BINARIES) $(TESTS) $(TOOLS)

check-deps:
	@pkg-config --exists $(PC_LIBS) || { echo "missing libraries: run 'make deps' (as root) first" >&2; exit 1; }

deps:
	@missing=""; for p in $(PKGS); do dpkg -s $$p >/dev/null 2>&1 || missing="$$missing $$p"; done; \
	if [ -n "$$missing" ]; then echo "installing:$$missing"; \
	  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $$missing; \
	else echo "all build dependencies present"; fi

$(OBJ)/%.o: %.c $(wildcard common/*.h proto/*.h analysis/*.h */*.h)
	@mkdir -p $(dir $@)
	@echo "  CC  $<"
	@$(CC) $(CFLAGS) $(PC_CFLAGS) -I$(dir $<) -c $< -o $@

# The kernel contract header, embedded so the coordinator can put it in
# prompts verbatim.
$(BUILD)/gen/kf_contract_text.c: common/kf_kernel.h common/embed.sh
	@mkdir -p $(dir $@)
	sh common/embed.sh kf_contract_text $< > $@

# The PyTorch reference runner, embedded so a deployed exec worker can
# write it into each reference job's directory without a checkout.
$(BUILD)/gen/kf_torch_ref_py.c: exec-worker/kf_torch_ref.py common/embed.sh
	@mkdir -p $(dir $@)
	sh common/embed.sh kf_torch_ref_py $< > $@

# The search defaults (docs/search.md), embedded so the coordinator runs
# with them when no --search-defaults file is named.
$(BUILD)/gen/kf_search_defaults_text.c: coordinator/search-defaults.json common/embed.sh
	@mkdir -p $(dir $@)
	sh common/embed.sh kf_search_defaults_text $< > $@

# The CUDA judge's kernels (exec-worker/kf_cuda_judge.cu) as a fat binary:
# machine code for the common architectures and PTX for newer ones,
# embedded in the exec worker. Without nvcc the image is empty and the
# CUDA backend says so instead of evaluating (kf_cuda_judge.c).
NVCC      ?= $(firstword $(shell command -v nvcc 2>/dev/null) $(wildcard /usr/local/cuda/bin/nvcc))
NVCC_ARCH := -gencode arch=compute_80,code=sm_80 -gencode arch=compute_90,code=sm_90 \
             -gencode arch=compute_100,code=sm_100 -gencode arch=compute_120,code=sm_120 \
             -gencode arch=compute_75,code=compute_75
$(BUILD)/gen/kf_cuda_judge_image.c: exec-worker/kf_cuda_judge.cu exec-worker/kf_eval_elem.h common/kf_kernel.h common/kf_splitmix.h common/embed_binary.sh
	@mkdir -p $(dir $@)
	@if [ -n "$(NVCC)" ]; then \
	  echo "  NVCC $<"; \
	  $(NVCC) -fatbin -O3 -Iexec-worker -Icommon $(NVCC_ARCH) -o $(BUILD)/gen/kf_cuda_judge.fatbin $< \
	  && sh common/embed_binary.sh kf_cuda_judge_image $(BUILD)/gen/kf_cuda_judge.fatbin > $@; \
	else echo "  (no nvcc: the CUDA backend will have no device checks)"; \
	  sh common/embed_binary.sh kf_cuda_judge_image /dev/null > $@; fi

# The offline generator's kernel templates (llm-gateway/templates/), embedded
# so the gateway writes sources without finding the templates on disk.
$(BUILD)/gen/tmpl/%.c: llm-gateway/templates/% common/embed.sh
	@mkdir -p $(dir $@)
	sh common/embed.sh kf_tmpl_$(subst .,_,$*) $< > $@

# The model profiler, run by the exec worker (model_profile jobs) and by
# kfctl profile-model --local.
$(BUILD)/gen/kf_profile_model_py.c: common/kf_profile_model.py common/embed.sh
	@mkdir -p $(dir $@)
	sh common/embed.sh kf_profile_model_py $< > $@

$(BUILD)/gen/py/%.c: kfctl/py/%.py common/embed.sh
	@mkdir -p $(dir $@)
	sh common/embed.sh kf_py_$* $< > $@

$(OBJ)/gen/%.o: $(BUILD)/gen/%.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -c $< -o $@

$(LIBKF): $(LIBKF_OBJS)
	@mkdir -p $(dir $@)
	rm -f $@ && ar rcs $@ $^

$(BIN)/kf-coordinator: $(OBJ)/coordinator/main.o $(LIBKF)
$(BIN)/kfctl: $(OBJ)/kfctl/main.o $(LIBKF)
$(BIN)/kf-llm-gateway: $(OBJ)/llm-gateway/main.o $(LIBKF)
$(BIN)/kf-compile-worker: $(OBJ)/compile-worker/main.o $(LIBKF)
$(BIN)/kf-exec-worker: $(OBJ)/exec-worker/main.o $(LIBKF)
$(BINARIES):
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS)

$(BUILD)/tests/%: $(OBJ)/tests/unit/%.o $(LIBKF)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS)

$(BUILD)/tools/%: $(OBJ)/tests/tools/%.o $(LIBKF)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS)

# The suite: AddressSanitizer build in build-asan/, then tests/run.sh.
test:
	$(MAKE) deps
	$(MAKE) -j2 BUILD=build-asan SAN=1 OPT=-O1 all
	KF_BUILD=build-asan tests/run.sh

# The same suite with one core of the machine kept busy beside it
# (tests/stress.sh; KF_STRESS_CPUS=N for more): what CI sees on a machine
# shared with other work.
test-stress:
	$(MAKE) deps
	$(MAKE) -j2 BUILD=build-asan SAN=1 OPT=-O1 all
	KF_BUILD=build-asan tests/stress.sh

# Tests that need a host no other work runs on (tests/quiet/), not in the
# suite: run them on a quiet machine.
test-quiet:
	$(MAKE) deps
	$(MAKE) -j2 BUILD=build-asan SAN=1 OPT=-O1 all
	KF_BUILD=build-asan KF_QUIET=1 KF_ONLY=integration KF_TESTS="test_figures_again" tests/run.sh

unit: all
	KF_BUILD=$(BUILD) KF_ONLY=unit tests/run.sh

bench-dispatch: all
	tests/bench/dispatch.sh

bench-gateway: all
	tests/bench/gateway.sh

# What one evaluation costs, split into its phases (a GPU when there is
# one, else the host backend). Figures, not a test.
bench-eval: all
	KF_BUILD=$(BUILD) tests/bench/eval.sh

# The full protocol's floors against the spread of its medians.
bench-eval-floors: all
	KF_BUILD=$(BUILD) tests/bench/eval-floors.sh

# Where a launch-bound CUDA kernel's time varies: allocations, streams,
# processes (a GPU; no build of the project needed).
bench-cuda-levels:
	tests/bench/cuda-levels.sh

# The CUDA path end to end on a host with an NVIDIA GPU (docs/results-gpu.md).
test-gpu: all
	KF_BUILD=$(BUILD) tests/gpu/test-gpu.sh

# The protocol codec under libFuzzer with AddressSanitizer and UBSan, one
# core, at least FUZZ_RUNS executions, growing tests/fuzz/corpus/ (not in
# `make test`: minutes). Results: docs/operations.md, "Fuzzing".
FUZZ_RUNS ?= 10000000
fuzz:
	@mkdir -p $(BUILD)/fuzz
	clang -std=c11 -g -O1 -D_GNU_SOURCE -fsanitize=fuzzer,address,undefined \
	    -Icommon -Iproto $(PC_CFLAGS) tests/fuzz/fuzz_proto.c proto/kf_proto.c \
	    -o $(BUILD)/fuzz/fuzz_proto $(shell pkg-config --libs libczmq jansson)
	$(BUILD)/fuzz/fuzz_proto -runs=$(FUZZ_RUNS) -max_len=4096 -print_final_stats=1 \
	    -artifact_prefix=$(BUILD)/fuzz/ tests/fuzz/corpus

# Documents generated from the code.
docs: $(BINARIES)
	sh docs/gen-configuration.sh $(BIN) > docs/configuration.md

clean:
	rm -rf build build-asan
