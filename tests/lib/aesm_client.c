// SPDX-License-Identifier: MIT
/* The tests' AESM client and attestation platform (see aesm_client.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <sys/stat.h>

#include "aesm_client.h"
#include "attest/aesm.h"
#include "attest/attest.h"
#include "test.h"

void tc_aesm_addr(const char *path, struct sockaddr_un *addr, socklen_t *len)
{
	memset(addr, 0, sizeof(*addr));
	addr->sun_family = AF_UNIX;
	if (path[0] == '@') {
		/* As Gramine passes it: the whole structure, NUL padded. */
		strncpy(addr->sun_path + 1, path + 1, sizeof(addr->sun_path) - 2);
		*len = sizeof(*addr);
	} else {
		strncpy(addr->sun_path, path, sizeof(addr->sun_path) - 1);
		*len = (socklen_t)(offsetof(struct sockaddr_un, sun_path) +
				   strlen(addr->sun_path) + 1);
	}
}

int tc_aesm_raw(const struct sockaddr_un *addr, socklen_t alen,
		const uint8_t *frame, size_t flen, uint8_t **body, size_t *blen)
{
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	uint32_t n;
	int ret = -1;

	*body = NULL;
	if (fd < 0)
		return -1;
	if (connect(fd, (const struct sockaddr *)addr, alen) ||
	    sgx_sock_io(fd, (void *)frame, flen, true) ||
	    sgx_sock_io(fd, &n, 4, false) ||
	    n > (16u << 20))
		goto out;
	*body = malloc(n ? n : 1);
	if (*body && !sgx_sock_io(fd, *body, n, false)) {
		*blen = n;
		ret = 0;
	}
out:
	if (ret) {
		free(*body);
		*body = NULL;
	}
	close(fd);
	return ret;
}

Aesm__Message__Response *tc_aesm_call(const struct sockaddr_un *addr,
				      socklen_t alen,
				      const Aesm__Message__Request *req)
{
	size_t len = aesm__message__request__get_packed_size(req), blen;
	uint8_t *frame = malloc(len + 4), *body;
	Aesm__Message__Response *r = NULL;
	uint32_t n = (uint32_t)len;

	if (!frame)
		return NULL;
	memcpy(frame, &n, 4);
	aesm__message__request__pack(req, frame + 4);
	if (!tc_aesm_raw(addr, alen, frame, len + 4, &body, &blen)) {
		r = aesm__message__response__unpack(NULL, blen, body);
		free(body);
	}
	free(frame);
	return r;
}

void tc_attest_platform(void)
{
	static char path[512];

	snprintf(path, sizeof(path), "%s/tmp-attest", test_build_dir());
	mkdir(path, 0700);
	snprintf(path, sizeof(path), "%s/tmp-attest/secrets", test_build_dir());
	setenv("SGXEMU_SECRETS_FILE", path, 1);
	unsetenv("SGXEMU_CPUSVN");
}

struct sgx_attest *tc_attest(void)
{
	struct sgx_attest *a = NULL;
	char why[256];

	if (sgx_attest_get(&a, why, sizeof(why)))
		test_fail(__FILE__, __LINE__, "platform: %s", why);
	return a;
}

Aesm__Message__Response *tc_aesm_get_quote(const struct sockaddr_un *addr,
					   socklen_t alen, const void *report,
					   const uint8_t key_id[256])
{
	Aesm__Message__Request__GetQuoteExRequest gq =
		AESM__MESSAGE__REQUEST__GET_QUOTE_EX_REQUEST__INIT;
	Aesm__Message__Request q = AESM__MESSAGE__REQUEST__INIT;

	gq.report.data = (uint8_t *)report;
	gq.report.len = 432;
	gq.has_att_key_id = 1;
	gq.att_key_id.data = (uint8_t *)key_id;
	gq.att_key_id.len = 256;
	gq.buf_size = 8192;
	q.get_quote_ex_req = &gq;
	return tc_aesm_call(addr, alen, &q);
}
