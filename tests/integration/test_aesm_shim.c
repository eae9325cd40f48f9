// SPDX-License-Identifier: MIT
/*
 * The AESM socket under `sgxemu run` (src/shim/aesm.c): a program connects
 * to /var/run/aesmd/aesm.socket, or to Gramine's abstract name, through
 * libc's connect() or its own `syscall` instruction, and the platform's
 * quoting service answers, with no daemon running; a quote obtained that
 * way verifies; other sockets are left alone; SGXEMU_AESM=off passes the
 * connect through. Re-executes itself through `sgxemu run` when started
 * without the shim.
 */
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include "test.h"
#include "aesm_client.h"
#include "../enclaves/shim_encl.h"
#include "attest/aesm.h"
#include "attest/attest.h"
#include "sgxemu/attest.h"

typedef Aesm__Message__Request Request;
typedef Aesm__Message__Response Response;

static const char *no_shim;

/* Its platform first: the environment goes with the re-execution. */
__attribute__((constructor))
static void platform_then_shim(int argc, char **argv)
{
	(void)argc;
	tc_attest_platform();
	no_shim = shim_reexec(argv);
}

#define NEED_SHIM() do { if (no_shim) test_skip("%s", no_shim); } while (0)

static Response *key_id_num(const char *where)
{
	Aesm__Message__Request__GetSupportedAttKeyIDNumRequest nq =
		AESM__MESSAGE__REQUEST__GET_SUPPORTED_ATT_KEY_IDNUM_REQUEST__INIT;
	Request q = AESM__MESSAGE__REQUEST__INIT;
	struct sockaddr_un a;
	socklen_t len;

	q.get_supported_att_key_id_num_req = &nq;
	tc_aesm_addr(where, &a, &len);
	return tc_aesm_call(&a, len, &q);
}

TEST(libc_connect_reaches_the_service)
{
	Response *r;

	NEED_SHIM();
	r = key_id_num(AESM_SOCKET_PATH);
	REQUIRE(r && r->get_supported_att_key_id_num_res);
	CHECK_EQ(r->get_supported_att_key_id_num_res->errorcode, 0);
	CHECK_EQ(r->get_supported_att_key_id_num_res->att_key_id_num, 1);
	aesm__message__response__free_unpacked(r, NULL);
	r = key_id_num("/run/aesmd/aesm.socket");
	CHECK(r && r->get_supported_att_key_id_num_res);
	if (r)
		aesm__message__response__free_unpacked(r, NULL);
}

/* Gramine's InitQuoteEx (facts §7.1) on its abstract name. */
TEST(gramine_abstract_name_and_init_quote_ex)
{
	Aesm__Message__Request__InitQuoteExRequest iq =
		AESM__MESSAGE__REQUEST__INIT_QUOTE_EX_REQUEST__INIT;
	Request q = AESM__MESSAGE__REQUEST__INIT;
	struct sgx_targetinfo ti;
	struct sockaddr_un a;
	socklen_t len;
	uint8_t id[256];
	Response *r;

	NEED_SHIM();
	sgx_aesm_key_id(id);
	iq.has_att_key_id = 1;
	iq.att_key_id.data = id;
	iq.att_key_id.len = 256;
	iq.b_pub_key_id = 1;
	iq.has_buf_size = 1;
	iq.buf_size = 32;
	q.init_quote_ex_req = &iq;
	tc_aesm_addr("@" AESM_ABSTRACT_NAME, &a, &len);
	r = tc_aesm_call(&a, len, &q);
	REQUIRE(r && r->init_quote_ex_res);
	CHECK_EQ(r->init_quote_ex_res->errorcode, 0);
	sgxemu_qe_target_info(&ti, NULL, 0);
	REQUIRE_EQ(r->init_quote_ex_res->target_info.len, 512);
	CHECK_MEM(r->init_quote_ex_res->target_info.data, &ti, 512);
	aesm__message__response__free_unpacked(r, NULL);
}

/* A runtime's own SYSCALL instruction, as Gramine's loader makes them. */
static long raw_connect(int fd, const struct sockaddr_un *a, socklen_t len)
{
	long ret;

	__asm__ volatile("syscall"
			 : "=a"(ret)
			 : "0"((long)SYS_connect), "D"((long)fd), "S"(a), "d"((long)len)
			 : "rcx", "r11", "memory");
	return ret;
}

TEST(raw_syscall_connect_reaches_the_service)
{
	struct sockaddr_un a;
	socklen_t len;
	uint32_t n = 0;
	int fd;

	NEED_SHIM();
	tc_aesm_addr(AESM_SOCKET_PATH, &a, &len);
	fd = socket(AF_UNIX, SOCK_STREAM, 0);
	REQUIRE(fd >= 0);
	REQUIRE_EQ(raw_connect(fd, &a, len), 0);
	/* GetSupportedAttKeyIDNum: field 21 holding an empty message. */
	REQUIRE_EQ(write(fd, "\x03\x00\x00\x00\xaa\x01\x00", 7), 7);
	REQUIRE_EQ(read(fd, &n, 4), 4);
	CHECK(n > 0 && n < 64);
	close(fd);
}

TEST(quote_through_the_socket_verifies)
{
	struct sgxemu_verify_result res;
	struct sgx_key_identity app;
	struct sgx_targetinfo ti;
	struct sgx_attest *ctx;
	struct sgx_report rep;
	struct sockaddr_un a;
	socklen_t len;
	uint8_t id[256], rd[64];
	char why[256];
	Response *r;

	NEED_SHIM();
	REQUIRE_EQ(sgx_attest_get(&ctx, why, sizeof(why)), 0);
	/* EREPORT's output for an application enclave, from the processor
	 * model over the same platform secrets. */
	memset(&app, 0, sizeof(app));
	app.attributes.flags = SGX_ATTR_INIT | SGX_ATTR_MODE64BIT;
	memset(app.mrenclave, 0xe1, 32);
	memset(rd, 0x5e, sizeof(rd));
	sgxemu_qe_target_info(&ti, NULL, 0);
	REQUIRE_EQ(sgx_build_report(&ctx->keys, &app, &ti, rd, &rep), 0);
	sgx_aesm_key_id(id);
	tc_aesm_addr(AESM_SOCKET_PATH, &a, &len);
	r = tc_aesm_get_quote(&a, len, &rep, id);
	REQUIRE(r && r->get_quote_ex_res);
	REQUIRE_EQ(r->get_quote_ex_res->errorcode, 0);
	CHECK_EQ(sgxemu_quote_verify(r->get_quote_ex_res->quote.data,
				     sgx_attest_quote_size(ctx), NULL, &res), 0);
	CHECK_MEM(res.report.report_data, rd, 64);
	aesm__message__response__free_unpacked(r, NULL);
}

TEST(other_sockets_are_left_alone)
{
	struct sockaddr_un a;
	socklen_t len;
	char path[256];
	int l, c, s;

	NEED_SHIM();
	snprintf(path, sizeof(path), "%s/tmp-attest/plain-%d.sock", test_build_dir(),
		 (int)getpid());
	tc_aesm_addr(path, &a, &len);
	l = socket(AF_UNIX, SOCK_STREAM, 0);
	REQUIRE_EQ(bind(l, (struct sockaddr *)&a, len), 0);
	REQUIRE_EQ(listen(l, 1), 0);
	c = socket(AF_UNIX, SOCK_STREAM, 0);
	REQUIRE_EQ(connect(c, (struct sockaddr *)&a, len), 0);
	s = accept(l, NULL, NULL);
	CHECK(s >= 0);
	CHECK_EQ(write(c, "x", 1), 1);
	close(s);
	close(c);
	close(l);
	unlink(path);
}

TEST(aesm_off_passes_connect_through)
{
	struct sockaddr_un a;
	socklen_t len;
	int fd;

	NEED_SHIM();
	if (access(AESM_SOCKET_PATH, F_OK) == 0)
		test_skip("a real %s exists here", AESM_SOCKET_PATH);
	setenv("SGXEMU_AESM", "off", 1);
	tc_aesm_addr(AESM_SOCKET_PATH, &a, &len);
	fd = socket(AF_UNIX, SOCK_STREAM, 0);
	CHECK_EQ(connect(fd, (struct sockaddr *)&a, len), -1);
	CHECK(errno == ENOENT || errno == ECONNREFUSED);
	close(fd);
	unsetenv("SGXEMU_AESM");
}
