// SPDX-License-Identifier: MIT
/*
 * The AESM socket protocol (src/attest/aesm.c, aesm_server.c): every DCAP
 * request and its errors, the EPID answer of a DCAP-only platform, the
 * frames Gramine sends byte for byte (attestation-facts.md §7.1), and the
 * socket: concurrent clients, a client that leaves mid-request, oversized
 * and garbage frames, after which the service still answers.
 */
#include <pthread.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <openssl/evp.h>

#include "test.h"
#include "aesm_client.h"
#include "attest/aesm.h"
#include "attest/attest.h"
#include "attest/verify.h"
#include "sgxemu/attest.h"

typedef Aesm__Message__Request Request;
typedef Aesm__Message__Response Response;

__attribute__((constructor)) static void use_test_platform(void)
{
	tc_attest_platform();
}

/* Pack @q, hand it to the message layer, unpack the answer (or NULL). */
static Response *handle(const Request *q)
{
	size_t len = aesm__message__request__get_packed_size(q), rlen;
	uint8_t *buf = malloc(len + 1), *resp = NULL;
	Response *r = NULL;

	aesm__message__request__pack(q, buf);
	if (!sgx_aesm_handle(buf, len, &resp, &rlen))
		r = aesm__message__response__unpack(NULL, rlen, resp);
	free(buf);
	free(resp);
	return r;
}

/* The key id Gramine hard-codes: Intel's QE3 MRSIGNER (facts §5.3). */
static void intel_key_id(uint8_t id[256])
{
	static const char mrsigner[] =
		"8c4f5775d796503e96137f77c68a829a0056ac8ded70140b081b094490c57bff";
	uint16_t l = 32;
	uint32_t prod = 1, alg = 2;

	memset(id, 0, 256);
	memcpy(id + 4, &l, 2);
	test_unhex(mrsigner, id + 6, 32);
	memcpy(id + 54, &prod, 4);
	memcpy(id + 154, &alg, 4);
}

/* An application REPORT for the QE, as EREPORT makes it. */
static void app_report(struct sgx_report *r, struct sgx_targetinfo *app_ti)
{
	struct sgx_key_identity id;
	struct sgx_targetinfo ti;
	uint8_t rd[64];

	memset(&id, 0, sizeof(id));
	id.attributes.flags = SGX_ATTR_INIT | SGX_ATTR_MODE64BIT;
	id.attributes.xfrm = 3;
	memset(id.mrenclave, 0x3c, 32);
	memset(rd, 0x77, sizeof(rd));
	sgxemu_qe_target_info(&ti, NULL, 0);
	sgx_build_report(&tc_attest()->keys, &id, &ti, rd, r);
	if (app_ti) {
		memset(app_ti, 0, sizeof(*app_ti));
		memcpy(app_ti->measurement, id.mrenclave, 32);
		app_ti->attributes = id.attributes;
	}
}

TEST(supported_key_ids)
{
	Aesm__Message__Request__GetSupportedAttKeyIDNumRequest nq =
		AESM__MESSAGE__REQUEST__GET_SUPPORTED_ATT_KEY_IDNUM_REQUEST__INIT;
	Aesm__Message__Request__GetSupportedAttKeyIDsRequest iq =
		AESM__MESSAGE__REQUEST__GET_SUPPORTED_ATT_KEY_IDS_REQUEST__INIT;
	Request q = AESM__MESSAGE__REQUEST__INIT;
	Response *r;
	uint16_t u16;
	uint32_t u32;

	q.get_supported_att_key_id_num_req = &nq;
	r = handle(&q);
	REQUIRE(r && r->get_supported_att_key_id_num_res);
	CHECK_EQ(r->get_supported_att_key_id_num_res->errorcode, 0);
	CHECK_EQ(r->get_supported_att_key_id_num_res->att_key_id_num, 1);
	aesm__message__response__free_unpacked(r, NULL);

	q.get_supported_att_key_id_num_req = NULL;
	q.get_supported_att_key_ids_req = &iq;
	iq.buf_size = 256;
	r = handle(&q);
	REQUIRE(r && r->get_supported_att_key_ids_res);
	CHECK_EQ(r->get_supported_att_key_ids_res->errorcode, 0);
	REQUIRE_EQ(r->get_supported_att_key_ids_res->att_key_ids.len, 256);
	{
		const uint8_t *id = r->get_supported_att_key_ids_res->att_key_ids.data;

		memcpy(&u16, id + 4, 2);
		CHECK_EQ(u16, 32);			/* mrsigner_length */
		CHECK_MEM(id + 6, tc_attest()->qe.mrsigner, 32);
		memcpy(&u32, id + 54, 4);
		CHECK_EQ(u32, 1);			/* prod_id */
		memcpy(&u32, id + 154, 4);
		CHECK_EQ(u32, 2);			/* ECDSA P-256 */
	}
	aesm__message__response__free_unpacked(r, NULL);
	iq.buf_size = 255;
	r = handle(&q);
	REQUIRE(r && r->get_supported_att_key_ids_res);
	CHECK_EQ(r->get_supported_att_key_ids_res->errorcode, AESM_PARAMETER_ERROR);
	aesm__message__response__free_unpacked(r, NULL);
}

static uint32_t init_quote_ex(const uint8_t *key_id, size_t klen, bool pub,
			      uint64_t buf_size, Response **out)
{
	Aesm__Message__Request__InitQuoteExRequest iq =
		AESM__MESSAGE__REQUEST__INIT_QUOTE_EX_REQUEST__INIT;
	Request q = AESM__MESSAGE__REQUEST__INIT;
	Response *r;

	iq.has_att_key_id = 1;
	iq.att_key_id.data = (uint8_t *)key_id;
	iq.att_key_id.len = klen;
	iq.b_pub_key_id = pub;
	iq.has_buf_size = 1;
	iq.buf_size = buf_size;
	q.init_quote_ex_req = &iq;
	r = handle(&q);
	*out = r;
	return r && r->init_quote_ex_res ? r->init_quote_ex_res->errorcode : 0xdead;
}

TEST(init_quote_ex_answers)
{
	uint8_t id[256], hash[32], buf[96];
	struct sgx_targetinfo ti;
	Response *r;

	intel_key_id(id);
	REQUIRE_EQ(init_quote_ex(id, 256, true, 32, &r), 0);
	sgxemu_qe_target_info(&ti, NULL, 0);
	REQUIRE_EQ(r->init_quote_ex_res->target_info.len, 512);
	CHECK_MEM(r->init_quote_ex_res->target_info.data, &ti, 512);
	CHECK_EQ(r->init_quote_ex_res->pub_key_id_size, 32);
	memcpy(buf, tc_attest()->att_pub, 64);
	for (int i = 0; i < 32; i++)
		buf[64 + i] = (uint8_t)i;
	EVP_Digest(buf, 96, hash, NULL, EVP_sha256(), NULL);
	REQUIRE_EQ(r->init_quote_ex_res->pub_key_id.len, 32);
	CHECK_MEM(r->init_quote_ex_res->pub_key_id.data, hash, 32);
	aesm__message__response__free_unpacked(r, NULL);

	CHECK_EQ(init_quote_ex(id, 256, true, 31, &r), AESM_PARAMETER_ERROR);
	aesm__message__response__free_unpacked(r, NULL);
	CHECK_EQ(init_quote_ex(id, 255, true, 32, &r), AESM_PARAMETER_ERROR);
	aesm__message__response__free_unpacked(r, NULL);
	CHECK_EQ(init_quote_ex(id, 256, false, 0, &r), 0);
	CHECK(r->init_quote_ex_res->target_info.data[0] == 0);
	aesm__message__response__free_unpacked(r, NULL);
	id[10] ^= 1;			/* another signer's QE */
	CHECK_EQ(init_quote_ex(id, 256, true, 32, &r), AESM_UNSUPPORTED_ATT_KEY_ID);
	aesm__message__response__free_unpacked(r, NULL);
}

/* Gramine's InitQuoteEx frame byte for byte (facts §7.1). */
TEST(gramine_init_quote_ex_frame)
{
	uint8_t frame[270], id[256], *resp = NULL;
	size_t rlen;
	Response *r;

	intel_key_id(id);
	memcpy(frame, "\x0a\x01\x00\x00" "\x7a\x87\x02" "\x0a\x80\x02", 10);
	memcpy(frame + 10, id, 256);
	memcpy(frame + 266, "\x18\x01\x20\x20", 4);
	REQUIRE_EQ(sgx_aesm_handle(frame + 4, 266, &resp, &rlen), 0);
	r = aesm__message__response__unpack(NULL, rlen, resp);
	REQUIRE(r && r->init_quote_ex_res);
	CHECK_EQ(r->init_quote_ex_res->errorcode, 0);
	CHECK_EQ(r->init_quote_ex_res->target_info.len, 512);
	/* The answer starts with field 15's tag. */
	CHECK_EQ(resp[0], 0x7a);
	aesm__message__response__free_unpacked(r, NULL);
	free(resp);
}

static uint32_t get_quote_ex(const struct sgx_report *rep, size_t rlen,
			     uint32_t buf_size, uint8_t *info, Response **out)
{
	Aesm__Message__Request__GetQuoteExRequest gq =
		AESM__MESSAGE__REQUEST__GET_QUOTE_EX_REQUEST__INIT;
	Request q = AESM__MESSAGE__REQUEST__INIT;
	uint8_t id[256];
	Response *r;

	intel_key_id(id);
	gq.report.data = (uint8_t *)rep;
	gq.report.len = rlen;
	gq.has_att_key_id = 1;
	gq.att_key_id.data = id;
	gq.att_key_id.len = 256;
	gq.buf_size = buf_size;
	if (info) {
		gq.has_qe_report_info = 1;
		gq.qe_report_info.data = info;
		gq.qe_report_info.len = 960;
	}
	q.get_quote_ex_req = &gq;
	r = handle(&q);
	*out = r;
	return r && r->get_quote_ex_res ? r->get_quote_ex_res->errorcode : 0xdead;
}

TEST(get_quote_ex_and_its_errors)
{
	struct sgxemu_verify_result res;
	struct sgx_report rep, *qe;
	struct sgx_targetinfo app;
	size_t size = sgx_attest_quote_size(tc_attest());
	uint8_t info[960], key[16], mac[16], hash[32];
	Response *r;
	EVP_MD_CTX *md;

	app_report(&rep, &app);
	memset(info, 0, sizeof(info));
	memset(info, 0xab, 16);			/* nonce */
	memcpy(info + 16, &app, 512);
	REQUIRE_EQ(get_quote_ex(&rep, 432, 8192, info, &r), 0);
	REQUIRE_EQ(r->get_quote_ex_res->quote.len, 8192);
	CHECK_EQ(sgxemu_quote_verify(r->get_quote_ex_res->quote.data, size, NULL, &res), 0);
	CHECK_EQ(r->get_quote_ex_res->quote.data[size], 0);
	CHECK_EQ(res.report.mrenclave[0], 0x3c);
	/* The QE's REPORT for the application: MAC under the application's
	 * report key, REPORTDATA = SHA-256(nonce || quote). */
	REQUIRE_EQ(r->get_quote_ex_res->qe_report_info.len, 960);
	qe = (struct sgx_report *)(r->get_quote_ex_res->qe_report_info.data + 528);
	sgx_report_key(&tc_attest()->keys, &app, qe->keyid, key);
	sgx_cmac(key, &qe->body, sizeof(qe->body), mac);
	CHECK_MEM(mac, qe->mac, 16);
	md = EVP_MD_CTX_new();
	EVP_DigestInit_ex(md, EVP_sha256(), NULL);
	EVP_DigestUpdate(md, info, 16);
	EVP_DigestUpdate(md, r->get_quote_ex_res->quote.data, size);
	EVP_DigestFinal_ex(md, hash, NULL);
	EVP_MD_CTX_free(md);
	CHECK_MEM(qe->body.report_data, hash, 32);
	CHECK_MEM(qe->body.mrsigner, tc_attest()->qe.mrsigner, 32);
	aesm__message__response__free_unpacked(r, NULL);

	CHECK_EQ(get_quote_ex(&rep, 431, 8192, NULL, &r), AESM_PARAMETER_ERROR);
	aesm__message__response__free_unpacked(r, NULL);
	CHECK_EQ(get_quote_ex(&rep, 432, (uint32_t)size - 1, NULL, &r),
		 AESM_PARAMETER_ERROR);
	aesm__message__response__free_unpacked(r, NULL);
	CHECK_EQ(get_quote_ex(&rep, 432, 0xffffffffu, NULL, &r), AESM_PARAMETER_ERROR);
	aesm__message__response__free_unpacked(r, NULL);
	rep.body.isvsvn ^= 1;			/* no longer the REPORT EREPORT made */
	CHECK_EQ(get_quote_ex(&rep, 432, 8192, NULL, &r), AESM_INVALID_REPORT);
	CHECK(!r->get_quote_ex_res->has_quote);
	aesm__message__response__free_unpacked(r, NULL);
}

TEST(get_quote_size_ex_and_select)
{
	Aesm__Message__Request__GetQuoteSizeExRequest sq =
		AESM__MESSAGE__REQUEST__GET_QUOTE_SIZE_EX_REQUEST__INIT;
	Aesm__Message__Request__SelectAttKeyIDRequest sel =
		AESM__MESSAGE__REQUEST__SELECT_ATT_KEY_IDREQUEST__INIT;
	Request q = AESM__MESSAGE__REQUEST__INIT;
	uint8_t id[256], list[8 + 2 * 256];
	uint32_t n = 2;
	Response *r;

	intel_key_id(id);
	sq.has_att_key_id = 1;
	sq.att_key_id.data = id;
	sq.att_key_id.len = 256;
	q.get_quote_size_ex_req = &sq;
	r = handle(&q);
	REQUIRE(r && r->get_quote_size_ex_res);
	CHECK_EQ(r->get_quote_size_ex_res->errorcode, 0);
	CHECK_EQ(r->get_quote_size_ex_res->quote_size, sgx_attest_quote_size(tc_attest()));
	aesm__message__response__free_unpacked(r, NULL);

	/* A list of an unknown id, then ours: ours is selected. */
	memset(list, 0, sizeof(list));
	memcpy(list + 4, &n, 4);
	memset(list + 8, 0x11, 256);
	sgx_aesm_key_id(list + 8 + 256);
	q.get_quote_size_ex_req = NULL;
	q.select_att_key_id_req = &sel;
	sel.has_att_key_id_list = 1;
	sel.att_key_id_list.data = list;
	sel.att_key_id_list.len = sizeof(list);
	r = handle(&q);
	REQUIRE(r && r->select_att_key_id_res);
	CHECK_EQ(r->select_att_key_id_res->errorcode, 0);
	CHECK_MEM(r->select_att_key_id_res->selected_att_key_id.data, list + 264, 256);
	aesm__message__response__free_unpacked(r, NULL);
	sel.att_key_id_list.len = 8 + 256;	/* n says 2 */
	r = handle(&q);
	CHECK(r && r->select_att_key_id_res &&
	      r->select_att_key_id_res->errorcode == AESM_PARAMETER_ERROR);
	aesm__message__response__free_unpacked(r, NULL);
	n = 1;
	memcpy(list + 4, &n, 4);
	r = handle(&q);
	CHECK(r && r->select_att_key_id_res &&
	      r->select_att_key_id_res->errorcode == AESM_UNSUPPORTED_ATT_KEY_ID);
	aesm__message__response__free_unpacked(r, NULL);
}

TEST(epid_requests_get_the_dcap_only_answer)
{
	Aesm__Message__Request__InitQuoteRequest iq =
		AESM__MESSAGE__REQUEST__INIT_QUOTE_REQUEST__INIT;
	Aesm__Message__Request__GetLaunchTokenRequest lt =
		AESM__MESSAGE__REQUEST__GET_LAUNCH_TOKEN_REQUEST__INIT;
	Request q = AESM__MESSAGE__REQUEST__INIT;
	/* GetQuoteRequest with its EPID fields (report, quote type, spid,
	 * buf_size) as the SDK's uae service sends them. */
	static const uint8_t get_quote[] = { 0x12, 0x0a, 0x0a, 0x02, 0xaa, 0xbb,
					     0x10, 0x01, 0x1a, 0x00, 0x30, 0x10 };
	uint8_t *resp;
	size_t rlen;
	Response *r;

	q.init_quote_req = &iq;
	r = handle(&q);
	REQUIRE(r && r->init_quote_res);
	CHECK_EQ(r->init_quote_res->errorcode, AESM_SERVICE_UNAVAILABLE);
	aesm__message__response__free_unpacked(r, NULL);
	q.init_quote_req = NULL;
	q.get_launch_token_req = &lt;
	r = handle(&q);
	REQUIRE(r && r->get_launch_token_res);
	CHECK_EQ(r->get_launch_token_res->errorcode, AESM_SERVICE_UNAVAILABLE);
	aesm__message__response__free_unpacked(r, NULL);
	REQUIRE_EQ(sgx_aesm_handle(get_quote, sizeof(get_quote), &resp, &rlen), 0);
	r = aesm__message__response__unpack(NULL, rlen, resp);
	REQUIRE(r && r->get_quote_res);
	CHECK_EQ(r->get_quote_res->errorcode, AESM_SERVICE_UNAVAILABLE);
	aesm__message__response__free_unpacked(r, NULL);
	free(resp);
}

TEST(bad_messages_close_without_answer)
{
	static const uint8_t garbage[] = { 0xff, 0xff, 0xff, 0xff, 0x0f };
	/* InitQuoteEx without its required b_pub_key_id. */
	static const uint8_t no_required[] = { 0x7a, 0x02, 0x20, 0x20 };
	uint8_t *resp = NULL, big[AESM_MAX_FRAME + 1];
	size_t rlen;

	CHECK_EQ(sgx_aesm_handle(garbage, sizeof(garbage), &resp, &rlen), -1);
	CHECK_EQ(sgx_aesm_handle(no_required, sizeof(no_required), &resp, &rlen), -1);
	CHECK_EQ(sgx_aesm_handle((const uint8_t *)"", 0, &resp, &rlen), -1);
	memset(big, 0, sizeof(big));
	CHECK_EQ(sgx_aesm_handle(big, sizeof(big), &resp, &rlen), -1);
	CHECK(resp == NULL);
}

/* ---- the socket ---- */

static struct sockaddr_un srv;
static socklen_t srv_len;

static void *accept_thread(void *arg)
{
	sgx_aesm_accept_loop((int)(intptr_t)arg);
	return NULL;
}

static bool start_server(void)
{
	char name[80], why[256];
	pthread_t t;
	int fd;

	snprintf(name, sizeof(name), "@sgxemu-test-aesm-%d", (int)getpid());
	tc_aesm_addr(name, &srv, &srv_len);
	fd = sgx_aesm_listen(&srv, srv_len, why, sizeof(why));
	if (fd < 0) {
		test_fail(__FILE__, __LINE__, "listen: %s", why);
		return false;
	}
	return !pthread_create(&t, NULL, accept_thread, (void *)(intptr_t)fd);
}

static void *quote_client(void *arg)
{
	struct sgxemu_verify_result res;
	struct sgx_report rep;
	uint8_t id[256];
	Response *r;
	intptr_t ok = 0;

	(void)arg;
	app_report(&rep, NULL);
	intel_key_id(id);
	r = tc_aesm_get_quote(&srv, srv_len, &rep, id);
	if (r && r->get_quote_ex_res && !r->get_quote_ex_res->errorcode &&
	    r->get_quote_ex_res->quote.len == 8192)
		ok = sgxemu_quote_verify(r->get_quote_ex_res->quote.data,
					 sgx_attest_quote_size(tc_attest()), NULL, &res) == 0;
	if (r)
		aesm__message__response__free_unpacked(r, NULL);
	return (void *)ok;
}

TEST(socket_serves_concurrent_clients_and_survives_bad_ones)
{
	enum { N = 8 };
	pthread_t t[N];
	uint8_t *body;
	size_t blen;
	int fd;

	REQUIRE(tc_attest());
	REQUIRE(start_server());
	for (int i = 0; i < N; i++)
		REQUIRE_EQ(pthread_create(&t[i], NULL, quote_client, NULL), 0);
	/* Meanwhile: a client that leaves after half a frame, one that sends
	 * a length too large, one with garbage, one that connects and goes. */
	fd = socket(AF_UNIX, SOCK_STREAM, 0);
	REQUIRE_EQ(connect(fd, (struct sockaddr *)&srv, srv_len), 0);
	REQUIRE_EQ(write(fd, "\x10\x00\x00\x00\x7a\x87", 6), 6);
	close(fd);
	CHECK_EQ(tc_aesm_raw(&srv, srv_len, (const uint8_t *)"\xff\xff\xff\x7f", 4,
			     &body, &blen), -1);
	CHECK_EQ(tc_aesm_raw(&srv, srv_len, (const uint8_t *)"\x03\x00\x00\x00zzz", 7,
			     &body, &blen), -1);
	fd = socket(AF_UNIX, SOCK_STREAM, 0);
	REQUIRE_EQ(connect(fd, (struct sockaddr *)&srv, srv_len), 0);
	close(fd);
	for (int i = 0; i < N; i++) {
		void *ok = NULL;

		pthread_join(t[i], &ok);
		CHECK(ok == (void *)1);
	}
	/* And the service still answers. */
	CHECK(quote_client(NULL) == (void *)1);
}
