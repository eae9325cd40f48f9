# Debugging enclaves (docs/guide.md "Debugging enclaves"): the debugger's
# side of the driver's access hook, preloaded into gdb
# (libsgxemu_ptrace.so, src/dbg/), and the gdb command file sgxemu.gdb
# that `sgxemu gdb` passes to gdb. The kick signal's number comes from the
# public header, so the file cannot name another.

DBG_SRCS := $(wildcard src/dbg/*.c)
DBG_OBJS := $(patsubst %.c,$(B)/%.o,$(DBG_SRCS))
DBG_SO   := $(B)/libsgxemu_ptrace.so
GDB_CMDS := $(B)/sgxemu.gdb

$(DBG_SO): $(DBG_OBJS) $(LIB)
	$(CC) -shared $(LDFLAGS) -o $@ $(DBG_OBJS) $(LIB) $(LDLIBS) -Wl,-z,noexecstack

# sgxemu.gdb names the library by absolute path: the build tree's here,
# PREFIX/lib/sgxemu's in the copy `make install` writes.
gdb_cmds = kick=$$(sed -n 's/^\#define SGXEMU_KICK_SIGNAL[[:space:]]*\([0-9]*\).*/\1/p' include/sgxemu/sgxemu.h); \
	[ -n "$$kick" ] || { echo "SGXEMU_KICK_SIGNAL not found" >&2; exit 1; }; \
	sed -e "s/@KICK@/$$kick/g" -e "s|@PTRACE_LIB@|$(1)|g" tools/sgxemu.gdb.in > $(2)

$(GDB_CMDS): tools/sgxemu.gdb.in include/sgxemu/sgxemu.h mk/gdb.mk
	@mkdir -p $(dir $@)
	@$(call gdb_cmds,$(abspath $(DBG_SO)),$@)

ALL_TARGETS += $(DBG_SO) $(GDB_CMDS)
# `all` was read before this file: give it these too.
all: $(DBG_SO) $(GDB_CMDS)

# The debugger tests' program and enclave (tests/debug/dbg_host.c,
# tests/enclaves/dbg_encl.c): the enclave keeps its debug information
# (the flat image has none: objcopy takes allocated sections only) and is
# built at -O0, so gdb's steps are lines.
DBG_ENCL_CFLAGS := $(filter-out -O2 -fPIC,$(ENCL_CFLAGS)) -fPIE -O0 -g
$(ENCL_OUT)/dbg_encl.elf: mk/gdb.mk tests/enclaves/dbg_entry.S tests/enclaves/dbg_encl.c tests/enclaves/dbg_encl.h $(ENCL_DEPS) $(B)/enclaves/dbg_encl.lds
	@mkdir -p $(dir $@)
	$(CC) $(DBG_ENCL_CFLAGS) -T $(B)/enclaves/dbg_encl.lds -o $@ \
		tests/enclaves/dbg_entry.S tests/enclaves/dbg_encl.c

# encl.lds without its /DISCARD/ of .debug*.
$(B)/enclaves/dbg_encl.lds: tests/enclaves/encl.lds
	@mkdir -p $(dir $@)
	sed 's/\*(\.debug\*)//' $< > $@

$(B)/tests/debug/dbg_host: tests/debug/dbg_host.c tests/debug/flat_load.h tests/enclaves/dbg_encl.h tests/enclaves/shim_encl.h tests/enclaves/encl_util.h
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -Itests/enclaves -Itests/lib -o $@ $< $(LDFLAGS) -lcrypto -pthread

TEST_DEPS += $(ENCL_OUT)/dbg_encl.bin $(B)/tests/debug/dbg_host
