// SPDX-License-Identifier: MIT
/*
 * `sgxemu pccs` from the outside, with curl as the HTTP client: the PCCS
 * paths answer with the PCK certificate, its TCBm/FMSPC and issuer-chain
 * headers, the CRLs (hex text, or DER with encoding=der), TCB info and QE
 * identity; bad requests get 400/404. Collateral fetched that way, files
 * as QVL names them, verifies a quote of this platform, and the server's
 * --revoke-pck makes the same quote refused.
 */
#include <arpa/inet.h>
#include <dlfcn.h>
#include <netinet/in.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <spawn.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "test.h"
#include "aesm_client.h"
#include "attest/attest.h"
#include "attest/verify.h"
#include "dcap/dcap.h"
#include "dcap/qpl.h"
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

/* ---- the quote provider library (libdcap_quoteprov.so.1) against it ---- */

struct qpl {
	void *so;
	uint32_t (*get_config)(const sgx_ql_pck_cert_id_t *, sgx_ql_config_t **);
	uint32_t (*free_config)(sgx_ql_config_t *);
	uint32_t (*get_coll)(const uint8_t *, uint16_t, const char *,
			     sgx_ql_qve_collateral_t **);
	uint32_t (*free_coll)(sgx_ql_qve_collateral_t *);
	uint32_t (*set_log)(sgx_ql_logging_callback_t, sgx_ql_log_level_t);
};

static int log_lines;
static char last_log[600];

static void on_log(sgx_ql_log_level_t level, const char *msg)
{
	(void)level;
	log_lines++;
	snprintf(last_log, sizeof(last_log), "%s", msg);
}

static bool qpl_open(struct qpl *q)
{
	char path[512];

	snprintf(path, sizeof(path), "%s/dcap/libdcap_quoteprov.so.1", test_build_dir());
	q->so = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	if (!q->so) {
		test_fail(__FILE__, __LINE__, "%s", dlerror());
		return false;
	}
	*(void **)&q->get_config = dlsym(q->so, "sgx_ql_get_quote_config");
	*(void **)&q->free_config = dlsym(q->so, "sgx_ql_free_quote_config");
	*(void **)&q->get_coll = dlsym(q->so, "sgx_ql_get_quote_verification_collateral");
	*(void **)&q->free_coll = dlsym(q->so, "sgx_ql_free_quote_verification_collateral");
	*(void **)&q->set_log = dlsym(q->so, "sgx_ql_set_logging_callback");
	if (q->set_log)
		q->set_log(on_log, SGX_QL_LOG_ERROR);
	return q->get_config && q->free_config && q->get_coll && q->free_coll &&
	       q->set_log;
}

/* The QCNL configuration file for this test, named by QCNL_CONF_PATH. */
static void qcnl(const struct pccs *p, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static void qcnl(const struct pccs *p, const char *fmt, ...)
{
	char path[300];
	va_list ap;
	FILE *f;

	snprintf(path, sizeof(path), "%s/qcnl.conf", p->dir);
	f = fopen(path, "w");
	if (!f) {
		test_fail(__FILE__, __LINE__, "cannot write %s", path);
		return;
	}
	va_start(ap, fmt);
	vfprintf(f, fmt, ap);
	va_end(ap);
	fclose(f);
	setenv("QCNL_CONF_PATH", path, 1);
}

static void cert_id(sgx_ql_pck_cert_id_t *id, uint8_t *qeid, uint8_t *cpusvn,
		    uint16_t *pcesvn)
{
	memset(id, 0, sizeof(*id));
	memcpy(qeid, tc_attest()->qe_id, 16);
	memset(cpusvn, 2, 16);
	*pcesvn = 2;
	id->p_qe3_id = qeid;
	id->qe3_id_size = 16;
	id->p_platform_cpu_svn = cpusvn;
	id->p_platform_pce_isv_svn = pcesvn;
}

/*
 * The quote library's question (sgx_ql_get_quote_config) over HTTPS with
 * use_secure_cert true: the PCK chain it returns is the certification
 * data the platform's QE puts in its quotes, byte for byte.
 */
TEST(quote_provider_gives_the_pck_chain)
{
	struct sgx_attest *a = tc_attest();
	uint8_t qeid[16], cpusvn[16];
	sgx_ql_pck_cert_id_t id;
	sgx_ql_config_t *cfg = NULL;
	uint16_t pcesvn;
	struct pccs p;
	struct qpl q;

	REQUIRE(a && qpl_open(&q) && start(&p, NULL));
	qcnl(&p, "{\n  // as the shipped file\n  \"pccs_url\": "
	     "\"https://localhost:%u/sgx/certification/v4/\"\n"
	     "  ,\"use_secure_cert\": true\n}\n", p.port);
	cert_id(&id, qeid, cpusvn, &pcesvn);
	REQUIRE_EQ(q.get_config(&id, &cfg), 0);
	CHECK_EQ(cfg->version, 1u);
	CHECK_EQ(cfg->cert_data_size, (uint32_t)a->cert_len);
	CHECK(!memcmp(cfg->p_cert_data, a->cert_data, a->cert_len));
	CHECK_MEM(cfg->cert_cpu_svn, a->pck_ext.cpusvn, 16);
	CHECK_EQ(cfg->cert_pce_isv_svn, a->pck_ext.pcesvn);
	q.free_config(cfg);

	/* Another platform's QE id: no certificate data for it (404). */
	qeid[0] ^= 0xff;
	log_lines = 0;
	CHECK_EQ(q.get_config(&id, &cfg), SGX_QL_NO_PLATFORM_CERT_DATA);
	CHECK_EQ(log_lines, 1);
	CHECK(strstr(last_log, "HTTP 404") != NULL);
	qeid[0] ^= 0xff;
	/* Legacy KEY=VALUE form, no certificate check. */
	qcnl(&p, "PCCS_URL=https://127.0.0.1:%u/sgx/certification/v4/\n"
	     "USE_SECURE_CERT=FALSE\n", p.port);
	REQUIRE_EQ(q.get_config(&id, &cfg), 0);
	q.free_config(cfg);
	CHECK_EQ(q.get_config(NULL, &cfg), SGX_QL_ERROR_INVALID_PARAMETER);
	stop(&p);
	mkdir(p.dir, 0700);		/* for the configurations below */

	/* The PCCS down: a network error, after the configured retries. */
	qcnl(&p, "{\"pccs_url\": \"https://127.0.0.1:%u/sgx/certification/v4/\", "
	     "\"retry_times\": 1, \"retry_delay\": 0}", p.port);
	log_lines = 0;
	CHECK_EQ(q.get_config(&id, &cfg), SGX_QL_NETWORK_ERROR);
	CHECK_EQ(log_lines, 1);
	/* A configuration that is not JSON after all. */
	qcnl(&p, "{\"pccs_url\": \"https://x/\",, }");
	CHECK_EQ(q.get_config(&id, &cfg), SGX_QL_CONFIG_INVALID_JSON);
	CHECK(strstr(last_log, "not valid JSON") != NULL);
	unsetenv("QCNL_CONF_PATH");
	sh("rm -rf '%s'", p.dir);
	dlclose(q.so);
}

/* Hex text (collateral version 3.0) or DER (3.1) into @out. */
static bool crl_bytes(const char *data, uint32_t size, bool der,
		      uint8_t **out, size_t *len)
{
	size_t n = der ? size : strnlen(data, size) / 2;

	*out = malloc(n ? n : 1);
	*len = n;
	if (!*out)
		return false;
	if (der) {
		memcpy(*out, data, n);
		return true;
	}
	return test_unhex(data, *out, n);
}

/* The provider's collateral as the verifier's, trusting @root. */
static int verify_provided(const sgx_ql_qve_collateral_t *c, const char *root,
			   const uint8_t *q, size_t len)
{
	struct sgxemu_collateral sc = { 0 };
	struct sgxemu_verify_opts o = { .collateral = &sc, .trusted_root_pem = root };
	struct sgxemu_verify_result res;
	bool der = c->minor_version == 1;
	int st = -1;

	sc.tcb_info = c->tcb_info;
	sc.qe_identity = c->qe_identity;
	sc.tcb_chain = c->tcb_info_issuer_chain;
	sc.pck_chain = c->pck_crl_issuer_chain;
	sc.root = (char *)root;
	/* The root CRL's size counts a NUL the provider added. */
	if (crl_bytes(c->root_ca_crl, c->root_ca_crl_size - der, der,
		      &sc.root_crl, &sc.root_crl_len) &&
	    crl_bytes(c->pck_crl, c->pck_crl_size, der, &sc.pck_crl, &sc.pck_crl_len))
		st = sgxemu_quote_verify(q, len, &o, &res);
	free(sc.root_crl);
	free(sc.pck_crl);
	return st;
}

/*
 * A verifier's question (sgx_ql_get_quote_verification_collateral): the
 * collateral verifies this platform's quote in both CRL encodings, a
 * --revoke-pck PCCS's collateral refuses it, an FMSPC the PCCS does not
 * know has no collateral, and bad arguments are refused.
 */
TEST(quote_provider_collateral_verifies_a_quote)
{
	static const uint8_t fmspc[6] = { 'S', 'G', 'X', 'E', 'M', 'U' };
	sgx_ql_qve_collateral_t *c = NULL;
	uint8_t other[6] = { 1, 2, 3, 4, 5, 6 };
	size_t len, rlen;
	char *root;
	struct pccs p;
	struct qpl q;
	uint8_t *quote = make_quote(&len);

	REQUIRE(quote && qpl_open(&q) && start(&p, NULL));
	root = test_read_file(p.root, &rlen);
	REQUIRE(root);
	for (int api = 0; api < 2; api++) {
		qcnl(&p, "{\"pccs_url\": \"https://localhost:%u/sgx/certification/v4/\""
		     ", \"pccs_api_version\": \"3.%d\"}", p.port, api);
		REQUIRE_EQ(q.get_coll(fmspc, 6, "processor", &c), 0);
		CHECK_EQ(c->major_version, 3);
		CHECK_EQ(c->minor_version, api);
		CHECK_EQ(c->tee_type, 0u);
		CHECK_EQ(c->tcb_info_size, (uint32_t)strlen(c->tcb_info) + 1);
		CHECK_EQ(verify_provided(c, root, quote, len), 0);
		q.free_coll(c);
	}
	CHECK_EQ(q.get_coll(other, 6, "processor", &c), SGX_QL_NO_QUOTE_COLLATERAL_DATA);
	CHECK(c == NULL);
	CHECK_EQ(q.get_coll(fmspc, 5, "processor", &c), SGX_QL_ERROR_INVALID_PARAMETER);
	CHECK_EQ(q.get_coll(fmspc, 6, "elsewhere", &c), SGX_QL_ERROR_INVALID_PARAMETER);
	CHECK_EQ(q.get_coll(fmspc, 6, "processor", NULL), SGX_QL_ERROR_INVALID_PARAMETER);
	/* http:// to the HTTPS port: no answer a client can read. */
	qcnl(&p, "{\"pccs_url\": \"http://127.0.0.1:%u/sgx/certification/v4/\"}", p.port);
	CHECK_EQ(q.get_coll(fmspc, 6, "processor", &c), SGX_QL_NETWORK_ERROR);
	stop(&p);

	REQUIRE(start(&p, "--revoke-pck"));
	qcnl(&p, "{\"pccs_url\": \"https://localhost:%u/sgx/certification/v4/\"}", p.port);
	REQUIRE_EQ(q.get_coll(fmspc, 6, "processor", &c), 0);
	CHECK_EQ(verify_provided(c, root, quote, len), ST_PCK_REVOKED);
	q.free_coll(c);
	stop(&p);
	unsetenv("QCNL_CONF_PATH");
	free(root);
	free(quote);
	dlclose(q.so);
}

/*
 * A PCCS that answers badly, served from this process over plain HTTP:
 * each request gets what fake_answer() makes of its path for the mode.
 */
enum fake_mode { FAKE_GOOD, FAKE_BAD_JSON, FAKE_BAD_CHAIN, FAKE_OVERSIZED };

static struct {
	int fd;
	enum fake_mode mode;
	struct sgxemu_collateral c;
	pthread_t thread;
	int requests;			/* answered so far */
} fake;

static char *pct_encode(const char *s)
{
	char *out = malloc(strlen(s) * 3 + 1), *o = out;

	for (; out && *s; s++)
		o += sprintf(o, "%%%02X", (unsigned char)*s);
	if (out)
		*o = '\0';
	return out;
}

static char *hex_of(const uint8_t *p, size_t n)
{
	char *s = malloc(2 * n + 1);

	for (size_t i = 0; s && i < n; i++)
		sprintf(s + 2 * i, "%02x", p[i]);
	return s;
}

/* The HTTP answer for @path (malloc'd), with @mode's fault in it. */
static char *fake_answer(const char *path, size_t *len)
{
	const char *hdr = NULL, *chain = NULL;
	char *body = NULL, *enc, *out;
	size_t blen;

	if (!strncmp(path, "pckcrl", 6)) {
		hdr = "SGX-PCK-CRL-Issuer-Chain";
		chain = fake.c.pck_chain;
		if (fake.mode == FAKE_OVERSIZED) {
			body = malloc(QPL_MAX_BODY + 2);
			if (body) {
				memset(body, 'a', QPL_MAX_BODY + 1);
				body[QPL_MAX_BODY + 1] = '\0';
			}
		} else {
			body = hex_of(fake.c.pck_crl, fake.c.pck_crl_len);
		}
	} else if (!strncmp(path, "tcb", 3)) {
		hdr = "TCB-Info-Issuer-Chain";
		chain = fake.c.tcb_chain;
		if (fake.mode == FAKE_BAD_JSON)
			body = strdup("{\"tcbInfo\": {\"version\": 3,");
		else
			body = strdup(fake.c.tcb_info);
	} else if (!strncmp(path, "qe/identity", 11)) {
		hdr = "SGX-Enclave-Identity-Issuer-Chain";
		chain = fake.c.tcb_chain;
		body = strdup(fake.c.qe_identity);
	} else if (!strncmp(path, "rootcacrl", 9)) {
		body = hex_of(fake.c.root_crl, fake.c.root_crl_len);
	}
	if (!body) {
		*len = strlen("HTTP/1.0 404 Not Found\r\nContent-Length: 0\r\n\r\n");
		return strdup("HTTP/1.0 404 Not Found\r\nContent-Length: 0\r\n\r\n");
	}
	/* The wrong chain: the TCB signer's under the PCK CRL's name. */
	if (fake.mode == FAKE_BAD_CHAIN && hdr && chain == fake.c.tcb_chain) {
		static char *swapped;

		free(swapped);
		swapped = malloc(strlen(fake.c.pck_chain) + strlen(fake.c.tcb_chain) + 1);
		if (swapped) {
			/* root, then the signer: out of order. */
			const char *second = strstr(fake.c.tcb_chain + 1, "-----BEGIN");

			strcpy(swapped, second ? second : "");
			strncat(swapped, fake.c.tcb_chain,
				second ? (size_t)(second - fake.c.tcb_chain) : 0);
		}
		chain = swapped;
	}
	enc = hdr && chain ? pct_encode(chain) : NULL;
	blen = strlen(body);
	out = malloc(blen + (enc ? strlen(enc) : 0) + 256);
	if (out) {
		int n = sprintf(out, "HTTP/1.0 200 OK\r\nContent-Length: %zu\r\n", blen);

		if (enc)
			n += sprintf(out + n, "%s: %s\r\n", hdr, enc);
		n += sprintf(out + n, "\r\n");
		memcpy(out + n, body, blen);
		*len = (size_t)n + blen;
	}
	free(enc);
	free(body);
	return out;
}

static void *fake_serve(void *unused)
{
	(void)unused;
	for (;;) {
		int c = accept(fake.fd, NULL, NULL);
		char req[4096], *path, *sp;
		size_t got = 0, len = 0;
		ssize_t n;

		if (c < 0)
			return NULL;
		while (got < sizeof(req) - 1 &&
		       (n = read(c, req + got, sizeof(req) - 1 - got)) > 0) {
			got += (size_t)n;
			req[got] = '\0';
			if (strstr(req, "\r\n\r\n"))
				break;
		}
		req[got] = '\0';
		path = strstr(req, "/v4/");
		sp = path ? strchr(path, ' ') : NULL;
		if (sp) {
			char *a;

			*sp = '\0';
			a = fake_answer(path + 4, &len);
			__atomic_add_fetch(&fake.requests, 1, __ATOMIC_SEQ_CST);
			/* The client may hang up early (the oversized body). */
			for (size_t off = 0; a && off < len; off += (size_t)n)
				if ((n = send(c, a + off, len - off, MSG_NOSIGNAL)) <= 0)
					break;
			free(a);
		}
		close(c);
	}
}

static bool fake_start(unsigned *port)
{
	struct sockaddr_in a = { .sin_family = AF_INET,
				 .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t alen = sizeof(a);
	char why[256];

	if (sgxemu_collateral_make(NULL, &fake.c, why, sizeof(why)))
		return false;
	fake.fd = socket(AF_INET, SOCK_STREAM, 0);
	if (fake.fd < 0 || bind(fake.fd, (struct sockaddr *)&a, sizeof(a)) ||
	    listen(fake.fd, 8) || getsockname(fake.fd, (struct sockaddr *)&a, &alen))
		return false;
	*port = ntohs(a.sin_port);
	return !pthread_create(&fake.thread, NULL, fake_serve, NULL);
}

static void fake_stop(void)
{
	shutdown(fake.fd, SHUT_RDWR);
	close(fake.fd);
	pthread_join(fake.thread, NULL);
	sgxemu_collateral_free(&fake.c);
}

/*
 * Bad PCCS answers through the provider: malformed JSON, an issuer chain
 * that does not link, a body over the provider's bound. Each is refused
 * with its code and one line in the log callback naming the request.
 * With verify_collateral_cache_expire_hours the good answers are cached.
 */
TEST(quote_provider_refuses_bad_answers)
{
	static const uint8_t fmspc[6] = { 'S', 'G', 'X', 'E', 'M', 'U' };
	sgx_ql_qve_collateral_t *c = NULL;
	struct pccs p = { 0 };
	unsigned port;
	struct qpl q;

	REQUIRE(qpl_open(&q) && fake_start(&port));
	snprintf(p.dir, sizeof(p.dir), "%s/tmp-attest/fake-%d", test_build_dir(),
		 (int)getpid());
	mkdir(p.dir, 0700);
	qcnl(&p, "{\"pccs_url\": \"http://127.0.0.1:%u/sgx/certification/v4/\"}", port);

	fake.mode = FAKE_GOOD;
	log_lines = 0;
	REQUIRE_EQ(q.get_coll(fmspc, 6, "processor", &c), 0);
	CHECK_EQ(log_lines, 0);
	q.free_coll(c);

	fake.mode = FAKE_BAD_JSON;
	log_lines = 0;
	c = (sgx_ql_qve_collateral_t *)1;
	CHECK_EQ(q.get_coll(fmspc, 6, "processor", &c), SGX_QL_ERROR_MESSAGE_PARSING_ERROR);
	CHECK(c == NULL);
	CHECK_EQ(log_lines, 1);
	CHECK(strstr(last_log, "tcb?fmspc=") && strstr(last_log, "not JSON"));

	fake.mode = FAKE_BAD_CHAIN;
	log_lines = 0;
	CHECK_EQ(q.get_coll(fmspc, 6, "processor", &c), SGX_QL_ERROR_MESSAGE_PARSING_ERROR);
	CHECK_EQ(log_lines, 1);
	CHECK(strstr(last_log, "tcb?fmspc=") && strstr(last_log, "issuer chain"));

	fake.mode = FAKE_OVERSIZED;
	log_lines = 0;
	CHECK_EQ(q.get_coll(fmspc, 6, "processor", &c), SGX_QL_MESSAGE_ERROR);
	CHECK_EQ(log_lines, 1);
	CHECK(strstr(last_log, "pckcrl") && strstr(last_log, "bytes, refused"));

	/* verify_collateral_cache_expire_hours: good answers are given
	 * again from memory, until sgx_qpl_clear_cache; bad ones are not kept. */
	uint32_t (*clear)(uint32_t) = (uint32_t (*)(uint32_t))dlsym(q.so, "sgx_qpl_clear_cache");
	int before;

	REQUIRE(clear);
	qcnl(&p, "{\"pccs_url\": \"http://127.0.0.1:%u/sgx/certification/v4/\", "
	     "\"verify_collateral_cache_expire_hours\": 1}", port);
	fake.mode = FAKE_BAD_JSON;
	CHECK_EQ(q.get_coll(fmspc, 6, "processor", &c), SGX_QL_ERROR_MESSAGE_PARSING_ERROR);
	fake.mode = FAKE_GOOD;
	before = __atomic_load_n(&fake.requests, __ATOMIC_SEQ_CST);
	REQUIRE_EQ(q.get_coll(fmspc, 6, "processor", &c), 0);
	q.free_coll(c);
	/* Parts are kept one by one: the PCK CRL the failed call fetched
	 * before the bad TCB info was good, and is not asked for again. */
	CHECK_EQ(__atomic_load_n(&fake.requests, __ATOMIC_SEQ_CST) - before, 3);
	fake.mode = FAKE_BAD_JSON;
	before = __atomic_load_n(&fake.requests, __ATOMIC_SEQ_CST);
	REQUIRE_EQ(q.get_coll(fmspc, 6, "processor", &c), 0);
	q.free_coll(c);
	CHECK_EQ(__atomic_load_n(&fake.requests, __ATOMIC_SEQ_CST) - before, 0);
	CHECK_EQ(clear(2), 0);
	CHECK_EQ(q.get_coll(fmspc, 6, "processor", &c), SGX_QL_ERROR_MESSAGE_PARSING_ERROR);
	/* Without the key nothing is kept. */
	qcnl(&p, "{\"pccs_url\": \"http://127.0.0.1:%u/sgx/certification/v4/\"}", port);
	fake.mode = FAKE_GOOD;
	REQUIRE_EQ(q.get_coll(fmspc, 6, "processor", &c), 0);
	q.free_coll(c);
	before = __atomic_load_n(&fake.requests, __ATOMIC_SEQ_CST);
	REQUIRE_EQ(q.get_coll(fmspc, 6, "processor", &c), 0);
	q.free_coll(c);
	CHECK_EQ(__atomic_load_n(&fake.requests, __ATOMIC_SEQ_CST) - before, 4);

	fake_stop();
	unsetenv("QCNL_CONF_PATH");
	sh("rm -rf '%s'", p.dir);
	dlclose(q.so);
}
