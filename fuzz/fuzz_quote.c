/* SPDX-License-Identifier: MIT */
/*
 * The quote verifier and its parsers (src/attest/verify.c, quote.c,
 * json.c, pck_ext.c). The first input byte picks what the rest is:
 *   0  a whole quote, verified against this platform's collateral
 *   1  tcbInfo.json text, verifying a good quote
 *   2  qeIdentity.json text, verifying a good quote
 *   3  the DER value of a PCK certificate's SGX extension
 *   4  JSON text for the reader alone
 *   5  patches to a good quote: (u16 offset, u8 xor) triples
 * Beyond "no crash": a patched quote that differs from the good one is
 * never accepted (every byte of a quote is covered by a signature or by
 * the check that its certificates are in canonical PEM), and every
 * refusal names its check and status.
 */
#include <string.h>

#include "fuzz.h"
#include "fuzz_attest.h"
#include "attest/json.h"
#include "attest/pck_ext.h"

static uint8_t *good;
static size_t good_len;
static struct sgxemu_collateral col;

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	struct sgx_attest *a = fuzz_attest_platform();
	struct sgx_report r;
	char why[256];

	(void)argc;
	(void)argv;
	fuzz_app_report(a, &r);
	if (sgxemu_quote_generate(&r, &good, &good_len, why, sizeof(why)) ||
	    sgxemu_collateral_make(NULL, &col, why, sizeof(why))) {
		fprintf(stderr, "fuzz_quote: %s\n", why);
		abort();
	}
	return 0;
}

static int verify(const uint8_t *q, size_t len, const struct sgxemu_collateral *c)
{
	struct sgxemu_verify_opts o = { .collateral = c, .trusted_root_pem = col.root };
	struct sgxemu_verify_result res;
	int st = sgxemu_quote_verify(q, len, &o, &res);

	if (st && (!res.check[0] || !res.why[0] || strchr(res.why, '\n'))) {
		fprintf(stderr, "fuzz_quote: refusal without a check or reason\n");
		abort();
	}
	return st;
}

static char *text_of(const uint8_t *p, size_t n)
{
	char *t = malloc(n + 1);

	if (t) {
		memcpy(t, p, n);
		t[n] = '\0';
	}
	return t;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct sgxemu_collateral c = col;
	static struct json_doc doc;
	struct sgx_pck_ext ext;
	uint8_t *q;
	char *t;

	if (size < 1)
		return 0;
	switch (data[0] % 6) {
	case 0:
		q = malloc(size - 1 ? size - 1 : 1);
		if (q) {
			memcpy(q, data + 1, size - 1);
			verify(q, size - 1, &col);
		}
		free(q);
		break;
	case 1:
	case 2:
		t = text_of(data + 1, size - 1);
		if (!t)
			break;
		if (data[0] % 6 == 1)
			c.tcb_info = t;
		else
			c.qe_identity = t;
		verify(good, good_len, &c);
		free(t);
		break;
	case 3:
		sgx_pck_ext_decode(data + 1, size - 1, &ext);
		break;
	case 4:
		json_parse(&doc, (const char *)data + 1, size - 1, NULL, 0);
		break;
	case 5:
		q = malloc(good_len);
		if (!q)
			break;
		memcpy(q, good, good_len);
		for (size_t i = 1; i + 3 <= size; i += 3) {
			uint16_t off;

			memcpy(&off, data + i, 2);
			q[off % good_len] ^= data[i + 2];
		}
		if (verify(q, good_len, &col) == 0 && memcmp(q, good, good_len)) {
			fprintf(stderr, "fuzz_quote: a changed quote was accepted\n");
			abort();
		}
		free(q);
		break;
	}
	return 0;
}
