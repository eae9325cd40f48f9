/* SPDX-License-Identifier: MIT */
/*
 * Policy files (src/lsm/policy.c): the input is the file's text, parsed as
 * `sgxemu run --policy` would. A parse must either succeed with a policy
 * whose rules are all readable or fail with a one-line reason naming a
 * line; nothing else may happen.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "lsm/policy.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct lsm_policy p;
	char why[256] = "";
	char *text = malloc(size + 1);
	int ret;

	if (!text)
		return 0;
	memcpy(text, data, size);
	text[size] = '\0';
	ret = lsm_policy_parse("fuzz.policy", text, &p, why, sizeof(why));
	if (ret == 0) {
		volatile uint8_t sink = 0;

		/* Touch every rule so ASan sees a short or stale array. */
		for (size_t i = 0; i < p.nr_signers; i++)
			sink ^= p.signers[i].hash[31];
		for (size_t i = 0; i < p.nr_enclaves; i++)
			sink ^= p.enclaves[i].hash[31];
		(void)sink;
		lsm_policy_free(&p);
	} else if (!why[0] || strchr(why, '\n') || strncmp(why, "fuzz.policy:", 12)) {
		/* The contract: "FILE:LINE: reason", one line. */
		fprintf(stderr, "bad refusal message: '%s'\n", why);
		abort();
	}
	free(text);
	return 0;
}
