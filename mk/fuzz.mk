# Fuzzing with clang's libFuzzer (fuzz/fuzz_*.c, one harness per input
# format; see fuzz/README.md).
#
#   make fuzz         build every harness into build-fuzz/fuzz/ (clang,
#                     -fsanitize=fuzzer,address,undefined)
#   make fuzz-smoke   each harness over its committed corpus
#                     (fuzz/corpus/NAME/) and then FUZZ_SMOKE_S seconds of
#                     fuzzing: bounded, about a minute in all
#   make fuzz-long    FUZZ_LONG_S seconds per harness on one core, the
#                     figures appended to build-fuzz/fuzz-long.txt
#
# The library is built again into build-fuzz/ with the fuzzer's coverage
# instrumentation (-fsanitize=fuzzer-no-link) by a recursive make with
# B=build-fuzz, so the normal build/ is never touched.

FUZZ_CC     ?= clang
FUZZ_B      := build-fuzz
FUZZ_SAN    := -fsanitize=address,undefined -fno-sanitize-recover=undefined \
	       -fno-omit-frame-pointer
FUZZ_NAMES  := $(patsubst fuzz/%.c,%,$(wildcard fuzz/fuzz_*.c))
FUZZ_BINS   := $(patsubst %,$(FUZZ_B)/fuzz/%,$(FUZZ_NAMES))
FUZZ_SMOKE_S ?= 5
FUZZ_LONG_S  ?= 600

# Harnesses that drive the CLI's own parsers link its objects too.
FUZZ_TOOL_OBJS := $(B)/tools/image.o

# The DCAP libraries' harnesses link those libraries' objects (mk/dcap.mk)
# ahead of libsgxemu.a, whose verifier and JSON reader they call; the
# provider's HTTP client needs libcurl even though the harness never
# opens a connection.
$(FUZZ_B)/fuzz/fuzz_qv: $(QV_OBJS)
$(FUZZ_B)/fuzz/fuzz_qv: FUZZ_DCAP_OBJS := $(QV_OBJS)
$(FUZZ_B)/fuzz/fuzz_qpl: $(QPL_OBJS)
$(FUZZ_B)/fuzz/fuzz_qpl: FUZZ_DCAP_OBJS := $(QPL_OBJS)
$(FUZZ_B)/fuzz/fuzz_qpl: FUZZ_LDLIBS := -lcurl

.PHONY: fuzz fuzz-smoke fuzz-long fuzz-clean

fuzz:
	$(MAKE) --no-print-directory B=$(FUZZ_B) CC=$(FUZZ_CC) OPT=-O1 \
		SAN="$(FUZZ_SAN) -fsanitize=fuzzer-no-link" fuzz-bins

fuzz-bins: $(FUZZ_BINS)

$(FUZZ_B)/fuzz/%: fuzz/%.c fuzz/fuzz.h fuzz/fuzz_sign.h fuzz/fuzz_attest.h $(FUZZ_TOOL_OBJS) $(LIB)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -Ifuzz -Itools -MMD -MP -fsanitize=fuzzer -o $@ $< \
		$(FUZZ_DCAP_OBJS) $(FUZZ_TOOL_OBJS) $(LIB) $(LDFLAGS) \
		$(FUZZ_LDLIBS) $(LDLIBS)

fuzz-smoke: fuzz
	@FUZZ_B=$(FUZZ_B) FUZZ_SMOKE_S=$(FUZZ_SMOKE_S) fuzz/run.sh smoke $(FUZZ_NAMES)

fuzz-long: fuzz
	@FUZZ_B=$(FUZZ_B) FUZZ_LONG_S=$(FUZZ_LONG_S) fuzz/run.sh long $(FUZZ_NAMES)

fuzz-clean:
	rm -rf $(FUZZ_B)
