# A program whose own library's constructor looks for SGX
# (tests/integration/test_early.sh): the library is a DT_NEEDED of the
# program, so glibc runs its constructor before any LD_PRELOAD library's.

$(B)/tests/libearly_probe.so: tests/integration/early_lib.c tests/integration/early_probe.h
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -shared -o $@ $<

$(B)/tests/early_prog: tests/integration/early_prog.c $(B)/tests/libearly_probe.so
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -Itests/integration -o $@ $< -L$(B)/tests -learly_probe \
		-Wl,-rpath,'$$ORIGIN' $(LDFLAGS)

TEST_DEPS += $(B)/tests/early_prog
