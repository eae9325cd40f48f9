/* SPDX-License-Identifier: MIT */
/*
 * The PCCS REST API (attestation-facts.md §4.4), answered from this
 * platform's collateral and the PCK certificates registered in its
 * hierarchy (every platform of a fleet sharing it, src/attest/pki.h):
 * what `sgxemu pccs` serves on the loopback
 * address, so that a quote provider library (Intel's QCNL with pccs_url
 * pointing here) or any verifier fetches PCK certificates, CRLs, TCB info
 * and QE identity with their issuer-chain headers. This is the HTTP-free
 * part: a request (path and query arguments) in, status, headers and body
 * out; the HTTP server is the CLI's (tools/pccs.c).
 */
#ifndef SGXEMU_ATTEST_PCCS_H
#define SGXEMU_ATTEST_PCCS_H

#include <stddef.h>
#include <stdint.h>

#include "sgxemu/attest.h"

#define PCCS_MAX_HEADERS	6

struct sgx_pccs_reply {
	unsigned status;		/* 200, 400, 404, 500 */
	const char *content_type;
	uint8_t *body;			/* malloc'd */
	size_t len;
	int nr_headers;
	struct {
		const char *name;
		char *value;		/* malloc'd */
	} headers[PCCS_MAX_HEADERS];
};

/* A query argument of the request, or NULL when it is absent. */
typedef const char *(*sgx_pccs_arg_fn)(void *cls, const char *key);

/*
 * Answer GET @path (e.g. "/sgx/certification/v4/tcb") with the collateral
 * made under @opts. Always fills @r (errors are HTTP statuses with a
 * one-line text body); 0, or -1 when out of memory.
 */
int sgx_pccs_answer(const struct sgxemu_collateral_opts *opts, const char *path,
		    sgx_pccs_arg_fn arg, void *cls, struct sgx_pccs_reply *r);
void sgx_pccs_reply_free(struct sgx_pccs_reply *r);

#endif /* SGXEMU_ATTEST_PCCS_H */
