# libsgxemu-audit.so: the rtld-audit module that starts libsgxemu.so before
# any constructor (src/shim/audit/audit.c). Built from its own source only:
# it lives in a namespace of its own and carries none of the emulator.

AUDIT_SO := $(B)/libsgxemu-audit.so
ALL_TARGETS += $(AUDIT_SO)

$(AUDIT_SO): $(B)/src/shim/audit/audit.o
	$(CC) -shared $(filter-out $(SAN),$(LDFLAGS)) -o $@ $^ -ldl -Wl,-z,noexecstack

all: $(AUDIT_SO)

# Never sanitized: it is loaded into a namespace of its own, before the
# program's sanitizer runtime exists.
$(B)/src/shim/audit/audit.o: src/shim/audit/audit.c | $(B)/.deps-build
	@mkdir -p $(dir $@)
	$(CC) $(filter-out $(SAN),$(CFLAGS)) -MMD -MP -c $< -o $@
