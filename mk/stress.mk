# `make stress`: tests/stress/stress.c under mixed load for STRESS_S
# seconds (default 120): 16 threads, 8 enclaves at 4x EPC oversubscription,
# EREPORT/EGETKEY, paging, handled exceptions, signals, thread churn and a
# fork; it fails on any lost byte, unexpected exit or leaked EPC page.
# Not part of `make test` (it is long by design).

STRESS_S ?= 120

$(B)/stress/%: tests/stress/%.c $(B)/tests/lib/test_util.o $(LIB)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -Itests/lib -MMD -MP -o $@ $< $(B)/tests/lib/test_util.o \
		$(LIB) $(LDFLAGS) $(LDLIBS)

.PHONY: stress
stress: $(B)/stress/stress $(ENCL_BINS) $(ENCL_OUT)/paging_encl.bin
	@STRESS_S=$(STRESS_S) B=$(B) $(B)/stress/stress
