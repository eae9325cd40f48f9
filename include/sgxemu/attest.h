/* SPDX-License-Identifier: MIT */
/*
 * sgxemu remote attestation: DCAP ECDSA quotes, their collateral and a
 * verifier, all in software. NOTHING CHAINS TO INTEL'S ROOT: quotes are
 * signed under a certificate hierarchy created per installation, next to
 * the platform secrets (see docs/guide.md, "Remote attestation"); a
 * verifier that trusts Intel's root rejects every one of them.
 *
 * The platform is the secrets file (SGXEMU_SECRETS_FILE, else the state
 * directory), as for sealing; its CA hierarchy lives in <secrets file>.pki.
 * Functions return 0 or a negative errno with a one-line reason in @why,
 * unless said otherwise.
 */
#ifndef SGXEMU_ATTEST_H
#define SGXEMU_ATTEST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include "sgxemu/arch.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------------ */
/* The quoting enclave's role (QE3 and PCE as software).               */
/* ------------------------------------------------------------------ */

/* The TARGETINFO an application's REPORT must be targeted at. */
int sgxemu_qe_target_info(struct sgx_targetinfo *ti, char *why, size_t whylen);

/*
 * A quote for @report (EREPORT output targeted at sgxemu_qe_target_info).
 * Returns 0 with a malloc'd quote in *@quote, or an AESM error code
 * (3 parameter, 47 invalid report: its MAC is not the QE's, 1 unexpected)
 * with the reason in @why.
 */
int sgxemu_quote_generate(const struct sgx_report *report, uint8_t **quote,
			  size_t *len, char *why, size_t whylen);

/*
 * The size of every quote sgxemu_quote_generate() makes on this platform
 * (the certification data is the platform's own PCK chain). 0, or an AESM
 * error code as sgxemu_quote_generate()'s with the reason in @why.
 */
int sgxemu_quote_size(size_t *len, char *why, size_t whylen);

/*
 * Serve the AESM socket protocol (ECDSA quotes; EPID answered as on a
 * DCAP-only platform) at the Unix socket @path, a thread per client,
 * until a fatal error: -errno with the reason in @why.
 */
int sgxemu_aesm_serve(const char *path, char *why, size_t whylen);

/* ------------------------------------------------------------------ */
/* Collateral: TCB info, QE identity, CRLs (attestation-facts.md §4).  */
/* ------------------------------------------------------------------ */

struct sgxemu_collateral_opts {
	bool tcb_out_of_date;	/* a newer TCB level exists (PCESVN + 1) */
	bool pck_revoked;	/* the PCK CRL lists this platform's PCK */
	bool qe_out_of_date;	/* QE identity wants a newer QE ISVSVN */
	time_t now;		/* issue date; 0 = now */
	/* A TCB recovery is required: the level before the platform's last
	 * microcode update (`sgxemu platform update-svn`, taken by
	 * EUPDATESVN) is OutOfDate, the current one UpToDate. Without it
	 * both are UpToDate. */
	bool tcb_recovery;
};

/* Files of a collateral directory (QVL AttestationApp's names). */
struct sgxemu_collateral {
	char *tcb_info;		/* tcbInfo.json */
	char *qe_identity;	/* qeIdentity.json */
	char *tcb_chain;	/* tcbSignChain.pem: TCB signing, root */
	char *pck_chain;	/* pckSignChain.pem: PCK CA, root */
	char *root;		/* trustedRootCaCert.pem */
	uint8_t *root_crl;	/* rootCaCrl.der */
	size_t root_crl_len;
	uint8_t *pck_crl;	/* intermediateCaCrl.der */
	size_t pck_crl_len;
};

int sgxemu_collateral_make(const struct sgxemu_collateral_opts *opts,
			   struct sgxemu_collateral *c, char *why, size_t whylen);
int sgxemu_collateral_write(const struct sgxemu_collateral *c, const char *dir,
			    char *why, size_t whylen);
int sgxemu_collateral_read(const char *dir, struct sgxemu_collateral *c,
			   char *why, size_t whylen);
void sgxemu_collateral_free(struct sgxemu_collateral *c);

/* ------------------------------------------------------------------ */
/* Verification, in the order of Intel's QVL (facts §6).               */
/* ------------------------------------------------------------------ */

struct sgxemu_verify_opts {
	const char *trusted_root_pem;	/* NULL: this installation's root */
	const struct sgxemu_collateral *collateral; /* NULL: made afresh */
	time_t now;			/* 0 = now */
	bool require_production;	/* refuse DEBUG enclaves */
};

struct sgxemu_verify_result {
	int status;			/* QVL status number; 0 = accepted */
	const char *status_name;	/* e.g. "STATUS_OK", "STATUS_PCK_REVOKED" */
	const char *check;		/* the check that failed, or "" */
	char why[256];			/* one line, "" when accepted */
	bool have_report;		/* the quote parsed: the fields below */
	struct sgx_report_body report;	/* the application enclave's */
	uint16_t qe_svn, pce_svn;
	const char *tcb_status;		/* "UpToDate", "OutOfDate", ... or "" */
	const char *qe_tcb_status;
	uint8_t fmspc[6];
};

/*
 * Verify @quote. Returns 0 when accepted (TCB UpToDate, every check
 * passed), else the QVL status number (also in @res->status) with the
 * failing check named in @res->check and the reason in @res->why.
 */
int sgxemu_quote_verify(const uint8_t *quote, size_t len,
			const struct sgxemu_verify_opts *opts,
			struct sgxemu_verify_result *res);

#ifdef __cplusplus
}
#endif

#endif /* SGXEMU_ATTEST_H */
