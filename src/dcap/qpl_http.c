/* SPDX-License-Identifier: MIT */
/*
 * The quote provider's HTTP(S) client, with libcurl: one GET, its status,
 * headers (names lower-cased, as QCNL matches them) and a body of at most
 * QPL_MAX_BODY bytes.
 *
 * TLS: with use_secure_cert the server must present a certificate that
 * chains to this installation's root (<secrets>.pki/root-ca.pem, the
 * issuer of `sgxemu pccs`'s certificate; $SGXEMU_TRUSTED_ROOT instead
 * where it is set), and to nothing else: Intel's
 * QCNL trusts the system's store for Intel's PCS, but no PCS is Intel's
 * here. Without the root file the system's store is used. With
 * use_secure_cert false any certificate is taken, as QCNL does.
 *
 * Retries follow QCNL: retry_times more attempts after a network error or
 * a 5xx answer, retry_delay seconds apart (1, 2, 4, ... s when 0).
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <curl/curl.h>

#include "attest/pki.h"
#include "base/secrets.h"
#include "base/why.h"
#include "dcap/qpl.h"

const char *qpl_header(const struct qpl_reply *r, const char *name)
{
	for (int i = 0; i < r->nr_headers; i++)
		if (!strcmp(r->headers[i].name, name))
			return r->headers[i].value;
	return NULL;
}

void qpl_reply_free(struct qpl_reply *r)
{
	free(r->body);
	for (int i = 0; i < r->nr_headers; i++) {
		free(r->headers[i].name);
		free(r->headers[i].value);
	}
	memset(r, 0, sizeof(*r));
}

int qpl_reply_add_header(struct qpl_reply *r, const char *line, size_t len)
{
	const char *colon = memchr(line, ':', len);
	size_t nl, vs, ve;
	char *name, *value;

	if (!colon)
		return 0;		/* the status line, the blank line */
	if (r->nr_headers == QPL_MAX_HEADERS)
		return 0;		/* the rest is not ours to read */
	nl = colon - line;
	for (vs = nl + 1; vs < len && (line[vs] == ' ' || line[vs] == '\t'); vs++)
		;
	for (ve = len; ve > vs && isspace((unsigned char)line[ve - 1]); ve--)
		;
	name = strndup(line, nl);
	value = strndup(line + vs, ve - vs);
	if (!name || !value) {
		free(name);
		free(value);
		return -1;
	}
	for (char *p = name; *p; p++)
		*p = (char)tolower((unsigned char)*p);
	r->headers[r->nr_headers].name = name;
	r->headers[r->nr_headers].value = value;
	r->nr_headers++;
	return 0;
}

struct sink {
	struct qpl_reply *r;
	bool too_big, no_memory;
};

static size_t on_body(char *data, size_t size, size_t n, void *cls)
{
	struct sink *s = cls;
	size_t len = size * n;
	uint8_t *b;

	if (s->r->len + len > QPL_MAX_BODY) {
		s->too_big = true;
		return 0;		/* abort the transfer */
	}
	b = realloc(s->r->body, s->r->len + len + 1);
	if (!b) {
		s->no_memory = true;
		return 0;
	}
	memcpy(b + s->r->len, data, len);
	s->r->len += len;
	b[s->r->len] = '\0';
	s->r->body = b;
	return len;
}

static size_t on_header(char *data, size_t size, size_t n, void *cls)
{
	struct sink *s = cls;

	/* A redirect or 100-continue starts a new set of headers. */
	if (size * n > 5 && !strncmp(data, "HTTP/", 5)) {
		for (int i = 0; i < s->r->nr_headers; i++) {
			free(s->r->headers[i].name);
			free(s->r->headers[i].value);
		}
		s->r->nr_headers = 0;
	}
	if (qpl_reply_add_header(s->r, data, size * n)) {
		s->no_memory = true;
		return 0;
	}
	return size * n;
}

/*
 * The root a PCCS's certificate must chain to: the one the verifier
 * trusts, $SGXEMU_TRUSTED_ROOT (a fleet's, whose PCCS it issued), else
 * this installation's; "" where there is none.
 */
static void root_path(char *buf, size_t len)
{
	const char *env = getenv("SGXEMU_TRUSTED_ROOT");
	char secrets[4096], dir[4200];

	buf[0] = '\0';
	if (env && *env) {
		snprintf(buf, len, "%s", env);
		return;
	}
	if (sgx_secrets_path(secrets, sizeof(secrets)) ||
	    sgx_pki_dir(secrets, dir, sizeof(dir)))
		return;
	snprintf(buf, len, "%s/root-ca.pem", dir);
	if (access(buf, R_OK))
		buf[0] = '\0';
}

static quote3_error_t get_once(const struct qcnl_conf *c, const char *url,
			       struct qpl_reply *r, char *why, size_t whylen)
{
	char err[CURL_ERROR_SIZE] = "", root[4300];
	struct sink s = { .r = r };
	CURLcode cc;
	CURL *h;

	memset(r, 0, sizeof(*r));
	h = curl_easy_init();
	if (!h)
		return sgx_fail(why, whylen, SGX_QL_NETWORK_ERROR,
				"cannot start libcurl");
	curl_easy_setopt(h, CURLOPT_URL, url);
	curl_easy_setopt(h, CURLOPT_PROTOCOLS_STR, "http,https");
	curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT, 10L);
	curl_easy_setopt(h, CURLOPT_TIMEOUT, 60L);
	curl_easy_setopt(h, CURLOPT_ERRORBUFFER, err);
	curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, on_body);
	curl_easy_setopt(h, CURLOPT_WRITEDATA, &s);
	curl_easy_setopt(h, CURLOPT_HEADERFUNCTION, on_header);
	curl_easy_setopt(h, CURLOPT_HEADERDATA, &s);
	if (!c->secure) {
		curl_easy_setopt(h, CURLOPT_SSL_VERIFYPEER, 0L);
		curl_easy_setopt(h, CURLOPT_SSL_VERIFYHOST, 0L);
	} else {
		root_path(root, sizeof(root));
		if (root[0]) {
			curl_easy_setopt(h, CURLOPT_CAINFO, root);
			curl_easy_setopt(h, CURLOPT_CAPATH, NULL);
		}
	}
	cc = curl_easy_perform(h);
	if (cc == CURLE_OK)
		curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &r->status);
	curl_easy_cleanup(h);
	if (s.too_big) {
		qpl_reply_free(r);
		return sgx_fail(why, whylen, SGX_QL_MESSAGE_ERROR, "%s: an "
				"answer over %u bytes, refused", url, QPL_MAX_BODY);
	}
	if (s.no_memory) {
		qpl_reply_free(r);
		return sgx_fail(why, whylen, SGX_QL_ERROR_OUT_OF_MEMORY,
				"out of memory");
	}
	if (cc != CURLE_OK) {
		qpl_reply_free(r);
		return sgx_fail(why, whylen, SGX_QL_NETWORK_ERROR, "%s: %s", url,
				err[0] ? err : curl_easy_strerror(cc));
	}
	return SGX_QL_SUCCESS;
}

quote3_error_t qpl_http_get(const struct qcnl_conf *c, const char *url,
			    struct qpl_reply *r, char *why, size_t whylen)
{
	unsigned delay = c->retry_delay ? c->retry_delay : 1;
	quote3_error_t ret;

	for (unsigned attempt = 0;; attempt++) {
		ret = get_once(c, url, r, why, whylen);
		if (attempt >= c->retry_times ||
		    (ret != SGX_QL_NETWORK_ERROR && !(ret == 0 && r->status >= 500)))
			return ret;
		if (!ret)
			qpl_reply_free(r);
		sleep(delay);
		if (!c->retry_delay)
			delay *= 2;
	}
}

quote3_error_t qpl_status_error(long status, quote3_error_t not_found)
{
	switch (status) {
	case 200: return SGX_QL_SUCCESS;
	case 404: return not_found;
	case 461: return SGX_QL_PLATFORM_UNKNOWN;
	case 462: return SGX_QL_CERTS_UNAVAILABLE;
	case 503: return SGX_QL_SERVICE_UNAVAILABLE;
	default:  return SGX_QL_UNKNOWN_MESSAGE_RESPONSE;
	}
}
