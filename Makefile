# crucible — GNU Make build.
#   make                          build build/crucible
#   make check                    unit tests, end-to-end tests, security and reward-hacking suites
#   make check-hacks              the reward-hacking suite only (tests/hacks/)
#   make check SANITIZE=address,undefined   the same suite under sanitizers (objects in build-san/)
#   make format / format-check    clang-format over src/ and tests/
#   make bench                    benchmarks, writes docs/BENCHMARKS.md

CC       ?= cc
PKGS     := libseccomp jansson zlib expat sqlite3 yaml-0.1 libarchive libcrypto
SANITIZE ?=
BUILD    := build$(if $(SANITIZE),-san)

WARN   := -Wall -Wextra -Werror -Wshadow -Wmissing-prototypes -Wstrict-prototypes \
          -Wswitch-default -Wimplicit-function-declaration -Wformat=2 -Wno-format-nonliteral -Wno-format-truncation \
          -Wpointer-arith -Wundef -Wvla
CFLAGS ?= -O2 -g
CFLAGS += -std=gnu11 $(WARN) -D_GNU_SOURCE -fstack-protector-strong -fstack-clash-protection \
          -fPIE -pthread $(shell pkg-config --cflags $(PKGS) libmicrohttpd)
LDFLAGS += -pie -Wl,-z,relro,-z,now
# libarchive and libcrypto are loaded on first use (src/archive_lazy.c, src/image/digest.c),
# and so are SQLite, libyaml, expat and zlib (src/lazy.h, src/NAME_lazy.c), not at every
# start: headers only. libseccomp is used at build time only (gen/: the seccomp program is
# compiled by make and embedded). What every start pays for: jansson, libm, libc.
LAZY_LIBS := -larchive -lcrypto -lsqlite3 -lyaml -lexpat -lz -lseccomp
LDLIBS  += $(filter-out $(LAZY_LIBS),$(shell pkg-config --libs $(PKGS))) -ldl -lm -pthread
ifeq ($(SANITIZE),)
CFLAGS += -D_FORTIFY_SOURCE=2
else
CFLAGS += -fsanitize=$(SANITIZE) -fno-omit-frame-pointer -fno-sanitize-recover=all
LDFLAGS += -fsanitize=$(SANITIZE)
endif

# src/ is layered (README "Layout"): util, metrics, strset at the top; image/, sandbox/, judge/,
# library/, service/, cluster/, cli/ below. Includes name the folder ("judge/verify.h") from -Isrc.
SRC_DIRS := src src/image src/sandbox src/judge src/library src/service src/cluster src/cli
LIB_SRC  := $(filter-out src/cli/main.c src/sandbox/jobinit.c,$(foreach d,$(SRC_DIRS),$(wildcard $(d)/*.c)))
LIB_OBJ  := $(LIB_SRC:src/%.c=$(BUILD)/obj/%.o)
UNIT_SRC := $(wildcard tests/unit/*.c)
UNIT_BIN := $(UNIT_SRC:tests/unit/%.c=$(BUILD)/tests/%.t)
SEC_SRC  := $(wildcard tests/security/cases/*.c)
SEC_BIN  := $(SEC_SRC:tests/security/cases/%.c=$(BUILD)/security/%)
BENCH_BIN := $(BUILD)/bench/spawn $(BUILD)/bench/httpload $(BUILD)/bench/exec $(BUILD)/bench/forkserver \
             $(BUILD)/bench/fleet $(BUILD)/bench/pid1cost

all: $(BUILD)/crucible

$(BUILD)/crucible: $(BUILD)/obj/cli/main.o $(LIB_OBJ)
	$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS)

$(BUILD)/obj/%.o: src/%.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -Isrc -I$(BUILD)/gen -MMD -MP -c -o $@ $<

# The assert harness's own code (src/judge/harness/) is embedded in the binary as C string
# literals: build/gen/judge/harness/NAME.inc holds NAME's text, one literal per line.
HARNESS_SRC := $(wildcard src/judge/harness/*)
HARNESS_INC := $(HARNESS_SRC:src/%=$(BUILD)/gen/%.inc)
$(BUILD)/gen/judge/harness/%.inc: src/judge/harness/%
	@mkdir -p $(dir $@)
	sed -e 's/\\/\\\\/g' -e 's/"/\\"/g' -e 's/^/"/' -e 's/$$/\\n"/' $< >$@
# The Python harness is also embedded compiled (a hash-based .pyc under the build interpreter's
# cache tag), so that runs in an image with that Python skip compiling it.
PYTHON ?= /usr/bin/python3
$(BUILD)/gen/judge/harness/python.pyc.inc: src/judge/harness/python.py
	@mkdir -p $(dir $@)
	if $(PYTHON) -c 'import sys' 2>/dev/null; then \
	  $(PYTHON) -c 'import marshal, sys, importlib.util as u; \
	    c = compile(open(sys.argv[1], "rb").read(), "_crucible_harness.py", "exec", dont_inherit=True); \
	    d = u.MAGIC_NUMBER + (1).to_bytes(4, "little") + bytes(8) + marshal.dumps(c); \
	    print("#define HARNESS_PYC_PATH \"__pycache__/_crucible_harness.%s.pyc\"" % sys.implementation.cache_tag); \
	    print("#define HARNESS_PYC_DATA \"" + "".join("\\x%02x" % b for b in d) + "\"")' $< >$@; \
	else printf '#define HARNESS_PYC_PATH NULL\n#define HARNESS_PYC_DATA ""\n' >$@; fi
$(BUILD)/obj/judge/lang.o: $(HARNESS_INC) $(BUILD)/gen/judge/harness/python.pyc.inc

# The seccomp program (src/sandbox/filter.c) is compiled from the policy table with
# libseccomp here, by gen/filter_bpf, and embedded: build/gen/sandbox/filter_bpf.inc.
FILTER_GEN_DEPS := gen/filter_compile.c gen/filter_compile.h $(BUILD)/obj/sandbox/filter_policy.o \
                   $(BUILD)/obj/util.o
$(BUILD)/gen/filter_bpf: gen/filter_bpf.c $(FILTER_GEN_DEPS)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -Isrc -Igen $(LDFLAGS) -o $@ $< $(filter-out %.h,$(FILTER_GEN_DEPS)) -lseccomp
$(BUILD)/gen/sandbox/filter_bpf.inc: $(BUILD)/gen/filter_bpf
	@mkdir -p $(dir $@)
	$< >$@.tmp && mv $@.tmp $@
$(BUILD)/obj/sandbox/filter.o: $(BUILD)/gen/sandbox/filter_bpf.inc

# A fork server job's small init (src/sandbox/jobinit.c, zygote.c's "a job's small init"): a
# static program built with musl (Debian's musl-tools), whose start costs a few pages, embedded
# in the binary as build/gen/sandbox/jobinit.inc. Without musl-gcc the .inc says so and jobs'
# pid 1 is a copy of the zygote, as before. Its errors are worded as glibc words them
# (gen/errno_text.c). Linux's own headers (linux/, asm/) come from the build machine's.
MUSL_CC   ?= $(shell command -v musl-gcc 2>/dev/null)
MULTIARCH := $(shell $(CC) -print-multiarch 2>/dev/null)
JOBINIT_SRC := src/sandbox/jobinit.c src/sandbox/init_proto.c src/util.c
$(BUILD)/gen/errno_text: gen/errno_text.c
	@mkdir -p $(dir $@)
	$(CC) -O1 -std=gnu11 -Wall -o $@ $<
$(BUILD)/gen/sandbox/errno_text.inc: $(BUILD)/gen/errno_text
	@mkdir -p $(dir $@)
	$< >$@.tmp && mv $@.tmp $@
$(BUILD)/gen/sandbox/jobinit: $(JOBINIT_SRC) src/sandbox/sandbox_int.h src/sandbox/sandbox.h src/util.h \
                              $(BUILD)/gen/sandbox/errno_text.inc
	@mkdir -p $(dir $@)
	$(MUSL_CC) -static -Os -std=gnu11 $(WARN) -D_GNU_SOURCE -Dstrerror=jobinit_strerror \
	    -ffunction-sections -fdata-sections -Wl,--gc-sections -s -Isrc -I$(BUILD)/gen \
	    -idirafter /usr/include $(if $(MULTIARCH),-idirafter /usr/include/$(MULTIARCH)) \
	    -o $@ $(JOBINIT_SRC)
$(BUILD)/gen/sandbox/jobinit.inc: $(if $(MUSL_CC),$(BUILD)/gen/sandbox/jobinit)
	@mkdir -p $(dir $@)
	if [ -n "$(MUSL_CC)" ]; then \
	  { echo '#define JOBINIT_EMBEDDED 1'; echo 'static const unsigned char jobinit_image[] = {'; \
	    od -An -v -tx1 $< | sed -e 's/ \([0-9a-f][0-9a-f]\)/0x\1,/g'; echo '};'; } >$@.tmp; \
	else echo '#define JOBINIT_EMBEDDED 0' >$@.tmp; fi && mv $@.tmp $@
$(BUILD)/obj/sandbox/zygote.o: $(BUILD)/gen/sandbox/jobinit.inc

# `crucible bench` carries the demo's task set (examples/tasks.jsonl) as a C string literal.
$(BUILD)/gen/cli/bench_tasks.inc: examples/tasks.jsonl
	@mkdir -p $(dir $@)
	sed -e 's/\\/\\\\/g' -e 's/"/\\"/g' -e 's/^/"/' -e 's/$$/\\n"/' $< >$@
$(BUILD)/obj/cli/bench_eval.o: $(BUILD)/gen/cli/bench_tasks.inc

# The dashboard's files (src/service/ui/) are embedded as C string literals, as the harness is;
# so is Chart.js from Debian's libjs-chart.js when the build machine has it (scripts/install-deps
# installs it), else a stand-in that leaves the page without charts (its figures stay).
UI_SRC  := $(wildcard src/service/ui/*)
UI_INC  := $(UI_SRC:src/%=$(BUILD)/gen/%.inc)
CHARTJS ?= $(firstword $(wildcard /usr/share/javascript/chart.js/chart.min.js))
$(BUILD)/gen/service/ui/%.inc: src/service/ui/%
	@mkdir -p $(dir $@)
	sed -e 's/\\/\\\\/g' -e 's/"/\\"/g' -e 's/^/"/' -e 's/$$/\\n"/' $< >$@
$(BUILD)/gen/service/ui/chart.min.js.inc: $(CHARTJS)
	@mkdir -p $(dir $@)
	if [ -n "$(CHARTJS)" ]; then \
	  { echo '#define CHARTJS_EMBEDDED 1'; echo 'static const char chartjs[] ='; \
	    sed -e 's/\\/\\\\/g' -e 's/"/\\"/g' -e 's/^/"/' -e 's/$$/\\n"/' $<; echo ';'; } >$@.tmp; \
	else \
	  printf '#define CHARTJS_EMBEDDED 0\nstatic const char chartjs[] = "window.Chart = undefined;\\n";\n' >$@.tmp; \
	fi && mv $@.tmp $@
$(BUILD)/obj/service/dashboard.o: $(UI_INC) $(BUILD)/gen/service/ui/chart.min.js.inc

# build/gen/commit.h: the commit the binary is built from (crucible_build_info in /metrics),
# "" outside a git checkout; rewritten only when it changed, so only metrics.o is rebuilt.
$(BUILD)/gen/commit.h: FORCE
	@mkdir -p $(dir $@)
	@printf '#define CRUCIBLE_COMMIT "%s"\n' "$$(git rev-parse --short=12 HEAD 2>/dev/null)" >$@.tmp
	@if cmp -s $@.tmp $@; then rm -f $@.tmp; else mv $@.tmp $@; fi
$(BUILD)/obj/metrics.o $(BUILD)/obj/cli/cmd_bench.o: $(BUILD)/gen/commit.h
FORCE:

$(BUILD)/tests/%.t: tests/unit/%.c tests/tap.h $(LIB_OBJ)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -Isrc -Itests -MMD -MP $(LDFLAGS) -o $@ $< $(LIB_OBJ) $(LDLIBS)

# tests/unit/filter.c also compiles the policy with libseccomp, to compare with the embedded program.
$(BUILD)/tests/filter.t: tests/unit/filter.c tests/tap.h $(LIB_OBJ) $(FILTER_GEN_DEPS)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -Isrc -Igen -Itests -MMD -MP $(LDFLAGS) -o $@ $< gen/filter_compile.c $(LIB_OBJ) \
	    $(LDLIBS) -lseccomp

# Hostile programs of the security suite: static, so they run in any image.
$(BUILD)/security/%: tests/security/cases/%.c tests/security/hostile.h
	@mkdir -p $(dir $@)
	$(CC) -O1 -std=gnu11 -D_GNU_SOURCE -w -static -pthread -o $@ $<

# bench/fleet (simulated cluster workers) talks to Redis itself.
$(BUILD)/bench/fleet: bench/fleet.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $< -lhiredis -pthread
# bench/exec and bench/forkserver drive the sandbox through its API: linked with the library.
$(BUILD)/bench/forkserver: bench/forkserver.c $(LIB_OBJ)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -Isrc $(LDFLAGS) -o $@ $< $(LIB_OBJ) $(LDLIBS)

$(BUILD)/bench/exec: bench/exec.c $(LIB_OBJ)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -Isrc $(LDFLAGS) -o $@ $< $(LIB_OBJ) $(LDLIBS)

$(BUILD)/bench/%: bench/%.c
	@mkdir -p $(dir $@)
	$(CC) -O2 -std=gnu11 -D_GNU_SOURCE -Wall -pthread -o $@ $<

export CRUCIBLE := $(abspath $(BUILD)/crucible)
export CRUCIBLE_BUILD := $(abspath $(BUILD))

check: all $(UNIT_BIN) $(SEC_BIN)
	prove -v --timer $(UNIT_BIN) tests/e2e/*.t tests/security/run.t tests/security/fork-server.t tests/hacks/*.t

check-hacks: all
	prove -v tests/hacks/*.t

check-unit: $(UNIT_BIN)
	prove -v $(UNIT_BIN)

check-security: all $(SEC_BIN)
	prove -v tests/security/run.t tests/security/fork-server.t

bench: all $(BENCH_BIN)
	bench/run
	bench/serve
	bench/library

format:
	clang-format -i $(foreach d,$(SRC_DIRS),$(d)/*.[ch]) tests/*.h tests/unit/*.c tests/security/cases/*.c bench/*.c gen/*.[ch]

format-check:
	clang-format --dry-run --Werror $(foreach d,$(SRC_DIRS),$(d)/*.[ch]) tests/*.h tests/unit/*.c tests/security/cases/*.c bench/*.c gen/*.[ch]

clean:
	rm -rf build build-san

# ---- fuzzing (fuzz/; docs/TESTING.md, "Fuzzing") ------------------------------------------
#   make fuzz-smoke      every target for FUZZ_SMOKE_SECONDS (CI), make fuzz for FUZZ_SECONDS
#   make fuzz-build      the libFuzzer binaries only (build-fuzz/fuzz/NAME)
# Each fuzz/NAME.c (replay.c aside) is a target for one parser of outside input, built two ways:
# BUILD/fuzz/NAME with fuzz/replay.c's main and the suite's compiler (make check replays
# fuzz/regress/NAME/ through it: tests/e2e/94-fuzz-regress.t), and build-fuzz/fuzz/NAME with
# clang's libFuzzer, ASan and UBSan (a recursive make: BUILD=build-fuzz, FUZZ_MAIN the engine).
FUZZ_SRC   := $(filter-out fuzz/replay.c,$(wildcard fuzz/*.c))
FUZZ_NAMES := $(FUZZ_SRC:fuzz/%.c=%)
FUZZ_BIN   := $(FUZZ_NAMES:%=$(BUILD)/fuzz/%)
FUZZ_CC    ?= clang
FUZZ_MAIN  ?= $(BUILD)/fuzz/replay.o
FUZZ_SECONDS ?= 300
FUZZ_SMOKE_SECONDS ?= 20
FUZZ_JOBS  ?= 2

$(BUILD)/fuzz/replay.o: fuzz/replay.c fuzz/fuzz.h
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -Ifuzz -c -o $@ $<

$(BUILD)/fuzz/%: fuzz/%.c $(wildcard fuzz/*.h) $(filter %.o,$(FUZZ_MAIN)) $(LIB_OBJ)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -Isrc -Ifuzz $(LDFLAGS) -o $@ $< $(FUZZ_MAIN) $(LIB_OBJ) $(LDLIBS)

fuzz-replay: $(FUZZ_BIN)

fuzz-build:
	$(MAKE) BUILD=build-fuzz CC=$(FUZZ_CC) SANITIZE=fuzzer-no-link,address,undefined \
	    WARN="$(filter-out -Werror -Wno-format-truncation,$(WARN)) -Wno-missing-field-initializers" FUZZ_MAIN=-fsanitize=fuzzer \
	    $(FUZZ_NAMES:%=build-fuzz/fuzz/%)

fuzz-smoke: fuzz-build
	fuzz/run $(FUZZ_SMOKE_SECONDS) $(FUZZ_JOBS)

fuzz: fuzz-build
	fuzz/run $(FUZZ_SECONDS) $(FUZZ_JOBS)

fuzz-format:
	clang-format -i fuzz/*.[ch]

fuzz-format-check:
	clang-format --dry-run --Werror fuzz/*.[ch]

fuzz-clean:
	rm -rf build-fuzz

check: $(FUZZ_BIN)
format: fuzz-format
format-check: fuzz-format-check
clean: fuzz-clean
.PHONY: fuzz fuzz-smoke fuzz-build fuzz-replay fuzz-format fuzz-format-check fuzz-clean

.PHONY: FORCE all check check-unit check-security check-hacks bench format format-check clean
-include $(wildcard $(BUILD)/obj/*.d $(BUILD)/obj/*/*.d $(BUILD)/tests/*.d)
