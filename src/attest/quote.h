/* SPDX-License-Identifier: MIT */
/*
 * The DCAP quote, version 3 (attestation-facts.md §1.2-1.5): layout
 * constants and a bounds-checked reader. Quotes are byte strings; fields
 * are read with memcpy, never through pointers into them.
 */
#ifndef SGXEMU_ATTEST_QUOTE_H
#define SGXEMU_ATTEST_QUOTE_H

#include <stddef.h>
#include <stdint.h>

#include "sgxemu/arch.h"

#define QUOTE_VERSION		3
#define QUOTE_ATT_KEY_ECDSA_P256 2
#define QUOTE_HEADER_SIZE	48
#define QUOTE_SIGNED_SIZE	432	/* header + application report body */
#define QUOTE_SIG_DATA_OFF	436
#define QUOTE_MIN_SIZE		1020	/* no auth data, no certification data */
#define QUOTE_AUTH_SIZE		32	/* auth data as Intel's QE3 writes it */
#define QUOTE_CERT_PCK_CHAIN	5

/* Intel's QE vendor id: verifiers accept no other (§1.2). */
extern const uint8_t sgx_qe_vendor_id[16];

struct sgx_quote_view {
	uint16_t version, att_key_type;
	uint32_t tee_type;
	uint16_t qe_svn, pce_svn;
	uint8_t  vendor_id[16];
	uint8_t  user_data[20];
	struct sgx_report_body report;		/* the application's */
	uint32_t sig_data_len;
	uint8_t  sig[64];			/* r || s, big endian */
	uint8_t  att_pub[64];			/* X || Y, big endian */
	struct sgx_report_body qe_report;
	uint8_t  qe_sig[64];
	uint16_t auth_len;
	const uint8_t *auth;			/* into the quote */
	uint16_t cert_type;
	uint32_t cert_len;
	const uint8_t *cert;			/* into the quote */
};

/*
 * Read a v3 quote of @len bytes as the verifier's format check does
 * (§6.4 step 2): 0, or -1 with the reason in @why.
 */
int sgx_quote_parse(const uint8_t *q, size_t len, struct sgx_quote_view *v,
		    char *why, size_t whylen);

#endif /* SGXEMU_ATTEST_QUOTE_H */
