// SPDX-License-Identifier: MIT
/* Reading a v3 quote (see quote.h). */
#include <stdio.h>
#include <string.h>

#include "attest/quote.h"
#include "base/why.h"

const uint8_t sgx_qe_vendor_id[16] = {
	0x93, 0x9a, 0x72, 0x33, 0xf7, 0x9c, 0x4c, 0xa9,
	0x94, 0x0a, 0x0d, 0xb3, 0x95, 0x7f, 0x06, 0x07 };

int sgx_quote_parse(const uint8_t *q, size_t len, struct sgx_quote_view *v,
		    char *why, size_t whylen)
{
	size_t off, end;

	memset(v, 0, sizeof(*v));
	if (len < QUOTE_MIN_SIZE)
		return sgx_fail(why, whylen, -1, "%zu bytes, a quote has at least %d", len,
			   QUOTE_MIN_SIZE);
	memcpy(&v->version, q, 2);
	memcpy(&v->att_key_type, q + 2, 2);
	memcpy(&v->tee_type, q + 4, 4);
	memcpy(&v->qe_svn, q + 8, 2);
	memcpy(&v->pce_svn, q + 10, 2);
	memcpy(v->vendor_id, q + 12, 16);
	memcpy(v->user_data, q + 28, 20);
	memcpy(&v->report, q + QUOTE_HEADER_SIZE, sizeof(v->report));
	memcpy(&v->sig_data_len, q + QUOTE_SIGNED_SIZE, 4);
	if (v->version != QUOTE_VERSION)
		return sgx_fail(why, whylen, -1, "version %u (only 3 is read)", v->version);
	if (v->att_key_type != QUOTE_ATT_KEY_ECDSA_P256)
		return sgx_fail(why, whylen, -1, "attestation key type %u (2 is ECDSA P-256)",
			   v->att_key_type);
	if (v->tee_type != 0)
		return sgx_fail(why, whylen, -1, "TEE type %#x in a v3 quote (0 = SGX)",
			   v->tee_type);
	if (memcmp(v->vendor_id, sgx_qe_vendor_id, 16))
		return sgx_fail(why, whylen, -1, "unknown QE vendor id");
	/* QVL takes a quote that is exactly its parts: bytes past the
	 * signature data, or past the certification data within it, would be
	 * bytes no signature covers, so a changed quote would still verify. */
	if (v->sig_data_len > len - QUOTE_SIG_DATA_OFF)
		return sgx_fail(why, whylen, -1, "signature data of %u bytes runs past the "
			   "quote's end", v->sig_data_len);
	if (v->sig_data_len < len - QUOTE_SIG_DATA_OFF)
		return sgx_fail(why, whylen, -1, "%zu bytes after the signature data of "
			   "%u bytes", len - QUOTE_SIG_DATA_OFF - v->sig_data_len,
			   v->sig_data_len);
	end = QUOTE_SIG_DATA_OFF + (size_t)v->sig_data_len;
	off = QUOTE_SIG_DATA_OFF;
	if (end - off < 578)
		return sgx_fail(why, whylen, -1, "signature data of %u bytes is shorter "
			   "than its fixed part", v->sig_data_len);
	memcpy(v->sig, q + off, 64);
	memcpy(v->att_pub, q + off + 64, 64);
	memcpy(&v->qe_report, q + off + 128, 384);
	memcpy(v->qe_sig, q + off + 512, 64);
	memcpy(&v->auth_len, q + off + 576, 2);
	off += 578;
	if (v->auth_len > end - off || end - off - v->auth_len < 6)
		return sgx_fail(why, whylen, -1, "QE authentication data of %u bytes runs "
			   "past the signature data", v->auth_len);
	v->auth = q + off;
	off += v->auth_len;
	memcpy(&v->cert_type, q + off, 2);
	memcpy(&v->cert_len, q + off + 2, 4);
	off += 6;
	if (v->cert_len > end - off)
		return sgx_fail(why, whylen, -1, "certification data of %u bytes runs past "
			   "the signature data", v->cert_len);
	if (v->cert_len < end - off)
		return sgx_fail(why, whylen, -1, "%zu bytes of signature data after the "
			   "certification data of %u bytes", end - off - v->cert_len,
			   v->cert_len);
	v->cert = q + off;
	if (v->cert_type < 1 || v->cert_type > 5)
		return sgx_fail(why, whylen, -1, "certification data type %u (1..5 in v3)",
			   v->cert_type);
	return 0;
}
