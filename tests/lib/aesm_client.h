/* SPDX-License-Identifier: MIT */
/*
 * The attestation tests' helpers: their platform, and an AESM socket
 * client, written as the PSW's and Gramine's
 * clients speak the protocol (attestation-facts.md §5.1): a new connection
 * per request, a u32 length in host order, the serialized Request; then
 * the same framing back.
 */
#ifndef SGXEMU_TEST_AESM_CLIENT_H
#define SGXEMU_TEST_AESM_CLIENT_H

#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>
#include <sys/un.h>

#include "attest/aesm.pb-c.h"

struct sgx_attest;

/* @path, or an abstract name when it starts with '@'. */
void tc_aesm_addr(const char *path, struct sockaddr_un *addr, socklen_t *len);

/*
 * Send @frame (already framed, @flen bytes) and read one framed answer:
 * 0 with the malloc'd body, -1 when the connection ends without one.
 */
int tc_aesm_raw(const struct sockaddr_un *addr, socklen_t alen,
		const uint8_t *frame, size_t flen, uint8_t **body, size_t *blen);

/* One request, one decoded Response (free with
 * aesm__message__response__free_unpacked), or NULL. */
Aesm__Message__Response *tc_aesm_call(const struct sockaddr_un *addr,
				      socklen_t alen,
				      const Aesm__Message__Request *req);

/* GetQuoteEx for a 432-byte @report with @key_id, buf_size 8192. */
Aesm__Message__Response *tc_aesm_get_quote(const struct sockaddr_un *addr,
					   socklen_t alen, const void *report,
					   const uint8_t key_id[256]);

/*
 * The attestation tests' platform: a secrets file in the build directory
 * (SGXEMU_SECRETS_FILE), so they never touch the user's own. Call before
 * anything reads the environment (a constructor).
 */
void tc_attest_platform(void);
/* Its attestation context (the test fails when there is none). */
struct sgx_attest *tc_attest(void);

#endif /* SGXEMU_TEST_AESM_CLIENT_H */
