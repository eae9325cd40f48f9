/* SPDX-License-Identifier: MIT */
/*
 * The host program of the SDK test enclave, linked with the SDK's urts as
 * any SDK application is, run under `sgxemu run` by
 * tests/integration/test_intel_sdk.sh and bench/sdk_calls.sh:
 *
 *   app ENCLAVE calls | exceptions | attest | switchless | edmm
 *   app ENCLAVE seal FILE | unseal FILE
 *   app ENCLAVE aexnotify some|none  (AEX handlers ran after AEXs, or not)
 *   app ENCLAVE bench N          (N empty ECALLs and N empty OCALLs, ns each)
 *
 * Prints one line per check ("ok NAME" or "FAIL NAME: why") and exits 0
 * when all passed.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <sgx_urts.h>
#include <sgx_uswitchless.h>

#include "encl_u.h"

static const char *encl_path;
static int failures;

static void check(int cond, const char *name, const char *fmt, long v)
{
	if (cond) {
		printf("ok %s\n", name);
	} else {
		printf("FAIL %s: ", name);
		printf(fmt, v);
		printf("\n");
		failures++;
	}
}

/* OCALLs. */
int ocall_add(int x, int *y)
{
	*y = 2 * x;
	return x + 1;
}

void ocall_empty(void)
{
}

void ocall_empty_switchless(void)
{
}

static sgx_enclave_id_t load(void)
{
	sgx_enclave_id_t eid = 0;
	sgx_status_t st = sgx_create_enclave(encl_path, 1, NULL, NULL, &eid, NULL);

	if (st != SGX_SUCCESS) {
		printf("FAIL load: sgx_create_enclave returned 0x%x\n", st);
		exit(1);
	}
	return eid;
}

static void calls(sgx_enclave_id_t eid)
{
	int v[100], n = 0, r = 0;
	long sum = 0;
	char buf[] = "abcdefgh";
	size_t len = 0;

	for (int i = 0; i < 100; i++)
		v[i] = i * i;
	check(ecall_sum(eid, &n, v, 100, &sum) == SGX_SUCCESS && n == 100 &&
	      sum == 328350, "ecall_in_count_out", "sum %ld", sum);
	check(ecall_reverse(eid, buf, 8) == SGX_SUCCESS &&
	      !strcmp(buf, "hgfedcba"), "ecall_in_out", "%ld", 0);
	check(ecall_strlen(eid, &len, "sgxemu runs the SDK") == SGX_SUCCESS &&
	      len == 19, "ecall_string", "len %ld", (long)len);
	check(ecall_ocall_chain(eid, &r, 20) == SGX_SUCCESS && r == 61,
	      "ocall_with_out_parameter", "result %ld", r);
	/* A size past what the edger8r's bridge accepts is refused before
	 * the enclave sees it. */
	check(ecall_reverse(eid, buf, (size_t)-1) == SGX_ERROR_INVALID_PARAMETER,
	      "ecall_bad_size_refused", "%ld", 0);
}

static void exceptions(sgx_enclave_id_t eid)
{
	int r = 0;

	check(ecall_exceptions(eid, &r) == SGX_SUCCESS && r == 21,
	      "exceptions_handled_in_enclave", "result %ld", r);
	/* The enclave is still usable afterwards. */
	r = 0;
	check(ecall_exceptions(eid, &r) == SGX_SUCCESS && r == 21,
	      "exceptions_again", "result %ld", r);
}

static const char secret[] = "sealed by one process, unsealed by another";

static void seal(sgx_enclave_id_t eid, const char *file)
{
	uint8_t blob[1024];
	size_t blen = 0;
	int r = -1;
	FILE *f;

	check(ecall_seal(eid, &r, (const uint8_t *)secret, sizeof(secret), blob,
			 sizeof(blob), &blen) == SGX_SUCCESS && r == 0,
	      "seal", "status 0x%lx", r);
	f = fopen(file, "wb");
	check(f && fwrite(blob, 1, blen, f) == blen && !fclose(f),
	      "seal_written", "%ld", 0);
}

static void unseal(sgx_enclave_id_t eid, const char *file)
{
	uint8_t blob[1024], out[256];
	size_t blen, olen = 0;
	int r = -1;
	FILE *f = fopen(file, "rb");

	if (!f) {
		check(0, "unseal_read", "no file %ld", 0);
		return;
	}
	blen = fread(blob, 1, sizeof(blob), f);
	fclose(f);
	check(ecall_unseal(eid, &r, blob, blen, out, sizeof(out), &olen) ==
	      SGX_SUCCESS && r == 0 && olen == sizeof(secret) &&
	      !memcmp(out, secret, sizeof(secret)), "unseal", "status 0x%lx", r);
	/* One flipped bit of the ciphertext: the MAC fails. */
	blob[blen - 1] ^= 1;
	r = 0;
	check(ecall_unseal(eid, &r, blob, blen, out, sizeof(out), &olen) ==
	      SGX_SUCCESS && r == SGX_ERROR_MAC_MISMATCH,
	      "unseal_tampered_refused", "status 0x%lx", r);
}

/* Two enclaves (two instances of one image): A reports to B. */
static void attest(sgx_enclave_id_t a)
{
	sgx_enclave_id_t b = load();
	sgx_target_info_t ti;
	sgx_report_t rep;
	int r = -1;

	check(ecall_target_info(b, &r, &ti) == SGX_SUCCESS && r == 0,
	      "target_info", "status 0x%lx", r);
	check(ecall_make_report(a, &r, &ti, &rep) == SGX_SUCCESS && r == 0,
	      "report_for_target", "status 0x%lx", r);
	check(ecall_verify_report(b, &r, &rep) == SGX_SUCCESS && r == 0,
	      "target_verifies_report", "status 0x%lx", r);
	/* One changed bit of the body: the MAC no longer matches. */
	rep.body.isv_svn ^= 1;
	check(ecall_verify_report(b, &r, &rep) == SGX_SUCCESS &&
	      r == SGX_ERROR_MAC_MISMATCH, "tampered_report_refused",
	      "status 0x%lx", r);
	sgx_destroy_enclave(b);
}

static uint64_t sl_done[2];

static void on_worker_exit(sgx_uswitchless_worker_type_t type,
			   sgx_uswitchless_worker_event_t ev,
			   const sgx_uswitchless_worker_stats_t *stats)
{
	(void)ev;
	if (stats && (int)type >= 0 && (int)type < 2)
		sl_done[type] = stats->processed;
}

static void switchless(void)
{
	sgx_uswitchless_config_t cfg = SGX_USWITCHLESS_CONFIG_INITIALIZER;
	const void *ex[32] = { 0 };
	sgx_enclave_id_t eid = 0;
	sgx_status_t st;
	int bad = 0;

	cfg.num_uworkers = 1;
	cfg.num_tworkers = 1;
	cfg.callback_func[SGX_USWITCHLESS_WORKER_EVENT_EXIT] = on_worker_exit;
	ex[SGX_CREATE_ENCLAVE_EX_SWITCHLESS_BIT_IDX] = &cfg;
	st = sgx_create_enclave_ex(encl_path, 1, NULL, NULL, &eid, NULL,
				   SGX_CREATE_ENCLAVE_EX_SWITCHLESS, ex);
	check(st == SGX_SUCCESS, "switchless_load", "status 0x%lx", st);
	if (st != SGX_SUCCESS)
		return;
	for (int i = 0; i < 2000; i++)
		bad += ecall_empty_switchless(eid) != SGX_SUCCESS;
	bad += ecall_ocalls(eid, 2000, 1) != SGX_SUCCESS;
	bad += ecall_ocalls(eid, 10, 0) != SGX_SUCCESS;
	check(!bad, "switchless_calls", "%ld failed", bad);
	sgx_destroy_enclave(eid);
	/* The workers (an untrusted one for OCALLs, a trusted one in the
	 * enclave for ECALLs) served some of them. */
	check(sl_done[SGX_USWITCHLESS_WORKER_TYPE_UNTRUSTED] > 0,
	      "switchless_ocalls_served_by_worker", "%ld",
	      (long)sl_done[SGX_USWITCHLESS_WORKER_TYPE_UNTRUSTED]);
	check(sl_done[SGX_USWITCHLESS_WORKER_TYPE_TRUSTED] > 0,
	      "switchless_ecalls_served_by_worker", "%ld",
	      (long)sl_done[SGX_USWITCHLESS_WORKER_TYPE_TRUSTED]);
}

static sgx_enclave_id_t edmm_eid;

static void *edmm_thread(void *arg)
{
	int r = -100;

	(void)arg;
	if (ecall_edmm(edmm_eid, &r, 64 * 1024, 32 * 1024) != SGX_SUCCESS)
		r = -99;
	return (void *)(long)r;
}

/* One thread: heap, stack and user region; then 4 at once on an enclave
 * with one static TCS, which the SDK adds TCS pages for (EDMM). */
static void edmm(sgx_enclave_id_t eid)
{
	pthread_t t[4];
	int r = -100;

	check(ecall_edmm(eid, &r, 1 << 20, 128 * 1024) == SGX_SUCCESS && r == 0,
	      "edmm_heap_stack_user_region", "step %ld", r);
	edmm_eid = eid;
	for (int i = 0; i < 4; i++)
		pthread_create(&t[i], NULL, edmm_thread, NULL);
	for (int i = 0; i < 4; i++) {
		void *ret;

		pthread_join(t[i], &ret);
		r = (int)(long)ret;
		check(r == 0, "edmm_dynamic_threads", "step %ld", r);
	}
}

static int aex_stop;

static void *aex_stopper(void *arg)
{
	(void)arg;
	usleep(300 * 1000);
	__atomic_store_n(&aex_stop, 1, __ATOMIC_RELEASE);
	return NULL;
}

/*
 * The AEX handlers the enclave registered ran after its AEXs ("some", the
 * enclave has AEX-Notify and the platform gives AEXs: the timer tick, on
 * by default) or never ("none": no AEX-Notify, or --aex-tick 0).
 */
static void aexnotify(sgx_enclave_id_t eid, const char *want)
{
	unsigned long n = (unsigned long)-2;
	pthread_t t;

	aex_stop = 0;
	pthread_create(&t, NULL, aex_stopper, NULL);
	if (ecall_aex_count(eid, &n, &aex_stop) != SGX_SUCCESS)
		n = (unsigned long)-2;
	pthread_join(t, NULL);
	printf("    %ld AEX handler calls\n", (long)n);
	if (!strcmp(want, "some"))
		check(n > 0 && n < (unsigned long)-2, "aex_handlers_ran",
		      "%ld calls", (long)n);
	else
		check(n == 0, "no_aex_handlers_without_aexnotify", "%ld calls",
		      (long)n);
}

static double now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

static void bench(sgx_enclave_id_t eid, long n)
{
	double t0, t1, t2;

	for (int i = 0; i < 100; i++)		/* warm up */
		ecall_empty(eid);
	t0 = now_ns();
	for (long i = 0; i < n; i++)
		ecall_empty(eid);
	t1 = now_ns();
	ecall_ocalls(eid, (unsigned long)n, 0);
	t2 = now_ns();
	/* The OCALL loop is one ECALL plus N OCALLs. */
	printf("ecall_ns %.0f\nocall_ns %.0f\n", (t1 - t0) / n,
	       ((t2 - t1) - (t1 - t0) / n) / n);
}

int main(int argc, char **argv)
{
	sgx_enclave_id_t eid;
	const char *cmd;

	if (argc < 3) {
		fprintf(stderr, "usage: %s ENCLAVE calls|exceptions|attest|"
			"switchless|edmm|seal FILE|unseal FILE|"
			"aexnotify some|none|bench N\n", argv[0]);
		return 2;
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	encl_path = argv[1];
	cmd = argv[2];
	if (!strcmp(cmd, "switchless")) {
		switchless();
		return failures != 0;
	}
	eid = load();
	if (!strcmp(cmd, "calls"))
		calls(eid);
	else if (!strcmp(cmd, "exceptions"))
		exceptions(eid);
	else if (!strcmp(cmd, "attest"))
		attest(eid);
	else if (!strcmp(cmd, "edmm"))
		edmm(eid);
	else if (!strcmp(cmd, "seal") && argc > 3)
		seal(eid, argv[3]);
	else if (!strcmp(cmd, "unseal") && argc > 3)
		unseal(eid, argv[3]);
	else if (!strcmp(cmd, "aexnotify") && argc > 3)
		aexnotify(eid, argv[3]);
	else if (!strcmp(cmd, "bench") && argc > 3)
		bench(eid, atol(argv[3]));
	else
		return 2;
	sgx_destroy_enclave(eid);
	return failures != 0;
}
