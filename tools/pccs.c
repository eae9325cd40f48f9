/* SPDX-License-Identifier: MIT */
/*
 * sgxemu pccs: the PCCS REST API over HTTPS on the loopback address, as
 * the real PCCS serves it, with libmicrohttpd (its TLS is GnuTLS's); the
 * answers are src/attest/pccs.c's. The server certificate is issued by
 * this installation's root (src/attest/pki.c, sgx_pki_tls), so a quote
 * provider that trusts that root verifies it (QCNL use_secure_cert true);
 * with use_secure_cert false any client accepts it. --http serves plain
 * HTTP instead, for clients without TLS.
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <microhttpd.h>

#include "attest/attest.h"
#include "attest/pccs.h"
#include "attest/pki.h"
#include "cli.h"
#include "commands.h"

static const char usage[] =
"usage: sgxemu pccs [--port N] [--http] [--tcb-out-of-date] [--revoke-pck]\n"
"                   [--qe-out-of-date] [--tcb-recovery]\n"
"\n"
"Serve the PCK certificates of every platform registered in this\n"
"installation's hierarchy (this one, and the others of a fleet sharing it:\n"
"see `sgxemu pki`), by the QE id and PCE id of the request, and the\n"
"collateral with the PCCS REST API's paths and headers, over HTTPS on\n"
"127.0.0.1 (default port 8081):\n"
"/sgx/certification/v4/ (and v3/) pckcert, pckcrl, tcb, qe/identity,\n"
"rootcacrl. Everything is under this installation's root, the TLS server\n"
"certificate too (<secrets>.pki/tls-server.pem, for localhost, 127.0.0.1\n"
"and ::1): a client trusting <secrets>.pki/root-ca.pem verifies it.\n"
"Nothing chains to Intel's root.\n"
"\n"
"options:\n"
"  --port N            the TCP port (default 8081)\n"
"  --http              plain HTTP instead of HTTPS\n"
"  --tcb-out-of-date, --revoke-pck, --qe-out-of-date, --tcb-recovery\n"
"                      change the collateral as `sgxemu attest collateral`\n"
"                      does\n"
"Runs until interrupted.\n";

static struct sgxemu_collateral_opts opts;
static unsigned long request_id;

static const char *get_arg(void *cls, const char *key)
{
	return MHD_lookup_connection_value(cls, MHD_GET_ARGUMENT_KIND, key);
}

static enum MHD_Result answer(void *cls, struct MHD_Connection *c,
			      const char *url, const char *method,
			      const char *version, const char *upload,
			      size_t *upload_len, void **state)
{
	struct sgx_pccs_reply r;
	struct MHD_Response *resp;
	enum MHD_Result ret;
	char id[32];

	(void)cls;
	(void)version;
	(void)upload;
	(void)state;
	if (*upload_len)
		return MHD_NO;		/* GET only: no bodies */
	if (strcmp(method, "GET")) {
		memset(&r, 0, sizeof(r));
		r.status = 405;
		r.content_type = "text/plain";
	} else if (sgx_pccs_answer(&opts, url, get_arg, c, &r)) {
		sgx_pccs_reply_free(&r);
		return MHD_NO;
	}
	resp = MHD_create_response_from_buffer(r.len, r.body, MHD_RESPMEM_MUST_COPY);
	if (!resp) {
		sgx_pccs_reply_free(&r);
		return MHD_NO;
	}
	MHD_add_response_header(resp, "Content-Type", r.content_type);
	snprintf(id, sizeof(id), "sgxemu-%lu",
		 __atomic_add_fetch(&request_id, 1, __ATOMIC_RELAXED));
	MHD_add_response_header(resp, "Request-ID", id);
	for (int i = 0; i < r.nr_headers; i++)
		MHD_add_response_header(resp, r.headers[i].name, r.headers[i].value);
	ret = MHD_queue_response(c, r.status, resp);
	MHD_destroy_response(resp);
	sgx_pccs_reply_free(&r);
	return ret;
}

static int pccs_main(int argc, char **argv)
{
	struct sockaddr_in sin = { .sin_family = AF_INET };
	struct MHD_Daemon *d;
	uint64_t port = 8081;
	char *cert = NULL, *key = NULL, why[300] = "";
	struct sgx_attest *a;
	bool http = false;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--port") && i + 1 < argc) {
			if (!cli_parse_uint(argv[++i], 65535, &port) || !port) {
				cli_error("--port needs 1..65535");
				return CLI_EXIT_USAGE;
			}
		} else if (!strcmp(argv[i], "--http")) {
			http = true;
		} else if (!strcmp(argv[i], "--tcb-out-of-date")) {
			opts.tcb_out_of_date = true;
		} else if (!strcmp(argv[i], "--revoke-pck")) {
			opts.pck_revoked = true;
		} else if (!strcmp(argv[i], "--qe-out-of-date")) {
			opts.qe_out_of_date = true;
		} else if (!strcmp(argv[i], "--tcb-recovery")) {
			opts.tcb_recovery = true;
		} else {
			cli_error("unknown argument '%s' (try 'sgxemu pccs --help')",
				  argv[i]);
			return CLI_EXIT_USAGE;
		}
	}
	if (!http && (sgx_attest_get(&a, why, sizeof(why)) ||
		      sgx_pki_tls(&a->pki, &cert, &key, why, sizeof(why)))) {
		cli_error("no TLS certificate: %s", why);
		return CLI_EXIT_FAIL;
	}
	sin.sin_port = htons((uint16_t)port);
	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (http)
		d = MHD_start_daemon(MHD_USE_INTERNAL_POLLING_THREAD |
				     MHD_USE_THREAD_PER_CONNECTION, (uint16_t)port,
				     NULL, NULL, answer, NULL,
				     MHD_OPTION_SOCK_ADDR, (struct sockaddr *)&sin,
				     MHD_OPTION_CONNECTION_TIMEOUT, 30u, MHD_OPTION_END);
	else
		d = MHD_start_daemon(MHD_USE_INTERNAL_POLLING_THREAD |
				     MHD_USE_THREAD_PER_CONNECTION | MHD_USE_TLS,
				     (uint16_t)port, NULL, NULL, answer, NULL,
				     MHD_OPTION_SOCK_ADDR, (struct sockaddr *)&sin,
				     MHD_OPTION_CONNECTION_TIMEOUT, 30u,
				     MHD_OPTION_HTTPS_MEM_KEY, key,
				     MHD_OPTION_HTTPS_MEM_CERT, cert, MHD_OPTION_END);
	if (!d) {
		cli_error("cannot listen on 127.0.0.1:%u%s", (unsigned)port,
			  http ? "" : " with TLS");
		return CLI_EXIT_FAIL;
	}
	printf("pccs: %s://127.0.0.1:%u/sgx/certification/v4/\n",
	       http ? "http" : "https", (unsigned)port);
	fflush(stdout);
	for (;;)
		pause();
}

const struct cli_command cmd_pccs = {
	.name = "pccs",
	.summary = "serve PCK certificates and collateral (PCCS API, loopback)",
	.usage = usage,
	.main = pccs_main,
};
