# sgxemu: Intel SGX in software.
#
#   make            build everything into build/
#   make test       build and run the whole suite
#   make asan       the suite under AddressSanitizer + UBSan (build-asan/)
#   make bench      build and run the benchmarks
#   make seed       build the seed selftest and run it under sgxemu
#   CC=clang make   the same with clang
#
# Sources are picked up by directory, so adding a file needs no edit here.
# Pieces with rules of their own (test enclaves, the seed build) live in
# mk/*.mk, which this file includes.

CC      ?= cc
B       ?= build
PREFIX  ?= /usr/local
OPT     ?= -O2
SAN     ?=

CFLAGS_COMMON := -std=gnu11 $(OPT) -g -Wall -Wextra -Werror -fPIC -pthread \
		 -Iinclude -Isrc -D_GNU_SOURCE $(SAN)
override CFLAGS := $(CFLAGS_COMMON) $(CFLAGS)
# Zydis decodes x86 code: CPUID sites (src/shim/cpuid_rewrite.c) and the
# host instructions that touch abort pages (src/driver/abort_page.c).
LDLIBS  := -lcrypto -lZydis -pthread -ldl
LDFLAGS := $(SAN)

LIB_SRCS  := $(wildcard src/cpu/*.c src/engine/*.c src/driver/*.c src/lsm/*.c src/attest/*.c)
LIB_ASMS  := $(wildcard src/cpu/*.S src/engine/*.S src/driver/*.S)
LIB_OBJS  := $(patsubst %.c,$(B)/%.o,$(LIB_SRCS)) $(patsubst %.S,$(B)/%.o,$(LIB_ASMS))
SHIM_SRCS := $(wildcard src/shim/*.c)
SHIM_ASMS := $(wildcard src/shim/*.S)
SHIM_OBJS := $(patsubst %.c,$(B)/%.o,$(SHIM_SRCS)) $(patsubst %.S,$(B)/%.o,$(SHIM_ASMS))
TOOL_SRCS := $(wildcard tools/*.c)
TOOL_OBJS := $(patsubst %.c,$(B)/%.o,$(TOOL_SRCS))
TLIB_SRCS := $(wildcard tests/lib/*.c)
TLIB_OBJS := $(patsubst %.c,$(B)/%.o,$(TLIB_SRCS))
TEST_SRCS := $(wildcard tests/unit/test_*.c tests/integration/test_*.c)
TESTS     := $(patsubst tests/%.c,$(B)/tests/%,$(TEST_SRCS))
BENCH_SRCS:= $(wildcard bench/*.c)
BENCHES   := $(patsubst bench/%.c,$(B)/bench/%,$(BENCH_SRCS))

LIB  := $(B)/libsgxemu.a
SO   := $(B)/libsgxemu.so
CLI  := $(B)/sgxemu

ALL_TARGETS := $(LIB) $(CLI)
ifneq ($(SHIM_SRCS),)
ALL_TARGETS += $(SO)
endif

.PHONY: all test asan bench clean install check-clang
# Keep intermediate objects (test_main.o) so tests do not relink everything.
.SECONDARY:
all: $(ALL_TARGETS)

# A fresh machine gets its packages before the first compile (scripts/deps.sh
# does nothing where they are all installed); the stamp keeps it to once.
$(B)/.deps-build: scripts/deps.sh
	@mkdir -p $(dir $@)
	@scripts/deps.sh build
	@touch $@

$(B)/.deps-test: scripts/deps.sh | $(B)/.deps-build
	@scripts/deps.sh test
	@touch $@

$(B)/%.o: %.c | $(B)/.deps-build
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -MMD -MP -c $< -o $@

$(B)/%.o: %.S | $(B)/.deps-build
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -MMD -MP -c $< -o $@

$(LIB): $(LIB_OBJS)
	@mkdir -p $(dir $@)
	rm -f $@
	ar rcs $@ $^

$(SO): $(SHIM_OBJS) $(LIB_OBJS)
	$(CC) -shared $(LDFLAGS) -o $@ $^ $(LDLIBS) -Wl,-z,noexecstack

$(CLI): $(TOOL_OBJS) $(LIB)
	$(CC) $(LDFLAGS) -o $@ $(TOOL_OBJS) $(LIB) $(LDLIBS)

$(B)/tests/%: tests/%.c $(TLIB_OBJS) $(LIB)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -Itests/lib -MMD -MP -o $@ $< $(TLIB_OBJS) $(LIB) $(LDFLAGS) $(LDLIBS)

$(B)/tests/lib/%.o: tests/lib/%.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -Itests/lib -MMD -MP -c $< -o $@

$(B)/bench/%: bench/%.c $(LIB)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -Ibench -MMD -MP -o $@ $< $(LIB) $(LDFLAGS) $(LDLIBS)

# Extra rules (test enclaves, seed build, ...) and their TEST_DEPS/BENCH_DEPS.
TEST_DEPS  :=
BENCH_DEPS :=
-include $(sort $(wildcard mk/*.mk))

test: $(B)/.deps-test $(ALL_TARGETS) $(TESTS) $(TEST_DEPS)
	@B=$(B) tests/run.sh

asan:
	$(MAKE) B=build-asan OPT=-O1 SAN="-fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined" test

check-clang:
	$(MAKE) B=build-clang CC=clang all $(patsubst $(B)/%,build-clang/%,$(TESTS))

bench: $(ALL_TARGETS) $(BENCHES) $(BENCH_DEPS)
	@for b in $(BENCHES); do echo "== $$b"; $$b || exit 1; done

install: all
	install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/lib/sgxemu $(DESTDIR)$(PREFIX)/share/man/man1
	install -m 755 $(CLI) $(DESTDIR)$(PREFIX)/bin/sgxemu
	[ ! -f $(SO) ] || install -m 644 $(SO) $(DESTDIR)$(PREFIX)/lib/sgxemu/libsgxemu.so
	[ ! -f docs/sgxemu.1 ] || install -m 644 docs/sgxemu.1 $(DESTDIR)$(PREFIX)/share/man/man1/sgxemu.1
	install -d $(DESTDIR)$(PREFIX)/share/sgxemu
	install -m 644 $(GDB_CMDS) $(DESTDIR)$(PREFIX)/share/sgxemu/sgxemu.gdb
	install -m 644 $(DBG_SO) $(DESTDIR)$(PREFIX)/lib/sgxemu/libsgxemu_ptrace.so

clean:
	rm -rf build build-asan build-clang build-fuzz

-include $(shell find $(B) -name '*.d' 2>/dev/null)
