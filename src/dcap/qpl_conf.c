/* SPDX-License-Identifier: MIT */
/*
 * The QCNL configuration of the quote provider (attestation-facts.md
 * §4.5): /etc/sgx_default_qcnl.conf or $QCNL_CONF_PATH, JSON with
 * comments (the shipped file has both kinds), or the legacy KEY=VALUE
 * lines of older releases. The keys the provider acts on: pccs_url,
 * collateral_service, local_pck_url, use_secure_cert, pccs_api_version,
 * tcb_update_type, retry_times, retry_delay, pck_cache_expire_hours,
 * verify_collateral_cache_expire_hours.
 */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attest/json.h"
#include "base/why.h"
#include "dcap/qpl.h"

/* Hours kept in the cache: a year at most, so the expiry time fits. */
static unsigned cache_hours(unsigned long long h)
{
	return h > 8760 ? 8760 : (unsigned)h;
}

static void defaults(struct qcnl_conf *c)
{
	memset(c, 0, sizeof(*c));
	strcpy(c->pccs_url, QCNL_DEFAULT_URL);
	c->secure = true;
}

/* Copy @len bytes of URL, adding the '/' the paths are appended to. A
 * NUL would end the URL curl is given short of its '/' (and of what the
 * file says), and a URL has no other control bytes: both are refused. */
static int set_url(char *dst, const char *v, size_t len)
{
	if (!len || len + 2 > QCNL_URL_MAX)
		return -1;
	for (size_t i = 0; i < len; i++)
		if ((unsigned char)v[i] < 0x20 || v[i] == 0x7f)
			return -1;
	memcpy(dst, v, len);
	dst[len] = '\0';
	if (dst[len - 1] != '/')
		strcat(dst, "/");
	return 0;
}

/* The text with its comments blanked out (strings kept), malloc'd. */
static char *uncomment(const char *text, size_t len)
{
	char *out = malloc(len + 1);
	bool str = false;

	if (!out)
		return NULL;
	memcpy(out, text, len);
	out[len] = '\0';
	for (size_t i = 0; i < len; i++) {
		if (str) {
			if (out[i] == '\\' && i + 1 < len)
				i++;
			else if (out[i] == '"')
				str = false;
		} else if (out[i] == '"') {
			str = true;
		} else if (out[i] == '/' && i + 1 < len && out[i + 1] == '/') {
			while (i < len && out[i] != '\n')
				out[i++] = ' ';
		} else if (out[i] == '/' && i + 1 < len && out[i + 1] == '*') {
			size_t j = i;

			while (j < len && !(out[j] == '*' && j + 1 < len &&
					    out[j + 1] == '/' && j > i + 1))
				j++;
			if (j >= len) {
				free(out);
				return NULL;	/* unterminated comment */
			}
			memset(out + i, ' ', j + 2 - i);
			i = j + 1;
		}
	}
	return out;
}

static quote3_error_t from_json(const char *text, size_t len,
				struct qcnl_conf *c, char *why, size_t whylen)
{
	static const char *const urls[] = { "pccs_url", "collateral_service",
					    "local_pck_url" };
	char *dst[] = { c->pccs_url, c->collateral_url, c->local_pck_url };
	struct json_doc *doc = malloc(sizeof(*doc));
	char *clean = uncomment(text, len);
	quote3_error_t ret = SGX_QL_CONFIG_INVALID_JSON;
	char err[128] = "";
	int n;

	if (!doc || !clean) {
		sgx_fail(why, whylen, 0, "%s", clean ? "out of memory" :
			 "a comment is not closed");
		goto out;
	}
	if (json_parse(doc, clean, len, err, sizeof(err)) ||
	    doc->nodes[0].type != JSON_OBJECT) {
		sgx_fail(why, whylen, 0, "not valid JSON: %s", err[0] ? err :
			 "not an object");
		goto out;
	}
	ret = SGX_QL_ERROR_INVALID_PARAMETER;
	for (int i = 0; i < 3; i++) {
		n = json_member(doc, 0, urls[i]);
		if (n < 0)
			continue;
		if (doc->nodes[n].type != JSON_STRING ||
		    set_url(dst[i], doc->nodes[n].raw + 1, doc->nodes[n].rawlen - 2)) {
			sgx_fail(why, whylen, 0, "%s must be a URL string", urls[i]);
			goto out;
		}
	}
	if ((n = json_member(doc, 0, "use_secure_cert")) >= 0) {
		if (doc->nodes[n].type != JSON_BOOL) {
			sgx_fail(why, whylen, 0, "use_secure_cert must be true or false");
			goto out;
		}
		c->secure = doc->nodes[n].truth;
	}
	if ((n = json_member(doc, 0, "pccs_api_version")) >= 0) {
		if (json_str_is(doc, n, "3.1"))
			c->api_31 = true;
		else if (!json_str_is(doc, n, "3.0")) {
			sgx_fail(why, whylen, 0, "pccs_api_version must be \"3.0\" or \"3.1\"");
			goto out;
		}
	}
	if ((n = json_member(doc, 0, "tcb_update_type")) >= 0)
		c->early = json_str_is(doc, n, "early");
	if ((n = json_typed(doc, 0, "retry_times", JSON_NUMBER)) >= 0)
		c->retry_times = doc->nodes[n].num > 100 ? 100 : (unsigned)doc->nodes[n].num;
	if ((n = json_typed(doc, 0, "retry_delay", JSON_NUMBER)) >= 0)
		c->retry_delay = doc->nodes[n].num > 600 ? 600 : (unsigned)doc->nodes[n].num;
	if ((n = json_typed(doc, 0, "pck_cache_expire_hours", JSON_NUMBER)) >= 0)
		c->pck_cache_hours = cache_hours(doc->nodes[n].num);
	if ((n = json_typed(doc, 0, "verify_collateral_cache_expire_hours",
			    JSON_NUMBER)) >= 0)
		c->coll_cache_hours = cache_hours(doc->nodes[n].num);
	ret = SGX_QL_SUCCESS;
out:
	free(clean);
	free(doc);
	return ret;
}

/* KEY=VALUE lines; '#' starts a comment line. */
static quote3_error_t from_lines(const char *text, size_t len,
				 struct qcnl_conf *c, char *why, size_t whylen)
{
	const char *p = text, *end = text + len;

	while (p < end) {
		const char *eol = memchr(p, '\n', end - p), *eq, *k, *v;
		size_t kl, vl;

		if (!eol)
			eol = end;
		k = p;
		p = eol + 1;
		while (k < eol && isspace((unsigned char)*k))
			k++;
		if (k == eol || *k == '#')
			continue;
		eq = memchr(k, '=', eol - k);
		if (!eq)
			return sgx_fail(why, whylen, SGX_QL_ERROR_INVALID_PARAMETER,
					"line '%.*s' is not KEY=VALUE",
					(int)(eol - k > 60 ? 60 : eol - k), k);
		for (kl = eq - k; kl && isspace((unsigned char)k[kl - 1]); kl--)
			;
		v = eq + 1;
		while (v < eol && isspace((unsigned char)*v))
			v++;
		for (vl = eol - v; vl && isspace((unsigned char)v[vl - 1]); vl--)
			;
#define KEY(s) (kl == strlen(s) && !strncasecmp(k, s, kl))
		if ((KEY("PCCS_URL") && set_url(c->pccs_url, v, vl)) ||
		    (KEY("COLLATERAL_SERVICE") && set_url(c->collateral_url, v, vl)) ||
		    (KEY("LOCAL_PCK_URL") && set_url(c->local_pck_url, v, vl)))
			return sgx_fail(why, whylen, SGX_QL_ERROR_INVALID_PARAMETER,
					"%.*s: not a URL", (int)kl, k);
		if (KEY("USE_SECURE_CERT"))
			c->secure = !(vl == 5 && !strncasecmp(v, "FALSE", 5));
		else if (KEY("PCCS_API_VERSION"))
			c->api_31 = vl == 3 && !strncmp(v, "3.1", 3);
		else if (KEY("RETRY_TIMES"))
			c->retry_times = (unsigned)strtoul(v, NULL, 10) % 101;
		else if (KEY("RETRY_DELAY"))
			c->retry_delay = (unsigned)strtoul(v, NULL, 10) % 601;
		else if (KEY("PCK_CACHE_EXPIRE_HOURS"))
			c->pck_cache_hours = cache_hours(strtoull(v, NULL, 10));
		else if (KEY("VERIFY_COLLATERAL_CACHE_EXPIRE_HOURS"))
			c->coll_cache_hours = cache_hours(strtoull(v, NULL, 10));
#undef KEY
	}
	return SGX_QL_SUCCESS;
}

quote3_error_t qcnl_conf_parse(const char *text, size_t len,
			       struct qcnl_conf *c, char *why, size_t whylen)
{
	size_t i = 0;
	quote3_error_t ret;

	defaults(c);
	while (i < len && isspace((unsigned char)text[i]))
		i++;
	ret = i < len && text[i] == '{' ? from_json(text, len, c, why, whylen)
				       : from_lines(text, len, c, why, whylen);
	if (!ret && !c->collateral_url[0])
		strcpy(c->collateral_url, c->pccs_url);
	return ret;
}

quote3_error_t qcnl_conf_load(struct qcnl_conf *c, char *path, size_t pathlen,
			      char *why, size_t whylen)
{
	const char *env = getenv("QCNL_CONF_PATH");
	char *text = NULL;
	long n;
	FILE *f;
	quote3_error_t ret;

	snprintf(path, pathlen, "%s", env && *env ? env : QCNL_DEFAULT_CONF);
	f = fopen(path, "re");
	if (!f) {
		/* No file: QCNL's defaults (the local PCCS over HTTPS). */
		defaults(c);
		strcpy(c->collateral_url, c->pccs_url);
		return SGX_QL_SUCCESS;
	}
	if (fseek(f, 0, SEEK_END) || (n = ftell(f)) < 0 || n > 1 << 20 ||
	    fseek(f, 0, SEEK_SET) || !(text = malloc(n + 1)) ||
	    fread(text, 1, n, f) != (size_t)n) {
		free(text);
		fclose(f);
		return sgx_fail(why, whylen, SGX_QL_ERROR_UNEXPECTED,
				"%s: cannot read it", path);
	}
	fclose(f);
	text[n] = '\0';
	ret = qcnl_conf_parse(text, n, c, why, whylen);
	free(text);
	return ret;
}
