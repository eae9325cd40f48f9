/* SPDX-License-Identifier: MIT */
/*
 * A program for Gramine under sgxemu (tests/integration/test_gramine.sh):
 * blocks every signal with its own rt_sigprocmask system call, then maps
 * memory with its own mmap, and prints from a second thread: with
 * Gramine's exitless RPC threads (sgx.insecure__rpc_thread_num), whose
 * host threads block signals with raw system calls, every line is an OCALL
 * served by them.
 */
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

static long raw(long nr, long a, long b, long c, long d, long e, long f)
{
	register long r10 __asm__("r10") = d;
	register long r8 __asm__("r8") = e;
	register long r9 __asm__("r9") = f;
	long ret;

	__asm__ volatile("syscall" : "=a"(ret)
			 : "a"(nr), "D"(a), "S"(b), "d"(c), "r"(r10), "r"(r8),
			   "r"(r9)
			 : "rcx", "r11", "memory");
	return ret;
}

static void *worker(void *arg)
{
	(void)arg;
	for (int i = 0; i < 3; i++)
		printf("rawmask: thread line %d\n", i);
	return NULL;
}

int main(void)
{
	uint64_t all = ~0ULL, now = 0;
	pthread_t t;
	long p;

	setvbuf(stdout, NULL, _IONBF, 0);
	if (raw(SYS_rt_sigprocmask, SIG_SETMASK, (long)&all, 0, 8, 0, 0) ||
	    raw(SYS_rt_sigprocmask, SIG_BLOCK, 0, (long)&now, 8, 0, 0))
		printf("rawmask: mask failed\n");
	else
		printf("rawmask: mask SIGUSR1 %s\n",
		       now & (1ULL << (SIGUSR1 - 1)) ? "blocked" : "open");
	p = raw(SYS_mmap, 0, 1 << 20, PROT_READ | PROT_WRITE,
		MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p < 0 && p > -4096) {
		printf("rawmask: mmap failed %ld\n", p);
	} else {
		memset((void *)p, 0x5a, 1 << 20);
		printf("rawmask: mmap %d\n", ((unsigned char *)p)[12345]);
	}
	if (pthread_create(&t, NULL, worker, NULL) || pthread_join(t, NULL))
		printf("rawmask: thread failed\n");
	return 0;
}
