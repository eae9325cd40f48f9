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

$(GDB_CMDS): tools/sgxemu.gdb.in include/sgxemu/sgxemu.h
	@mkdir -p $(dir $@)
	@kick=$$(sed -n 's/^#define SGXEMU_KICK_SIGNAL[[:space:]]*\([0-9]*\).*/\1/p' include/sgxemu/sgxemu.h); \
	[ -n "$$kick" ] || { echo "SGXEMU_KICK_SIGNAL not found" >&2; exit 1; }; \
	sed "s/@KICK@/$$kick/g" $< > $@

ALL_TARGETS += $(DBG_SO) $(GDB_CMDS)
# `all` was read before this file: give it these too.
all: $(DBG_SO) $(GDB_CMDS)
