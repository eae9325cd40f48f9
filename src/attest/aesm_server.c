// SPDX-License-Identifier: MIT
/*
 * The AESM socket (see aesm.h): framing, the listening socket, a thread
 * per client. Every read and write is bounded (frame size, a 30-second
 * timeout), writes never raise SIGPIPE, and a client that goes away
 * mid-request only ends its own thread.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <unistd.h>

#include "attest/aesm.h"
#include "attest/attest.h"
#include "sgxemu/attest.h"
#include "base/why.h"

#define CLIENT_TIMEOUT_S	30

int sgx_sock_io(int fd, void *buf, size_t len, bool out)
{
	uint8_t *p = buf;

	while (len) {
		ssize_t n = out ? send(fd, p, len, MSG_NOSIGNAL) : recv(fd, p, len, 0);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -1;	/* closed, timed out or failed */
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

int sgx_aesm_serve_conn(int fd)
{
	struct timeval tv = { CLIENT_TIMEOUT_S, 0 };
	uint8_t *req = NULL, *resp = NULL;
	size_t resp_len;
	uint32_t len, out_len;
	int ret = -1;

	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	if (sgx_sock_io(fd, &len, sizeof(len), false) || len == 0 || len > AESM_MAX_FRAME)
		return -1;
	req = malloc(len);
	if (!req || sgx_sock_io(fd, req, len, false))
		goto out;
	if (sgx_aesm_handle(req, len, &resp, &resp_len))
		goto out;
	out_len = (uint32_t)resp_len;
	if (!sgx_sock_io(fd, &out_len, sizeof(out_len), true) &&
	    !sgx_sock_io(fd, resp, resp_len, true))
		ret = 0;
out:
	free(req);
	free(resp);
	return ret;
}

int sgx_aesm_listen(const struct sockaddr_un *addr, socklen_t len,
		    char *why, size_t whylen)
{
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	bool path = addr->sun_path[0] != '\0';

	if (fd < 0)
		return sgx_fail(why, whylen, -errno, "socket: %s", strerror(errno));
	if (path)
		unlink(addr->sun_path);
	if (bind(fd, (const struct sockaddr *)addr, len) ||
	    (path && chmod(addr->sun_path, 0777)) || listen(fd, 32)) {
		int err = errno;

		close(fd);
		return sgx_fail(why, whylen, -err, "cannot listen on %s%s: %s",
				path ? "" : "@", addr->sun_path + !path, strerror(err));
	}
	return fd;
}

void (*sgx_aesm_thread_hook)(int delta);

static void *client_thread(void *arg)
{
	int fd = (int)(intptr_t)arg;

	if (sgx_aesm_thread_hook)
		sgx_aesm_thread_hook(1);
	sgx_aesm_serve_conn(fd);
	close(fd);
	if (sgx_aesm_thread_hook)
		sgx_aesm_thread_hook(-1);
	return NULL;
}

int sgx_aesm_accept_loop(int lfd)
{
	pthread_attr_t attr;
	sigset_t all, old;

	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	/* Client threads take none of the program's signals. */
	sigfillset(&all);
	for (;;) {
		pthread_t t;
		int fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);

		if (fd < 0) {
			if (errno == EINTR || errno == ECONNABORTED || errno == EMFILE ||
			    errno == ENFILE || errno == ENOBUFS || errno == ENOMEM)
				continue;
			pthread_attr_destroy(&attr);
			return -errno;
		}
		pthread_sigmask(SIG_BLOCK, &all, &old);
		if (pthread_create(&t, &attr, client_thread, (void *)(intptr_t)fd)) {
			/* No thread: serve it here rather than drop it. */
			sgx_aesm_serve_conn(fd);
			close(fd);
		}
		pthread_sigmask(SIG_SETMASK, &old, NULL);
	}
}

int sgxemu_aesm_serve(const char *path, char *why, size_t whylen)
{
	struct sockaddr_un addr = { .sun_family = AF_UNIX };
	struct sgx_attest *a;
	int fd, ret;

	if (!path || !*path || strlen(path) >= sizeof(addr.sun_path))
		return sgx_fail(why, whylen, -EINVAL, "socket path empty or too long");
	/* The platform first, so that a broken one is said at start. */
	ret = sgx_attest_get(&a, why, whylen);
	if (ret)
		return ret;
	strcpy(addr.sun_path, path);
	fd = sgx_aesm_listen(&addr, sizeof(addr), why, whylen);
	if (fd < 0)
		return fd;
	ret = sgx_aesm_accept_loop(fd);
	close(fd);
	return sgx_fail(why, whylen, ret, "accept: %s", strerror(-ret));
}
