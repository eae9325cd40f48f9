/* SPDX-License-Identifier: MIT */
/*
 * The AESM socket protocol (attestation-facts.md §5), DCAP path: frames of
 * a u32 length (host byte order) and a serialized aesm.message.Request;
 * one request and one response per connection. sgx_aesm_handle is the
 * pure message layer (what the fuzzer drives); sgx_aesm_serve_conn reads
 * and answers one frame on a connected socket; sgx_aesm_listen and
 * sgx_aesm_accept_loop serve a socket with a thread per client, so a slow
 * or vanished client never holds up the others.
 */
#ifndef SGXEMU_ATTEST_AESM_H
#define SGXEMU_ATTEST_AESM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>
#include <sys/un.h>

#define AESM_MAX_FRAME		(64 * 1024)	/* requests are < 2 KiB */
#define AESM_MAX_QUOTE_BUF	(1024 * 1024)	/* largest buf_size served */
#define AESM_KEY_ID_SIZE	256
#define AESM_QE_REPORT_INFO_SIZE 960
#define AESM_SOCKET_PATH	"/var/run/aesmd/aesm.socket"
#define AESM_ABSTRACT_NAME	"sgx_aesm_socket_base"	/* Gramine tries it first */

/* The ECDSA P-256 attestation key id this service publishes. */
void sgx_aesm_key_id(uint8_t id[AESM_KEY_ID_SIZE]);

/*
 * Answer one serialized Request: 0 with a malloc'd serialized Response, or
 * -1 when the request does not parse or asks for nothing known (the
 * connection is then closed without an answer, as aesmd does).
 */
int sgx_aesm_handle(const uint8_t *req, size_t len, uint8_t **resp,
		    size_t *resp_len);

/*
 * All @len bytes to (@out) or from a stream socket, retrying after
 * signals, never raising SIGPIPE: 0, or -1 when the peer is gone or the
 * socket's timeout passed.
 */
int sgx_sock_io(int fd, void *buf, size_t len, bool out);

/* Read one frame from @fd, answer it. 0, or -1 (closed without answer). */
int sgx_aesm_serve_conn(int fd);

/*
 * A listening socket at @addr (@len bytes; abstract when sun_path[0] is
 * NUL; a path is unlinked first and made 0777 as aesmd makes it).
 * The descriptor or -errno, with a reason in @why.
 */
int sgx_aesm_listen(const struct sockaddr_un *addr, socklen_t len,
		    char *why, size_t whylen);

/* Accept on @lfd forever, a detached thread per connection. -errno. */
int sgx_aesm_accept_loop(int lfd);
/*
 * Set by the shim: called with +1 by each connection's thread as it
 * starts and with -1 as it ends, so that the process can tell the
 * service's threads from the program's (on hardware they are aesmd's).
 */
extern void (*sgx_aesm_thread_hook)(int delta);

#endif /* SGXEMU_ATTEST_AESM_H */
