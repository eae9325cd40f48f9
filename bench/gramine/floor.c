/* SPDX-License-Identifier: MIT */
/*
 * What the parts of an emulated OCALL cost on this host, for the floor
 * bench/gramine_ocall.sh compares the OCALL with (no sgxemu involved):
 *   trap      a #UD (ud2) taken by a SIGILL handler on an alternate stack,
 *             which skips it, and the handler's rt_sigreturn: the
 *             enclave's EEXIT, which traps;
 *   set_fs    one arch_prctl(ARCH_SET_FS);
 *   set_gs    one arch_prctl(ARCH_SET_GS) of a non-zero base;
 *   gettid    one gettid system call;
 *   direct    one sched_yield, the OCALL's own work done directly.
 * Each is the median of ROUNDS rounds of N operations; prints
 * "NAME NS" lines. The base writes alternate between two values and
 * put the thread's own FS back before any libc call (no TLS in between).
 */
#define _GNU_SOURCE
#include <asm/prctl.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <ucontext.h>
#include <unistd.h>

#define ROUNDS 7

static long raw2(long nr, long a, long b)
{
	long ret;

	__asm__ volatile("syscall"
			 : "=a"(ret)
			 : "a"(nr), "D"(a), "S"(b)
			 : "rcx", "r11", "memory");
	return ret;
}

static double now_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1e9 + t.tv_nsec;
}

static void skip_ud2(int sig, siginfo_t *si, void *ctx)
{
	ucontext_t *uc = ctx;

	(void)sig;
	(void)si;
	uc->uc_mcontext.gregs[REG_RIP] += 2;
}

/* N operations of @what; ns per operation. */
static double once(int what, long n)
{
	static uint64_t fs, gs_a = 0x10000, gs_b = 0x20000;
	double t0;

	if (!fs)
		raw2(SYS_arch_prctl, ARCH_GET_FS, (long)&fs);
	t0 = now_ns();
	for (long i = 0; i < n; i++) {
		switch (what) {
		case 0:
			__asm__ volatile("ud2" ::: "memory");
			break;
		case 1:	/* two writes: away and back */
			raw2(SYS_arch_prctl, ARCH_SET_FS, (long)fs + 64);
			raw2(SYS_arch_prctl, ARCH_SET_FS, (long)fs);
			break;
		case 2:
			raw2(SYS_arch_prctl, ARCH_SET_GS, (long)gs_a);
			raw2(SYS_arch_prctl, ARCH_SET_GS, (long)gs_b);
			break;
		case 3:
			raw2(SYS_gettid, 0, 0);
			break;
		case 4:
			sched_yield();
			break;
		}
	}
	return (now_ns() - t0) / (double)n / (what == 1 || what == 2 ? 2 : 1);
}

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
	static const char *names[] = { "trap", "set_fs", "set_gs", "gettid",
				       "direct" };
	long n = argc > 1 ? atol(argv[1]) : 20000;
	static char alt[65536];
	stack_t ss = { .ss_sp = alt, .ss_size = sizeof(alt) };
	struct sigaction sa;

	if (n <= 0) {
		fprintf(stderr, "floor: N must be a positive count\n");
		return 2;
	}
	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = skip_ud2;
	sa.sa_flags = SA_SIGINFO | SA_ONSTACK;
	if (sigaltstack(&ss, NULL) || sigaction(SIGILL, &sa, NULL)) {
		perror("floor: signal set-up");
		return 1;
	}
	for (int w = 0; w < 5; w++) {
		double r[ROUNDS];

		for (int i = 0; i < ROUNDS; i++)
			r[i] = once(w, n);
		qsort(r, ROUNDS, sizeof(*r), cmp);
		printf("%s %.0f\n", names[w], r[ROUNDS / 2]);
	}
	return 0;
}
