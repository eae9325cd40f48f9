# The seed selftest (tools/testing/selftests/x86/sgx of the seed kernel tree):
# its enclave, signing tool and host program, built UNMODIFIED with their own
# Makefile and flags into $(B)/seed. The tests sign its encl.bin with
# `sgxemu sign` and compare with the encl.ss its own tool wrote, and launch it
# through the processor model; `make seed` runs test_sgx under sgxemu.
#
# The seed tree is read-only and lacks the kselftest lib.mk its Makefile
# includes as ../../lib.mk. make looks for included files that do not exist
# relative to the current directory in its -I directories too, so a stub
# lib.mk in $(B)/seedmk plus `-I $(B)/seedmk/x/y` (whose ../../ is the stub's
# directory) satisfies it without touching the seed files.

SEED_DIR ?= ../shared/seed-tree/tools/testing/selftests/x86/sgx
# The seed's flags are gcc's (clang rejects its `-z noexecstack` on compile
# lines under -Werror), as for the kernel's own selftest builds: keep gcc for
# it even when CC=clang builds sgxemu.
SEED_CC  ?= gcc
SEED_OUT := $(abspath $(B))/seed
SEED_MK  := $(abspath $(B))/seedmk

.PHONY: seed-build seed

$(SEED_MK)/lib.mk:
	@mkdir -p $(SEED_MK)/x/y
	@printf '%s\n' \
	  '# Stub for the kselftest lib.mk the seed Makefile includes.' \
	  '# The seed Makefile needs nothing from it: OUTPUT comes from the' \
	  '# command line (mk/seed.mk) and its own rules do the rest.' \
	  > $@

# Always delegate: the seed Makefile knows what is up to date.
seed-build: $(SEED_MK)/lib.mk
	@if [ ! -d "$(SEED_DIR)" ]; then \
		echo "seed-build: $(SEED_DIR) not found (set SEED_DIR); the seed tests will be skipped"; \
	else \
		mkdir -p $(SEED_OUT) && \
		$(MAKE) --no-print-directory -C $(abspath $(SEED_DIR)) \
			-I $(SEED_MK)/x/y CC=$(SEED_CC) OUTPUT=$(SEED_OUT) all; \
	fi

TEST_DEPS += seed-build

# The main job: build everything, then run the seed selftest under sgxemu.
# test_sgx opens encl.bin and encl.ss in its current directory. A CLI built
# without `sgxemu run` cannot run it: then the target says NOT RUN and fails
# rather than look like a pass.
seed: all seed-build
	@if $(CLI) help run >/dev/null 2>&1; then \
		echo "== running the seed selftest under sgxemu"; \
		cd $(SEED_OUT) && $(abspath $(CLI)) run ./test_sgx; \
	else \
		echo "seed: built $(B)/seed/test_sgx, encl.bin, encl.ss"; \
		echo "seed: NOT RUN: running test_sgx needs the shim (sgxemu run), which is not there yet"; \
		exit 1; \
	fi
