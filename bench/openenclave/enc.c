/* SPDX-License-Identifier: MIT */
/*
 * The enclave of bench/oe_calls: empty ECALLs, and a loop of empty OCALLs
 * (regular or switchless) so that the host times N of them in one ECALL;
 * the loop stops at the first that fails and says how many succeeded.
 */
#include "calls_t.h"

void enc_empty(void)
{
}

void enc_empty_switchless(void)
{
}

uint64_t enc_ocalls(uint64_t n, int switchless)
{
	uint64_t i;

	for (i = 0; i < n; i++)
		if ((switchless ? host_empty_switchless() : host_empty()) != OE_OK)
			break;
	return i;
}
