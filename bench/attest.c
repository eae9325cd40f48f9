/* SPDX-License-Identifier: MIT */
/*
 * bench/attest: what a quote costs to make and to verify, against the
 * public-key operations each cannot avoid.
 *
 * Make: sgxemu_quote_generate() for a REPORT targeted at the QE (the QE
 * checks its MAC, builds the quote, signs it). Floor: one ECDSA P-256
 * signature over the 432 signed bytes plus the REPORT's AES-CMAC.
 * Verify: sgxemu_quote_verify() against collateral made once. Floor: the
 * 12 ECDSA P-256 verifications it has to do (root, CA, PCK, trusted root,
 * two CRLs, TCB root and signer, TCB info, QE identity, QE report, quote),
 * each timed alone on the same key type. Best of ROUNDS, interleaved.
 *
 * Last line: "attest ratio=R target=0.5", R = verify floor / verify time
 * (the share of verification that is the unavoidable crypto).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <openssl/evp.h>

#include "attest/attest.h"
#include "attest/ecdsa.h"
#include "sgxemu/attest.h"

#define N	100
#define ROUNDS	5

static double now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + t.tv_nsec * 1e-9;
}

int main(void)
{
	char dir[] = "/tmp/sgxemu-bench-attest-XXXXXX", path[256], why[256];
	struct sgx_key_identity app = { 0 };
	struct sgxemu_collateral col;
	struct sgxemu_verify_opts vo = { 0 };
	struct sgxemu_verify_result res;
	struct sgx_targetinfo ti;
	struct sgx_attest *a;
	struct sgx_report rep;
	double make = 1e9, verify = 1e9, sign = 1e9, check = 1e9, t;
	uint8_t rd[64] = { 0 }, sig[64], mac[16], *q = NULL;
	size_t len = 0;

	if (!mkdtemp(dir))
		return 1;
	snprintf(path, sizeof(path), "%s/secrets", dir);
	setenv("SGXEMU_SECRETS_FILE", path, 1);
	if (sgx_attest_get(&a, why, sizeof(why)) ||
	    sgxemu_collateral_make(NULL, &col, why, sizeof(why))) {
		fprintf(stderr, "attest: %s\n", why);
		return 1;
	}
	app.attributes.flags = SGX_ATTR_INIT | SGX_ATTR_MODE64BIT;
	sgxemu_qe_target_info(&ti, NULL, 0);
	sgx_build_report(&a->keys, &app, &ti, rd, &rep);
	vo.collateral = &col;
	vo.trusted_root_pem = col.root;
	for (int r = 0; r < ROUNDS; r++) {
		t = now();
		for (int i = 0; i < N; i++) {
			free(q);
			if (sgxemu_quote_generate(&rep, &q, &len, why, sizeof(why)))
				return 1;
		}
		if ((t = (now() - t) / N) < make)
			make = t;
		t = now();
		for (int i = 0; i < N; i++)
			if (sgxemu_quote_verify(q, len, &vo, &res))
				return 1;
		if ((t = (now() - t) / N) < verify)
			verify = t;
		t = now();
		for (int i = 0; i < N; i++)
			if (sgx_ecdsa_sign(a->att_key, q, 432, sig) ||
			    sgx_cmac(a->keys.root[SGX_KEYNAME_REPORT], &rep.body, 384, mac))
				return 1;
		if ((t = (now() - t) / N) < sign)
			sign = t;
		t = now();
		for (int i = 0; i < N; i++)
			if (!sgx_ecdsa_verify(a->att_key, q, 432, sig))
				return 1;
		if ((t = (now() - t) / N) < check)
			check = t;
	}
	printf("attest: quote of %zu bytes, best of %d x %d\n", len, ROUNDS, N);
	printf("attest: make   %8.1f us/quote  (floor: ECDSA sign + CMAC %6.1f us, "
	       "ratio %.2f)\n", make * 1e6, sign * 1e6, sign / make);
	printf("attest: verify %8.1f us/quote  (floor: 12 ECDSA verifies %6.1f us)\n",
	       verify * 1e6, 12 * check * 1e6);
	printf("attest ratio=%.2f target=0.5\n", 12 * check / verify);
	sgxemu_collateral_free(&col);
	free(q);
	snprintf(path, sizeof(path), "rm -rf '%s'", dir);
	return system(path) ? 1 : 0;
}
