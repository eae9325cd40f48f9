# The shim (libsgxemu.so) and its tests. `make seed` (mk/seed.mk) runs the
# seed selftest under `sgxemu run`; this adds `make shim-test`, the shim's
# tests alone: the mainline and seed host programs with their own enclave
# (they re-execute themselves under `sgxemu run`), programs that never
# touch SGX, the CLI, and the seed selftest.

SHIM_TEST_PROGS := $(B)/tests/integration/test_shim_mainline \
		   $(B)/tests/integration/test_shim_seed
SHIM_TEST_SCRIPTS := tests/integration/test_shim.sh \
		     tests/integration/test_seed_selftest.sh

.PHONY: shim-test
shim-test: $(ALL_TARGETS) $(SHIM_TEST_PROGS) seed-build
	@for t in $(SHIM_TEST_PROGS) $(SHIM_TEST_SCRIPTS); do \
		echo "== $$t"; B=$(B) $$t || exit 1; \
	done
