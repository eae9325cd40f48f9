/* SPDX-License-Identifier: MIT */
/*
 * bench/dcap: attestation through Intel's DCAP library ABI, in-process,
 * as DCAP applications do it: sgx_qe_get_quote() of libsgx_dcap_ql.so.1
 * and tee_verify_quote() of libsgx_dcap_quoteverify.so.1, both loaded by
 * soname from $B/dcap as a program linked against Intel's would get them
 * under sgxemu run (this program exports libsgxemu's platform API with
 * -rdynamic, as libsgxemu.so does there).
 *
 * Quote: sgx_qe_get_quote() of a REPORT targeted at the QE. Floor: one
 * ECDSA P-256 signature over the 432 signed bytes plus the REPORT's
 * AES-CMAC (what bench/attest calls the make floor).
 * Verify: tee_verify_quote() with no collateral, so that the quote
 * provider fetches it from a running `sgxemu pccs` (HTTPS, the server
 * certificate checked against the installation's root) at every call,
 * as a verifier without a cache does; with the provider's cache on
 * (verify_collateral_cache_expire_hours, as the shipped configuration
 * sets it); with the collateral given (fetched once), which is the
 * verification alone; and that QvE-checked (a report info: the QvE's
 * REPORT on top, src/dcap/qv_qve.c). Floor: the 12
 * ECDSA P-256 verifications a verifier cannot skip, each timed alone.
 * Best of ROUNDS, interleaved.
 *
 * Last line: "dcap ratio=R", R = verify floor / tee_verify_quote time
 * with the collateral fetched (the share that is unavoidable crypto).
 */
#include <dlfcn.h>
#include <netinet/in.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "attest/attest.h"
#include "attest/ecdsa.h"
#include "cpu/keys.h"
#include "dcap/dcap.h"
#include "sgxemu/attest.h"

#define N	50
#define ROUNDS	5

extern char **environ;

typedef quote3_error_t (*target_info_fn)(struct sgx_targetinfo *);
typedef quote3_error_t (*quote_size_fn)(uint32_t *);
typedef quote3_error_t (*get_quote_fn)(const struct sgx_report *, uint32_t, uint8_t *);
typedef quote3_error_t (*verify_fn)(const uint8_t *, uint32_t, const uint8_t *, time_t,
				    uint32_t *, sgx_ql_qv_result_t *,
				    sgx_ql_qe_report_info_t *,
				    tee_supp_data_descriptor_t *);
typedef quote3_error_t (*get_coll_fn)(const uint8_t *, uint32_t, uint8_t **, uint32_t *);
typedef quote3_error_t (*free_coll_fn)(uint8_t *);
typedef quote3_error_t (*set_path_fn)(uint32_t, const char *);

static double now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + t.tv_nsec * 1e-9;
}

static void *sym(void *h, const char *name)
{
	void *p = dlsym(h, name);

	if (!p)
		fprintf(stderr, "dcap: %s missing: %s\n", name, dlerror());
	return p;
}

/* A TCP connection to 127.0.0.1:@port is taken. */
static int listening(unsigned port)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons(port),
				 .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	int fd = socket(AF_INET, SOCK_STREAM, 0), ok;

	if (fd < 0)
		return 0;
	ok = !connect(fd, (struct sockaddr *)&a, sizeof(a));
	close(fd);
	return ok;
}

/* `sgxemu pccs` on a port of its own; its pid, or -1. */
static pid_t start_pccs(const char *cli, unsigned *port)
{
	for (int attempt = 0; attempt < 8; attempt++) {
		char p[16];
		char *argv[] = { (char *)cli, (char *)"pccs", (char *)"--port", p, NULL };
		pid_t pid;

		*port = 20000 + (unsigned)((getpid() * 13 + attempt * 1009) % 40000);
		snprintf(p, sizeof(p), "%u", *port);
		if (listening(*port) || posix_spawn(&pid, cli, NULL, NULL, argv, environ))
			continue;
		for (int i = 0; i < 200; i++) {
			int st;

			if (waitpid(pid, &st, WNOHANG) == pid)
				break;
			if (listening(*port))
				return pid;
			usleep(20000);
		}
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
	}
	return -1;
}

int main(void)
{
	char dir[] = "/tmp/sgxemu-bench-dcap-XXXXXX", path[600], why[256], cli[512];
	const char *b = getenv("B") ? getenv("B") : "build";
	struct sgx_key_identity app = { 0 };
	struct sgx_targetinfo ti;
	struct sgx_attest *a;
	struct sgx_report rep;
	double quote = 1e9, fetched = 1e9, cached = 1e9, given = 1e9, sign = 1e9;
	double check = 1e9, qve = 1e9, t;
	sgx_ql_qe_report_info_t info = { 0 };
	char conf_nocache[600], conf_cache[600];
	uint8_t rd[64] = { 0 }, sig[64], mac[16], *q, *coll = NULL;
	uint32_t size = 0, coll_size = 0, exp;
	sgx_ql_qv_result_t res;
	unsigned port;
	void *ql, *qv;
	pid_t pccs;
	FILE *f;
	int rc = 1;

	if (!mkdtemp(dir))
		return 1;
	snprintf(path, sizeof(path), "%s/secrets", dir);
	setenv("SGXEMU_SECRETS_FILE", path, 1);
	snprintf(path, sizeof(path), "%s/dcap/libsgx_dcap_ql.so.1", b);
	ql = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	snprintf(path, sizeof(path), "%s/dcap/libsgx_dcap_quoteverify.so.1", b);
	qv = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	if (!ql || !qv) {
		fprintf(stderr, "dcap: %s (make all builds $B/dcap)\n", dlerror());
		return 1;
	}
	target_info_fn target_info = (target_info_fn)sym(ql, "sgx_qe_get_target_info");
	quote_size_fn quote_size = (quote_size_fn)sym(ql, "sgx_qe_get_quote_size");
	get_quote_fn get_quote = (get_quote_fn)sym(ql, "sgx_qe_get_quote");
	verify_fn verify = (verify_fn)sym(qv, "tee_verify_quote");
	get_coll_fn get_coll = (get_coll_fn)sym(qv, "tee_qv_get_collateral");
	free_coll_fn free_coll = (free_coll_fn)sym(qv, "tee_qv_free_collateral");
	set_path_fn set_path = (set_path_fn)sym(qv, "sgx_qv_set_path");

	if (!target_info || !quote_size || !get_quote || !verify || !get_coll ||
	    !free_coll || !set_path)
		return 1;
	if (sgx_attest_get(&a, why, sizeof(why))) {
		fprintf(stderr, "dcap: %s\n", why);
		return 1;
	}
	/* The PCCS and the QCNL configuration that sends the provider there. */
	snprintf(cli, sizeof(cli), "%s/sgxemu", b);
	pccs = start_pccs(cli, &port);
	if (pccs < 0) {
		fprintf(stderr, "dcap: %s pccs did not start\n", cli);
		return 1;
	}
	for (int cache = 0; cache < 2; cache++) {
		char *conf = cache ? conf_cache : conf_nocache;

		snprintf(conf, 600, "%s/qcnl%d.conf", dir, cache);
		f = fopen(conf, "w");
		if (!f)
			goto out;
		fprintf(f, "{ \"pccs_url\": \"https://localhost:%u/sgx/certification/v4/\",\n"
			"  \"use_secure_cert\": true, \"retry_times\": 0%s }\n", port,
			cache ? ", \"verify_collateral_cache_expire_hours\": 168" : "");
		fclose(f);
	}
	setenv("QCNL_CONF_PATH", conf_nocache, 1);
	snprintf(path, sizeof(path), "%s/dcap/libdcap_quoteprov.so.1", b);
	if (set_path(SGX_QV_QPL_PATH, path))
		goto out;

	app.attributes.flags = SGX_ATTR_INIT | SGX_ATTR_MODE64BIT;
	if (target_info(&ti) || quote_size(&size) || !(q = malloc(size)))
		goto out;
	sgx_build_report(&a->keys, &app, &ti, rd, &rep);
	if (get_quote(&rep, size, q) || get_coll(q, size, &coll, &coll_size)) {
		fprintf(stderr, "dcap: the first quote or its collateral failed\n");
		goto out;
	}
	for (int r = 0; r < ROUNDS; r++) {
		t = now();
		for (int i = 0; i < N; i++)
			if (get_quote(&rep, size, q))
				goto out;
		if ((t = (now() - t) / N) < quote)
			quote = t;
		t = now();
		for (int i = 0; i < N; i++)
			if (verify(q, size, NULL, time(NULL), &exp, &res, NULL, NULL) || res)
				goto out;
		if ((t = (now() - t) / N) < fetched)
			fetched = t;
		setenv("QCNL_CONF_PATH", conf_cache, 1);
		t = now();
		for (int i = 0; i < N; i++)
			if (verify(q, size, NULL, time(NULL), &exp, &res, NULL, NULL) || res)
				goto out;
		if ((t = (now() - t) / N) < cached)
			cached = t;
		setenv("QCNL_CONF_PATH", conf_nocache, 1);
		t = now();
		for (int i = 0; i < N; i++)
			if (verify(q, size, coll, time(NULL), &exp, &res, NULL, NULL) || res)
				goto out;
		if ((t = (now() - t) / N) < given)
			given = t;
		/* QvE-checked: the same, and the QvE's REPORT (for any
		 * TARGETINFO: EREPORT costs the same for each). */
		t = now();
		for (int i = 0; i < N; i++)
			if (verify(q, size, coll, time(NULL), &exp, &res, &info, NULL) || res)
				goto out;
		if ((t = (now() - t) / N) < qve)
			qve = t;
		t = now();
		for (int i = 0; i < N; i++)
			if (sgx_ecdsa_sign(a->att_key, q, 432, sig) ||
			    sgx_cmac(a->keys.root[SGX_KEYNAME_REPORT], &rep.body, 384, mac))
				goto out;
		if ((t = (now() - t) / N) < sign)
			sign = t;
		t = now();
		for (int i = 0; i < N; i++)
			if (!sgx_ecdsa_verify(a->att_key, q, 432, sig))
				goto out;
		if ((t = (now() - t) / N) < check)
			check = t;
	}
	printf("dcap: quote of %u bytes, best of %d x %d, pccs on port %u\n",
	       size, ROUNDS, N, port);
	printf("dcap: sgx_qe_get_quote  %8.1f us  (floor: ECDSA sign + CMAC %6.1f us, "
	       "ratio %.2f)\n", quote * 1e6, sign * 1e6, sign / quote);
	printf("dcap: tee_verify_quote  %8.1f us  collateral fetched from the pccs "
	       "(floor: 12 ECDSA verifies %6.1f us, ratio %.2f)\n",
	       fetched * 1e6, 12 * check * 1e6, 12 * check / fetched);
	printf("dcap: tee_verify_quote  %8.1f us  collateral from the provider's "
	       "cache (ratio %.2f)\n", cached * 1e6, 12 * check / cached);
	printf("dcap: tee_verify_quote  %8.1f us  collateral given (ratio %.2f; "
	       "the fetch costs %.1f us)\n", given * 1e6, 12 * check / given,
	       (fetched - given) * 1e6);
	printf("dcap: tee_verify_quote  %8.1f us  QvE-checked, collateral given "
	       "(%.2f x the unchecked call)\n", qve * 1e6, qve / given);
	printf("dcap ratio=%.2f\n", 12 * check / fetched);
	rc = 0;
out:
	if (rc)
		fprintf(stderr, "dcap: a call failed\n");
	if (coll)
		free_coll(coll);
	kill(pccs, SIGTERM);
	waitpid(pccs, NULL, 0);
	snprintf(path, sizeof(path), "rm -rf '%s'", dir);
	if (system(path))
		rc = 1;
	return rc;
}
