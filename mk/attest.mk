# The AESM socket protocol (src/attest/aesm.proto): protoc-c writes its C
# code into $(B)/gen/attest/ before anything that includes it is compiled;
# the objects join the library (LIB_OBJS in the Makefile).

$(B)/gen/attest/%.pb-c.c $(B)/gen/attest/%.pb-c.h: src/attest/%.proto | $(B)/.deps-build
	@mkdir -p $(dir $@)
	protoc-c --c_out=$(B)/gen/attest --proto_path=src/attest $<

$(B)/gen/attest/%.pb-c.o: $(B)/gen/attest/%.pb-c.c
	$(CC) $(CFLAGS) -MMD -MP -c $< -o $@

# Sources that include the generated header wait for it.
$(B)/src/attest/aesm.o $(B)/src/shim/aesm.o: $(B)/gen/attest/aesm.pb-c.h
$(B)/tests/lib/aesm_client.o: $(B)/gen/attest/aesm.pb-c.h

# `sgxemu pccs` serves HTTP with libmicrohttpd: the CLI alone links it.
CLI_LDLIBS += -lmicrohttpd

# A real enclave's quote on the platform the environment names, written to
# a file, for shell tests (tests/integration/test_fleet.sh). Not named
# test_*: tests/run.sh runs those.
ENCLAVE_QUOTE := $(B)/tests/enclave_quote
$(ENCLAVE_QUOTE): tests/integration/enclave_quote.c $(B)/tests/lib/test_util.o $(LIB)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -Itests/lib -MMD -MP -o $@ $< $(B)/tests/lib/test_util.o \
		$(LIB) $(LDFLAGS) $(LDLIBS)
TEST_DEPS += $(ENCLAVE_QUOTE)
