// SPDX-License-Identifier: MIT
/*
 * An SGX host program for the debugger tests (tests/integration/
 * test_gdb.sh, test_debugger.c): the mainline API and the vDSO entry, as
 * a runtime uses them under `sgxemu run`, with the debugger test enclave
 * (tests/enclaves/dbg_encl.c, layout.h) loaded from its flat image.
 *
 *   dbg_host [--nodebug] [--threads] [--wait] [--crash] [--fault] [--copies N]
 *            [--leave-inside] [--destroy] KEY.pem ENCL.bin
 *
 * After loading it calls dbg_enclave_loaded(base), where a debugger adds
 * the enclave's symbols (add-symbol-file dbg_encl.elf -o $rdi). Then:
 * three DBG_CMD_COMPUTE calls on TCS 0, checked; with --threads a second
 * thread spins in the enclave on TCS 1 meanwhile. --wait prints
 * "base 0x..." and waits for end of input before the calls (the ptrace
 * tests look at the enclave then). Exit 0 and "dbg_host: ok" if every
 * result is right; --fault then makes the enclave write through a null
 * pointer (a #PF the vDSO reports); --crash then writes through a null
 * pointer in host code. --copies
 * loads N-1 more copies after the first (never called): with a small EPC
 * the first one's pages are evicted for them. --leave-inside (with
 * --threads) exits while the second thread is still in the enclave (the
 * coverage test: the enclave is gone with a thread inside). --destroy
 * unmaps the enclave and closes its file after the calls, so the driver
 * releases it before the program exits.
 */
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>

#include "test.h"
#include "encl_util.h"
#include "shim_encl.h"
#include "dbg_encl.h"
#include "flat_load.h"

static volatile unsigned long stop_spin;
static uint64_t encl_base;

/* A debugger's breakpoint: the enclave is loaded at @base. */
__attribute__((noinline)) void dbg_enclave_loaded(uint64_t base)
{
	__asm__ volatile("" : : "r"(base) : "memory");
}

/* --crash: a real fault of host code, after the enclave ran. */
__attribute__((noinline)) static void host_crash(volatile int *p)
{
	*p = 1;
}

/* 0 after EEXIT; else -1, with the exception's vector in *vector. */
static int ecall_v(unsigned tcs, unsigned long cmd, struct dbg_args *a,
		   int *vector)
{
	struct sgx_enclave_run run;

	memset(&run, 0, sizeof(run));
	run.tcs = encl_base + tcs * 0x1000UL;
	if (shim_vdso_call(cmd, (unsigned long)(uintptr_t)a, 0, SGX_EENTER,
			   0, 0, &run))
		return -1;
	if (vector)
		*vector = run.exception_vector;
	return run.function == SGX_EEXIT ? 0 : -1;
}

static int ecall(unsigned tcs, unsigned long cmd, struct dbg_args *a)
{
	return ecall_v(tcs, cmd, a, NULL);
}

static struct dbg_args spin_args = { .stop = &stop_spin };

static void *spinner(void *arg)
{
	(void)arg;
	if (ecall(1, DBG_CMD_SPIN, &spin_args))
		fprintf(stderr, "dbg_host: spinning thread: exception\n");
	return NULL;
}

int main(int argc, char **argv)
{
	bool debug = true, threads = false, wait = false, crash = false;
	bool fault = false, leave_inside = false, destroy = false;
	unsigned copies = 1;
	uint64_t other;
	pthread_t th;
	int i = 1, bad = 0;

	for (; i < argc && argv[i][0] == '-'; i++) {
		if (!strcmp(argv[i], "--nodebug"))
			debug = false;
		else if (!strcmp(argv[i], "--threads"))
			threads = true;
		else if (!strcmp(argv[i], "--wait"))
			wait = true;
		else if (!strcmp(argv[i], "--crash"))
			crash = true;
		else if (!strcmp(argv[i], "--fault"))
			fault = true;
		else if (!strcmp(argv[i], "--leave-inside"))
			leave_inside = true;
		else if (!strcmp(argv[i], "--destroy"))
			destroy = true;
		else if (!strcmp(argv[i], "--copies") && i + 1 < argc)
			copies = (unsigned)atoi(argv[++i]);
	}
	if (argc - i != 2) {
		fprintf(stderr, "usage: dbg_host [--nodebug] [--threads] "
			"[--wait] [--crash] [--fault] [--copies N] [--leave-inside] "
			"[--destroy] KEY.pem ENCL.bin\n");
		return 2;
	}
	if (flat_load(argv[i], argv[i + 1], debug, &encl_base))
		return 1;
	for (unsigned k = 1; k < copies; k++)
		if (flat_load(argv[i], argv[i + 1], debug, &other))
			return 1;
	dbg_enclave_loaded(encl_base);
	if (wait) {
		char buf[64];

		printf("base 0x%llx\n", (unsigned long long)encl_base);
		fflush(stdout);
		while (read(0, buf, sizeof(buf)) > 0)
			;
	}
	if (threads) {
		if (pthread_create(&th, NULL, spinner, NULL))
			return 1;
		/* The calls below run while it is in the enclave. */
		while (!*(volatile unsigned long *)&spin_args.out)
			sched_yield();
	}
	for (unsigned long x = 2; x < 5; x++) {
		struct dbg_args a = { .in = x };

		if (ecall(0, DBG_CMD_COMPUTE, &a) || a.out != x * x + 1) {
			fprintf(stderr, "dbg_host: compute(%lu) = %lu\n", x, a.out);
			bad++;
		}
	}
	if (threads && leave_inside) {
		printf("dbg_host: ok, exiting with a thread inside\n");
		fflush(stdout);
		exit(bad ? 1 : 0);
	}
	if (threads) {
		stop_spin = 1;
		pthread_join(th, NULL);
	}
	if (fault) {
		/* An enclave exception (TCS 0 has two SSA frames; the vDSO
		 * reports it and the TCS is left at CSSA 1, unused after). */
		struct dbg_args a = { .stop = NULL };
		int vector = -1;

		if (ecall_v(0, DBG_CMD_FAULT, &a, &vector) == 0 || vector != 14) {
			fprintf(stderr, "dbg_host: no #PF from the enclave (%d)\n",
				vector);
			bad++;
		} else {
			printf("dbg_host: enclave exception %d\n", vector);
		}
	}
	if (destroy && copies == 1) {
		if (munmap((void *)(uintptr_t)encl_base, L_PAGES * 4096UL) ||
		    close(flat_fd)) {
			perror("dbg_host: --destroy");
			bad++;
		} else {
			printf("dbg_host: enclave destroyed\n");
		}
	}
	printf(bad ? "dbg_host: FAILED\n" : "dbg_host: ok\n");
	fflush(stdout);
	if (crash)
		host_crash(NULL);
	return bad ? 1 : 0;
}
