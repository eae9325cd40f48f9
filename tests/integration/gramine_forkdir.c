/* SPDX-License-Identifier: MIT */
/*
 * Run under Gramine by test_gramine.sh, as Gramine's getdents and proc
 * tests are (issue 46, TC_30 test_021_getdents_large_dir, TC_40
 * test_000_proc: both failed with a SIGSEGV "inside untrusted PAL"):
 * FILES files made in a host directory, then a fork; the child lists the
 * directory with getdents64 in small buffers and reads /proc (its own
 * status and maps, its parent's directory), the parent lists it too after
 * the child's exit. Prints what each counted.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#define FILES	1000
#define DIR_	"data/dir"

/* Entries named f<number>, listed by raw getdents64 200 bytes at a time. */
static long list(void)
{
	char buf[200];
	long n, found = 0;
	int fd = open(DIR_, O_RDONLY | O_DIRECTORY);

	if (fd < 0)
		return -1;
	while ((n = syscall(SYS_getdents64, fd, buf, sizeof(buf))) > 0)
		for (long off = 0; off < n;) {
			unsigned short reclen;

			/* struct linux_dirent64: d_reclen at 16, d_name at 19. */
			memcpy(&reclen, buf + off + 16, sizeof(reclen));
			found += buf[off + 19] == 'f';
			off += reclen;
		}
	close(fd);
	return n < 0 ? -1 : found;
}

/* Lines of a /proc file. */
static long lines(const char *path)
{
	char buf[4096];
	long n, count = 0;
	int fd = open(path, O_RDONLY);

	if (fd < 0)
		return -1;
	while ((n = read(fd, buf, sizeof(buf))) > 0)
		for (long i = 0; i < n; i++)
			count += buf[i] == '\n';
	close(fd);
	return n < 0 ? -1 : count;
}

int main(void)
{
	char path[64];
	int status;
	pid_t pid;

	mkdir("data", 0755);
	mkdir(DIR_, 0755);
	for (int i = 0; i < FILES; i++) {
		int fd;

		snprintf(path, sizeof(path), DIR_ "/f%d", i);
		fd = open(path, O_CREAT | O_WRONLY | O_TRUNC, 0644);
		if (fd < 0) {
			perror(path);
			return 1;
		}
		close(fd);
	}
	fflush(stdout);
	pid = fork();
	if (pid < 0) {
		perror("fork");
		return 1;
	}
	if (pid == 0) {
		DIR *d;
		long entries = 0;

		printf("forkdir: child lists %ld files\n", list());
		printf("forkdir: child status readable %s\n",
		       lines("/proc/self/status") > 0 ? "yes" : "no");
		printf("forkdir: child maps readable %s\n",
		       lines("/proc/self/maps") > 0 ? "yes" : "no");
		snprintf(path, sizeof(path), "/proc/%d", (int)getppid());
		d = opendir(path);
		while (d && readdir(d))
			entries++;
		if (d)
			closedir(d);
		printf("forkdir: child sees its parent in /proc %s\n",
		       entries > 2 ? "yes" : "no");
		fflush(stdout);
		_exit(0);
	}
	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status))
		return 1;
	printf("forkdir: child status %d\n", WEXITSTATUS(status));
	printf("forkdir: parent lists %ld files\n", list());
	for (int i = 0; i < FILES; i++) {
		snprintf(path, sizeof(path), DIR_ "/f%d", i);
		unlink(path);
	}
	rmdir(DIR_);
	return 0;
}
