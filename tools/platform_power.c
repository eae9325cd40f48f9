/* SPDX-License-Identifier: MIT */
/*
 * sgxemu platform power-cycle PID: the process PID loses every enclave, as
 * a suspend to S3 (or S4) and the resume after it lose them on hardware
 * (docs/guide.md "Platform events"). The platform is the process's own
 * (src/cpu and src/driver inside it, under the shim), so the request goes
 * to it over its platform socket (SGXEMU_PLATFORM_SOCKET_FMT, served by
 * src/shim/power.c), which answers with the number of enclaves lost.
 */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "cli.h"
#include "platform.h"
#include "sgxemu/sgxemu.h"

/* How long the process may take to answer: it first waits for its
 * threads to leave enclave mode (a second per enclave at most). */
#define ANSWER_TIMEOUT_MS	60000

static const char *errno_name(int e)
{
	const char *n = strerrorname_np(e);

	return n ? n : "?";
}

/* A process id as the kernel gives them: decimal, 1 to 2^22. */
static bool parse_pid(const char *s, pid_t *pid)
{
	uint64_t v;

	if (!s[0] || strspn(s, "0123456789") != strlen(s) ||
	    !cli_parse_uint(s, 4194304, &v) || v == 0 || (s[0] == '0'))
		return false;
	*pid = (pid_t)v;
	return true;
}

/* Is libsgxemu.so mapped in @pid? 1 yes, 0 no, -errno when unreadable. */
static int under_sgxemu(pid_t pid)
{
	char path[64], line[4096];
	FILE *f;
	int found = 0;

	snprintf(path, sizeof(path), "/proc/%ld/maps", (long)pid);
	f = fopen(path, "re");
	if (!f)
		return -errno;
	while (!found && fgets(line, sizeof(line), f))
		if (strstr(line, "/libsgxemu.so"))
			found = 1;
	fclose(f);
	return found;
}

/* Send the request, read the answer line into @buf: 0 or -errno. */
static int ask(pid_t pid, char *buf, size_t size)
{
	struct sockaddr_un addr;
	struct pollfd p;
	socklen_t len;
	size_t n = 0;
	int fd, ret = 0;

	memset(&addr, 0, sizeof(addr));
	addr.sun_family = AF_UNIX;
	snprintf(addr.sun_path + 1, sizeof(addr.sun_path) - 1,
		 SGXEMU_PLATFORM_SOCKET_FMT, (long)pid);
	len = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 +
			  strlen(addr.sun_path + 1));
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	if (connect(fd, (struct sockaddr *)&addr, len) ||
	    write(fd, "power-cycle\n", 12) != 12) {
		ret = -errno;
		goto out;
	}
	p.fd = fd;
	p.events = POLLIN;
	while (n + 1 < size && !memchr(buf, '\n', n)) {
		ssize_t r;

		p.revents = 0;
		r = poll(&p, 1, ANSWER_TIMEOUT_MS);
		if (r == 0) {
			ret = -ETIMEDOUT;
			goto out;
		}
		if (r < 0 && errno == EINTR)
			continue;
		r = r < 0 ? -1 : read(fd, buf + n, size - 1 - n);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0) {
			ret = r < 0 ? -errno : -ECONNRESET;
			goto out;
		}
		n += (size_t)r;
	}
	buf[n] = 0;
	if (!memchr(buf, '\n', n))
		ret = -EPROTO;
out:
	close(fd);
	return ret;
}

int platform_power_cycle_main(int argc, char **argv)
{
	char answer[64];
	pid_t pid;
	int ret, n, e;

	if (argc != 2) {
		cli_error("usage: sgxemu platform power-cycle PID");
		return CLI_EXIT_USAGE;
	}
	if (!parse_pid(argv[1], &pid)) {
		cli_error("power-cycle: '%s' is not a process id", argv[1]);
		return CLI_EXIT_USAGE;
	}
	if (kill(pid, 0)) {
		e = errno;
		if (e == ESRCH)
			cli_error("power-cycle: no process %ld (ESRCH)",
				  (long)pid);
		else
			cli_error("power-cycle: process %ld is not yours "
				  "(%s: %s)", (long)pid, errno_name(e),
				  strerror(e));
		return CLI_EXIT_FAIL;
	}
	ret = under_sgxemu(pid);
	if (ret < 0) {
		cli_error("power-cycle: cannot read /proc/%ld/maps (%s: %s)",
			  (long)pid, errno_name(-ret), strerror(-ret));
		return CLI_EXIT_FAIL;
	}
	if (!ret) {
		cli_error("power-cycle: process %ld is not running under "
			  "sgxemu (no libsgxemu.so in it)", (long)pid);
		return CLI_EXIT_FAIL;
	}
	ret = ask(pid, answer, sizeof(answer));
	if (ret == -ECONNREFUSED) {
		/* Under the shim, no enclave device opened yet: there is no
		 * EPC, and a power cycle loses nothing. */
		printf("process %ld: no enclave (its platform is not up yet): "
		       "nothing lost\n", (long)pid);
		return CLI_EXIT_OK;
	}
	if (ret) {
		cli_error("power-cycle: process %ld did not answer (%s: %s)",
			  (long)pid, errno_name(-ret), strerror(-ret));
		return CLI_EXIT_FAIL;
	}
	if (sscanf(answer, "ok %d", &n) == 1 && n >= 0) {
		printf("process %ld: power cycled, %d enclave%s lost\n",
		       (long)pid, n, n == 1 ? "" : "s");
		return CLI_EXIT_OK;
	}
	if (sscanf(answer, "error %d", &e) == 1 && e > 0) {
		cli_error("power-cycle: process %ld refused (%s: %s)",
			  (long)pid, errno_name(e), strerror(e));
		return CLI_EXIT_FAIL;
	}
	answer[strcspn(answer, "\n")] = 0;
	cli_error("power-cycle: process %ld answered '%s' (EPROTO)",
		  (long)pid, answer);
	return CLI_EXIT_FAIL;
}
