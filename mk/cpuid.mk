# The library with a CPUID that tests/integration/test_cpuid_host.c
# dlopens under `sgxemu run`.

$(B)/tests/libcpuid_probe.so: tests/integration/cpuid_lib.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -shared -o $@ $<

TEST_DEPS += $(B)/tests/libcpuid_probe.so
