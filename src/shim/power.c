/* SPDX-License-Identifier: MIT */
/*
 * Platform events from outside the process: `sgxemu platform power-cycle
 * PID` asks this process's platform to lose its enclaves as a suspend to
 * S3 would (src/driver/power.c). The request comes over the abstract UNIX
 * socket SGXEMU_PLATFORM_SOCKET_FMT, served by one thread of the shim that
 * starts with the platform (the first enclave device), as the in-process
 * AESM socket is (aesm.c): a socket rather than a signal, so that the
 * loss runs in a thread of its own, where it may take the driver's locks
 * (a signal handler could interrupt a thread that holds them), the
 * program's signals stay its own, and the requester gets an answer.
 *
 * Only processes of the same user (or root) are served, as only they may
 * signal or trace it; one request at a time, so that two power cycles at
 * once are two in a row.
 */
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "sgxemu/sgxemu.h"
#include "shim/shim.h"

static pthread_mutex_t power_lock = PTHREAD_MUTEX_INITIALIZER;
static pid_t server_pid;		/* the process whose thread serves */
static int server_fd = -1;
static struct sockaddr_un server_addr;
static socklen_t server_len;

/*
 * Is @fd still our socket? A program may close descriptors it did not
 * open (a daemon's start-up) and reuse the number: the thread must never
 * accept on the program's own socket.
 */
static bool still_ours(int fd)
{
	struct sockaddr_un a;
	socklen_t len = sizeof(a);

	return !getsockname(fd, (struct sockaddr *)&a, &len) &&
	       len == server_len && !memcmp(&a, &server_addr, len);
}

/* The request's line (at most 64 bytes, within a second of the connect). */
static bool read_request(int c, char *buf, size_t size)
{
	struct timeval tv = { 1, 0 };
	size_t n = 0;

	setsockopt(c, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	while (n + 1 < size) {
		ssize_t r = read(c, buf + n, size - 1 - n);

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return false;
		n += (size_t)r;
		if (memchr(buf, '\n', n))
			break;
	}
	buf[n] = 0;
	return strchr(buf, '\n') != NULL;
}

static void answer(int c, const char *line)
{
	size_t len = strlen(line), done = 0;

	while (done < len) {
		ssize_t w = write(c, line + done, len - done);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return;
		done += (size_t)w;
	}
}

static void serve(int c)
{
	struct ucred cred;
	socklen_t len = sizeof(cred);
	char req[64], line[64];
	int ret;

	if (getsockopt(c, SOL_SOCKET, SO_PEERCRED, &cred, &len) ||
	    (cred.uid != getuid() && cred.uid != geteuid() && cred.uid != 0)) {
		answer(c, "error 1\n");			/* EPERM */
		return;
	}
	if (!read_request(c, req, sizeof(req))) {
		answer(c, "error 22\n");		/* EINVAL */
		return;
	}
	if (strcmp(req, "power-cycle\n")) {
		answer(c, "error 95\n");		/* EOPNOTSUPP */
		return;
	}
	ret = sgx_drv_power_cycle();
	if (ret < 0)
		snprintf(line, sizeof(line), "error %d\n", -ret);
	else
		snprintf(line, sizeof(line), "ok %d\n", ret);
	shim_log("power: a power cycle on request: %s", line);
	answer(c, line);
}

static void *server_main(void *arg)
{
	int fd = (int)(intptr_t)arg;

	while (still_ours(fd)) {
		int c = accept4(fd, NULL, NULL, SOCK_CLOEXEC);

		if (c < 0)
			continue;
		serve(c);
		shim_real_close(c);
	}
	return NULL;
}

void shim_power_start(void)
{
	pthread_attr_t attr;
	sigset_t all, old;
	pthread_t t;
	int fd;

	pthread_mutex_lock(&power_lock);
	/* Once per process; a forked child starts its own. */
	if (server_pid == getpid())
		goto out;
	memset(&server_addr, 0, sizeof(server_addr));
	server_addr.sun_family = AF_UNIX;
	snprintf(server_addr.sun_path + 1, sizeof(server_addr.sun_path) - 1,
		 SGXEMU_PLATFORM_SOCKET_FMT, (long)getpid());
	server_len = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 +
				 strlen(server_addr.sun_path + 1));
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		goto fail;
	if (bind(fd, (struct sockaddr *)&server_addr, server_len) ||
	    listen(fd, 8)) {
		shim_real_close(fd);
		goto fail;
	}
	/* The thread takes none of the program's signals (the engine's
	 * own stay deliverable: sgxemu_sigprocmask keeps them). */
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &old);
	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	errno = pthread_create(&t, &attr, server_main, (void *)(intptr_t)fd);
	pthread_attr_destroy(&attr);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (errno) {
		shim_real_close(fd);
		goto fail;
	}
	server_pid = getpid();
	server_fd = fd;
	sgx_drv_event_thread_started();
	goto out;
fail:
	shim_log("power: platform events not served: %s", strerror(errno));
out:
	pthread_mutex_unlock(&power_lock);
}

void shim_power_fork_child(void)
{
	pthread_mutex_init(&power_lock, NULL);
	if (!server_pid)
		return;
	/* The parent's socket, without the parent's thread: the child
	 * serves its own name. */
	if (server_fd >= 0)
		shim_real_close(server_fd);
	server_fd = -1;
	shim_power_start();
}
