/* SPDX-License-Identifier: MIT */
/*
 * The host of bench/oe_calls (an Open Enclave 0.19 host, run under
 * `sgxemu run`):
 *
 *   calls_host ENCLAVE regular ecall|ocall N
 *       N empty ECALLs, or N empty OCALLs (made by one ECALL);
 *   calls_host ENCLAVE switchless ecall|ocall N HOST_WORKERS ENCLAVE_WORKERS
 *       the same through OE's switchless calls, the enclave made with
 *       OE_ENCLAVE_SETTING_CONTEXT_SWITCHLESS and those worker counts;
 *   calls_host ENCLAVE simulate ecall|ocall N
 *   calls_host ENCLAVE simulate-switchless ecall|ocall N HOST_W ENCLAVE_W
 *       the same in OE's simulation mode (OE_ENCLAVE_FLAG_SIMULATE: OE's
 *       runtimes on both sides, no ENCLU, no SGX needed), run without
 *       sgxemu: what OE's own work costs without the transitions, and its
 *       switchless calls with no platform under them.
 *
 * Prints "ecall_ns X" or "ocall_ns X": wall-clock ns per call, after
 * N / 10 calls of warm-up (workers started, pages touched). One kind of
 * call per process, so that the engine's counts of a run are its own.
 */
#include <openenclave/host.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "calls_u.h"

void host_empty(void)
{
}

void host_empty_switchless(void)
{
}

static double now_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1e9 + t.tv_nsec;
}

/* @n ECALLs (switchless or not); 0 when each returned OE_OK. */
static int ecalls(oe_enclave_t *e, long n, int switchless)
{
	for (long i = 0; i < n; i++)
		if ((switchless ? enc_empty_switchless(e) : enc_empty(e)) != OE_OK)
			return -1;
	return 0;
}

/* One ECALL making @n OCALLs; 0 when it and each of them returned OE_OK. */
static int ocall_loop(oe_enclave_t *e, uint64_t n, int switchless)
{
	uint64_t done = 0;

	if (enc_ocalls(e, &done, n, switchless) != OE_OK || done != n)
		return -1;
	return 0;
}

int main(int argc, char **argv)
{
	oe_enclave_setting_context_switchless_t sl = { 0, 0 };
	oe_enclave_setting_t setting = {
		.setting_type = OE_ENCLAVE_SETTING_CONTEXT_SWITCHLESS,
		.u.context_switchless_setting = &sl,
	};
	oe_enclave_t *e = NULL;
	int switchless, simulate, ocalls;
	double t0;
	long n;

	if (argc < 5 || (strcmp(argv[3], "ecall") && strcmp(argv[3], "ocall")) ||
	    (strcmp(argv[2], "regular") && strcmp(argv[2], "simulate") &&
	     ((strcmp(argv[2], "switchless") &&
	       strcmp(argv[2], "simulate-switchless")) || argc < 7))) {
		fprintf(stderr, "usage: %s ENCLAVE regular|simulate ecall|ocall "
			"N | ENCLAVE switchless|simulate-switchless ecall|ocall N HOST_WORKERS "
			"ENCLAVE_WORKERS\n", argv[0]);
		return 2;
	}
	switchless = strstr(argv[2], "switchless") != NULL;
	simulate = !strncmp(argv[2], "simulate", 8);
	ocalls = !strcmp(argv[3], "ocall");
	n = atol(argv[4]);
	if (n <= 0)
		n = 100000;
	if (switchless) {
		sl.max_host_workers = (size_t)atol(argv[5]);
		sl.max_enclave_workers = (size_t)atol(argv[6]);
	}
	if (oe_create_calls_enclave(argv[1], OE_ENCLAVE_TYPE_SGX,
				    OE_ENCLAVE_FLAG_DEBUG |
				    (simulate ? OE_ENCLAVE_FLAG_SIMULATE : 0),
				    switchless ? &setting : NULL, switchless,
				    &e) != OE_OK) {
		fprintf(stderr, "calls_host: cannot create the enclave\n");
		return 1;
	}
	if (ocalls) {
		if (ocall_loop(e, (uint64_t)n / 10 + 1, switchless))
			goto fail;
		t0 = now_ns();
		if (ocall_loop(e, (uint64_t)n, switchless))
			goto fail;
	} else {
		if (ecalls(e, n / 10 + 1, switchless))
			goto fail;
		t0 = now_ns();
		if (ecalls(e, n, switchless))
			goto fail;
	}
	printf("%s_ns %.1f\n", argv[3], (now_ns() - t0) / (double)n);
	fflush(stdout);
	oe_terminate_enclave(e);
	return 0;
fail:
	fprintf(stderr, "calls_host: a call failed\n");
	oe_terminate_enclave(e);
	return 1;
}
