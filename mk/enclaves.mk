# Test enclaves of the engine (tests/enclaves/): flat images built at test
# time like the seed selftest's enclave: static, no libc, fixed layout
# (tests/enclaves/encl.lds, layout.h), objcopy'd to a binary whose page 0
# is the first TCS. The tests load, measure and sign them themselves.

ENCL_OUT    := $(B)/enclaves
ENCL_CFLAGS := -std=gnu11 -O2 -Wall -Wextra -Werror -fPIC -nostdlib -static \
	       -nostartfiles -ffreestanding -fno-stack-protector \
	       -fno-asynchronous-unwind-tables -mno-red-zone \
	       -Wl,--build-id=none -Wl,-z,noexecstack -Itests/enclaves
ENCL_DEPS   := tests/enclaves/encl.lds tests/enclaves/layout.h tests/enclaves/c_encl.inc

$(ENCL_OUT)/test_encl.elf: tests/enclaves/test_encl.S $(ENCL_DEPS)
	@mkdir -p $(dir $@)
	$(CC) $(ENCL_CFLAGS) -T tests/enclaves/encl.lds -o $@ $<

$(ENCL_OUT)/compute_encl.elf: tests/enclaves/compute_entry.S tests/enclaves/sha256.c $(ENCL_DEPS)
	@mkdir -p $(dir $@)
	$(CC) $(ENCL_CFLAGS) -T tests/enclaves/encl.lds -o $@ \
		tests/enclaves/compute_entry.S tests/enclaves/sha256.c

$(ENCL_OUT)/keys_encl.elf: tests/enclaves/keys_encl.S $(ENCL_DEPS)
	@mkdir -p $(dir $@)
	$(CC) $(ENCL_CFLAGS) -T tests/enclaves/encl.lds -o $@ $<

$(ENCL_OUT)/aexn_encl.elf: tests/enclaves/aexn_encl.S $(ENCL_DEPS)
	@mkdir -p $(dir $@)
	$(CC) $(ENCL_CFLAGS) -T tests/enclaves/encl.lds -o $@ $<

$(ENCL_OUT)/%.bin: $(ENCL_OUT)/%.elf
	objcopy -O binary $< $@

ENCL_BINS := $(ENCL_OUT)/test_encl.bin $(ENCL_OUT)/compute_encl.bin \
	     $(ENCL_OUT)/keys_encl.bin $(ENCL_OUT)/aexn_encl.bin
TEST_DEPS  += $(ENCL_BINS)
BENCH_DEPS += $(ENCL_BINS)

# The EPC-paging test enclave (tests/integration/test_paging*.c).
$(ENCL_OUT)/paging_encl.elf: tests/enclaves/paging_encl.S tests/enclaves/paging_encl.c tests/enclaves/paging_encl.h $(ENCL_DEPS)
	@mkdir -p $(dir $@)
	$(CC) $(ENCL_CFLAGS) -T tests/enclaves/encl.lds -o $@ \
		tests/enclaves/paging_encl.S tests/enclaves/paging_encl.c

TEST_DEPS  += $(ENCL_OUT)/paging_encl.bin
BENCH_DEPS += $(ENCL_OUT)/paging_encl.bin
