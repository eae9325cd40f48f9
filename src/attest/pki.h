/* SPDX-License-Identifier: MIT */
/*
 * The installation's certificate hierarchy (attestation-facts.md §3): a
 * self-signed root CA, the PCK processor CA and the TCB signing
 * certificate under it, created on first use in a directory next to the
 * platform secrets (<secrets file>.pki, mode 0700; keys 0600), and the PCK
 * certificates the PCK CA issues. Names follow Intel's roles ("SGX Root
 * CA", "SGX PCK Processor CA", "SGX PCK Certificate", "SGX TCB Signing",
 * which verifiers find certificates by) with O=sgxemu: nothing here
 * chains to Intel's root.
 *
 * A fleet of platforms shares one hierarchy, either by pointing
 * SGXEMU_PKI_DIR at one directory or by exporting it from one platform and
 * importing it on the others. Each platform's PCK certificates are kept in
 * the hierarchy's registry, pck/QEID-PCEID-CPUSVN-PCESVN.pem, which is what
 * `sgxemu pccs` serves: with a shared directory every platform's
 * certificate is there; an export carries the registry along and an
 * import of the same hierarchy merges it.
 */
#ifndef SGXEMU_ATTEST_PKI_H
#define SGXEMU_ATTEST_PKI_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include <openssl/evp.h>
#include <openssl/x509.h>

#include "attest/pck_ext.h"

#define SGX_PKI_ORG		"sgxemu (software SGX, not Intel)"
#define SGX_CN_ROOT		"sgxemu SGX Root CA"
#define SGX_CN_PCK_CA		"sgxemu SGX PCK Processor CA"
#define SGX_CN_PCK		"sgxemu SGX PCK Certificate"
#define SGX_CN_TCB		"sgxemu SGX TCB Signing"

struct sgx_pki {
	char dir[4096];
	EVP_PKEY *root_key, *ca_key, *tcb_key;
	X509 *root, *ca, *tcb;
};

/* The hierarchy's directory for the secrets file at @secrets:
 * SGXEMU_PKI_DIR when set, else <secrets>.pki. */
int sgx_pki_dir(const char *secrets, char *buf, size_t len);

/* Load the hierarchy in @dir, creating it on first use. 0 or -errno. */
int sgx_pki_open(const char *dir, struct sgx_pki *pki, char *why, size_t whylen);
void sgx_pki_close(struct sgx_pki *pki);

/*
 * The PCK certificate of the platform with QE id @qe_id for key @pck with
 * extension @ext: the one registered for this platform and TCB when it
 * certifies @pck, else a new one (then registered). 0/-errno.
 */
int sgx_pki_pck_cert(struct sgx_pki *pki, EVP_PKEY *pck, const uint8_t qe_id[16],
		     const struct sgx_pck_ext *ext, X509 **out,
		     char *why, size_t whylen);

/* One registered PCK certificate; @cert lives for the call only. */
struct sgx_pck_entry {
	uint8_t qe_id[16];
	struct sgx_pck_ext ext;
	X509 *cert;
	const char *name;		/* its file name in pck/ */
};
typedef int (*sgx_pck_fn)(const struct sgx_pck_entry *e, void *ctx);

/*
 * Call @fn for each registered PCK certificate that @p's PCK CA issued and
 * whose extension agrees with its file name (others are skipped), until
 * @fn returns non-zero, which is then returned. 0 or -errno.
 */
int sgx_pki_each_pck(const struct sgx_pki *p, sgx_pck_fn fn, void *ctx);

/*
 * Write @p's hierarchy (the three certificates and their keys, keys 0600,
 * @dir 0700, as a hierarchy directory lays them out) and its registry of
 * PCK certificates to @dir. A @dir holding another hierarchy is refused
 * unless @force. *@nr_pck: the certificates written. 0 or -errno.
 */
int sgx_pki_export(const struct sgx_pki *p, const char *dir, bool force,
		   int *nr_pck, char *why, size_t whylen);

struct sgx_pki_import {
	bool same;		/* @dst already had this hierarchy */
	bool replaced;		/* another one was there (--force) */
	int merged;		/* registered PCK certificates copied */
};

/*
 * Make the hierarchy exported to @src the one in @dst (a hierarchy
 * directory, created when missing), and merge @src's registry into
 * @dst's. Refused, with @dst untouched, when @src lacks a file, a key
 * does not match its certificate, a key is not P-256 or the certificates
 * do not chain (root self-signed, PCK CA and TCB signing issued by it);
 * and, unless @force, when @dst holds another hierarchy that has issued
 * PCK certificates (quotes under it would stop verifying) or one that
 * does not load. 0 or -errno.
 */
int sgx_pki_import(const char *dst, const char *src, bool force,
		   struct sgx_pki_import *info, char *why, size_t whylen);

/*
 * A CRL issued by the root (@by_root) or the PCK CA, valid from @now for
 * @days, revoking @revoked[0..@n). NULL on failure.
 */
X509_CRL *sgx_pki_crl(const struct sgx_pki *pki, bool by_root,
		      X509 *const *revoked, int n, time_t now, int days);

/*
 * The HTTPS server certificate of `sgxemu pccs` (the real PCCS serves
 * HTTPS only): a P-256 key and a certificate for localhost, 127.0.0.1
 * and ::1 issued by the root, so that a quote provider trusting this
 * installation's root (USE_SECURE_CERT true) accepts it. Stored in the
 * hierarchy's directory and reused while the root's signature holds and
 * a day of validity is left. PEM texts, malloc'd. 0 or -errno.
 */
int sgx_pki_tls(const struct sgx_pki *p, char **cert, char **key,
		char *why, size_t whylen);

/* Whole PEM text of @x appended to a malloc'd string (*@s may be NULL). */
int sgx_pem_append(char **s, size_t *len, X509 *x);

#endif /* SGXEMU_ATTEST_PKI_H */
