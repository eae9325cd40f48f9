/* SPDX-License-Identifier: MIT */
/*
 * The SGX extension of a PCK certificate, OID 1.2.840.113741.1.13.1
 * (attestation-facts.md §3.3): PPID, TCB (16 component SVNs, PCESVN,
 * CPUSVN), PCE-ID, FMSPC, SGX type. Written in the order Intel's processor
 * certificates use; read with the verifier's rules (5 entries, or 7 with
 * the platform CA's two; two-element tuples; 18 TCB entries).
 */
#ifndef SGXEMU_ATTEST_PCK_EXT_H
#define SGXEMU_ATTEST_PCK_EXT_H

#include <stdint.h>

#include <openssl/x509.h>

#define SGX_EXT_OID	"1.2.840.113741.1.13.1"

struct sgx_pck_ext {
	uint8_t  ppid[16];
	uint8_t  comp[16];	/* SGXTCBComp01SVN .. Comp16SVN */
	uint16_t pcesvn;
	uint8_t  cpusvn[16];
	uint8_t  pceid[2];
	uint8_t  fmspc[6];
	uint8_t  sgx_type;	/* 0 Standard */
};

/* The extension's DER value (the SEQUENCE); malloc'd, or NULL. */
uint8_t *sgx_pck_ext_encode(const struct sgx_pck_ext *e, size_t *len);
/* Parse the DER value: 0, or -1 when it breaks a rule. */
int sgx_pck_ext_decode(const uint8_t *p, size_t len, struct sgx_pck_ext *e);
/* The extension of @x: 0, -1 absent, -2 malformed. */
int sgx_pck_ext_from_cert(X509 *x, struct sgx_pck_ext *e);
/* Add the extension (non-critical) to @x: 0 or -1. */
int sgx_pck_ext_add(X509 *x, const struct sgx_pck_ext *e);

#endif /* SGXEMU_ATTEST_PCK_EXT_H */
