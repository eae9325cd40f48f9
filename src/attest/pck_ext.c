// SPDX-License-Identifier: MIT
/* The PCK certificate's SGX extension (see pck_ext.h). */
#include <stdlib.h>
#include <string.h>

#include <openssl/objects.h>
#include <openssl/x509v3.h>

#include "attest/der.h"
#include "attest/pck_ext.h"

/* DER of 1.2.840.113741.1.13.1; entries append one or two arcs (< 128). */
static const uint8_t sgx_oid[] = { 0x2a, 0x86, 0x48, 0x86, 0xf8, 0x4d,
				   0x01, 0x0d, 0x01 };

static void put_oid(struct dbuf *b, int arc1, int arc2)
{
	uint8_t oid[sizeof(sgx_oid) + 2];
	size_t n = sizeof(sgx_oid);

	memcpy(oid, sgx_oid, n);
	oid[n++] = (uint8_t)arc1;
	if (arc2)
		oid[n++] = (uint8_t)arc2;
	der_put(b, DER_OID, oid, n);
}

/* SEQUENCE { OID, value } where value is already DER in @val. */
static void put_tuple(struct dbuf *out, int arc1, int arc2, const struct dbuf *val)
{
	struct dbuf t = { 0 };

	put_oid(&t, arc1, arc2);
	dbuf_put(&t, val->p, val->len);
	if (t.err)
		out->err = true;
	der_put(out, DER_SEQUENCE, t.p, t.len);
	dbuf_free(&t);
}

static void put_octets_tuple(struct dbuf *out, int a1, int a2,
			     const void *p, size_t n)
{
	struct dbuf v = { 0 };

	der_put(&v, DER_OCTETS, p, n);
	put_tuple(out, a1, a2, &v);
	dbuf_free(&v);
}

static void put_uint_tuple(struct dbuf *out, int a1, int a2, uint32_t x)
{
	struct dbuf v = { 0 };

	der_put_uint(&v, x);
	put_tuple(out, a1, a2, &v);
	dbuf_free(&v);
}

uint8_t *sgx_pck_ext_encode(const struct sgx_pck_ext *e, size_t *len)
{
	struct dbuf tcb = { 0 }, tcbseq = { 0 }, body = { 0 }, all = { 0 };
	struct dbuf type = { 0 };

	for (int i = 0; i < 16; i++)
		put_uint_tuple(&tcb, 2, i + 1, e->comp[i]);
	put_uint_tuple(&tcb, 2, 17, e->pcesvn);
	put_octets_tuple(&tcb, 2, 18, e->cpusvn, 16);
	der_put(&tcbseq, DER_SEQUENCE, tcb.p, tcb.len);

	put_octets_tuple(&body, 1, 0, e->ppid, 16);
	put_tuple(&body, 2, 0, &tcbseq);
	put_octets_tuple(&body, 3, 0, e->pceid, 2);
	put_octets_tuple(&body, 4, 0, e->fmspc, 6);
	der_put(&type, DER_ENUM, &e->sgx_type, 1);
	put_tuple(&body, 5, 0, &type);
	der_put(&all, DER_SEQUENCE, body.p, body.len);

	if (tcb.err || tcbseq.err || body.err || type.err || all.err) {
		dbuf_free(&all);
		all.p = NULL;
	}
	dbuf_free(&tcb);
	dbuf_free(&tcbseq);
	dbuf_free(&body);
	dbuf_free(&type);
	*len = all.len;
	return all.p;
}

/*
 * One SEQUENCE { OID, value } tuple: exactly two elements, the OID under
 * the SGX arc. @arc1 and @arc2 get the arcs after it (arc2 0 when absent).
 */
static int take_tuple(struct der *cur, int *arc1, int *arc2, uint8_t *vtag,
		      struct der *val)
{
	struct der seq, oid;
	uint8_t tag;

	if (der_next(cur, &tag, &seq) || tag != DER_SEQUENCE ||
	    der_count(seq) != 2 ||
	    der_next(&seq, &tag, &oid) || tag != DER_OID ||
	    der_next(&seq, vtag, val))
		return -1;
	if (oid.len < sizeof(sgx_oid) + 1 || oid.len > sizeof(sgx_oid) + 2 ||
	    memcmp(oid.p, sgx_oid, sizeof(sgx_oid)))
		return -1;
	*arc1 = oid.p[sizeof(sgx_oid)];
	*arc2 = oid.len == sizeof(sgx_oid) + 2 ? oid.p[sizeof(sgx_oid) + 1] : 0;
	if (*arc1 & 0x80 || *arc2 & 0x80)
		return -1;
	return 0;
}

static int decode_tcb(struct der tcb, struct sgx_pck_ext *e)
{
	unsigned seen = 0;

	if (der_count(tcb) != 18)
		return -1;
	while (tcb.len) {
		struct der v;
		uint8_t tag;
		uint32_t x;
		int a1, a2;

		if (take_tuple(&tcb, &a1, &a2, &tag, &v) || a1 != 2 ||
		    a2 < 1 || a2 > 18 || (seen & (1u << a2)))
			return -1;
		seen |= 1u << a2;
		if (a2 == 18) {
			if (tag != DER_OCTETS || v.len != 16)
				return -1;
			memcpy(e->cpusvn, v.p, 16);
		} else if (tag != DER_INTEGER ||
			   der_uint(v, a2 == 17 ? 0xffff : 0xff, &x)) {
			return -1;
		} else if (a2 == 17) {
			e->pcesvn = (uint16_t)x;
		} else {
			e->comp[a2 - 1] = (uint8_t)x;
		}
	}
	return 0;
}

int sgx_pck_ext_decode(const uint8_t *p, size_t len, struct sgx_pck_ext *e)
{
	struct der all = { p, len }, body;
	unsigned seen = 0;
	uint8_t tag;
	int n;

	memset(e, 0, sizeof(*e));
	if (der_next(&all, &tag, &body) || tag != DER_SEQUENCE || all.len)
		return -1;
	n = der_count(body);
	if (n != 5 && n != 7)
		return -1;
	while (body.len) {
		struct der v;
		int a1, a2;

		if (take_tuple(&body, &a1, &a2, &tag, &v) || a2 || a1 < 1 ||
		    a1 > 7 || (seen & (1u << a1)))
			return -1;
		seen |= 1u << a1;
		switch (a1) {
		case 1:
			if (tag != DER_OCTETS || v.len != 16)
				return -1;
			memcpy(e->ppid, v.p, 16);
			break;
		case 2:
			if (tag != DER_SEQUENCE || decode_tcb(v, e))
				return -1;
			break;
		case 3:
			if (tag != DER_OCTETS || v.len != 2)
				return -1;
			memcpy(e->pceid, v.p, 2);
			break;
		case 4:
			if (tag != DER_OCTETS || v.len != 6)
				return -1;
			memcpy(e->fmspc, v.p, 6);
			break;
		case 5:
			if (tag != DER_ENUM || v.len != 1 || v.p[0] > 2)
				return -1;
			e->sgx_type = v.p[0];
			break;
		case 6:		/* PlatformInstanceID: platform CA only */
			if (tag != DER_OCTETS || v.len != 16)
				return -1;
			break;
		case 7:		/* Configuration: platform CA only */
			if (tag != DER_SEQUENCE)
				return -1;
			break;
		}
	}
	/* The five processor-CA entries are required; 6 and 7 go together. */
	if ((seen & 0x3e) != 0x3e || ((seen >> 6) & 3) == 1 || ((seen >> 6) & 3) == 2)
		return -1;
	return 0;
}

static ASN1_OBJECT *sgx_ext_obj(void)
{
	return OBJ_txt2obj(SGX_EXT_OID, 1);
}

int sgx_pck_ext_from_cert(X509 *x, struct sgx_pck_ext *e)
{
	ASN1_OBJECT *obj = sgx_ext_obj();
	X509_EXTENSION *ext;
	ASN1_OCTET_STRING *val;
	int idx;

	if (!obj)
		return -2;
	idx = X509_get_ext_by_OBJ(x, obj, -1);
	ASN1_OBJECT_free(obj);
	if (idx < 0)
		return -1;
	ext = X509_get_ext(x, idx);
	val = X509_EXTENSION_get_data(ext);
	if (!val || sgx_pck_ext_decode(ASN1_STRING_get0_data(val),
				       (size_t)ASN1_STRING_length(val), e))
		return -2;
	return 0;
}

int sgx_pck_ext_add(X509 *x, const struct sgx_pck_ext *e)
{
	ASN1_OBJECT *obj = sgx_ext_obj();
	ASN1_OCTET_STRING *val = ASN1_OCTET_STRING_new();
	X509_EXTENSION *ext = NULL;
	size_t len;
	uint8_t *der = sgx_pck_ext_encode(e, &len);
	int ret = -1;

	if (obj && val && der && ASN1_OCTET_STRING_set(val, der, (int)len))
		ext = X509_EXTENSION_create_by_OBJ(NULL, obj, 0, val);
	if (ext && X509_add_ext(x, ext, -1))
		ret = 0;
	X509_EXTENSION_free(ext);
	ASN1_OCTET_STRING_free(val);
	ASN1_OBJECT_free(obj);
	free(der);
	return ret;
}
