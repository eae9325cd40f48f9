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
