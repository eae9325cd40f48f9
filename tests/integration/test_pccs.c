// SPDX-License-Identifier: MIT
/*
 * `sgxemu pccs` from the outside, with curl as the HTTP client: the PCCS
 * paths answer with the PCK certificate, its TCBm/FMSPC and issuer-chain
 * headers, the CRLs (hex text, or DER with encoding=der), TCB info and QE
 * identity; bad requests get 400/404. Collateral fetched that way, files
 * as QVL names them, verifies a quote of this platform, and the server's
 * --revoke-pck makes the same quote refused.
 */
#include <signal.h>
#include <stdarg.h>
#include <spawn.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "test.h"
#include "aesm_client.h"
#include "attest/attest.h"
#include "attest/verify.h"
#include "sgxemu/attest.h"

extern char **environ;

__attribute__((constructor)) static void use_test_platform(void)
{
	tc_attest_platform();
}

struct pccs {
	pid_t pid;
	unsigned port;
	char dir[256];
	char root[4200];	/* this installation's root certificate */
};

static int sh(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Run a shell command line; its exit status (-1 if it did not run). */
static int sh(const char *fmt, ...)
{
	char cmd[4096];
	va_list ap;
	int st;

	va_start(ap, fmt);
	vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	st = system(cmd);
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/* https, as the real PCCS and `sgxemu pccs` by default; http with --http. */
static const char *scheme = "https";

/* The HTTP status of GET @path (relative to /sgx/certification/v4/). */
static int http_status(const struct pccs *p, const char *path)
{
	char cmd[1024], out[16] = "";
	FILE *f;

	snprintf(cmd, sizeof(cmd), "curl -s -o /dev/null -w '%%{http_code}' "
		 "'%s://127.0.0.1:%u/sgx/certification/v4/%s'", scheme, p->port, path);
	f = popen(cmd, "r");
	if (!f)
		return -1;
	if (!fgets(out, sizeof(out), f))
		out[0] = '\0';
	pclose(f);
	return atoi(out);
}

static bool start(struct pccs *p, const char *option)
{
	char cli[300], port[16];
	char *argv[] = { cli, (char *)"pccs", (char *)"--port", port,
			 (char *)option, NULL };

	char *abs;

	if (system("command -v curl >/dev/null 2>&1"))
		test_skip("curl is not installed");
	/* curl trusts this installation's root, which issued the server's
	 * TLS certificate, and nothing else. */
	scheme = option && !strcmp(option, "--http") ? "http" : "https";
	tc_attest();
	abs = realpath(getenv("SGXEMU_SECRETS_FILE"), NULL);
	if (!abs)
		return false;
	snprintf(p->root, sizeof(p->root), "%s.pki/root-ca.pem", abs);
	free(abs);
	setenv("CURL_CA_BUNDLE", p->root, 1);
	snprintf(cli, sizeof(cli), "%s/sgxemu", test_build_dir());
	snprintf(p->dir, sizeof(p->dir), "%s/tmp-attest/pccs-%d", test_build_dir(),
		 (int)getpid());
	mkdir(p->dir, 0700);
	/* A port of our own: try a few, each time waiting for an answer. */
	for (int attempt = 0; attempt < 8; attempt++) {
		p->port = 20000 + (unsigned)((getpid() * 7 + attempt * 997) % 40000);
		snprintf(port, sizeof(port), "%u", p->port);
		if (posix_spawn(&p->pid, cli, NULL, NULL, argv, environ))
			return false;
		for (int i = 0; i < 100; i++) {
			int st;

			if (waitpid(p->pid, &st, WNOHANG) == p->pid)
				break;		/* port taken: next one */
			if (http_status(p, "rootcacrl") == 200)
				return true;
			usleep(20000);
		}
		kill(p->pid, SIGKILL);
		waitpid(p->pid, NULL, 0);
	}
	return false;
}

static void stop(struct pccs *p)
{
	kill(p->pid, SIGTERM);
	waitpid(p->pid, NULL, 0);
	sh("rm -rf '%s'", p->dir);
}

/*
 * Fetch the collateral the way a quote provider library does and write
 * it under QVL's file names; the trusted root is this installation's,
 * given out of band.
 */
static bool fetch_collateral(const struct pccs *p)
{
	char u[64], root[4200], *abs;

	snprintf(u, sizeof(u), "%s://127.0.0.1", scheme);

	/* The installation's root, by absolute path (the commands cd). */
	abs = realpath(getenv("SGXEMU_SECRETS_FILE"), NULL);
	if (!abs)
		return false;
	snprintf(root, sizeof(root), "%s.pki/root-ca.pem", abs);
	free(abs);
	const char *decode = "python3 -c 'import sys,urllib.parse;"
		"h=[l for l in open(sys.argv[1]) if l.lower().startswith(sys.argv[2].lower()+\":\")][0];"
		"sys.stdout.write(urllib.parse.unquote(h.split(\":\",1)[1].strip()))'";

	return sh("cd '%s' && "
		  "curl -sf -D tcb.h -o tcbInfo.json %s:%u/sgx/certification/v4/tcb?fmspc=534758454d55 && "
		  "curl -sf -D qe.h -o qeIdentity.json %s:%u/sgx/certification/v4/qe/identity && "
		  "curl -sf -D crl.h -o intermediateCaCrl.der '%s:%u/sgx/certification/v4/pckcrl?ca=processor&encoding=der' && "
		  "curl -sf %s:%u/sgx/certification/v4/rootcacrl | python3 -c "
		  "'import sys; sys.stdout.buffer.write(bytes.fromhex(sys.stdin.read()))' > rootCaCrl.der && "
		  "%s tcb.h TCB-Info-Issuer-Chain > tcbSignChain.pem && "
		  "%s crl.h SGX-PCK-CRL-Issuer-Chain > pckSignChain.pem && "
		  "cp '%s' trustedRootCaCert.pem",
		  p->dir, u, p->port, u, p->port, u, p->port, u, p->port, decode, decode,
		  root) == 0;
}

static uint8_t *make_quote(size_t *len)
{
	struct sgx_key_identity id;
	struct sgx_targetinfo ti;
	struct sgx_report r;
	uint8_t rd[64] = { 9 }, *q = NULL;
	char why[256];

	memset(&id, 0, sizeof(id));
	id.attributes.flags = SGX_ATTR_INIT | SGX_ATTR_MODE64BIT;
	sgxemu_qe_target_info(&ti, NULL, 0);
	if (sgx_build_report(&tc_attest()->keys, &id, &ti, rd, &r) ||
	    sgxemu_quote_generate(&r, &q, len, why, sizeof(why)))
		test_fail(__FILE__, __LINE__, "no quote: %s", why);
	return q;
}

static int verify_with(const struct pccs *p, const uint8_t *q, size_t len)
{
	struct sgxemu_collateral c;
	struct sgxemu_verify_opts o = { .collateral = &c };
	struct sgxemu_verify_result res;
	char why[256];
	int st;

	if (sgxemu_collateral_read(p->dir, &c, why, sizeof(why))) {
		test_fail(__FILE__, __LINE__, "%s", why);
		return -1;
	}
	o.trusted_root_pem = c.root;
	st = sgxemu_quote_verify(q, len, &o, &res);
	sgxemu_collateral_free(&c);
	return st;
}

TEST(pckcert_and_status_codes)
{
	struct sgx_attest *a = tc_attest();
	struct pccs p;
	char path[512], qeid[33];

	REQUIRE(a && start(&p, NULL));
	for (int i = 0; i < 16; i++)
		snprintf(qeid + 2 * i, 3, "%02X", a->qe_id[i]);
	snprintf(path, sizeof(path), "pckcert?qeid=%s&cpusvn=02020202020202020202020202020202"
		 "&pcesvn=0200&pceid=0000", qeid);
	CHECK_EQ(http_status(&p, path), 200);
	/* The certificate and its headers, checked with openssl. */
	CHECK_EQ(sh("cd '%s' && curl -sf -D h -o pck.pem "
		    "'https://127.0.0.1:%u/sgx/certification/v4/%s' && "
		    "grep -qi '^SGX-TCBm: 020202020202020202020202020202020200' h && "
		    "grep -qi '^SGX-FMSPC: 534758454D55' h && "
		    "grep -qi '^SGX-PCK-Certificate-CA-Type: processor' h && "
		    "grep -qi '^SGX-PCK-Certificate-Issuer-Chain: .*%%0A' h && "
		    "openssl x509 -in pck.pem -noout -text | grep -q '1.2.840.113741.1.13.1'",
		    p.dir, p.port, path), 0);
	/* Another platform, a higher certified TCB than asked, bad input. */
	snprintf(path, sizeof(path), "pckcert?qeid=00112233445566778899aabbccddeeff"
		 "&cpusvn=02020202020202020202020202020202&pcesvn=0200&pceid=0000");
	CHECK_EQ(http_status(&p, path), 404);
	snprintf(path, sizeof(path), "pckcert?qeid=%s&cpusvn=01020202020202020202020202020202"
		 "&pcesvn=0200&pceid=0000", qeid);
	CHECK_EQ(http_status(&p, path), 404);
	CHECK_EQ(http_status(&p, "pckcert?qeid=zz"), 400);
	CHECK_EQ(http_status(&p, "tcb?fmspc=00906ED50000"), 404);
	CHECK_EQ(http_status(&p, "pckcrl?ca=bogus"), 400);
	CHECK_EQ(http_status(&p, "nothing/here"), 404);
	stop(&p);
}

TEST(collateral_from_pccs_verifies_a_quote)
{
	struct pccs p;
	size_t len;
	uint8_t *q = make_quote(&len);

	REQUIRE(q && start(&p, NULL));
	REQUIRE(fetch_collateral(&p));
	CHECK_EQ(verify_with(&p, q, len), 0);
	stop(&p);
	REQUIRE(start(&p, "--revoke-pck"));
	REQUIRE(fetch_collateral(&p));
	CHECK_EQ(verify_with(&p, q, len), ST_PCK_REVOKED);
	stop(&p);
	free(q);
}

/*
 * HTTPS as the real PCCS: the server's certificate verifies against this
 * installation's root and nothing else (curl's own CA store refuses it:
 * exit 60), and --http serves plain HTTP instead.
 */
TEST(https_under_the_installation_root)
{
	struct pccs p;

	REQUIRE(start(&p, NULL));
	CHECK_EQ(sh("curl -sf -o /dev/null --cacert '%s' "
		    "https://localhost:%u/sgx/certification/v4/rootcacrl",
		    p.root, p.port), 0);
	CHECK_EQ(sh("env -u CURL_CA_BUNDLE curl -s -o /dev/null "
		    "--capath /nonexistent --cacert /dev/null "
		    "https://127.0.0.1:%u/sgx/certification/v4/rootcacrl", p.port), 77);
	CHECK_EQ(sh("env -u CURL_CA_BUNDLE curl -s -o /dev/null "
		    "https://127.0.0.1:%u/sgx/certification/v4/rootcacrl", p.port), 60);
	CHECK_EQ(sh("curl -sf -o /dev/null -k "
		    "https://127.0.0.1:%u/sgx/certification/v4/rootcacrl", p.port), 0);
	/* Plain HTTP to the TLS port gets no PCCS answer. */
	CHECK(sh("curl -sf -o /dev/null "
		 "http://127.0.0.1:%u/sgx/certification/v4/rootcacrl", p.port) != 0);
	stop(&p);
	REQUIRE(start(&p, "--http"));
	CHECK_EQ(http_status(&p, "rootcacrl"), 200);
	CHECK(sh("curl -s -o /dev/null -k "
		 "https://127.0.0.1:%u/sgx/certification/v4/rootcacrl", p.port) != 0);
	stop(&p);
}
