/* SPDX-License-Identifier: MIT */
/*
 * Whether this process may trace a child of its own (test.h), for the
 * debugger tests: they read enclave memory through ptrace and
 * /proc/PID/mem as gdb does. Hosts refuse it (Yama's ptrace_scope 3, a
 * container's seccomp profile or missing CAP_SYS_PTRACE under some
 * LSMs); there those tests skip with the errno and the Yama setting.
 * SGXEMU_TEST_NO_PTRACE=1 makes the probe answer "refused" on any host,
 * so that the skip path can be seen to work.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/ptrace.h>
#include <sys/wait.h>
#include <unistd.h>

#include "test.h"

bool test_ptrace_allowed(const char **why)
{
	static char reason[200];
	char scope[16] = "absent";
	const char *o = getenv("SGXEMU_TEST_NO_PTRACE");
	FILE *f;
	pid_t pid;
	int err = 0;

	*why = NULL;
	if (o && !strcmp(o, "1")) {
		*why = "SGXEMU_TEST_NO_PTRACE=1 says this host refuses ptrace";
		return false;
	}
	pid = fork();
	if (pid < 0) {
		*why = "fork failed: cannot probe ptrace";
		return false;
	}
	if (pid == 0) {
		pause();
		_exit(0);
	}
	if (ptrace(PTRACE_SEIZE, pid, NULL, NULL))
		err = errno;
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	if (!err)
		return true;
	f = fopen("/proc/sys/kernel/yama/ptrace_scope", "r");
	if (f) {
		if (!fgets(scope, sizeof(scope), f))
			snprintf(scope, sizeof(scope), "unreadable");
		scope[strcspn(scope, "\n")] = 0;
		fclose(f);
	}
	snprintf(reason, sizeof(reason), "this host refuses ptrace of a child "
		 "(PTRACE_SEIZE: %s; kernel.yama.ptrace_scope %s)",
		 strerror(err), scope);
	*why = reason;
	return false;
}
