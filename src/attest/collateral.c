// SPDX-License-Identifier: MIT
/*
 * Collateral (attestation-facts.md §4): TCB info v3 and QE identity v2 as
 * compact JSON signed by the TCB signing key over the exact bytes of the
 * "tcbInfo" / "enclaveIdentity" value, the root CA CRL and the PCK CRL.
 * Written as files with the names Intel's QVL sample application reads.
 */
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <openssl/pem.h>

#include "base/why.h"
#include "attest/attest.h"
#include "attest/ecdsa.h"
#include "sgxemu/attest.h"

#define COLLATERAL_DAYS	30
/*
 * Collateral is dated an hour before it is asked for, as a real PCS's
 * always predates the request: a verifier takes its check date before it
 * fetches (Intel's sample calls time() first), and a TCB info or CRL
 * issued in the next second would be "not yet valid" at that date, so the
 * verdict would depend on where a second boundary fell.
 */
#define COLLATERAL_BACKDATE	3600
#define TCB_EVAL_NUMBER	1

static void iso_date(time_t t, char out[32])
{
	struct tm tm;

	gmtime_r(&t, &tm);
	strftime(out, 32, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

static void put_hex(FILE *f, const uint8_t *p, size_t n, bool upper)
{
	for (size_t i = 0; i < n; i++)
		fprintf(f, upper ? "%02X" : "%02x", p[i]);
}

static void tcb_level(FILE *f, const uint8_t comp[16], unsigned pcesvn,
		      const char *date, const char *status)
{
	fputs("{\"tcb\":{\"sgxtcbcomponents\":[", f);
	for (int i = 0; i < 16; i++)
		fprintf(f, "%s{\"svn\":%u}", i ? "," : "", comp[i]);
	fprintf(f, "],\"pcesvn\":%u},\"tcbDate\":\"%s\",\"tcbStatus\":\"%s\"}",
		pcesvn, date, status);
}

/*
 * The tcbInfo body: the platform's level, a newer one when asked, and the
 * level before its last microcode update when it took one (TCB type 0:
 * the components are the CPUSVN's bytes), out of date when a TCB recovery
 * is required. QVL matches a PCK certificate with the first level, highest
 * first, that its components and PCESVN are not below.
 */
static void tcb_info_body(FILE *f, const struct sgx_attest *a,
			  const struct sgxemu_collateral_opts *o,
			  const char *issue, const char *next)
{
	bool prev = memcmp(a->prev_cpusvn, a->pck_ext.comp, 16) != 0;

	fprintf(f, "{\"id\":\"SGX\",\"version\":3,\"issueDate\":\"%s\","
		"\"nextUpdate\":\"%s\",\"fmspc\":\"", issue, next);
	put_hex(f, a->pck_ext.fmspc, 6, false);
	fprintf(f, "\",\"pceId\":\"%02x%02x\",\"tcbType\":0,"
		"\"tcbEvaluationDataNumber\":%d,\"tcbLevels\":[",
		a->pck_ext.pceid[0], a->pck_ext.pceid[1], TCB_EVAL_NUMBER);
	if (o->tcb_out_of_date) {
		tcb_level(f, a->pck_ext.comp, a->pck_ext.pcesvn + 1u, issue, "UpToDate");
		fputc(',', f);
	}
	tcb_level(f, a->pck_ext.comp, a->pck_ext.pcesvn, issue,
		  o->tcb_out_of_date ? "OutOfDate" : "UpToDate");
	if (prev) {
		fputc(',', f);
		tcb_level(f, a->prev_cpusvn, a->pck_ext.pcesvn, issue,
			  o->tcb_out_of_date || o->tcb_recovery ?
			  "OutOfDate" : "UpToDate");
	}
	fputs("]}", f);
}

static void qe_identity_body(FILE *f, const struct sgx_attest *a,
			     const struct sgxemu_collateral_opts *o,
			     const char *issue, const char *next)
{
	static const uint8_t attr_mask[16] = { 0xfb, 0xff, 0xff, 0xff, 0xff,
					       0xff, 0xff, 0xff };
	uint8_t attrs[16];

	memcpy(attrs, &a->qe.attributes, 16);
	for (int i = 0; i < 16; i++)
		attrs[i] &= attr_mask[i];
	fprintf(f, "{\"id\":\"QE\",\"version\":2,\"issueDate\":\"%s\","
		"\"nextUpdate\":\"%s\",\"tcbEvaluationDataNumber\":%d,"
		"\"miscselect\":\"00000000\",\"miscselectMask\":\"FFFFFFFF\","
		"\"attributes\":\"", issue, next, TCB_EVAL_NUMBER);
	put_hex(f, attrs, 16, true);
	fputs("\",\"attributesMask\":\"", f);
	put_hex(f, attr_mask, 16, true);
	fputs("\",\"mrsigner\":\"", f);
	put_hex(f, a->qe.mrsigner, 32, true);
	fprintf(f, "\",\"isvprodid\":%u,\"tcbLevels\":[", a->qe.isvprodid);
	if (o->qe_out_of_date)
		fprintf(f, "{\"tcb\":{\"isvsvn\":%u},\"tcbDate\":\"%s\","
			"\"tcbStatus\":\"UpToDate\"},", a->qe.isvsvn + 1u, issue);
	fprintf(f, "{\"tcb\":{\"isvsvn\":%u},\"tcbDate\":\"%s\",\"tcbStatus\":"
		"\"%s\"}]}", a->qe.isvsvn, issue,
		o->qe_out_of_date ? "OutOfDate" : "UpToDate");
}

/* {"<name>":<body>,"signature":"<r||s hex>"}, signed over <body>. */
static char *signed_doc(const struct sgx_attest *a, const char *name,
			const char *body, size_t blen)
{
	uint8_t sig[64];
	char *doc = NULL;
	size_t len;
	FILE *f;

	if (sgx_ecdsa_sign(a->pki.tcb_key, body, blen, sig))
		return NULL;
	f = open_memstream(&doc, &len);
	if (!f)
		return NULL;
	fprintf(f, "{\"%s\":", name);
	fwrite(body, 1, blen, f);
	fputs(",\"signature\":\"", f);
	put_hex(f, sig, 64, false);
	fputs("\"}", f);
	if (fclose(f)) {
		free(doc);
		return NULL;
	}
	return doc;
}

static uint8_t *crl_der(const struct sgx_attest *a, bool by_root,
			X509 *const *revoked, int n, time_t now, size_t *len)
{
	X509_CRL *crl = sgx_pki_crl(&a->pki, by_root, revoked, n, now,
				    COLLATERAL_DAYS);
	unsigned char *der = NULL;
	int dl = crl ? i2d_X509_CRL(crl, &der) : -1;

	X509_CRL_free(crl);
	if (dl <= 0)
		return NULL;
	*len = (size_t)dl;
	return der;
}

static char *pem_of(X509 *a, X509 *b)
{
	char *s = NULL;
	size_t len = 0;

	if (sgx_pem_append(&s, &len, a) || (b && sgx_pem_append(&s, &len, b))) {
		free(s);
		return NULL;
	}
	return s;
}

int sgxemu_collateral_make(const struct sgxemu_collateral_opts *opts,
			   struct sgxemu_collateral *c, char *why, size_t whylen)
{
	static const struct sgxemu_collateral_opts dflt;
	const struct sgxemu_collateral_opts *o = opts ? opts : &dflt;
	struct sgx_attest *a;
	char issue[32], next[32], *body = NULL;
	time_t issued = (o->now ? o->now : time(NULL)) - COLLATERAL_BACKDATE;
	size_t blen;
	FILE *f;
	int ret;

	memset(c, 0, sizeof(*c));
	ret = sgx_attest_get(&a, why, whylen);
	if (ret)
		return ret;
	iso_date(issued, issue);
	iso_date(issued + COLLATERAL_DAYS * 86400L, next);

	f = open_memstream(&body, &blen);
	if (!f)
		return sgx_fail(why, whylen, -ENOMEM, "out of memory");
	tcb_info_body(f, a, o, issue, next);
	if (fclose(f))
		return sgx_fail(why, whylen, -ENOMEM, "out of memory");
	c->tcb_info = signed_doc(a, "tcbInfo", body, blen);
	free(body);
	body = NULL;
	f = open_memstream(&body, &blen);
	if (!f)
		goto nomem;
	qe_identity_body(f, a, o, issue, next);
	if (fclose(f))
		goto nomem;
	c->qe_identity = signed_doc(a, "enclaveIdentity", body, blen);
	free(body);

	c->tcb_chain = pem_of(a->pki.tcb, a->pki.root);
	c->pck_chain = pem_of(a->pki.ca, a->pki.root);
	c->root = pem_of(a->pki.root, NULL);
	c->root_crl = crl_der(a, true, NULL, 0, issued, &c->root_crl_len);
	c->pck_crl = crl_der(a, false, &a->pck, o->pck_revoked ? 1 : 0, issued,
			     &c->pck_crl_len);
	if (c->tcb_info && c->qe_identity && c->tcb_chain && c->pck_chain &&
	    c->root && c->root_crl && c->pck_crl)
		return 0;
nomem:
	sgxemu_collateral_free(c);
	return sgx_fail(why, whylen, -EIO, "cannot make the collateral");
}

void sgxemu_collateral_free(struct sgxemu_collateral *c)
{
	free(c->tcb_info);
	free(c->qe_identity);
	free(c->tcb_chain);
	free(c->pck_chain);
	free(c->root);
	OPENSSL_free(c->root_crl);
	OPENSSL_free(c->pck_crl);
	memset(c, 0, sizeof(*c));
}

/* The files of a collateral directory, with where each one lives. */
struct cfile {
	const char *name;
	size_t text_off;	/* char * member, or SIZE_MAX */
	size_t der_off, len_off;
};

#define TEXT(n, m)	{ n, offsetof(struct sgxemu_collateral, m), 0, 0 }
#define DER(n, m, l)	{ n, SIZE_MAX, offsetof(struct sgxemu_collateral, m), \
			  offsetof(struct sgxemu_collateral, l) }

static const struct cfile cfiles[] = {
	TEXT("tcbInfo.json", tcb_info),
	TEXT("qeIdentity.json", qe_identity),
	TEXT("tcbSignChain.pem", tcb_chain),
	TEXT("pckSignChain.pem", pck_chain),
	TEXT("trustedRootCaCert.pem", root),
	DER("rootCaCrl.der", root_crl, root_crl_len),
	DER("intermediateCaCrl.der", pck_crl, pck_crl_len),
};

int sgxemu_collateral_write(const struct sgxemu_collateral *c, const char *dir,
			    char *why, size_t whylen)
{
	char path[4200];

	if (mkdir(dir, 0755) && errno != EEXIST)
		return sgx_fail(why, whylen, -errno, "cannot create %s: %s", dir,
			    strerror(errno));
	for (size_t i = 0; i < sizeof(cfiles) / sizeof(cfiles[0]); i++) {
		const struct cfile *cf = &cfiles[i];
		const void *data;
		size_t len;
		FILE *f;
		bool ok;

		if (cf->text_off != SIZE_MAX) {
			data = *(char *const *)((const char *)c + cf->text_off);
			len = data ? strlen(data) : 0;
		} else {
			data = *(uint8_t *const *)((const char *)c + cf->der_off);
			len = *(const size_t *)((const char *)c + cf->len_off);
		}
		snprintf(path, sizeof(path), "%s/%s", dir, cf->name);
		f = fopen(path, "we");
		if (!f)
			return sgx_fail(why, whylen, -errno, "cannot create %s: %s", path,
				    strerror(errno));
		ok = fwrite(data, 1, len, f) == len;
		if (fclose(f) || !ok)
			return sgx_fail(why, whylen, -EIO, "cannot write %s", path);
	}
	return 0;
}

/* A whole file, NUL-terminated; NULL with errno set on failure. */
static void *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "re");
	char *buf = NULL;
	size_t cap = 0, n = 0;

	if (!f)
		return NULL;
	for (;;) {
		if (n + 4097 > cap) {
			char *g = realloc(buf, cap = cap * 2 + 8192);

			if (!g || cap > (64u << 20)) {
				free(g ? g : buf);
				fclose(f);
				errno = EFBIG;
				return NULL;
			}
			buf = g;
		}
		size_t r = fread(buf + n, 1, 4096, f);

		n += r;
		if (r < 4096)
			break;
	}
	fclose(f);
	buf[n] = '\0';
	*len = n;
	return buf;
}

int sgxemu_collateral_read(const char *dir, struct sgxemu_collateral *c,
			   char *why, size_t whylen)
{
	char path[4200];

	memset(c, 0, sizeof(*c));
	for (size_t i = 0; i < sizeof(cfiles) / sizeof(cfiles[0]); i++) {
		const struct cfile *cf = &cfiles[i];
		size_t len;
		void *data;

		snprintf(path, sizeof(path), "%s/%s", dir, cf->name);
		data = slurp(path, &len);
		if (!data) {
			int err = errno;

			sgxemu_collateral_free(c);
			return sgx_fail(why, whylen, -err, "cannot read %s: %s", path,
				    strerror(err));
		}
		if (cf->text_off != SIZE_MAX) {
			*(char **)((char *)c + cf->text_off) = data;
		} else {
			/* OPENSSL_free releases it with the rest. */
			uint8_t *copy = OPENSSL_malloc(len ? len : 1);

			if (copy)
				memcpy(copy, data, len);
			free(data);
			if (!copy) {
				sgxemu_collateral_free(c);
				return sgx_fail(why, whylen, -ENOMEM, "out of memory");
			}
			*(uint8_t **)((char *)c + cf->der_off) = copy;
			*(size_t *)((char *)c + cf->len_off) = len;
		}
	}
	return 0;
}
