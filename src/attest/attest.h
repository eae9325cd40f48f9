/* SPDX-License-Identifier: MIT */
/*
 * The platform's attestation services (the QE3 and PCE roles of Intel's
 * DCAP stack, attestation-facts.md §2) over the processor model's key
 * derivation: one context per platform (secrets file), built on first use.
 *
 * Identities: the QE and PCE are software with fixed identities
 * (sgx_qe_identity, sgx_pce_identity: MRENCLAVE and MRSIGNER are SHA-256
 * of fixed labels, printed by `sgxemu attest info`). Keys are derived as
 * Intel's enclaves derive theirs, from the platform's root secrets:
 *   QE_ID        CMAC(SEAL key of the QE, MRSIGNER policy, SVNs 0, "QE_ID_DER")
 *   attestation  P-256 from CMAC(SEAL key, current CPUSVN / QE ISVSVN, "QE_ATT_DER")
 *   PPID         CMAC(PROVISION key of the PCE, SVNs 0, 16 zero bytes)
 *   PCK          P-256 from CMAC(PROVISION key at CPUSVN / PCESVN, "PAK_KEY_DER")
 * so every process of a platform quotes with the same attestation key and
 * the same PCK certificate, and a new CPUSVN gives new ones, as on
 * hardware.
 */
#ifndef SGXEMU_ATTEST_ATTEST_H
#define SGXEMU_ATTEST_ATTEST_H

#include <stddef.h>
#include <stdint.h>

#include <openssl/evp.h>
#include <openssl/x509.h>

#include "attest/pck_ext.h"
#include "attest/pki.h"
#include "cpu/keys.h"

#define SGX_QE_ISVPRODID	1
#define SGX_QE_ISVSVN		2
#define SGX_PCE_ISVPRODID	0
#define SGX_PCE_ISVSVN		2
#define SGX_PCE_ID		0

/* AESM error codes (facts §5.5) the services return. */
#define AESM_SUCCESS			0
#define AESM_UNEXPECTED_ERROR		1
#define AESM_PARAMETER_ERROR		3
#define AESM_SERVICE_UNAVAILABLE	30
#define AESM_UNSUPPORTED_ATT_KEY_ID	38
#define AESM_ATT_KEY_NOT_INITIALIZED	42
#define AESM_INVALID_REPORT		47

/* FMSPC of every sgxemu platform: "SGXEMU" in ASCII. */
extern const uint8_t sgx_fmspc[6];

struct sgx_attest {
	struct sgx_platform_keys keys;
	struct sgx_pki pki;
	struct sgx_key_identity qe, pce;
	struct sgx_targetinfo qe_ti, pce_ti;
	EVP_PKEY *att_key, *pck_key;
	uint8_t att_pub[64];
	uint8_t qe_id[16];
	uint8_t auth[32];		/* QE authentication data: 00 01 .. 1f */
	struct sgx_pck_ext pck_ext;
	uint8_t prev_cpusvn[16];	/* TCB level before the last update */
	X509 *pck;
	char *cert_data;		/* PCK, PCK CA, root as PEM, then NUL */
	size_t cert_len;		/* including the NUL */
	struct sgx_report_body qe_report;	/* targeted at the PCE */
	uint8_t qe_sig[64];		/* the PCK key's signature of it */
};

void sgx_qe_identity(struct sgx_key_identity *id);
void sgx_pce_identity(struct sgx_key_identity *id);

/* The context of the platform whose secrets file is at @secrets; _at
 * with the QE and PCE at @cpusvn rather than the file's. */
int sgx_attest_open(struct sgx_attest *a, const char *secrets,
		    char *why, size_t whylen);
int sgx_attest_open_at(struct sgx_attest *a, const char *secrets,
		       const uint8_t cpusvn[16], char *why, size_t whylen);
/*
 * Set by the shim: the CPUSVN of this process's platform (NULL until it
 * exists). sgx_attest_get follows it, so that the QE verifies reports
 * and certifies at the TCB the process's enclaves run at.
 */
extern const uint8_t *(*sgx_attest_platform_cpusvn)(void);
void sgx_attest_close(struct sgx_attest *a);

/*
 * The process's context for the platform the environment names (made on
 * first use, then shared by every thread). 0 or -errno.
 */
int sgx_attest_get(struct sgx_attest **a, char *why, size_t whylen);

/* Size of every quote this context makes. */
size_t sgx_attest_quote_size(const struct sgx_attest *a);

/*
 * The QE's work for one quote: check @report's MAC under the QE's report
 * key, then build and sign the quote into @out (sgx_attest_quote_size
 * bytes). 0, or an AESM error code with the reason in @why.
 */
int sgx_attest_quote(const struct sgx_attest *a, const struct sgx_report *report,
		     uint8_t *out, char *why, size_t whylen);

#endif /* SGXEMU_ATTEST_ATTEST_H */
