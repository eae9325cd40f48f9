/* SPDX-License-Identifier: MIT */
/*
 * libsgx_dcap_quoteverify.so.1's entry points (src/dcap/qv*.c) with a
 * quote and an sgx_ql_qve_collateral_t that start out valid: a quote of
 * the harness's own platform and that platform's collateral, made at
 * start-up, which the input then changes. The input:
 *
 *   byte 0   bits 0-1  the call: 0 sgx_qv_verify_quote, 1 tee_verify_quote,
 *                      2 tee_get_supplemental_data_version_and_size,
 *                      3 tee_get_fmspc_from_quote
 *            bits 2-3  the collateral: 0 current, 1 TCB out of date,
 *                      2 QE out of date, 3 the PCK revoked
 *            bits 4-5  its version: 0 3.0 (hex CRLs), 1 1.0 (PEM CRLs),
 *                      2 3.1 (DER CRLs), 3 4.0 (DER CRLs)
 *   byte 1   bits 0-2  the output buffer (see out_sel below): supplemental
 *                      data for calls 0-1, the FMSPC for 3, which of the
 *                      two outputs is NULL for 2
 *            bits 3-4  the descriptor's major_version: 0, 3, 2, 4
 *            bits 5-7  the check date: now, now + 1 s, now + 400 days,
 *                      now - 400 days, 86400, 0, -5, INT64_MAX
 *   then operations, to the end of the input (operands read as zeros past
 *   it; u16/u32/i64 little-endian; f is a field number mod 7, in the
 *   structure's order: PCK CRL chain, root CA CRL, PCK CRL, TCB info
 *   chain, TCB info, QE identity chain, QE identity):
 *     0  u16 off, u8 x        quote[off % len] ^= x
 *     1  u16 n                quote cut to n % (len + 1) bytes
 *     2  u8 n, u8 b           n bytes b appended to the quote
 *     3  u16 n, n bytes       the quote replaced by those bytes
 *     4  u8 f, u16 off, u8 x  field f's byte off % size ^= x
 *     5  u8 f, i8 d, u8 b     field f's size + d (new bytes are b)
 *     6  u8 f, u16 n          field f cut to n % (size + 1) bytes
 *     7  u8 f, u16 n, n bytes field f replaced by those bytes
 *     8  u8 f, u8 g           field f gets a copy of field g
 *     9  u8 f                 field f's pointer NULL, its size kept
 *    10  u8 s, u32 v          version 3.0, 1.0, 3.1, 4.0, 2.0, 0, 3.2, v
 *    11  u32 t                tee_type t
 *    12                       no collateral at all
 *    13  u16 off, u8 x        a p_qve_report_info (the nonce and TARGETINFO
 *                             of the harness's application enclave), its
 *                             byte off % 960 ^= x
 *    14                       the quote pointer NULL, its size kept
 *    15  i64 t                check date t
 * Every buffer is handed over in an allocation of exactly its declared
 * size, so reading or writing past a size the caller gave is ASan's.
 *
 * Beyond "no crash": a changed quote is never accepted (every byte of it
 * is under a signature or the canonical-PEM check, fuzz_quote.c); an
 * unchanged quote with unchanged collateral gets the verdict that
 * collateral implies; after an error the supplemental buffer is all
 * zeros, or untouched where the call refused its parameters before
 * looking at the buffer; codes and results are values of the header
 * (0 or 0xE0xx, 0 or 0xA001-0xA008), success comes only with a result
 * that verifies and supplemental data in its fields' ranges, and nothing
 * is written past 536 bytes of supplemental data or 6 of FMSPC. A
 * QvE-checked call (op 13) never changes the nonce or the TARGETINFO;
 * its success comes with the REPORT Intel's TVL accepts in the enclave
 * the TARGETINFO names (the MAC under that enclave's EGETKEY(REPORT)
 * key, REPORTDATA the SHA-256 of what the call returned, the QvE's
 * identity as Intel's TVL hard-codes it), and its error with the REPORT
 * as given or all zeros, nothing else.
 *
 * Without collateral the library would ask a quote provider; the harness
 * points sgx_qv_set_path at a file that is not a library, so it fails at
 * dlopen and never reaches a network.
 */
#include <stddef.h>
#include <string.h>
#include <time.h>

#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>

#include "fuzz.h"
#include "fuzz_attest.h"
#include "cpu/keys.h"
#include "dcap/dcap.h"

/* Exported by qv.c, declared only in Intel's sgx_dcap_quoteverify.h. */
quote3_error_t sgx_qv_verify_quote(const uint8_t *, uint32_t,
				   const sgx_ql_qve_collateral_t *, time_t,
				   uint32_t *, sgx_ql_qv_result_t *,
				   sgx_ql_qe_report_info_t *, uint32_t, uint8_t *);
quote3_error_t tee_verify_quote(const uint8_t *, uint32_t, const uint8_t *,
				time_t, uint32_t *, sgx_ql_qv_result_t *,
				sgx_ql_qe_report_info_t *,
				tee_supp_data_descriptor_t *);
quote3_error_t tee_get_supplemental_data_version_and_size(const uint8_t *,
	uint32_t, uint32_t *, uint32_t *);
quote3_error_t tee_get_fmspc_from_quote(const uint8_t *, uint32_t, uint8_t *,
					uint32_t);
quote3_error_t sgx_qv_set_path(uint32_t type, const char *path);

#define NFIELDS		7
#define SUPP_SIZE	sizeof(sgx_ql_qv_supplemental_t)
#define UNTOUCHED	0xee
#define SENTINEL	0x5a5a5a5au
#define QUOTE_MAX	(1u << 17)
#define DAY		86400

/* Where field f's pointer and size are in the ABI's structure. */
static const struct {
	size_t ptr, size;
} field_at[NFIELDS] = {
#define F(n) { offsetof(sgx_ql_qve_collateral_t, n), \
	       offsetof(sgx_ql_qve_collateral_t, n##_size) }
	F(pck_crl_issuer_chain), F(root_ca_crl), F(pck_crl),
	F(tcb_info_issuer_chain), F(tcb_info), F(qe_identity_issuer_chain),
	F(qe_identity),
#undef F
};

struct blob {
	uint8_t *p;
	size_t len;
};

/* The collateral of byte 0's bits 2-5, in the ABI's encoding. */
struct base {
	uint32_t version;
	struct blob f[NFIELDS];
};

static uint8_t *good;
static size_t good_len;
static struct sgx_attest *platform;
static sgx_ql_qe_report_info_t app_info;	/* what op 13 starts from */
static uint8_t good_fmspc[6];
static struct base bases[4][4];
static time_t now;

static const uint32_t versions[4] = { QVE_COLLATERAL_VERSION3,
	QVE_COLLATERAL_VERSION1, QVE_COLLATERAL_VERSION31,
	QVE_COLLATERAL_VERSION4 };

static void die(const char *what)
{
	fprintf(stderr, "fuzz_qv: %s\n", what);
	abort();
}

static struct blob text_blob(const char *s)
{
	size_t n = strlen(s) + 1;
	struct blob b = { malloc(n), n };

	if (!b.p)
		die("out of memory");
	memcpy(b.p, s, n);
	return b;
}

/* A DER CRL as the collateral's version carries it: PEM text for 1.0,
 * hex text for 3.0 (both with the NUL their size counts), else DER. */
static struct blob crl_blob(const uint8_t *der, size_t len, uint32_t version)
{
	struct blob b = { NULL, 0 };

	if (version == QVE_COLLATERAL_VERSION1) {
		const unsigned char *in = der;
		X509_CRL *crl = d2i_X509_CRL(NULL, &in, (long)len);
		BIO *mem = BIO_new(BIO_s_mem());
		char *pem;
		long n;

		if (!crl || !mem || !PEM_write_bio_X509_CRL(mem, crl))
			die("a CRL that does not convert to PEM");
		n = BIO_get_mem_data(mem, &pem);
		b.p = malloc((size_t)n + 1);
		if (!b.p)
			die("out of memory");
		memcpy(b.p, pem, (size_t)n);
		b.p[n] = '\0';
		b.len = (size_t)n + 1;
		BIO_free(mem);
		X509_CRL_free(crl);
	} else if (version == QVE_COLLATERAL_VERSION3) {
		b.len = 2 * len + 1;
		b.p = malloc(b.len);
		if (!b.p)
			die("out of memory");
		for (size_t i = 0; i < len; i++)
			snprintf((char *)b.p + 2 * i, 3, "%02x", der[i]);
	} else {
		b.len = len;
		b.p = malloc(len);
		if (!b.p)
			die("out of memory");
		memcpy(b.p, der, len);
	}
	return b;
}

static void make_bases(void)
{
	for (int o = 0; o < 4; o++) {
		struct sgxemu_collateral_opts opts = {
			.tcb_out_of_date = o == 1,
			.qe_out_of_date = o == 2,
			.pck_revoked = o == 3,
		};
		struct sgxemu_collateral s;
		char why[256];

		if (sgxemu_collateral_make(&opts, &s, why, sizeof(why)))
			die(why);
		for (int v = 0; v < 4; v++) {
			struct base *b = &bases[o][v];

			b->version = versions[v];
			b->f[0] = text_blob(s.pck_chain);
			b->f[1] = crl_blob(s.root_crl, s.root_crl_len, versions[v]);
			b->f[2] = crl_blob(s.pck_crl, s.pck_crl_len, versions[v]);
			b->f[3] = text_blob(s.tcb_chain);
			b->f[4] = text_blob(s.tcb_info);
			b->f[5] = text_blob(s.tcb_chain);
			b->f[6] = text_blob(s.qe_identity);
		}
		sgxemu_collateral_free(&s);
	}
}

/* A quote provider "library" that dlopen refuses at once. */
static void no_provider(void)
{
	const char *secrets = getenv("SGXEMU_SECRETS_FILE");
	char path[300];
	const char *slash = secrets ? strrchr(secrets, '/') : NULL;
	FILE *f;

	if (!slash)
		die("no secrets file");
	snprintf(path, sizeof(path), "%.*s/not-a-quote-provider",
		 (int)(slash - secrets), secrets);
	f = fopen(path, "w");
	if (!f || fputs("not an ELF file\n", f) < 0 || fclose(f))
		die("cannot write the decoy provider");
	if (sgx_qv_set_path(SGX_QV_QPL_PATH, path))
		die("sgx_qv_set_path refused the decoy provider");
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	struct sgx_attest *a = fuzz_attest_platform();
	struct sgx_report r;
	char why[256];

	(void)argc;
	(void)argv;
	/* FUZZ_DEBUG: the library's own line for every refusal. */
	if (!getenv("FUZZ_DEBUG"))
		setenv("SGXEMU_QV_QUIET", "1", 1);
	unsetenv("SGXEMU_TRUSTED_ROOT");
	fuzz_app_report(a, &r);
	if (sgxemu_quote_generate(&r, &good, &good_len, why, sizeof(why)))
		die(why);
	platform = a;
	/* The application enclave of fuzz_app_report, a DEBUG one. */
	memset(&app_info, 0, sizeof(app_info));
	for (int i = 0; i < 16; i++)
		app_info.nonce.rand[i] = (uint8_t)(0x30 + i);
	app_info.app_enclave_target_info.measurement[0] = 0xee;
	app_info.app_enclave_target_info.attributes.flags =
		SGX_ATTR_INIT | SGX_ATTR_DEBUG | SGX_ATTR_MODE64BIT;
	app_info.app_enclave_target_info.attributes.xfrm = SGX_XFRM_LEGACY;
	memset(&app_info.qe_report, UNTOUCHED, sizeof(app_info.qe_report));
	memcpy(good_fmspc, a->pck_ext.fmspc, sizeof(good_fmspc));
	now = time(NULL);
	make_bases();
	no_provider();
	return 0;
}

/* ---- the input's changes ---------------------------------------- */

struct work {
	struct blob q, f[NFIELDS];
	bool q_null, f_null[NFIELDS], no_coll, qve;
	sgx_ql_qe_report_info_t qve_info;
	uint32_t version, tee_type;
	time_t date;
	bool changed;		/* an operation ran: no verdict is predicted */
};

static void blob_set(struct blob *b, const uint8_t *p, size_t n)
{
	uint8_t *np = malloc(n ? n : 1);

	if (!np)
		die("out of memory");
	if (n)
		memcpy(np, p, n);
	free(b->p);
	b->p = np;
	b->len = n;
}

/* @b's size made @n, new bytes @fill. */
static void blob_resize(struct blob *b, size_t n, uint8_t fill)
{
	uint8_t *np = realloc(b->p, n ? n : 1);

	if (!np)
		die("out of memory");
	if (n > b->len)
		memset(np + b->len, fill, n - b->len);
	b->p = np;
	b->len = n;
}

static void take(struct fuzz_in *in, struct blob *b)
{
	size_t n = fuzz_u16(in);

	if (n > in->left)
		n = in->left;
	blob_set(b, in->p, n);
	in->p += n;
	in->left -= n;
}

static void apply(struct fuzz_in *in, struct work *w)
{
	struct blob *f;
	uint16_t off;
	uint8_t x, s;
	int8_t d;
	int64_t t;
	size_t n;

	switch (fuzz_u8(in) % 16) {
	case 0:
		off = fuzz_u16(in);
		x = fuzz_u8(in);
		if (w->q.len)
			w->q.p[off % w->q.len] ^= x;
		break;
	case 1:
		w->q.len = fuzz_u16(in) % (w->q.len + 1);
		break;
	case 2:
		n = fuzz_u8(in);
		x = fuzz_u8(in);
		if (w->q.len + n <= QUOTE_MAX)
			blob_resize(&w->q, w->q.len + n, x);
		break;
	case 3:
		take(in, &w->q);
		break;
	case 4:
		f = &w->f[fuzz_u8(in) % NFIELDS];
		off = fuzz_u16(in);
		x = fuzz_u8(in);
		if (f->len)
			f->p[off % f->len] ^= x;
		break;
	case 5:
		f = &w->f[fuzz_u8(in) % NFIELDS];
		fuzz_bytes(in, &d, 1);
		x = fuzz_u8(in);
		n = (size_t)((ptrdiff_t)f->len + d);
		if (d < 0 && (size_t)-d > f->len)
			n = 0;
		if (n <= UINT16_MAX)
			blob_resize(f, n, x);
		break;
	case 6:
		f = &w->f[fuzz_u8(in) % NFIELDS];
		f->len = fuzz_u16(in) % (f->len + 1);
		break;
	case 7:
		take(in, &w->f[fuzz_u8(in) % NFIELDS]);
		break;
	case 8:
		f = &w->f[fuzz_u8(in) % NFIELDS];
		s = fuzz_u8(in) % NFIELDS;
		if (f != &w->f[s])
			blob_set(f, w->f[s].p, w->f[s].len);
		break;
	case 9:
		w->f_null[fuzz_u8(in) % NFIELDS] = true;
		break;
	case 10: {
		static const uint32_t v[] = { QVE_COLLATERAL_VERSION3,
			QVE_COLLATERAL_VERSION1, QVE_COLLATERAL_VERSION31,
			QVE_COLLATERAL_VERSION4, 2, 0, 0x00020003 };
		uint32_t raw;

		s = fuzz_u8(in) % 8;
		fuzz_bytes(in, &raw, 4);
		w->version = s < 7 ? v[s] : raw;
		break;
	}
	case 11:
		fuzz_bytes(in, &w->tee_type, 4);
		break;
	case 12:
		w->no_coll = true;
		break;
	case 13:
		off = fuzz_u16(in);
		x = fuzz_u8(in);
		w->qve = true;
		((uint8_t *)&w->qve_info)[off % sizeof(w->qve_info)] ^= x;
		break;
	case 14:
		w->q_null = true;
		break;
	case 15:
		fuzz_bytes(in, &t, 8);
		w->date = (time_t)t;
		break;
	}
	w->changed = true;
}

/* ---- the checks ------------------------------------------------- */

static bool valid_code(quote3_error_t r)
{
	return r == SGX_QL_SUCCESS || (r > 0xE000 && r <= 0xE0FF);
}

/* The results a verification that succeeded may carry. */
static bool verified_result(sgx_ql_qv_result_t r)
{
	switch (r) {
	case SGX_QL_QV_RESULT_OK:
	case SGX_QL_QV_RESULT_CONFIG_NEEDED:
	case SGX_QL_QV_RESULT_OUT_OF_DATE:
	case SGX_QL_QV_RESULT_OUT_OF_DATE_CONFIG_NEEDED:
	case SGX_QL_QV_RESULT_SW_HARDENING_NEEDED:
	case SGX_QL_QV_RESULT_CONFIG_AND_SW_HARDENING_NEEDED:
		return true;
	default:
		return false;
	}
}

static bool all_bytes(const uint8_t *p, size_t n, uint8_t v)
{
	for (size_t i = 0; i < n; i++)
		if (p[i] != v)
			return false;
	return true;
}

static void check_supplemental(const uint8_t *buf, uint16_t major, uint16_t minor)
{
	sgx_ql_qv_supplemental_t s;

	memcpy(&s, buf, sizeof(s));
	if (s.major_version != major || s.minor_version != minor)
		die("supplemental data of another version than asked for");
	if (s.tee_type != SGX_QUOTE_TYPE || s.sgx_type > 2)
		die("supplemental tee_type or sgx_type out of range");
	if (s.dynamic_platform > PCK_FLAG_UNDEFINED ||
	    s.cached_keys > PCK_FLAG_UNDEFINED || s.smt_enabled > PCK_FLAG_UNDEFINED)
		die("a supplemental PCK flag out of range");
	if (!memchr(s.sa_list, '\0', sizeof(s.sa_list)))
		die("supplemental sa_list not NUL-terminated");
	if (s.qe_iden_status != SGX_QL_QV_RESULT_OK &&
	    (s.qe_iden_status < SGX_QL_QV_RESULT_CONFIG_NEEDED ||
	     s.qe_iden_status > SGX_QL_QV_RESULT_CONFIG_AND_SW_HARDENING_NEEDED))
		die("supplemental qe_iden_status out of range");
	if (s.earliest_issue_date > s.latest_issue_date ||
	    s.qe_iden_earliest_issue_date > s.qe_iden_latest_issue_date)
		die("supplemental issue dates out of order");
}

/*
 * The QvE's REPORT as Intel's TVL checks it in the enclave @given's
 * TARGETINFO names: its MAC under that enclave's REPORT key
 * (EGETKEY(REPORT) with the REPORT's KEYID on this platform), REPORTDATA
 * = SHA-256(nonce || quote || date (8) || expiration status || result ||
 * supplemental data) || 32 zeros, and the QvE identity Intel hard-codes.
 */
static void check_qve_report(const sgx_ql_qe_report_info_t *got,
			     const sgx_ql_qe_report_info_t *given,
			     const uint8_t *q, uint32_t qlen, time_t date,
			     uint32_t expired, sgx_ql_qv_result_t res,
			     const uint8_t *supp, uint32_t supp_size)
{
	static const uint8_t signer[32] = {
		0x8c, 0x4f, 0x57, 0x75, 0xd7, 0x96, 0x50, 0x3e, 0x96, 0x13, 0x7f,
		0x77, 0xc6, 0x8a, 0x82, 0x9a, 0x00, 0x56, 0xac, 0x8d, 0xed, 0x70,
		0x14, 0x0b, 0x08, 0x1b, 0x09, 0x44, 0x90, 0xc5, 0x7b, 0xff,
	};
	const struct sgx_targetinfo *ti = &given->app_enclave_target_info;
	const struct sgx_report *r = &got->qe_report;
	struct sgx_key_identity target = { 0 };
	struct sgx_keyrequest req = { 0 };
	uint8_t key[16], mac[16], rd[64] = { 0 };
	int64_t d = date;
	EVP_MD_CTX *md = EVP_MD_CTX_new();

	memcpy(target.mrenclave, ti->measurement, 32);
	target.attributes = ti->attributes;
	target.miscselect = ti->miscselect;
	target.config_svn = ti->config_svn;
	memcpy(target.config_id, ti->config_id, sizeof(target.config_id));
	req.keyname = SGX_KEYNAME_REPORT;
	memcpy(req.keyid, r->keyid, sizeof(req.keyid));
	if (sgx_derive_key(&platform->keys, &target, &req, key) ||
	    sgx_cmac(key, &r->body, sizeof(r->body), mac) ||
	    memcmp(mac, r->mac, 16))
		die("the QvE's REPORT does not verify in the enclave it names");
	if (!md || !EVP_DigestInit_ex(md, EVP_sha256(), NULL) ||
	    !EVP_DigestUpdate(md, given->nonce.rand, 16) ||
	    !EVP_DigestUpdate(md, q, qlen) || !EVP_DigestUpdate(md, &d, 8) ||
	    !EVP_DigestUpdate(md, &expired, 4) || !EVP_DigestUpdate(md, &res, 4) ||
	    (supp && !EVP_DigestUpdate(md, supp, supp_size)) ||
	    !EVP_DigestFinal_ex(md, rd, NULL))
		die("SHA-256 failed");
	EVP_MD_CTX_free(md);
	if (memcmp(rd, r->body.report_data, 64))
		die("the QvE's REPORTDATA is not the hash of what the call returned");
	if (r->body.miscselect || (r->body.attributes.flags & ~SGX_ATTR_MODE64BIT) !=
	    SGX_ATTR_INIT || memcmp(r->body.mrsigner, signer, 32) ||
	    r->body.isvprodid != 2 || r->body.isvsvn < 7)
		die("the QvE's REPORT is not of the QvE's identity");
}

/* After a QvE-checked call: the nonce and TARGETINFO as given, and on
 * error the REPORT as given or all zeros. */
static void check_qve_info(const sgx_ql_qe_report_info_t *got,
			   const sgx_ql_qe_report_info_t *given, quote3_error_t ret)
{
	if (memcmp(got, given, offsetof(sgx_ql_qe_report_info_t, qe_report)))
		die("a QvE-checked call changed the nonce or the TARGETINFO");
	if (ret && memcmp(&got->qe_report, &given->qe_report, sizeof(got->qe_report)) &&
	    !all_bytes((const uint8_t *)&got->qe_report, sizeof(got->qe_report), 0))
		die("a REPORT left behind by a QvE-checked call that failed");
}

/* What a current call on an unchanged quote and collateral gives. */
static void check_verdict(int opts, int date_sel, quote3_error_t ret,
			  sgx_ql_qv_result_t res, uint32_t expired)
{
	static const sgx_ql_qv_result_t want[4] = { SGX_QL_QV_RESULT_OK,
		SGX_QL_QV_RESULT_OUT_OF_DATE, SGX_QL_QV_RESULT_OUT_OF_DATE, 0 };

	if (opts == 3) {
		if (ret != SGX_QL_PCK_REVOKED)
			die("a revoked PCK not refused as revoked");
		return;
	}
	if (ret != SGX_QL_SUCCESS)
		die("a good quote with good collateral refused");
	if (res != want[opts])
		die("a good quote's result is not its collateral's");
	if (expired != (date_sel >= 2))
		die("the expiration status is not the check date's");
}

/* Supplemental buffer sizes of byte 1's bits 0-2 (-1: NULL pointer). */
static const long supp_sizes[8] = { SUPP_SIZE, -1, -(long)SUPP_SIZE - 1, 0, 4,
				    SUPP_SIZE - 1, SUPP_SIZE + 1, 100 };
static const long fmspc_sizes[8] = { 6, 16, -7, 0, 5, 7, 1, 4096 };

/* Exactly @n bytes (none is still a pointer of its own), for ASan to
 * see any access past them. */
static void *exact(const void *p, size_t n)
{
	void *out = malloc(n);

	if (!out && n)
		die("out of memory");
	if (out && p && n)
		memcpy(out, p, n);
	return out;
}

/* A buffer of exactly @n bytes of UNTOUCHED (NULL where @n < 0). */
static uint8_t *out_buf(long n)
{
	uint8_t *p;

	if (n < 0)
		return NULL;
	p = exact(NULL, (size_t)n);
	if (p)
		memset(p, UNTOUCHED, (size_t)n);
	return p;
}

static uint32_t out_len(long n)
{
	return n == -1 ? 0 : n < 0 ? (uint32_t)(-n - 1) : (uint32_t)n;
}

static bool quote_type_ok(const uint8_t *q, size_t len)
{
	uint32_t t;

	if (!q || len < 8)
		return false;
	memcpy(&t, q + 4, 4);
	return t == SGX_QUOTE_TYPE || t == TDX_QUOTE_TYPE;
}

static void run(int call, int opts, int date_sel, int out_sel, int major_sel,
		struct work *w, const uint8_t *q, uint32_t qlen,
		const sgx_ql_qve_collateral_t *coll)
{
	static const uint16_t majors[4] = { 0, 3, 2, 4 };
	sgx_ql_qe_report_info_t *qi = w->qve ? exact(&w->qve_info, sizeof(*qi)) : NULL;
	bool same = !w->q_null && w->q.len == good_len && !memcmp(w->q.p, good, good_len);
	bool pristine = !w->changed && out_sel < 2 && major_sel < 2 && date_sel < 5;
	sgx_ql_qv_result_t res = SENTINEL;
	uint32_t expired = SENTINEL, sz = SENTINEL, ver = SENTINEL;
	long n = call == 3 ? fmspc_sizes[out_sel] : supp_sizes[out_sel];
	uint8_t *buf = call < 2 || call == 3 ? out_buf(n) : NULL;
	uint32_t blen = out_len(n);
	quote3_error_t ret = 0;

	switch (call) {
	case 0:
		ret = sgx_qv_verify_quote(q, qlen, coll, w->date, &expired, &res, qi,
					  blen, buf);
		if (ret == 0 && buf && blen != SUPP_SIZE)
			die("success with a supplemental buffer of the wrong size");
		if (ret == 0 && buf)
			check_supplemental(buf, SUPPLEMENTAL_DATA_VERSION, 0);
		else if (ret && buf && blen == SUPP_SIZE && !all_bytes(buf, blen, 0))
			die("supplemental data not zeroed after an error");
		else if (ret && buf && blen != SUPP_SIZE) {
			/* The legacy call stamps version 3.0 on any buffer
			 * that holds it, and writes nothing more. */
			size_t v = blen >= 4 ? 4 : 0;
			uint32_t stamp = SUPPLEMENTAL_DATA_VERSION;

			if ((v && memcmp(buf, &stamp, 4)) ||
			    !all_bytes(buf + v, blen - v, UNTOUCHED))
				die("a supplemental buffer of the wrong size was written");
		}
		break;
	case 1: {
		tee_supp_data_descriptor_t d = { majors[major_sel], blen, buf };
		bool desc = n != -1;
		bool refused_first = !q || !qlen || !quote_type_ok(q, qlen) ||
				     (desc && (!buf || d.major_version > 3 ||
					       (d.major_version &&
						d.major_version != 3) ||
					       blen != SUPP_SIZE));

		ret = tee_verify_quote(q, qlen, (const uint8_t *)coll, w->date,
				       &expired, &res, qi, desc ? &d : NULL);
		if (ret == 0 && refused_first)
			die("tee_verify_quote took arguments it must refuse");
		if (ret == 0 && buf)
			check_supplemental(buf, SUPPLEMENTAL_DATA_VERSION,
					   SUPPLEMENTAL_V3_LATEST_MINOR_VERSION);
		else if (ret && buf &&
			 !all_bytes(buf, blen, refused_first ? UNTOUCHED : 0))
			die(refused_first ? "a refused descriptor's buffer was written"
					  : "supplemental data not zeroed after an error");
		break;
	}
	case 2: {
		uint32_t *pv = out_sel & 1 ? NULL : &ver;
		uint32_t *ps = out_sel & 2 ? NULL : &sz;
		bool ok = q && qlen && (pv || ps) && quote_type_ok(q, qlen);

		ret = tee_get_supplemental_data_version_and_size(q, qlen, pv, ps);
		if ((ret == 0) != ok ||
		    (ret && ret != SGX_QL_ERROR_INVALID_PARAMETER))
			die("supplemental version and size: the wrong verdict");
		if (ret == 0 && ((pv && ver != 0x00030003u) || (ps && sz != SUPP_SIZE)))
			die("supplemental version and size: wrong values");
		if (ret && (ver != SENTINEL || sz != SENTINEL))
			die("supplemental version and size: an output set on error");
		free(buf);
		free(qi);
		return;
	}
	case 3:
		ret = tee_get_fmspc_from_quote(q, qlen, buf, blen);
		if (ret == 0 && (!buf || blen < 6 || qlen < QV_QUOTE_MIN_SIZE))
			die("an FMSPC given for arguments that must be refused");
		if (ret == 0 && same && memcmp(buf, good_fmspc, 6))
			die("the FMSPC is not the platform's");
		if (buf && blen > 6 && !all_bytes(buf + 6, blen - 6, UNTOUCHED))
			die("more than 6 bytes of FMSPC written");
		if (ret && same && buf && blen >= 6)
			die("a good quote's FMSPC refused");
		if (!valid_code(ret))
			die("a code that is not quote3_error_t's");
		free(buf);
		free(qi);
		return;
	}
	if (!valid_code(ret))
		die("a code that is not quote3_error_t's");
	if (ret == 0) {
		if (!same)
			die("a changed quote was accepted");
		if (!coll)
			die("accepted without collateral");
		if (!verified_result(res) || expired > 1)
			die("success with a result or expiry status out of range");
		if (qi)
			check_qve_report(qi, &w->qve_info, q, qlen, w->date, expired,
					 res, call == 1 && n == -1 ? NULL : buf,
					 blen);
	} else if ((res != SENTINEL && res != SGX_QL_QV_RESULT_UNSPECIFIED) ||
		   (expired != SENTINEL && expired > 1)) {
		die("an error with a result or expiry status out of range");
	}
	if (qi)
		check_qve_info(qi, &w->qve_info, ret);
	if (pristine)
		check_verdict(opts, date_sel, ret, res, expired);
	free(buf);
	free(qi);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const int64_t dates[4] = { 0, 1, 400 * DAY, -400 * DAY };
	struct fuzz_in in = { data, size };
	uint8_t b0 = fuzz_u8(&in), b1 = fuzz_u8(&in);
	int opts = b0 >> 2 & 3, date_sel = b1 >> 5;
	const struct base *base = &bases[opts][b0 >> 4 & 3];
	struct work w = { .version = base->version, .qve_info = app_info };
	sgx_ql_qve_collateral_t coll = { 0 };
	uint8_t *q = NULL;

	if (date_sel < 4)
		w.date = now + dates[date_sel];
	else
		w.date = date_sel == 4 ? DAY : date_sel == 5 ? 0 :
			 date_sel == 6 ? -5 : INT64_MAX;
	blob_set(&w.q, good, good_len);
	for (int i = 0; i < NFIELDS; i++)
		blob_set(&w.f[i], base->f[i].p, base->f[i].len);
	while (in.left)
		apply(&in, &w);

	/* Hand over exact-size copies. */
	if (!w.q_null)
		q = exact(w.q.p, w.q.len);
	coll.version = w.version;
	coll.tee_type = w.tee_type;
	for (int i = 0; i < NFIELDS; i++) {
		char **p = (char **)((uint8_t *)&coll + field_at[i].ptr);
		uint32_t *n = (uint32_t *)((uint8_t *)&coll + field_at[i].size);

		*n = (uint32_t)w.f[i].len;
		if (!w.f_null[i])
			*p = exact(w.f[i].p, w.f[i].len);
	}
	run(b0 & 3, opts, date_sel, b1 & 7, b1 >> 3 & 3, &w, q,
	    (uint32_t)w.q.len, w.no_coll ? NULL : &coll);

	for (int i = 0; i < NFIELDS; i++) {
		free(*(char **)((uint8_t *)&coll + field_at[i].ptr));
		free(w.f[i].p);
	}
	free(q);
	free(w.q.p);
	return 0;
}
