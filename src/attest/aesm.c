// SPDX-License-Identifier: MIT
/*
 * The AESM protocol's messages, DCAP path (see aesm.h): the supported
 * attestation key ids, InitQuoteEx, GetQuoteSizeEx, GetQuoteEx and
 * SelectAttKeyID served by this platform's QE (attest.h); the EPID and
 * legacy requests answered as a DCAP-only aesmd answers them (error 30,
 * SERVICE_UNAVAILABLE: no EPID service is loaded).
 */
#include <stdlib.h>
#include <string.h>

#include <openssl/evp.h>

#include "attest/aesm.h"
#include "attest/aesm.pb-c.h"
#include "attest/attest.h"

typedef Aesm__Message__Request Request;
typedef Aesm__Message__Response Response;

#define KEY_ID_BASE	158	/* sgx_ql_att_key_id_t, the part compared */

/* Intel's production QE3 MRSIGNER: clients such as Gramine hard-code the
 * key id that names it, so that id is taken as naming this QE too. */
static const uint8_t intel_qe3_mrsigner[32] = {
	0x8c, 0x4f, 0x57, 0x75, 0xd7, 0x96, 0x50, 0x3e, 0x96, 0x13, 0x7f, 0x77,
	0xc6, 0x8a, 0x82, 0x9a, 0x00, 0x56, 0xac, 0x8d, 0xed, 0x70, 0x14, 0x0b,
	0x08, 0x1b, 0x09, 0x44, 0x90, 0xc5, 0x7b, 0xff };

static void key_id_for(uint8_t id[AESM_KEY_ID_SIZE], const uint8_t mrsigner[32])
{
	uint16_t mrsigner_len = 32;
	uint32_t prod_id = SGX_QE_ISVPRODID, alg = 2;	/* ECDSA P-256 */

	memset(id, 0, AESM_KEY_ID_SIZE);
	memcpy(id + 4, &mrsigner_len, 2);
	memcpy(id + 6, mrsigner, 32);
	memcpy(id + 54, &prod_id, 4);
	memcpy(id + 154, &alg, 4);
}

void sgx_aesm_key_id(uint8_t id[AESM_KEY_ID_SIZE])
{
	struct sgx_key_identity qe;

	sgx_qe_identity(&qe);
	key_id_for(id, qe.mrsigner);
}

/* AESM's key id rule (facts §5.4): 256 bytes, the base part one we serve. */
static uint32_t check_key_id(protobuf_c_boolean has, ProtobufCBinaryData k)
{
	uint8_t ours[AESM_KEY_ID_SIZE], intel[AESM_KEY_ID_SIZE];

	if (!has || k.len < AESM_KEY_ID_SIZE)
		return AESM_PARAMETER_ERROR;
	sgx_aesm_key_id(ours);
	key_id_for(intel, intel_qe3_mrsigner);
	if (memcmp(k.data, ours, KEY_ID_BASE) && memcmp(k.data, intel, KEY_ID_BASE))
		return AESM_UNSUPPORTED_ATT_KEY_ID;
	return AESM_SUCCESS;
}

static struct sgx_attest *platform(void)
{
	struct sgx_attest *a = NULL;
	char why[256];

	return sgx_attest_get(&a, why, sizeof(why)) ? NULL : a;
}

static void init_quote_ex(const Aesm__Message__Request__InitQuoteExRequest *q,
			  Aesm__Message__Response__InitQuoteExResponse *r,
			  uint8_t ti[512], uint8_t id[32])
{
	struct sgx_attest *a;
	uint8_t buf[96];

	r->has_pub_key_id_size = 1;
	r->pub_key_id_size = 32;
	r->errorcode = check_key_id(q->has_att_key_id, q->att_key_id);
	if (r->errorcode)
		return;
	r->has_target_info = 1;
	r->target_info.data = ti;
	r->target_info.len = 512;
	memset(ti, 0, 512);
	if (!q->b_pub_key_id)
		return;		/* no key work asked for */
	if (!q->has_buf_size || q->buf_size != 32) {
		r->errorcode = AESM_PARAMETER_ERROR;
		return;
	}
	a = platform();
	if (!a) {
		r->errorcode = AESM_UNEXPECTED_ERROR;
		return;
	}
	memcpy(ti, &a->qe_ti, 512);
	memcpy(buf, a->att_pub, 64);
	memcpy(buf + 64, a->auth, 32);
	EVP_Digest(buf, sizeof(buf), id, NULL, EVP_sha256(), NULL);
	r->has_pub_key_id = 1;
	r->pub_key_id.data = id;
	r->pub_key_id.len = 32;
}

static void get_quote_size_ex(const Aesm__Message__Request__GetQuoteSizeExRequest *q,
			      Aesm__Message__Response__GetQuoteSizeExResponse *r)
{
	struct sgx_attest *a;

	r->errorcode = check_key_id(q->has_att_key_id, q->att_key_id);
	if (r->errorcode)
		return;
	a = platform();
	if (!a) {
		r->errorcode = AESM_ATT_KEY_NOT_INITIALIZED;
		return;
	}
	r->has_quote_size = 1;
	r->quote_size = (uint32_t)sgx_attest_quote_size(a);
}

/*
 * The QE's REPORT for the application (facts §1.5, §1.6): targeted at the
 * application's TARGETINFO in @info, REPORTDATA = SHA-256(nonce || quote).
 */
static int qe_report_for_app(const struct sgx_attest *a, uint8_t *info,
			     const uint8_t *quote, size_t qlen)
{
	struct sgx_targetinfo ti;
	struct sgx_report rep;
	uint8_t rd[64] = { 0 };
	EVP_MD_CTX *md = EVP_MD_CTX_new();
	int ok = md && EVP_DigestInit_ex(md, EVP_sha256(), NULL) &&
		 EVP_DigestUpdate(md, info, 16) &&
		 EVP_DigestUpdate(md, quote, qlen) &&
		 EVP_DigestFinal_ex(md, rd, NULL);

	EVP_MD_CTX_free(md);
	memcpy(&ti, info + 16, sizeof(ti));
	if (!ok || sgx_build_report(&a->keys, &a->qe, &ti, rd, &rep))
		return -1;
	memcpy(info + 528, &rep, sizeof(rep));
	return 0;
}

static void get_quote_ex(const Aesm__Message__Request__GetQuoteExRequest *q,
			 Aesm__Message__Response__GetQuoteExResponse *r,
			 uint8_t **quote, uint8_t info[AESM_QE_REPORT_INFO_SIZE])
{
	struct sgx_report report;
	struct sgx_attest *a;
	char why[256];

	r->errorcode = check_key_id(q->has_att_key_id, q->att_key_id);
	if (r->errorcode)
		return;
	if (q->report.len != sizeof(report) ||
	    (q->has_qe_report_info && q->qe_report_info.len != AESM_QE_REPORT_INFO_SIZE) ||
	    q->buf_size > AESM_MAX_QUOTE_BUF) {
		r->errorcode = AESM_PARAMETER_ERROR;
		return;
	}
	a = platform();
	if (!a) {
		r->errorcode = AESM_ATT_KEY_NOT_INITIALIZED;
		return;
	}
	if (q->buf_size < sgx_attest_quote_size(a)) {
		r->errorcode = AESM_PARAMETER_ERROR;
		return;
	}
	/* The answer is buf_size bytes, zero after the quote, as aesmd's. */
	*quote = calloc(1, q->buf_size);
	if (!*quote) {
		r->errorcode = AESM_UNEXPECTED_ERROR;
		return;
	}
	memcpy(&report, q->report.data, sizeof(report));
	r->errorcode = (uint32_t)sgx_attest_quote(a, &report, *quote, why, sizeof(why));
	if (r->errorcode)
		return;
	if (q->has_qe_report_info) {
		memcpy(info, q->qe_report_info.data, AESM_QE_REPORT_INFO_SIZE);
		if (qe_report_for_app(a, info, *quote, sgx_attest_quote_size(a))) {
			r->errorcode = AESM_UNEXPECTED_ERROR;
			return;
		}
		r->has_qe_report_info = 1;
		r->qe_report_info.data = info;
		r->qe_report_info.len = AESM_QE_REPORT_INFO_SIZE;
	}
	r->has_quote = 1;
	r->quote.data = *quote;
	r->quote.len = q->buf_size;
}

/* SelectAttKeyID (facts §5.4): header {id 0, version 0, n <= 10}, n ids. */
static void select_att_key_id(const Aesm__Message__Request__SelectAttKeyIDRequest *q,
			      Aesm__Message__Response__SelectAttKeyIDResponse *r,
			      uint8_t sel[AESM_KEY_ID_SIZE])
{
	const uint8_t *p = q->att_key_id_list.data;
	uint32_t n;

	sgx_aesm_key_id(sel);
	r->errorcode = AESM_SUCCESS;
	if (q->has_att_key_id_list) {
		if (q->att_key_id_list.len < 8) {
			r->errorcode = AESM_PARAMETER_ERROR;
			return;
		}
		memcpy(&n, p + 4, 4);
		if (p[0] || p[1] || p[2] || p[3] || n > 10 ||
		    q->att_key_id_list.len != 8 + (size_t)n * AESM_KEY_ID_SIZE) {
			r->errorcode = AESM_PARAMETER_ERROR;
			return;
		}
		r->errorcode = AESM_UNSUPPORTED_ATT_KEY_ID;
		for (uint32_t i = 0; i < n; i++) {
			ProtobufCBinaryData k = { AESM_KEY_ID_SIZE,
						  (uint8_t *)p + 8 + i * AESM_KEY_ID_SIZE };

			if (check_key_id(1, k) == AESM_SUCCESS) {
				memcpy(sel, k.data, AESM_KEY_ID_SIZE);
				r->errorcode = AESM_SUCCESS;
				break;
			}
		}
		if (r->errorcode)
			return;
	}
	r->has_selected_att_key_id = 1;
	r->selected_att_key_id.data = sel;
	r->selected_att_key_id.len = AESM_KEY_ID_SIZE;
}

/* The EPID and legacy requests: the field of the same number answers. */
static Aesm__Message__Response__ErrorOnly **epid_answer(const Request *q, Response *r)
{
	if (q->init_quote_req) return &r->init_quote_res;
	if (q->get_quote_req) return &r->get_quote_res;
	if (q->get_launch_token_req) return &r->get_launch_token_res;
	if (q->report_err_req) return &r->report_err_res;
	if (q->get_white_list_size_req) return &r->get_white_list_size_res;
	if (q->get_white_list_req) return &r->get_white_list_res;
	if (q->sgx_get_extended_epid_group_id_req)
		return &r->sgx_get_extended_epid_group_id_res;
	if (q->sgx_switch_extended_epid_group_req)
		return &r->sgx_switch_extended_epid_group_res;
	if (q->sgx_register_req) return &r->sgx_register_res;
	if (q->check_update_status_req) return &r->check_update_status_res;
	return NULL;
}

int sgx_aesm_handle(const uint8_t *req, size_t len, uint8_t **resp,
		    size_t *resp_len)
{
	Aesm__Message__Response__InitQuoteExResponse iq =
		AESM__MESSAGE__RESPONSE__INIT_QUOTE_EX_RESPONSE__INIT;
	Aesm__Message__Response__GetQuoteSizeExResponse qs =
		AESM__MESSAGE__RESPONSE__GET_QUOTE_SIZE_EX_RESPONSE__INIT;
	Aesm__Message__Response__GetQuoteExResponse gq =
		AESM__MESSAGE__RESPONSE__GET_QUOTE_EX_RESPONSE__INIT;
	Aesm__Message__Response__SelectAttKeyIDResponse sk =
		AESM__MESSAGE__RESPONSE__SELECT_ATT_KEY_IDRESPONSE__INIT;
	Aesm__Message__Response__GetSupportedAttKeyIDNumResponse kn =
		AESM__MESSAGE__RESPONSE__GET_SUPPORTED_ATT_KEY_IDNUM_RESPONSE__INIT;
	Aesm__Message__Response__GetSupportedAttKeyIDsResponse ks =
		AESM__MESSAGE__RESPONSE__GET_SUPPORTED_ATT_KEY_IDS_RESPONSE__INIT;
	Aesm__Message__Response__ErrorOnly eo =
		AESM__MESSAGE__RESPONSE__ERROR_ONLY__INIT;
	Aesm__Message__Response__ErrorOnly **slot;
	Response r = AESM__MESSAGE__RESPONSE__INIT;
	uint8_t ti[512], id[32], key_id[AESM_KEY_ID_SIZE];
	uint8_t info[AESM_QE_REPORT_INFO_SIZE], *quote = NULL;
	Request *q;
	int ret = 0;

	if (len > AESM_MAX_FRAME)
		return -1;
	q = aesm__message__request__unpack(NULL, len, req);
	if (!q)
		return -1;
	if (q->init_quote_ex_req) {
		init_quote_ex(q->init_quote_ex_req, &iq, ti, id);
		r.init_quote_ex_res = &iq;
	} else if (q->get_quote_size_ex_req) {
		get_quote_size_ex(q->get_quote_size_ex_req, &qs);
		r.get_quote_size_ex_res = &qs;
	} else if (q->get_quote_ex_req) {
		get_quote_ex(q->get_quote_ex_req, &gq, &quote, info);
		r.get_quote_ex_res = &gq;
	} else if (q->select_att_key_id_req) {
		select_att_key_id(q->select_att_key_id_req, &sk, key_id);
		r.select_att_key_id_res = &sk;
	} else if (q->get_supported_att_key_id_num_req) {
		kn.errorcode = AESM_SUCCESS;
		kn.has_att_key_id_num = 1;
		kn.att_key_id_num = 1;
		r.get_supported_att_key_id_num_res = &kn;
	} else if (q->get_supported_att_key_ids_req) {
		ks.errorcode = AESM_PARAMETER_ERROR;
		if (q->get_supported_att_key_ids_req->buf_size == AESM_KEY_ID_SIZE) {
			sgx_aesm_key_id(key_id);
			ks.errorcode = AESM_SUCCESS;
			ks.has_att_key_ids = 1;
			ks.att_key_ids.data = key_id;
			ks.att_key_ids.len = AESM_KEY_ID_SIZE;
		}
		r.get_supported_att_key_ids_res = &ks;
	} else if ((slot = epid_answer(q, &r)) != NULL) {
		eo.errorcode = AESM_SERVICE_UNAVAILABLE;
		*slot = &eo;
	} else {
		ret = -1;	/* nothing we know of was asked */
	}
	if (!ret) {
		*resp_len = aesm__message__response__get_packed_size(&r);
		*resp = malloc(*resp_len ? *resp_len : 1);
		if (*resp)
			aesm__message__response__pack(&r, *resp);
		else
			ret = -1;
	}
	aesm__message__request__free_unpacked(q, NULL);
	free(quote);
	return ret;
}
