/* SPDX-License-Identifier: MIT */
/*
 * libsgx_dcap_ql.so.1: Intel's in-process quote library (DCAP 1.23 ABI,
 * sgx_dcap_ql_wrapper.h), with sgxemu's quoting enclave role behind it.
 *
 * On hardware this library loads the QE3 and PCE enclaves into the
 * caller's process and asks them for quotes. Here the quoting enclave is
 * the platform's software QE (src/attest/qe.c), the very code that serves
 * the AESM socket, reached through libsgxemu.so's public API in the
 * process (sgxemu run preloads it; a program linked against libsgxemu.so
 * has it too). Without it there is no SGX platform in the process, and
 * the calls answer as Intel's library does on a machine whose enclaves
 * cannot be loaded. The API is looked up at run time, not linked: this
 * library must load (and fail cleanly) where there is no platform, as
 * Intel's does on a machine without SGX.
 *
 * The order of the checks in each call and their codes follow Intel's
 * library: parameters first, then the platform, then the attestation key
 * (sgx_qe_get_target_info must come first: it is where QE3 makes and
 * certifies its key), then the buffer and the REPORT.
 *
 * SGX_AESM_ADDR set asks Intel's library to quote through AESM instead
 * (out of process); the load-policy and path calls then answer
 * SGX_QL_UNSUPPORTED_MODE, as there. Quotes come from the same QE in both
 * modes here, the one the AESM socket answers with.
 */
#include <dlfcn.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dcap/dcap.h"

#define EXPORT __attribute__((visibility("default")))

/* libsgxemu.so's quoting API (include/sgxemu/attest.h). */
struct qe_api {
	int (*target_info)(struct sgx_targetinfo *ti, char *why, size_t len);
	int (*quote_size)(size_t *len, char *why, size_t whylen);
	int (*quote)(const struct sgx_report *report, uint8_t **quote,
		     size_t *len, char *why, size_t whylen);
};

/* The AESM codes sgxemu_quote_generate() returns that mean something
 * here (src/attest/attest.h). */
#define AESM_PARAMETER_ERROR	3
#define AESM_INVALID_REPORT	47

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static bool key_ready;			/* sgx_qe_get_target_info ran */
static int load_policy = SGX_QL_PERSISTENT;
static char paths[SGX_QL_IDE_PATH + 1][SGX_QL_MAX_PATH];
/* Errors are the only messages, so every level the program asks for
 * receives them. */
static sgx_ql_logging_callback_t tracer;

/*
 * One line on why a call failed: to the trace callback when the program
 * set one (at or above its level), else to stderr, so that a failing
 * call is never silent.
 */
static quote3_error_t fail(quote3_error_t ret, const char *fmt, ...)
{
	char msg[512];
	int n;
	va_list ap;

	n = snprintf(msg, sizeof(msg), "libsgx_dcap_ql (sgxemu): ");
	va_start(ap, fmt);
	vsnprintf(msg + n, sizeof(msg) - n, fmt, ap);
	va_end(ap);
	if (tracer)
		tracer(SGX_QL_LOG_ERROR, msg);
	else
		fprintf(stderr, "%s (0x%04x)\n", msg, ret);
	return ret;
}

static bool aesm_mode(void)
{
	const char *v = getenv("SGX_AESM_ADDR");

	return v != NULL;
}

/* The platform's QE in this process, or false: no SGX platform here. */
static bool qe_find(struct qe_api *api)
{
	api->target_info = (int (*)(struct sgx_targetinfo *, char *, size_t))
		dlsym(RTLD_DEFAULT, "sgxemu_qe_target_info");
	api->quote_size = (int (*)(size_t *, char *, size_t))
		dlsym(RTLD_DEFAULT, "sgxemu_quote_size");
	api->quote = (int (*)(const struct sgx_report *, uint8_t **, size_t *,
			      char *, size_t))
		dlsym(RTLD_DEFAULT, "sgxemu_quote_generate");
	return api->target_info && api->quote_size && api->quote;
}

EXPORT quote3_error_t sgx_qe_set_enclave_load_policy(int policy)
{
	if (aesm_mode())
		return SGX_QL_UNSUPPORTED_MODE;
	if (policy != SGX_QL_PERSISTENT && policy != SGX_QL_EPHEMERAL)
		return fail(SGX_QL_UNSUPPORTED_LOADING_POLICY,
			    "load policy %d: QE3 takes persistent (0) or "
			    "ephemeral (1)", policy);
	pthread_mutex_lock(&lock);
	load_policy = policy;
	pthread_mutex_unlock(&lock);
	return SGX_QL_SUCCESS;
}

EXPORT quote3_error_t sgx_qe_get_target_info(struct sgx_targetinfo *ti)
{
	struct qe_api api;
	char why[256] = "";

	if (!ti)
		return fail(SGX_QL_ERROR_INVALID_PARAMETER, "no target info buffer");
	if (!qe_find(&api))
		return fail(SGX_QL_INTERFACE_UNAVAILABLE,
			    "no SGX platform in this process (run it under "
			    "sgxemu run)");
	if (api.target_info(ti, why, sizeof(why)))
		return fail(SGX_QL_ERROR_UNEXPECTED, "QE target info: %s", why);
	pthread_mutex_lock(&lock);
	key_ready = true;
	pthread_mutex_unlock(&lock);
	return SGX_QL_SUCCESS;
}

static bool key_is_ready(void)
{
	bool ready;

	pthread_mutex_lock(&lock);
	ready = key_ready;
	pthread_mutex_unlock(&lock);
	return ready;
}

EXPORT quote3_error_t sgx_qe_get_quote_size(uint32_t *size)
{
	struct qe_api api;
	char why[256] = "";
	size_t len;

	if (!size)
		return fail(SGX_QL_ERROR_INVALID_PARAMETER, "no size pointer");
	if (!qe_find(&api))
		return fail(SGX_QL_INTERFACE_UNAVAILABLE,
			    "no SGX platform in this process (run it under "
			    "sgxemu run)");
	if (!key_is_ready())
		return fail(SGX_QL_ATT_KEY_NOT_INITIALIZED,
			    "no attestation key yet: call "
			    "sgx_qe_get_target_info first");
	if (api.quote_size(&len, why, sizeof(why)))
		return fail(SGX_QL_ERROR_UNEXPECTED, "quote size: %s", why);
	*size = (uint32_t)len;
	return SGX_QL_SUCCESS;
}

EXPORT quote3_error_t sgx_qe_get_quote(const struct sgx_report *report,
				       uint32_t size, uint8_t *quote)
{
	struct qe_api api;
	char why[256] = "";
	uint8_t *q = NULL;
	size_t len, need;
	int ret;

	if (!report || !quote || !size)
		return fail(SGX_QL_ERROR_INVALID_PARAMETER,
			    "no report, no quote buffer or a size of 0");
	if (!qe_find(&api))
		return fail(SGX_QL_ENCLAVE_LOAD_ERROR,
			    "no SGX platform in this process: the quoting "
			    "enclave cannot be loaded (run it under sgxemu run)");
	if (!key_is_ready())
		return fail(SGX_QL_ATT_KEY_NOT_INITIALIZED,
			    "no attestation key yet: call "
			    "sgx_qe_get_target_info first");
	if (api.quote_size(&need, why, sizeof(why)))
		return fail(SGX_QL_ERROR_UNEXPECTED, "quote size: %s", why);
	if (size < need)
		return fail(SGX_QL_ERROR_INVALID_PARAMETER,
			    "quote buffer of %u bytes: the quote needs %zu "
			    "(sgx_qe_get_quote_size)", size, need);
	ret = api.quote(report, &q, &len, why, sizeof(why));
	if (ret == AESM_INVALID_REPORT)
		return fail(SGX_QL_INVALID_REPORT, "%s", why);
	if (ret == AESM_PARAMETER_ERROR)
		return fail(SGX_QL_ERROR_INVALID_PARAMETER, "%s", why);
	if (ret)
		return fail(SGX_QL_ERROR_UNEXPECTED, "quote: %s", why);
	if (len > size) {	/* the platform changed under us */
		free(q);
		return fail(SGX_QL_ERROR_UNEXPECTED, "quote of %zu bytes for "
			    "a buffer of %u", len, size);
	}
	memcpy(quote, q, len);
	memset(quote + len, 0, size - len);
	free(q);
	return SGX_QL_SUCCESS;
}

/* The QE and PCE unload at the end of the process here, whatever the
 * policy: nothing to clean up early, as with a persistent QE. */
EXPORT quote3_error_t sgx_qe_cleanup_by_policy(void)
{
	if (aesm_mode())
		return SGX_QL_UNSUPPORTED_MODE;
	return SGX_QL_SUCCESS;
}

/*
 * Where Intel's library finds the QE3, PCE and IDE enclaves and the quote
 * provider. The enclaves are software here, so their paths are kept but
 * never opened (Intel's library refuses a file it cannot open; the DCAP
 * sample names the distribution's paths and gives up when all fail, so
 * a path is taken as it is). The QPL path is where the certification
 * data would come from.
 */
EXPORT quote3_error_t sgx_ql_set_path(int type, const char *path)
{
	if (aesm_mode())
		return SGX_QL_UNSUPPORTED_MODE;
	if (!path)
		return fail(SGX_QL_ERROR_INVALID_PARAMETER, "no path");
	if (type < SGX_QL_QE3_PATH || type > SGX_QL_IDE_PATH)
		return fail(SGX_QL_ERROR_INVALID_PARAMETER,
			    "path type %d: types are 0..3", type);
	if (strlen(path) >= SGX_QL_MAX_PATH)
		return fail(SGX_QL_ERROR_INVALID_PARAMETER, "path of %zu "
			    "characters: at most %d", strlen(path),
			    SGX_QL_MAX_PATH - 1);
	pthread_mutex_lock(&lock);
	strcpy(paths[type], path);
	pthread_mutex_unlock(&lock);
	return SGX_QL_SUCCESS;
}

EXPORT quote3_error_t sgx_ql_set_trace_callback(sgx_ql_logging_callback_t cb,
						sgx_ql_log_level_t level)
{
	pthread_mutex_lock(&lock);
	(void)level;
	tracer = cb;
	pthread_mutex_unlock(&lock);
	return SGX_QL_SUCCESS;
}
