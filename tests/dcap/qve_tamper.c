/* SPDX-License-Identifier: MIT */
/*
 * Preloaded into Intel's QuoteVerificationSample (test_dcap_samples.sh):
 * tee_verify_quote of libsgx_dcap_quoteverify.so.1 with one thing changed,
 * as an untrusted host between the QvE and the caller's enclave could
 * change it, so that the sample's enclave, with Intel's TVL, shows it
 * refuses each. $SGXEMU_QVE_TAMPER says what:
 *   target   the REPORT made for another enclave: a byte of the caller's
 *            TARGETINFO flipped for the call, put back after it
 *   nonce    a byte of the nonce flipped after the call
 *   verdict  the result said to be another one after the call
 *   status   the collateral expiration status flipped after the call
 * Only QvE-checked calls (a p_qve_report_info) are changed.
 */
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* sgx_ql_qe_report_info_t: nonce (16), TARGETINFO (512), REPORT (432). */
#define NONCE_OFF	0
#define TARGET_OFF	16

typedef uint32_t (*verify_fn)(const uint8_t *, uint32_t, const uint8_t *,
			      time_t, uint32_t *, uint32_t *, uint8_t *, void *);

uint32_t tee_verify_quote(const uint8_t *quote, uint32_t size,
			  const uint8_t *coll, time_t date, uint32_t *expired,
			  uint32_t *result, uint8_t *info, void *supp)
{
	verify_fn real = (verify_fn)dlsym(RTLD_NEXT, "tee_verify_quote");
	const char *how = getenv("SGXEMU_QVE_TAMPER");
	uint32_t ret;

	if (!real) {
		fprintf(stderr, "qve_tamper: no tee_verify_quote after this one\n");
		abort();
	}
	if (!info || !how)
		return real(quote, size, coll, date, expired, result, info, supp);
	if (!strcmp(how, "target"))
		info[TARGET_OFF] ^= 1;
	ret = real(quote, size, coll, date, expired, result, info, supp);
	if (!strcmp(how, "target"))
		info[TARGET_OFF] ^= 1;
	else if (!strcmp(how, "nonce"))
		info[NONCE_OFF + 5] ^= 1;
	else if (!strcmp(how, "verdict") && result)
		*result = *result ? 0 : 0xA002;
	else if (!strcmp(how, "status") && expired)
		*expired ^= 1;
	fprintf(stderr, "qve_tamper: %s changed\n", how);
	return ret;
}
