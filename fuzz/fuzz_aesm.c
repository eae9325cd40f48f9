/* SPDX-License-Identifier: MIT */
/*
 * The AESM socket protocol (src/attest/aesm.c): the input is one
 * serialized Request, as a client sends it after the length. The answer
 * must be a Response that decodes, or none at all (the connection is then
 * closed). The first byte of the input 0x01 swaps in a REPORT that really
 * is the QE's (so GetQuoteEx gets past the MAC) wherever a 432-byte field
 * of 0xEE bytes appears.
 */
#include <string.h>

#include "fuzz.h"
#include "fuzz_attest.h"
#include "attest/aesm.h"
#include "attest/aesm.pb-c.h"

static struct sgx_report good;

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	fuzz_app_report(fuzz_attest_platform(), &good);
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	Aesm__Message__Response *r;
	uint8_t *req, *resp = NULL;
	size_t rlen = 0;

	req = malloc(size ? size : 1);
	if (!req)
		return 0;
	memcpy(req, data, size);
	if (size > 433 && req[0] == 0x01) {
		for (size_t i = 1; i + 432 <= size; i++) {
			static uint8_t marker[432];

			if (!marker[0])
				memset(marker, 0xee, sizeof(marker));
			if (!memcmp(req + i, marker, sizeof(marker)))
				memcpy(req + i, &good, sizeof(good));
		}
	}
	if (sgx_aesm_handle(req, size, &resp, &rlen) == 0) {
		r = aesm__message__response__unpack(NULL, rlen, resp);
		if (!r) {
			fprintf(stderr, "fuzz_aesm: an answer that does not decode\n");
			abort();
		}
		aesm__message__response__free_unpacked(r, NULL);
	}
	free(resp);
	free(req);
	return 0;
}
