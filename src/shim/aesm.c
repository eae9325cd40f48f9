// SPDX-License-Identifier: MIT
/*
 * The AESM socket for programs under `sgxemu run`: a connect() to
 * /var/run/aesmd/aesm.socket (or /run/aesmd/aesm.socket, or Gramine's
 * abstract name "sgx_aesm_socket_base") reaches the platform's quoting
 * service (src/attest/aesm.h), served by a thread of this process on a
 * private abstract socket, so no daemon and no root are needed. Started on
 * the first such connect (again in a forked child), through libc's
 * connect() or a raw `syscall` (rawsys.c). SGXEMU_AESM=off passes every
 * connect through untouched, for machines with a real aesmd.
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <unistd.h>

#include "attest/aesm.h"
#include "attest/attest.h"
#include "driver/driver.h"
#include "engine/engine.h"
#include "shim/shim.h"

static pthread_mutex_t server_lock = PTHREAD_MUTEX_INITIALIZER;
static pid_t server_pid;
static struct sockaddr_un server_addr;
static socklen_t server_len;

/* Does @addr name the AESM socket? */
static bool is_aesm(const struct sockaddr *addr, socklen_t len)
{
	static const char *const paths[] = { AESM_SOCKET_PATH,
					     "/run/aesmd/aesm.socket" };
	const struct sockaddr_un *un = (const struct sockaddr_un *)addr;
	size_t off = offsetof(struct sockaddr_un, sun_path), n, name;
	const char *v = getenv("SGXEMU_AESM");

	if (!addr || len <= off || len > sizeof(*un) || un->sun_family != AF_UNIX ||
	    (v && !strcmp(v, "off")))
		return false;
	n = len - off;
	if (un->sun_path[0] == '\0') {
		/* Abstract: the name, NUL padding allowed (Gramine passes
		 * the whole structure). */
		name = strlen(AESM_ABSTRACT_NAME);
		if (n - 1 < name || memcmp(un->sun_path + 1, AESM_ABSTRACT_NAME, name))
			return false;
		for (size_t i = 1 + name; i < n; i++)
			if (un->sun_path[i])
				return false;
		return true;
	}
	for (size_t i = 0; i < sizeof(paths) / sizeof(paths[0]); i++)
		if (strnlen(un->sun_path, n) == strlen(paths[i]) &&
		    !memcmp(un->sun_path, paths[i], strlen(paths[i])))
			return true;
	return false;
}

/* The CPUSVN this process's platform runs at (a microcode update taken
 * by EUPDATESVN at an open changes it), for the QE (src/attest/qe.c). */
static const uint8_t *platform_cpusvn(void)
{
	if (!__atomic_load_n(&sgxemu__platform.ready, __ATOMIC_ACQUIRE))
		return NULL;
	return sgxemu__cpu()->keys.cpusvn;
}

__attribute__((constructor)) static void attest_follows_platform(void)
{
	sgx_attest_platform_cpusvn = platform_cpusvn;
	sgx_aesm_thread_hook = sgx_drv_service_thread;
}

/*
 * The accept loop and each connection's thread count themselves among the
 * platform's threads (sgx_drv_service_thread): on hardware they are
 * aesmd's, in another process, and a program that quotes (Gramine with
 * sgx.remote_attestation, which asks the AESM before its first EENTER)
 * would otherwise look multi-threaded to the engine, whose host ENCLU
 * sites then stay trapping (issue 46: Gramine's attestation test).
 */
static void *server_main(void *arg)
{
	sgx_drv_service_thread(1);
	sgx_aesm_accept_loop((int)(intptr_t)arg);
	sgx_drv_service_thread(-1);
	return NULL;
}

/* The in-process server of this process (not a parent's): 0 or -errno. */
static int server_up(void)
{
	static unsigned generation;
	pthread_attr_t attr;
	sigset_t all, old;
	pthread_t t;
	char why[256];
	int fd, ret = 0;

	pthread_mutex_lock(&server_lock);
	if (server_pid == getpid())
		goto out;
	memset(&server_addr, 0, sizeof(server_addr));
	server_addr.sun_family = AF_UNIX;
	snprintf(server_addr.sun_path + 1, sizeof(server_addr.sun_path) - 1,
		 "sgxemu-aesm-%ld-%u", (long)getpid(), ++generation);
	server_len = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 +
				 strlen(server_addr.sun_path + 1));
	fd = sgx_aesm_listen(&server_addr, server_len, why, sizeof(why));
	if (fd < 0) {
		ret = fd;
		shim_log("aesm: %s", why);
		goto out;
	}
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &old);
	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	ret = -pthread_create(&t, &attr, server_main, (void *)(intptr_t)fd);
	pthread_attr_destroy(&attr);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (ret)
		close(fd);
	else
		server_pid = getpid();
out:
	pthread_mutex_unlock(&server_lock);
	return ret;
}

int connect(int fd, const struct sockaddr *addr, socklen_t len)
{
	if (is_aesm(addr, len) && !server_up()) {
		shim_log("aesm: connect to the AESM socket served in-process");
		addr = (const struct sockaddr *)&server_addr;
		len = server_len;
	}
	return (int)syscall(SYS_connect, fd, addr, len);
}
