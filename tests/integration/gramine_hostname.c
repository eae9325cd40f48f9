/* SPDX-License-Identifier: MIT */
/*
 * Run under Gramine with EDMM by test_gramine.sh, as Gramine's own
 * hostname tests are (test_121_gethostname_pass_etc): gethostname and
 * /etc/hostname (Gramine's own copy of the host's), in this process and in two forked children.
 * Each fork is a second enclave started by the loader, which under EDMM
 * grows its heap by EAUG and changes page types (SGX_IOC_ENCLAVE_
 * MODIFY_TYPES) as it starts and as its threads come and go. Prints what
 * each process saw, so the output matches a native run.
 */
#define _DEFAULT_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static void show(const char *who)
{
	char name[256] = "", etc[256] = "";
	ssize_t n;
	int fd;

	if (gethostname(name, sizeof(name)) != 0)
		strcpy(name, "(gethostname failed)");
	fd = open("/etc/hostname", O_RDONLY);
	if (fd < 0) {
		strcpy(etc, "(no /etc/hostname)");
	} else {
		n = read(fd, etc, sizeof(etc) - 1);
		etc[n > 0 ? n : 0] = '\0';
		etc[strcspn(etc, "\n")] = '\0';
		close(fd);
	}
	printf("hostname: %s gethostname %s, /etc/hostname %s\n", who, name,
	       etc);
	fflush(stdout);
}

int main(void)
{
	show("parent");
	for (int i = 0; i < 2; i++) {
		int status;
		pid_t pid = fork();

		if (pid < 0) {
			perror("fork");
			return 1;
		}
		if (pid == 0) {
			show(i ? "child 2" : "child 1");
			_exit(0);
		}
		if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status)) {
			printf("hostname: child %d did not exit\n", i + 1);
			return 1;
		}
		printf("hostname: child %d status %d\n", i + 1,
		       WEXITSTATUS(status));
		fflush(stdout);
	}
	return 0;
}
