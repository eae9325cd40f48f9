// SPDX-License-Identifier: MIT
/*
 * The PCCS REST API's answers (see pccs.h). Paths under
 * /sgx/certification/v3/ and /v4/: pckcert, pckcrl, tcb, qe/identity,
 * rootcacrl. Issuer chains go in headers, percent-encoded, ending with an
 * escape (Intel's QCNL decoder loses the last two characters otherwise:
 * facts §4.4). Hex arguments are accepted in either case.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <openssl/pem.h>

#include "attest/attest.h"
#include "attest/pccs.h"
#include "base/hex.h"

static int text(struct sgx_pccs_reply *r, unsigned status, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* A one-line text answer (errors). */
static int text(struct sgx_pccs_reply *r, unsigned status, const char *fmt, ...)
{
	va_list ap;
	char line[256];
	int n;

	va_start(ap, fmt);
	n = vsnprintf(line, sizeof(line) - 1, fmt, ap);
	va_end(ap);
	if (n < 0)
		n = 0;
	if ((size_t)n > sizeof(line) - 2)
		n = sizeof(line) - 2;
	line[n++] = '\n';
	r->status = status;
	r->content_type = "text/plain";
	r->body = malloc((size_t)n);
	if (!r->body)
		return -1;
	memcpy(r->body, line, (size_t)n);
	r->len = (size_t)n;
	return 0;
}

static int body(struct sgx_pccs_reply *r, const char *type, const void *p, size_t n)
{
	r->status = 200;
	r->content_type = type;
	r->body = malloc(n ? n : 1);
	if (!r->body)
		return -1;
	memcpy(r->body, p, n);
	r->len = n;
	return 0;
}

static int header(struct sgx_pccs_reply *r, const char *name, char *value)
{
	if (!value || r->nr_headers == PCCS_MAX_HEADERS) {
		free(value);
		return -1;
	}
	r->headers[r->nr_headers].name = name;
	r->headers[r->nr_headers++].value = value;
	return 0;
}

/* Percent-encoding of everything but RFC 3986's unreserved characters. */
static char *url_encode(const char *s)
{
	size_t n = strlen(s);
	char *out = malloc(3 * n + 1), *o = out;

	if (!out)
		return NULL;
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;

		if ((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') ||
		    (c >= '0' && c <= '9') || strchr("-_.~", c))
			*o++ = (char)c;
		else
			o += sprintf(o, "%%%02X", c);
	}
	*o = '\0';
	return out;
}

static char *hex_of(const uint8_t *p, size_t n, bool upper)
{
	char *s = malloc(2 * n + 1);

	for (size_t i = 0; s && i < n; i++)
		sprintf(s + 2 * i, upper ? "%02X" : "%02x", p[i]);
	return s;
}

static char *pem_chain(X509 *a, X509 *b)
{
	char *s = NULL, *enc;
	size_t len = 0;

	if (sgx_pem_append(&s, &len, a) || sgx_pem_append(&s, &len, b)) {
		free(s);
		return NULL;
	}
	enc = url_encode(s);
	free(s);
	return enc;
}

/* 2*@n hex digits, either case. */
static bool arg_hex(const char *v, uint8_t *out, size_t n)
{
	return v && !sgx_unhex(v, out, n);
}

/* What a pckcert request asks for, and the best registered answer. */
struct pick {
	uint8_t qe_id[16], pceid[2], cpusvn[16];
	uint16_t pcesvn;
	bool known;			/* some certificate of this platform */
	X509 *best;
	struct sgx_pck_ext ext;
};

/*
 * PCK certificate selection as the PCCS makes it among a platform's
 * certificates: the highest certified TCB that the raw TCB asked about
 * is not below.
 */
static int pick_pck(const struct sgx_pck_entry *e, void *ctx)
{
	struct pick *k = ctx;

	if (memcmp(e->qe_id, k->qe_id, 16) || memcmp(e->ext.pceid, k->pceid, 2))
		return 0;
	k->known = true;
	if (!sgx_cpusvn_supported(k->cpusvn, e->ext.cpusvn) || k->pcesvn < e->ext.pcesvn)
		return 0;
	if (k->best && !(sgx_cpusvn_supported(e->ext.cpusvn, k->ext.cpusvn) &&
			 e->ext.pcesvn >= k->ext.pcesvn))
		return 0;
	if (!X509_up_ref(e->cert))
		return -ENOMEM;
	X509_free(k->best);
	k->best = e->cert;
	k->ext = e->ext;
	return 0;
}

/*
 * Every platform whose PCK certificate is in the hierarchy's registry is
 * served, this one and the others of a fleet sharing the hierarchy. The
 * encrypted PPID is taken and not used, as by the real PCCS once it has
 * the platform: only Intel could decrypt it.
 */
static int pckcert(struct sgx_attest *a, sgx_pccs_arg_fn arg, void *cls,
		   struct sgx_pccs_reply *r)
{
	const char *qeid = arg(cls, "qeid"), *eppid = arg(cls, "encrypted_ppid");
	uint8_t pcesvn[2], tcbm[18], ppid[384];
	struct pick k = { .known = false };
	char *pem = NULL;
	size_t len = 0;
	int ret;

	if (!qeid || !arg_hex(arg(cls, "cpusvn"), k.cpusvn, 16) ||
	    !arg_hex(arg(cls, "pcesvn"), pcesvn, 2) ||
	    !arg_hex(arg(cls, "pceid"), k.pceid, 2) ||
	    (eppid && !arg_hex(eppid, ppid, sizeof(ppid))))
		return text(r, 400, "pckcert needs qeid, cpusvn (32 hex), pcesvn "
			    "and pceid (4 hex); encrypted_ppid is 768 hex");
	if (!arg_hex(qeid, k.qe_id, 16))
		return text(r, 404, "No cache data for this platform");
	memcpy(&k.pcesvn, pcesvn, 2);
	ret = sgx_pki_each_pck(&a->pki, pick_pck, &k);
	if (ret < 0) {
		X509_free(k.best);
		return text(r, 500, "cannot read the PCK certificates in %.100s/pck: %s",
			    a->pki.dir, strerror(-ret));
	}
	if (!k.known)
		return text(r, 404, "No cache data for this platform");
	/* The certified TCB must not be above the raw one asked about. */
	if (!k.best)
		return text(r, 404, "no PCK certificate at or below this TCB");
	ret = sgx_pem_append(&pem, &len, k.best) ? -1 :
	      body(r, "application/x-pem-file", pem, len);
	free(pem);
	X509_free(k.best);
	memcpy(tcbm, k.ext.cpusvn, 16);
	memcpy(tcbm + 16, &k.ext.pcesvn, 2);
	if (ret ||
	    header(r, "SGX-PCK-Certificate-Issuer-Chain", pem_chain(a->pki.ca, a->pki.root)) ||
	    header(r, "SGX-TCBm", hex_of(tcbm, 18, true)) ||
	    header(r, "SGX-FMSPC", hex_of(k.ext.fmspc, 6, true)) ||
	    header(r, "SGX-PCK-Certificate-CA-Type", strdup("processor")))
		return -1;
	return 0;
}

/* PCCS answers CRLs as DER with encoding=der, else as hex text of DER. */
static int crl(struct sgx_pccs_reply *r, const uint8_t *der, size_t len, bool raw)
{
	char *hex;
	int ret;

	if (raw)
		return body(r, "application/pkix-crl", der, len);
	hex = hex_of(der, len, false);
	if (!hex)
		return -1;
	ret = body(r, "text/plain", hex, 2 * len);
	free(hex);
	return ret;
}

int sgx_pccs_answer(const struct sgxemu_collateral_opts *opts, const char *path,
		    sgx_pccs_arg_fn arg, void *cls, struct sgx_pccs_reply *r)
{
	static const char *const prefixes[] = { "/sgx/certification/v4/",
						"/sgx/certification/v3/" };
	struct sgxemu_collateral c;
	struct sgx_attest *a;
	const char *what = NULL, *v;
	char why[256];
	bool v3 = false;
	int ret;

	memset(r, 0, sizeof(*r));
	for (int i = 0; i < 2 && !what; i++)
		if (!strncmp(path, prefixes[i], strlen(prefixes[i]))) {
			what = path + strlen(prefixes[i]);
			v3 = i == 1;
		}
	if (!what)
		return text(r, 404, "not a PCCS path (/sgx/certification/v4/...)");
	if (sgx_attest_get(&a, why, sizeof(why)) ||
	    sgxemu_collateral_make(opts, &c, why, sizeof(why)))
		return text(r, 500, "%s", why);
	if (!strcmp(what, "pckcert")) {
		ret = pckcert(a, arg, cls, r);
	} else if (!strcmp(what, "pckcrl")) {
		v = arg(cls, "ca");
		if (!v || (strcasecmp(v, "processor") && strcasecmp(v, "platform")))
			ret = text(r, 400, "pckcrl needs ca=processor or ca=platform");
		else if (strcasecmp(v, "processor"))
			ret = text(r, 404, "this platform's PCK certificates come "
				   "from the processor CA");
		else
			ret = crl(r, c.pck_crl, c.pck_crl_len,
				  (v = arg(cls, "encoding")) && !strcasecmp(v, "der")) ||
			      header(r, "SGX-PCK-CRL-Issuer-Chain",
				     pem_chain(a->pki.ca, a->pki.root));
	} else if (!strcmp(what, "tcb")) {
		uint8_t fmspc[6];

		if (!arg_hex(arg(cls, "fmspc"), fmspc, 6))
			ret = text(r, 400, "tcb needs fmspc (12 hex)");
		else if (memcmp(fmspc, a->pck_ext.fmspc, 6))
			ret = text(r, 404, "no TCB info for this FMSPC");
		else
			ret = body(r, "application/json", c.tcb_info, strlen(c.tcb_info)) ||
			      header(r, v3 ? "SGX-TCB-Info-Issuer-Chain" :
					     "TCB-Info-Issuer-Chain",
				     pem_chain(a->pki.tcb, a->pki.root));
	} else if (!strcmp(what, "qe/identity")) {
		ret = body(r, "application/json", c.qe_identity, strlen(c.qe_identity)) ||
		      header(r, "SGX-Enclave-Identity-Issuer-Chain",
			     pem_chain(a->pki.tcb, a->pki.root));
	} else if (!strcmp(what, "rootcacrl")) {
		ret = crl(r, c.root_crl, c.root_crl_len, false);
	} else {
		ret = text(r, 404, "unknown PCCS path '%.80s'", what);
	}
	sgxemu_collateral_free(&c);
	return ret;
}

void sgx_pccs_reply_free(struct sgx_pccs_reply *r)
{
	free(r->body);
	for (int i = 0; i < r->nr_headers; i++)
		free(r->headers[i].value);
	memset(r, 0, sizeof(*r));
}
