/* SPDX-License-Identifier: MIT */
/*
 * A program for Gramine under sgxemu (tests/integration/test_gramine.sh):
 * threads, a file on Gramine's tmpfs, a signal, and a fork (Gramine forks
 * by starting a new enclave in a new process). Each line it prints is
 * checked by the script.
 */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
static volatile sig_atomic_t got;
static void h(int s)
{
	got = s;
}
static void *worker(void *a)
{
	long i = (long)a, s = 0;

	for (long k = 0; k < 1000000; k++)
		s += k ^ i;
	return (void *)s;
}
int main(void)
{
	pthread_t t[4];
	long sum = 0;
	char buf[64] = { 0 };
	FILE *f;
	pid_t p;
	int st;

	for (long i = 0; i < 4; i++)
		pthread_create(&t[i], NULL, worker, (void *)i);
	for (int i = 0; i < 4; i++) {
		void *r;

		pthread_join(t[i], &r);
		sum += (long)r;
	}
	printf("threads: %ld\n", sum);
	f = fopen("/tmp/x.txt", "w");
	if (!f)
		return 2;
	fprintf(f, "written in the enclave\n");
	fclose(f);
	f = fopen("/tmp/x.txt", "r");
	if (!f || !fgets(buf, sizeof(buf), f))
		return 3;
	fclose(f);
	printf("file: %s", buf);
	signal(SIGUSR1, h);
	raise(SIGUSR1);
	printf("signal: %d\n", got);
	fflush(stdout);
	p = fork();
	if (p == 0) {
		printf("child: running\n");
		fflush(stdout);
		_exit(7);
	}
	waitpid(p, &st, 0);
	printf("fork: child exit %d\n", WEXITSTATUS(st));
	return 0;
}
