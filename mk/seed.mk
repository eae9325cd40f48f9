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

SEED_DIR_DEFAULT := ../shared/seed-tree/tools/testing/selftests/x86/sgx
SEED_DIR ?= $(SEED_DIR_DEFAULT)
# The files that make a directory the seed selftest: its Makefile, host
# program, enclave and signing tool.
SEED_FILES := Makefile main.c encl.c sgxsign.c
seed_missing = $(strip $(foreach f,$(SEED_FILES),$(if $(wildcard $(SEED_DIR)/$(f)),,$(f))))
# One line on what is wrong with SEED_DIR, or nothing when it is a seed tree.
seed_problem = $(if $(wildcard $(SEED_DIR)/.),$(if $(seed_missing),$(SEED_DIR) is not the seed selftest (no $(seed_missing) there),),$(SEED_DIR) not found)
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
# Without the default tree (a clone on its own) the seed tests skip; a
# SEED_DIR given by hand that is not the seed selftest is an error. A
# failed build leaves no test_sgx/encl.bin/encl.ss to be taken for good.
seed-build: $(SEED_MK)/lib.mk
ifneq ($(seed_problem),)
ifeq ($(SEED_DIR),$(SEED_DIR_DEFAULT))
	@echo "seed-build: $(seed_problem) (set SEED_DIR); the seed tests will be skipped"
else
	@echo "sgxemu: SEED_DIR: $(seed_problem)" >&2; exit 1
endif
else
	@mkdir -p $(SEED_OUT)
	@$(MAKE) --no-print-directory -C $(abspath $(SEED_DIR)) \
		-I $(SEED_MK)/x/y CC=$(SEED_CC) OUTPUT=$(SEED_OUT) all || \
	 { rm -f $(SEED_OUT)/test_sgx $(SEED_OUT)/encl.elf $(SEED_OUT)/encl.bin \
		$(SEED_OUT)/encl.ss $(SEED_OUT)/sgxsign; \
	   echo "sgxemu: the seed selftest in $(SEED_DIR) did not build" >&2; exit 1; }
endif

TEST_DEPS += seed-build

# The main job: build everything, then run the seed selftest under sgxemu.
# test_sgx opens encl.bin and encl.ss in its current directory. A CLI built
# without `sgxemu run` cannot run it: then the target says NOT RUN and fails
# rather than look like a pass.
#
# Without the seed tree (a clone on its own, the default SEED_DIR absent) the
# main job runs the Linux kernel's own SGX selftest instead, built unmodified
# from Debian's linux-source (scripts/kselftest.sh, which scripts/deps.sh
# installs), and says so in its first line.
KSELFTEST_OUT := $(abspath $(B))/kselftest
ifneq ($(seed_problem),)
ifeq ($(SEED_DIR),$(SEED_DIR_DEFAULT))
seed: all
	@scripts/deps.sh kselftest
	@out=$$(scripts/kselftest.sh $(KSELFTEST_OUT)) || exit 1; \
	echo "== running the Linux kernel's SGX selftest (tools/testing/selftests/sgx of $$(basename $$(cat $(KSELFTEST_OUT)/src.stamp) .tar.xz)) under sgxemu: $(seed_problem)"; \
	cd $$out && $(abspath $(CLI)) run ./test_sgx
else
seed:
	@echo "sgxemu: make seed needs the seed selftest tree (tools/testing/selftests/x86/sgx of the v22 SGX patch set): $(seed_problem); set SEED_DIR=/path/to/it" >&2; exit 1
endif
else
seed: all seed-build
	@if $(CLI) help run >/dev/null 2>&1; then \
		echo "== running the seed selftest (v22, $(SEED_DIR)) under sgxemu"; \
		cd $(SEED_OUT) && $(abspath $(CLI)) run ./test_sgx; \
	else \
		echo "seed: built $(B)/seed/test_sgx, encl.bin, encl.ss"; \
		echo "seed: NOT RUN: running test_sgx needs the shim (sgxemu run), which is not there yet"; \
		exit 1; \
	fi
endif
