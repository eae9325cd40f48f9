/* SPDX-License-Identifier: MIT */
/*
 * `make stress`: the platform under mixed load for STRESS_S seconds
 * (default 120), then an account of what was lost.
 *
 * 16 worker threads share 8 EPC-paging enclaves (paging_encl, 4 MiB of
 * heap each: 32 MiB of enclave memory in an 8 MiB EPC, 4x oversubscribed).
 * Worker t owns TCS t%2 of paging enclave t/2 and half of its heap, and
 * TCS t%2 of a test enclave (test_encl, for exceptions) of the same group,
 * and a sealing enclave of its own (keys_encl, for EGETKEY). In a loop it
 * picks one of:
 *   check    P_CHECK of a random part of its heap: the enclave reads every
 *            value and counts those that differ from the pattern of the
 *            current seed (RSI), and returns a checksum the host also
 *            computes from the formula (paging_encl.h);
 *   refill   P_FILL of its whole heap with a new seed, then a full check;
 *   report   P_REPORT (EREPORT into its heap's last page): the REPORT's
 *            MRENCLAVE must be the enclave's;
 *   getkey   EGETKEY of the MRENCLAVE seal key in its keys_encl: the key
 *            must be the one it got first;
 *   fault    ud2 or a divide error in test_encl: #UD/#DE, the enclave's
 *            handler (nested EENTER) skips it, ERESUME finishes.
 * Meanwhile the main thread sends SIGUSR1 to random workers (asynchronous
 * exits), stops a random worker now and then and starts a new thread in
 * its place on the same TCSs and heap (thread churn: the pages, seeds and
 * keys must survive their thread), and forks once at half time (the child
 * exits at once; the parent must carry on untouched: while the child
 * lives the enclaves are shared with it and not reclaimed, and once it
 * is gone they are reclaimed again and the EPC it held comes back, see
 * src/driver/epc_fork.c).
 *
 * At the end every heap is checked once more, all enclaves are destroyed,
 * and the run passes when no value was lost (mismatches x 8 bytes), no
 * entry ended other than expected, and the EPC's free page count is back
 * at its value before the enclaves were built. The figures are printed.
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "test.h"
#include "../enclaves/paging_util.h"

#define NR_GROUPS	8
#define NR_WORKERS	(2 * NR_GROUPS)
#define EPC_MIB		8
#define HEAP_MIB	4		/* per paging enclave */
#define K_GETKEY	2		/* keys_encl.S */

struct group {
	struct pencl p;			/* paging enclave */
	struct sgxemu_enclave *t;	/* test enclave (faults) */
	uint64_t t_base;
	uint8_t mrenclave[32];		/* of p */
};

/* What survives a worker's thread: its enclaves, range, seed and key. */
struct slot {
	int id;
	struct group *g;
	int tcs;			/* 0 or 1 */
	struct sgxemu_enclave *k;	/* keys enclave */
	uint64_t k_base;
	uint64_t first, count;		/* checked heap pages */
	uint64_t seed;
	uint8_t key[16];
	bool have_key;
	uint64_t rng;
	pthread_t thread;
	atomic_bool stop, running;
};

static struct group groups[NR_GROUPS];
static struct slot slots[NR_WORKERS];
static atomic_bool done;
static atomic_ullong n_check, n_refill, n_report, n_getkey, n_fault;
static atomic_ullong bytes_checked, values_lost, unexpected, aex_total;
static atomic_ullong signals_seen;

static void fail(struct slot *s, const char *what, const struct sgxemu_run *run)
{
	atomic_fetch_add(&unexpected, 1);
	fprintf(stderr, "stress: worker %d: %s (exit %u vector %u addr 0x%llx)\n",
		s->id, what, run ? run->exit_reason : 0,
		run ? run->exception.vector : 0,
		run ? (unsigned long long)run->exception.address : 0ULL);
}

static uint64_t next_rand(struct slot *s)
{
	s->rng ^= s->rng << 13;
	s->rng ^= s->rng >> 7;
	s->rng ^= s->rng << 17;
	return s->rng;
}

static uint64_t p_tcs(struct slot *s)
{
	return s->g->p.base + (uint64_t)s->tcs * 4096;
}

/* P_CHECK of [first, first + n): every value and the checksum. */
static void check(struct slot *s, uint64_t first, uint64_t n)
{
	struct sgxemu_run run;

	if (tu_call(&run, p_tcs(s), P_CHECK, first, n, s->seed) ||
	    run.exit_reason != SGXEMU_EXIT_EEXIT) {
		fail(s, "P_CHECK did not EEXIT", &run);
		return;
	}
	atomic_fetch_add(&bytes_checked, 2 * n * 4096);
	if (run.regs.rsi) {
		atomic_fetch_add(&values_lost, run.regs.rsi);
		fprintf(stderr, "stress: worker %d: %llu values lost in pages "
			"[%llu, %llu)\n", s->id, (unsigned long long)run.regs.rsi,
			(unsigned long long)first, (unsigned long long)(first + n));
	} else if (run.regs.rdx != expected_checksum(s->seed, first, n)) {
		fail(s, "checksum differs from the formula", &run);
	}
}

static void refill(struct slot *s)
{
	struct sgxemu_run run;
	uint64_t seed = next_rand(s);

	if (tu_call(&run, p_tcs(s), P_FILL, s->first, s->count, seed) ||
	    run.exit_reason != SGXEMU_EXIT_EEXIT) {
		fail(s, "P_FILL did not EEXIT", &run);
		return;
	}
	s->seed = seed;
	check(s, s->first, s->count);
}

/* EREPORT into the page after the checked range. */
static void report(struct slot *s)
{
	struct sgxemu_run run;
	uint64_t mr;

	memcpy(&mr, s->g->mrenclave, 8);
	if (tu_call(&run, p_tcs(s), P_REPORT, s->first + s->count, 0, 0) ||
	    run.exit_reason != SGXEMU_EXIT_EEXIT)
		fail(s, "P_REPORT did not EEXIT", &run);
	else if (run.regs.rdx != mr)
		fail(s, "REPORT.MRENCLAVE is not the enclave's", &run);
}

static void getkey(struct slot *s)
{
	struct sgx_keyrequest req __attribute__((aligned(512)));
	uint8_t key[16];
	struct sgxemu_run run;

	memset(&req, 0, sizeof(req));
	req.keyname = SGX_KEYNAME_SEAL;
	req.keypolicy = SGX_KEYPOLICY_MRENCLAVE;
	if (tu_call(&run, s->k_base, K_GETKEY, (uintptr_t)&req,
		    (uintptr_t)key, 0) || run.exit_reason != SGXEMU_EXIT_EEXIT ||
	    run.regs.rdx != 0) {
		fail(s, "EGETKEY failed", &run);
		return;
	}
	if (!s->have_key) {
		memcpy(s->key, key, 16);
		s->have_key = true;
	} else if (memcmp(s->key, key, 16)) {
		fail(s, "the seal key changed", &run);
	}
}

/* An exception the enclave handles itself: AEX, handler, ERESUME. */
static void fault(struct slot *s)
{
	bool ud = next_rand(s) & 1;
	uint64_t tcs = s->g->t_base + (s->tcs ? L_TCS1 : L_TCS0);
	struct sgxemu_run run;

	if (tu_call(&run, tcs, ud ? CMD_UD2 : CMD_DIV0, 0, 0, 0) ||
	    run.exit_reason != SGXEMU_EXIT_EXCEPTION ||
	    run.exception.vector != (ud ? X86_TRAP_UD : X86_TRAP_DE)) {
		fail(s, "the fault did not AEX as expected", &run);
		return;
	}
	/* The handler entry (CSSA 1) skips the 2-byte instruction. */
	if (tu_call(&run, tcs, 0, 2, 0, 0) || run.exit_reason != SGXEMU_EXIT_EEXIT) {
		fail(s, "the exception handler did not EEXIT", &run);
		return;
	}
	if (tu_resume(&run, tcs) || run.exit_reason != SGXEMU_EXIT_EEXIT ||
	    run.regs.rdx != (ud ? 0x0d0d : 0xd1d1))
		fail(s, "ERESUME after the handler did not finish", &run);
}

static void *worker(void *arg)
{
	struct slot *s = arg;

	while (!atomic_load(&done) && !atomic_load(&s->stop)) {
		uint64_t r = next_rand(s), op = r % 16;

		if (op < 7) {
			uint64_t n = 1 + (r >> 8) % 64;
			uint64_t first = s->first + (r >> 20) % (s->count - n + 1);

			check(s, first, n);
			atomic_fetch_add(&n_check, 1);
		} else if (op < 8) {
			refill(s);
			atomic_fetch_add(&n_refill, 1);
		} else if (op < 10) {
			report(s);
			atomic_fetch_add(&n_report, 1);
		} else if (op < 12) {
			getkey(s);
			atomic_fetch_add(&n_getkey, 1);
		} else {
			fault(s);
			atomic_fetch_add(&n_fault, 1);
		}
	}
	atomic_fetch_add(&aex_total, sgxemu_thread_aex_count());
	atomic_store(&s->running, false);
	return NULL;
}

static void on_usr1(int sig)
{
	(void)sig;
	atomic_fetch_add(&signals_seen, 1);
}

static int start(struct slot *s)
{
	atomic_store(&s->stop, false);
	atomic_store(&s->running, true);
	return pthread_create(&s->thread, NULL, worker, s);
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static uint64_t epc_free(void)
{
	struct sgxemu_platform_stats ps;

	return sgxemu_platform_stats(&ps) ? 0 : ps.epc_free_pages;
}

static int build(void)
{
	char path[512];
	const char *why;

	snprintf(path, sizeof(path), "%s/enclaves/keys_encl.bin", test_build_dir());
	for (int i = 0; i < NR_GROUPS; i++) {
		struct group *g = &groups[i];
		struct sgxemu_enclave_info info;

		why = pload(&g->p, HEAP_MIB);
		if (!why)
			g->t = tu_load_test_encl(&g->t_base, &why);
		if (why || !g->t || sgxemu_enclave_get_info(g->p.e, &info)) {
			fprintf(stderr, "stress: group %d: %s\n", i, why ? why : "no info");
			return -1;
		}
		memcpy(g->mrenclave, info.mrenclave, 32);
	}
	for (int t = 0; t < NR_WORKERS; t++) {
		struct slot *s = &slots[t];
		struct sgxemu_run run;

		s->id = t;
		s->g = &groups[t / 2];
		s->tcs = t % 2;
		/* Each half of the heap, less one page for REPORTs. */
		s->count = s->g->p.heap_pages / 2 - 1;
		s->first = s->tcs * (s->g->p.heap_pages / 2);
		s->rng = 0x9e3779b97f4a7c15ULL * (t + 1);
		s->seed = next_rand(s);
		s->k = tu_load_layout(path, &s->k_base, &why);
		if (!s->k) {
			fprintf(stderr, "stress: keys enclave %d: %s\n", t, why);
			return -1;
		}
		if (tu_call(&run, p_tcs(s), P_FILL, s->first, s->count, s->seed) ||
		    run.exit_reason != SGXEMU_EXIT_EEXIT) {
			fprintf(stderr, "stress: first fill of worker %d failed\n", t);
			return -1;
		}
	}
	return 0;
}

int main(void)
{
	struct sgxemu_platform_config cfg = {
		.epc_size = EPC_MIB << 20, .sgx2 = -1, .guard = -1, .host_enclu = -1,
		.aexnotify = -1,
	};
	const char *env = getenv("STRESS_S");
	double secs = env && atof(env) > 0 ? atof(env) : 120, t0, t_fork, t_end;
	unsigned long long kills = 0, signals = 0;
	struct sgxemu_platform_stats ps;
	struct slot *dying = NULL;
	struct sigaction sa;
	uint64_t free_start, free_end;
	uint64_t rng = 0x1234567;
	int fork_status = -1;
	bool forked = false, ok;

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (sgxemu_platform_configure(&cfg) || sgxemu_platform_init()) {
		fprintf(stderr, "stress: the platform did not start\n");
		return 1;
	}
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_usr1;
	sa.sa_flags = SA_RESTART;
	if (sgxemu_sigaction(SIGUSR1, &sa, NULL)) {
		perror("stress: sigaction");
		return 1;
	}
	free_start = epc_free();
	printf("stress: %d workers, %d paging enclaves x %d MiB in a %d MiB EPC "
	       "(%dx), %.0f s\n", NR_WORKERS, NR_GROUPS, HEAP_MIB, EPC_MIB,
	       NR_GROUPS * HEAP_MIB / EPC_MIB, secs);
	if (build())
		return 1;
	for (int t = 0; t < NR_WORKERS; t++)
		if (start(&slots[t])) {
			perror("stress: pthread_create");
			return 1;
		}

	t0 = now();
	/* STRESS_FORK=0 leaves the fork out (to tell its effects apart). */
	env = getenv("STRESS_FORK");
	t_fork = env && !strcmp(env, "0") ? 1e300 : t0 + secs / 2;
	while (now() - t0 < secs) {
		struct timespec step = { 0, 2 * 1000 * 1000 };
		struct slot *s;

		rng = rng * 6364136223846793005ULL + 1442695040888963407ULL;
		s = &slots[(rng >> 33) % NR_WORKERS];
		if (atomic_load(&s->running) && !pthread_kill(s->thread, SIGUSR1))
			signals++;
		/* About twice a second: a worker's thread is told to end
		 * (after its current operation); once it has, another takes
		 * over its TCSs and heap. */
		if (!dying && (rng >> 20) % 250 == 0) {
			dying = s;
			atomic_store(&s->stop, true);
		}
		if (dying && !atomic_load(&dying->running)) {
			pthread_join(dying->thread, NULL);
			kills++;
			if (start(dying)) {
				perror("stress: pthread_create");
				atomic_fetch_add(&unexpected, 1);
			}
			dying = NULL;
		}
		if (!forked && now() >= t_fork) {
			pid_t pid = fork();

			forked = true;
			if (pid == 0)
				_exit(0);
			if (pid < 0 || waitpid(pid, &fork_status, 0) != pid)
				fork_status = -1;
			printf("stress: forked at %.1f s, child gone at %.1f s "
			       "(STRESS_FORK=0 leaves the fork out)\n",
			       t_fork - t0, now() - t0);
		}
		nanosleep(&step, NULL);
	}
	atomic_store(&done, true);
	for (int t = 0; t < NR_WORKERS; t++)
		pthread_join(slots[t].thread, NULL);
	t_end = now();

	/* Nothing lost: every worker's whole heap, once more. */
	for (int t = 0; t < NR_WORKERS; t++)
		check(&slots[t], slots[t].first, slots[t].count);
	sgxemu_platform_stats(&ps);
	for (int t = 0; t < NR_WORKERS; t++)
		if (sgxemu_enclave_destroy(slots[t].k))
			atomic_fetch_add(&unexpected, 1);
	for (int i = 0; i < NR_GROUPS; i++)
		if (sgxemu_enclave_destroy(groups[i].p.e) ||
		    sgxemu_enclave_destroy(groups[i].t))
			atomic_fetch_add(&unexpected, 1);
	free_end = epc_free();

	printf("stress: %.1f s of load (%.1f s with the final checks): %llu "
	       "checks, %llu refills, %llu EREPORTs, %llu EGETKEYs, %llu handled "
	       "faults\n", t_end - t0, now() - t0,
	       (unsigned long long)n_check, (unsigned long long)n_refill,
	       (unsigned long long)n_report, (unsigned long long)n_getkey,
	       (unsigned long long)n_fault);
	printf("stress: %llu MiB read back and checked, %llu pages evicted, "
	       "%llu reloaded, %llu reload failures\n",
	       (unsigned long long)(bytes_checked >> 20),
	       (unsigned long long)ps.pages_evicted,
	       (unsigned long long)ps.pages_reloaded,
	       (unsigned long long)ps.reload_failures);
	printf("stress: %llu signals sent, %llu handled, %llu AEXs, %llu thread "
	       "replacements, fork: %s\n", signals,
	       (unsigned long long)signals_seen, (unsigned long long)aex_total,
	       kills, !forked ? "not reached" :
	       fork_status == 0 ? "child exited 0" : "FAILED");
	printf("stress: %llu bytes lost, %llu unexpected exits, EPC free %llu "
	       "at start, %llu at end\n",
	       (unsigned long long)values_lost * 8,
	       (unsigned long long)unexpected,
	       (unsigned long long)free_start, (unsigned long long)free_end);
	ok = !values_lost && !unexpected && free_end == free_start &&
	     (t_fork > 1e299 || (forked && fork_status == 0)) &&
	     !ps.reload_failures;
	printf("stress: %s\n", ok ? "PASS" : "FAIL");
	return ok ? 0 : 1;
}
