/* SPDX-License-Identifier: MIT */
/* What early_lib.c's probe saw (tests/integration/test_early.sh). */
#ifndef EARLY_PROBE_H
#define EARLY_PROBE_H

#include <stdbool.h>

struct early_result {
	bool cpuid_sgx, raw_stat, vdso_sections, vdso_dynamic, dl_iterate,
	     proc_auxv;
};

extern struct early_result early_ctor;
void early_probe(struct early_result *r);
void early_print(const char *who, const struct early_result *r);

#endif
