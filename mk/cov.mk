# Coverage and fuzzing of enclave code (src/cov/, docs/guide.md "Testing
# enclaves: coverage and fuzzing").
#
# gcov_info's layout has one merge function per counter kind: 8 kinds
# from gcc 10, 9 from gcc 14 (libgcov.h). The host's gcc decides, as its
# libgcov.a is the one linked.
GCOV_GCC_MAJOR := $(shell gcc -dumpversion 2>/dev/null | cut -d. -f1)
GCOV_COUNTERS  := $(shell [ "0$(GCOV_GCC_MAJOR)" -ge 14 ] && echo 9 || echo 8)
$(B)/src/cov/gcov.o: override CFLAGS += -DSGXEMU_GCOV_COUNTERS=$(GCOV_COUNTERS)

# The coverage test enclave: the debugger test enclave's C code
# (tests/enclaves/dbg_encl.c) built with gcc's freestanding coverage flags
# (gcc >= 12), its .gcov_info kept as a section of its own (the flat
# image takes it with .data's pages) and __gcov_merge_add, which only
# libgcov defines, stood in for by a symbol of the enclave: the host side
# only asks whether it is there. Always gcc, whatever CC is: the flags are
# gcc's.
COV_ENCL_CFLAGS = $(filter-out -O2 -fPIC,$(ENCL_CFLAGS)) -fPIE -O0 -g \
	--coverage -fprofile-info-section -fprofile-update=atomic
$(B)/enclaves/cov/dbg_encl.o: tests/enclaves/dbg_encl.c tests/enclaves/dbg_encl.h mk/cov.mk
	@mkdir -p $(dir $@)
	rm -f $(@:.o=.gcno)
	gcc $(COV_ENCL_CFLAGS) -c -o $@ $<

$(B)/enclaves/cov_encl.elf: $(B)/enclaves/cov/dbg_encl.o tests/enclaves/dbg_entry.S tests/enclaves/encl.lds tests/enclaves/layout.h tests/enclaves/c_encl.inc $(B)/enclaves/cov_encl.lds
	gcc $(COV_ENCL_CFLAGS) -T $(B)/enclaves/cov_encl.lds \
		-Wl,--defsym,__gcov_merge_add=encl_entry -o $@ \
		tests/enclaves/dbg_entry.S $(B)/enclaves/cov/dbg_encl.o

# encl.lds with .gcov_info after .data (a section of its own, so the
# host side finds it by name) and no /DISCARD/ of .debug*.
$(B)/enclaves/cov_encl.lds: tests/enclaves/encl.lds mk/cov.mk
	@mkdir -p $(dir $@)
	sed -e 's/\*(\.debug\*)//' \
	    -e 's/^\(\t\.data : .*\)$$/\1\n\t.gcov_info : { KEEP(*(.gcov_info)) }/' $< > $@

# -fprofile-info-section is gcc 12's: with an older gcc the test says so.
HAVE_GCOV_INFO := $(shell [ "0$(GCOV_GCC_MAJOR)" -ge 12 ] && echo yes)
ifeq ($(HAVE_GCOV_INFO),yes)
TEST_DEPS += $(B)/enclaves/cov_encl.bin
endif

# The enclave fuzzing test (tests/integration/test_fuzz_enclave.sh):
# tests/enclaves/fuzz_encl.c built with clang's inline 8-bit counters and
# PC table and no sanitizer runtime (sancov_stub.c is what it links for
# the module constructor's callees), its two sections kept by name in the
# data pages; the host harness tests/debug/fuzz_host.c with libFuzzer.
# Both need clang and its libFuzzer runtime: without them the test skips.
FUZZ_ENCL_CFLAGS = $(filter-out -O2 -fPIC,$(ENCL_CFLAGS)) -fPIE -O0 -g \
	-fsanitize-coverage=inline-8bit-counters,pc-table
HAVE_LIBFUZZER := $(shell echo 'int LLVMFuzzerTestOneInput(const char *d, long n) { (void)d; return (int)n & 0; }' | \
	clang -x c -fsanitize=fuzzer -o /dev/null - >/dev/null 2>&1 && echo yes)

$(B)/enclaves/fuzz_encl.elf: tests/enclaves/fuzz_encl.c tests/enclaves/fuzz_encl.h tests/enclaves/sancov_stub.c tests/enclaves/dbg_entry.S tests/enclaves/encl.lds tests/enclaves/layout.h tests/enclaves/c_encl.inc $(B)/enclaves/fuzz_encl.lds mk/cov.mk
	@mkdir -p $(dir $@)
	clang $(filter-out -Wl%,$(FUZZ_ENCL_CFLAGS)) -c -o $(B)/enclaves/fuzz_encl.o tests/enclaves/fuzz_encl.c
	clang $(filter-out -fsanitize-coverage=%,$(FUZZ_ENCL_CFLAGS)) -T $(B)/enclaves/fuzz_encl.lds -o $@ \
		tests/enclaves/dbg_entry.S $(B)/enclaves/fuzz_encl.o tests/enclaves/sancov_stub.c

# encl.lds with the counters, the PC table and the constructor list in
# the data pages, each counters/PC section an output section of its own.
$(B)/enclaves/fuzz_encl.lds: tests/enclaves/encl.lds mk/cov.mk
	@mkdir -p $(dir $@)
	sed -e 's/\*(\.debug\*)//' \
	    -e 's/^\(\t\.data : { \*(\.data\.ssa) \*(\.data\*)\)/\1 *(.init_array*)/' \
	    -e 's/^\(\t\.data : .*\)$$/\1\n\t__sancov_cntrs : { KEEP(*(__sancov_cntrs)) }\n\t__sancov_pcs : { KEEP(*(__sancov_pcs)) }/' $< > $@

$(B)/tests/debug/fuzz_host: tests/debug/fuzz_host.c tests/debug/flat_load.h tests/enclaves/fuzz_encl.h tests/enclaves/shim_encl.h tests/enclaves/encl_util.h
	@mkdir -p $(dir $@)
	clang $(filter-out $(SAN),$(CFLAGS)) -Itests/enclaves -Itests/lib -fsanitize=fuzzer \
		-o $@ $< -lcrypto -pthread

$(B)/tests/debug/fuzz_native: tests/debug/fuzz_native.c tests/enclaves/fuzz_encl.c tests/enclaves/fuzz_encl.h
	@mkdir -p $(dir $@)
	clang -std=gnu11 -O0 -g -Wall -Wextra -Werror -Itests/enclaves -fsanitize=fuzzer -o $@ $<

ifeq ($(HAVE_LIBFUZZER),yes)
TEST_DEPS  += $(B)/enclaves/fuzz_encl.bin $(B)/tests/debug/fuzz_host
BENCH_DEPS += $(B)/enclaves/fuzz_encl.bin $(B)/tests/debug/fuzz_host $(B)/tests/debug/fuzz_native
endif

# bench/coverage.sh: the compute enclave (sha256.c) built with the gcov
# flags, and bench/compute built with them too, so that the same
# instrumentation's cost shows in the host and in the enclave.
COV_FLAGS := --coverage -fprofile-info-section -fprofile-update=atomic
$(B)/enclaves/compute_cov_encl.elf: tests/enclaves/compute_entry.S tests/enclaves/sha256.c tests/enclaves/encl.lds tests/enclaves/layout.h tests/enclaves/c_encl.inc $(B)/enclaves/cov_encl.lds mk/cov.mk
	gcc $(ENCL_CFLAGS) $(COV_FLAGS) -T $(B)/enclaves/cov_encl.lds \
		-Wl,--defsym,__gcov_merge_add=encl_entry -o $@ \
		tests/enclaves/compute_entry.S tests/enclaves/sha256.c

$(B)/bench/compute_cov: bench/compute.c bench/engine_bench.h tests/enclaves/sha256.c $(LIB) mk/cov.mk
	@mkdir -p $(B)/bench
	gcc $(CFLAGS) $(COV_FLAGS) -Ibench -o $@ bench/compute.c $(LIB) $(LDFLAGS) $(LDLIBS) \
		-Wl,--defsym,__gcov_merge_add=main

ifeq ($(HAVE_GCOV_INFO),yes)
BENCH_DEPS += $(B)/enclaves/compute_cov_encl.bin $(B)/bench/compute_cov
endif
