/* SPDX-License-Identifier: MIT */
/*
 * The loops bench/gramine_paths.sh times, under Gramine and directly:
 *   paths PATH N [FILE]
 * PATH is one of
 *   file   N times pwrite(SIZE bytes at offset 0) + pread(the same) on
 *          FILE (default data/paths.dat, a host file: under Gramine an
 *          allowed file, so every call is an OCALL);
 *   pipe   N round trips of one byte between two threads over two pipes
 *          (the main thread writes to the first and reads the second, the
 *          other thread reads the first and writes the second);
 *   clock  N clock_gettime(CLOCK_MONOTONIC) calls (Gramine serves them in
 *          the enclave from RDTSC once CPUID leaf 0x15 gives the TSC rate);
 *   fault  N first writes, one per page, to a fresh MAP_NORESERVE anonymous
 *          mapping of N pages (under Gramine with EDMM each one is a page
 *          fault inside the enclave, whose handler EACCEPTs the page that
 *          the fault had EAUGed);
 *   getpid N getpid() calls: a reference, served by Gramine's LibOS inside
 *          the enclave without an exit (its system call path alone).
 * Prints "ns_per_op: X" from CLOCK_MONOTONIC around the loop only (the
 * set-up, the thread start and the mmap are outside it).
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#ifndef SIZE
#define SIZE	4096	/* bytes per pwrite and pread of the file loop */
#endif
#define PAGE	4096UL

static double now_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1e9 + t.tv_nsec;
}

static int fail(const char *what)
{
	perror(what);
	return 1;
}

static int file_loop(long n, const char *path, double *ns)
{
	static char buf[SIZE];
	double t0;
	int fd = open(path, O_RDWR | O_CREAT, 0644);

	if (fd < 0)
		return fail(path);
	memset(buf, 'x', sizeof(buf));
	if (pwrite(fd, buf, sizeof(buf), 0) != sizeof(buf))
		return fail("pwrite");
	t0 = now_ns();
	for (long i = 0; i < n; i++) {
		buf[0] = (char)i;
		if (pwrite(fd, buf, sizeof(buf), 0) != sizeof(buf) ||
		    pread(fd, buf, sizeof(buf), 0) != sizeof(buf))
			return fail("pwrite/pread");
	}
	*ns = now_ns() - t0;
	close(fd);
	return 0;
}

static int ping[2], pong[2];
static long rounds;

static void *echo(void *arg)
{
	char c;

	(void)arg;
	for (long i = 0; i < rounds; i++)
		if (read(ping[0], &c, 1) != 1 || write(pong[1], &c, 1) != 1)
			return (void *)1;
	return NULL;
}

static int pipe_loop(long n, double *ns)
{
	pthread_t t;
	void *ret;
	double t0;
	char c = 'p';

	rounds = n + 1;
	if (pipe(ping) || pipe(pong))
		return fail("pipe");
	if (pthread_create(&t, NULL, echo, NULL))
		return fail("pthread_create");
	/* One round trip before the clock starts: the thread is running. */
	if (write(ping[1], &c, 1) != 1 || read(pong[0], &c, 1) != 1)
		return fail("pipe round trip");
	t0 = now_ns();
	for (long i = 0; i < n; i++)
		if (write(ping[1], &c, 1) != 1 || read(pong[0], &c, 1) != 1)
			return fail("pipe round trip");
	*ns = now_ns() - t0;
	if (pthread_join(t, &ret) || ret)
		return fail("echo thread");
	return 0;
}

static int clock_loop(long n, double *ns)
{
	struct timespec t;
	volatile long sink = 0;
	double t0 = now_ns();

	for (long i = 0; i < n; i++) {
		clock_gettime(CLOCK_MONOTONIC, &t);
		sink += t.tv_nsec;
	}
	*ns = now_ns() - t0;
	(void)sink;
	return 0;
}

static int getpid_loop(long n, double *ns)
{
	volatile long sink = 0;
	double t0 = now_ns();

	for (long i = 0; i < n; i++)
		sink += getpid();
	*ns = now_ns() - t0;
	(void)sink;
	return 0;
}

static int fault_loop(long n, double *ns)
{
	volatile unsigned char *p = mmap(NULL, n * PAGE, PROT_READ | PROT_WRITE,
					 MAP_PRIVATE | MAP_ANONYMOUS |
					 MAP_NORESERVE, -1, 0);
	double t0;

	if (p == MAP_FAILED)
		return fail("mmap");
	t0 = now_ns();
	for (long i = 0; i < n; i++)
		p[i * PAGE] = (unsigned char)i;
	*ns = now_ns() - t0;
	/* Not unmapped: under EDMM that trims every page (an EACCEPT each),
	 * which the engine's counts of the run would put on the fault. */
	return 0;
}

int main(int argc, char **argv)
{
	const char *path = argc > 1 ? argv[1] : "";
	long n = argc > 2 ? atol(argv[2]) : 10000;
	double ns = 0;
	int ret;

	if (n <= 0) {
		fprintf(stderr, "paths: N must be a positive count\n");
		return 2;
	}
	if (!strcmp(path, "file"))
		ret = file_loop(n, argc > 3 ? argv[3] : "data/paths.dat", &ns);
	else if (!strcmp(path, "pipe"))
		ret = pipe_loop(n, &ns);
	else if (!strcmp(path, "clock"))
		ret = clock_loop(n, &ns);
	else if (!strcmp(path, "fault"))
		ret = fault_loop(n, &ns);
	else if (!strcmp(path, "getpid"))
		ret = getpid_loop(n, &ns);
	else {
		fprintf(stderr, "usage: paths file|pipe|clock|fault|getpid N [FILE]\n");
		return 2;
	}
	if (ret)
		return ret;
	printf("ns_per_op: %.0f\n", ns / (double)n);
	return 0;
}
