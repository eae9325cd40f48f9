/* SPDX-License-Identifier: MIT */
/*
 * Known answers from a real SGX toolchain (fortanix/rust-sgx, see
 * ../shared/vectors/rust-sgx/SOURCE.md and sgx-facts.md §6). Every expected
 * value is a literal from the facts sheet.
 */
#include "test_cpu_helpers.h"
#include "cpu/internal.h"
#include "cpu/measure.h"
#include "cpu/sigstruct.h"

#define TE_MRENCLAVE "784acfd7d5096a8f0fbd3265760bff21b120f62407a9a9e5ba31aa3c8ed198fc"
#define TE_MRSIGNER  "fb4bab3d6036ac1d730fa83d7366df1dd2dfeac194ef335d6854d8a6c6475542"
#define TE_DIGEST    "4a106038882a9de40d1d1bcbaadc7973ce0fe41185f340a989ce3bf1afb65b6f"
#define RPT_MRENCLAVE "a06a560b26f5e397b2d7872fac66fe4b43bf4f507296ee048f110be6fb1a2290"
#define SIG1_DIGEST  "ea7ced3b8c78324bce65ad851152a125fd1989df324dc72b244ed5f44573ac95"
#define SIG1_HASH    "c50673624a6cb17c1c6c2a4e6906f47a170c4629b8723781d1017ef376f1a75d"

static void *vector(const char *name, size_t *size)
{
	char rel[256];
	const char *path;

	snprintf(rel, sizeof(rel), "vectors/rust-sgx/%s", name);
	path = test_shared_path(rel);
	if (!path)
		test_skip("%s not found", rel);
	return test_read_file(path, size);
}

static uint64_t le64(const uint8_t *p)
{
	uint64_t v = 0;

	for (int i = 7; i >= 0; i--)
		v = (v << 8) | p[i];
	return v;
}

/*
 * Replay a .sgxs measurement stream through the processor. A page's
 * content is what its EEXTEND records carry, so each EADD's source page is
 * assembled first from every EEXTEND chunk at that page; then the EEXTENDs
 * run in stream order on the EPC copy. @tamper_off (if not ~0) flips one
 * byte of the source of that enclave offset; @ssa overrides SSAFRAMESIZE.
 * Returns the number of EPC pages used (SECS in page 0), or -1.
 */
static int replay(struct sgx_cpu *cpu, const uint8_t *s, size_t n,
		  uint64_t tamper_off, uint32_t ssa_override)
{
	struct sgx_secs *secs = NULL;
	size_t next_epc = 1;

	if (n % 64)
		return -1;
	for (size_t at = 0; at < n; at += 64) {
		uint64_t tag = le64(s + at);

		if (tag == SGX_MEAS_ECREATE) {
			uint32_t ssa = (uint32_t)le64(s + at + 8);

			secs = t_secs(T_BASE, le64(s + at + 12));
			secs->ssa_frame_size = ssa_override ? ssa_override : ssa;
			secs->attributes.flags = SGX_ATTR_MODE64BIT;
			if (t_ecreate(cpu, secs, 0))
				return -1;
		} else if (tag == SGX_MEAS_EADD) {
			uint64_t off = le64(s + at + 8), flags = le64(s + at + 16);
			uint8_t *page = t_page();

			for (size_t e = 0; e < n; e += 64) {
				uint64_t t = le64(s + e);

				if (t == SGX_MEAS_EEXTEND) {
					uint64_t o = le64(s + e + 8);

					if (o >= off && o < off + 4096)
						memcpy(page + (o - off), s + e + 64, 256);
					e += 256;
				}
			}
			if (tamper_off >= off && tamper_off < off + 4096)
				page[tamper_off - off] ^= 1;
			if (t_eadd(cpu, 0, next_epc++, T_BASE + off, flags, page))
				return -1;
		} else if (tag == SGX_MEAS_EEXTEND) {
			uint64_t off = le64(s + at + 8);
			long idx = sgx_cpu_lookup(cpu, T_BASE + (off & ~0xFFFULL));

			if (idx < 0 || sgx_eextend(cpu, t_epc(cpu, 0),
						   (uint8_t *)t_epc(cpu, idx) + (off & 0xFFF)))
				return -1;
			at += 256;
		} else {
			return -1;
		}
	}
	return (int)next_epc;
}

TEST(kat_test_enclave_mrenclave)
{
	struct sgx_cpu cpu;
	size_t n;
	uint8_t *s = vector("test_enclave.sgxs", &n);
	uint8_t h[32];

	REQUIRE(s && n == 46720);
	REQUIRE_EQ(t_cpu_init(&cpu), 0);
	REQUIRE_EQ(replay(&cpu, s, n, ~0ULL, 0), 10);
	REQUIRE(t_mrenclave(&cpu, 0, h));
	CHECK(t_hex_eq(h, TE_MRENCLAVE, 32));
	/* 1 ECREATE + 9 EADD + 144 EEXTEND (5 blocks each) */
	CHECK_EQ(t_ctl(&cpu, 0)->update_counter, 1 + 9 + 144 * 5);
	CHECK_EQ(t_ctl(&cpu, 0)->child_count, 9);
}

TEST(kat_report_mrenclave)
{
	struct sgx_cpu cpu;
	size_t n;
	uint8_t *s = vector("report.sgxs", &n);
	uint8_t h[32];

	REQUIRE(s && n == 15616);
	REQUIRE_EQ(t_cpu_init(&cpu), 0);
	REQUIRE_EQ(replay(&cpu, s, n, ~0ULL, 0), 4);
	REQUIRE(t_mrenclave(&cpu, 0, h));
	CHECK(t_hex_eq(h, RPT_MRENCLAVE, 32));
}

/* The record builders against the stream's first three records. */
TEST(kat_measure_records)
{
	size_t n;
	uint8_t *s = vector("test_enclave.sgxs", &n);
	uint8_t b[64];

	REQUIRE(s && n >= 192);
	sgx_meas_ecreate(b, 1, 0x40000);
	CHECK_MEM(b, s, 64);
	sgx_meas_eadd(b, 0, 0x201);
	CHECK_MEM(b, s + 64, 64);
	sgx_meas_eextend(b, 0);
	CHECK_MEM(b, s + 128, 64);
	/* the TCS record: EADD at 0x15000 with flags 0x100 (sgx-facts §6.1) */
	sgx_meas_eadd(b, 0x15000, 0x100);
	CHECK(b[8] == 0x00 && b[9] == 0x50 && b[10] == 0x01 && b[16] == 0x00 && b[17] == 0x01);
}

static struct sgx_sigstruct *te_sig(void)
{
	size_t n;
	uint8_t *raw = vector("test_enclave.sig", &n);
	struct sgx_sigstruct *sig = aligned_alloc(4096, 4096);

	if (!raw || n != 1808)
		return NULL;
	memcpy(sig, raw, 1808);
	return sig;
}

/* Replay test_enclave and EINIT it with its real SIGSTRUCT. */
TEST(kat_test_enclave_einit)
{
	struct sgx_cpu cpu;
	size_t n;
	uint8_t *s = vector("test_enclave.sgxs", &n);
	struct sgx_sigstruct *sig = te_sig();
	struct sgx_secs *secs;

	REQUIRE(s && sig);
	REQUIRE_EQ(t_cpu_init(&cpu), 0);
	REQUIRE_EQ(replay(&cpu, s, n, ~0ULL, 0), 10);
	REQUIRE(t_set_lehash(&cpu, TE_MRSIGNER));
	REQUIRE_EQ(sgx_einit(&cpu, sig, t_epc(&cpu, 0), t_token()), 0);
	secs = t_epc(&cpu, 0);
	CHECK(t_hex_eq(secs->mrenclave, TE_MRENCLAVE, 32));
	CHECK(t_hex_eq(secs->mrsigner, TE_MRSIGNER, 32));
	CHECK_EQ(secs->isvprodid, 0xFFFF);
	CHECK_EQ(secs->isvsvn, 0);
	CHECK(secs->attributes.flags & SGX_ATTR_INIT);
}

/* Launch control: the same enclave with the reset (Intel LE) MSRs. */
TEST(kat_test_enclave_einit_default_msrs)
{
	struct sgx_cpu cpu;
	size_t n;
	uint8_t *s = vector("test_enclave.sgxs", &n);
	struct sgx_sigstruct *sig = te_sig();

	REQUIRE(s && sig);
	REQUIRE_EQ(t_cpu_init(&cpu), 0);
	REQUIRE_EQ(replay(&cpu, s, n, ~0ULL, 0), 10);
	CHECK_EQ(sgx_einit(&cpu, sig, t_epc(&cpu, 0), t_token()), SGX_INVALID_EINITTOKEN);
}

/*
 * What EINIT must say when byte @pos of the SIGSTRUCT is flipped: the
 * fixed fields (step 4) come before the signature (step 6). Layout from
 * sgx-facts §1.12.
 */
static int expect_flip(size_t pos)
{
	if (pos < 16 ||				/* HEADER */
	    (pos >= 16 && pos < 20) ||		/* VENDOR: 0 -> neither 0 nor 0x8086 */
	    (pos >= 24 && pos < 40) ||		/* HEADER2 */
	    (pos >= 44 && pos < 128) ||		/* reserved */
	    (pos >= 512 && pos < 516) ||	/* EXPONENT */
	    (pos >= 908 && pos < 912) ||	/* reserved */
	    (pos >= 992 && pos < 1008) ||	/* reserved */
	    (pos >= 1028 && pos < 1040))	/* reserved */
		return SGX_INVALID_SIG_STRUCT;
	return SGX_INVALID_SIGNATURE;
}

TEST(kat_test_enclave_flip_signed_bytes)
{
	struct sgx_cpu cpu;
	size_t n;
	uint8_t *s = vector("test_enclave.sgxs", &n);
	struct sgx_sigstruct *sig = te_sig();
	uint8_t *raw = (uint8_t *)sig;
	int checked = 0;

	REQUIRE(s && sig);
	REQUIRE_EQ(t_cpu_init(&cpu), 0);
	REQUIRE_EQ(replay(&cpu, s, n, ~0ULL, 0), 10);
	REQUIRE(t_set_lehash(&cpu, TE_MRSIGNER));
	/* every signed byte, each with a one-bit flip */
	for (size_t pos = 0; pos < 1028; pos++) {
		int got;

		if (pos == 128)
			pos = 900;
		raw[pos] ^= (uint8_t)(1U << (pos % 8));
		got = sgx_einit(&cpu, sig, t_epc(&cpu, 0), t_token());
		raw[pos] ^= (uint8_t)(1U << (pos % 8));
		if (got != expect_flip(pos))
			test_fail(__FILE__, __LINE__, "byte %zu: got %s", pos, sgx_error_name(got));
		checked++;
	}
	CHECK_EQ(checked, 256);
	/* unsigned but verified bytes: modulus, signature, Q1, Q2 */
	{
		static const size_t unsigned_pos[] = { 128, 300, 511, 516, 700, 899,
						       1040, 1300, 1423, 1424, 1600, 1807 };

		for (size_t i = 0; i < sizeof(unsigned_pos) / sizeof(unsigned_pos[0]); i++) {
			size_t pos = unsigned_pos[i];
			int got;

			raw[pos] ^= 0x02;	/* keeps the modulus odd */
			got = sgx_einit(&cpu, sig, t_epc(&cpu, 0), t_token());
			raw[pos] ^= 0x02;
			if (got != SGX_INVALID_SIGNATURE)
				test_fail(__FILE__, __LINE__, "byte %zu: got %s", pos, sgx_error_name(got));
		}
	}
	/* and the untouched SIGSTRUCT still launches */
	CHECK_EQ(sgx_einit(&cpu, sig, t_epc(&cpu, 0), t_token()), 0);
}

TEST(kat_test_enclave_page_byte_changed)
{
	static const uint64_t offsets[] = { 0x0, 0x1234, 0x15010, 0x39fff };
	size_t n;
	uint8_t *s = vector("test_enclave.sgxs", &n);
	struct sgx_sigstruct *sig = te_sig();

	REQUIRE(s && sig);
	for (size_t i = 0; i < sizeof(offsets) / sizeof(offsets[0]); i++) {
		struct sgx_cpu cpu;

		REQUIRE_EQ(t_cpu_init(&cpu), 0);
		REQUIRE_EQ(replay(&cpu, s, n, offsets[i], 0), 10);
		REQUIRE(t_set_lehash(&cpu, TE_MRSIGNER));
		CHECK_EQ(sgx_einit(&cpu, sig, t_epc(&cpu, 0), t_token()), SGX_INVALID_MEASUREMENT);
		sgx_cpu_destroy(&cpu);
	}
}

/* The TCS's DBGOPTIN bit (byte 8, bit 0) is forced to 0 by EADD: unmeasured. */
TEST(kat_test_enclave_tcs_dbgoptin_forced)
{
	struct sgx_cpu cpu;
	size_t n;
	uint8_t *s = vector("test_enclave.sgxs", &n);
	struct sgx_sigstruct *sig = te_sig();

	REQUIRE(s && sig);
	REQUIRE_EQ(t_cpu_init(&cpu), 0);
	REQUIRE_EQ(replay(&cpu, s, n, 0x15008, 0), 10);
	REQUIRE(t_set_lehash(&cpu, TE_MRSIGNER));
	CHECK_EQ(sgx_einit(&cpu, sig, t_epc(&cpu, 0), t_token()), 0);
}

TEST(kat_test_enclave_ssaframesize_changed)
{
	struct sgx_cpu cpu;
	size_t n;
	uint8_t *s = vector("test_enclave.sgxs", &n);
	struct sgx_sigstruct *sig = te_sig();

	REQUIRE(s && sig);
	REQUIRE_EQ(t_cpu_init(&cpu), 0);
	REQUIRE_EQ(replay(&cpu, s, n, ~0ULL, 2), 10);
	REQUIRE(t_set_lehash(&cpu, TE_MRSIGNER));
	CHECK_EQ(sgx_einit(&cpu, sig, t_epc(&cpu, 0), t_token()), SGX_INVALID_MEASUREMENT);
}

TEST(kat_test_enclave_sig_fields)
{
	struct sgx_sigstruct *sig = te_sig();
	uint8_t h[32], pad[352];

	REQUIRE(sig);
	CHECK_EQ(sgx_sigstruct_check_fields(sig), 0);
	CHECK_EQ(sgx_sigstruct_verify_signature(sig, pad), 0);
	sgx_sigstruct_digest(sig, h);
	CHECK(t_hex_eq(h, TE_DIGEST, 32));
	sgx_sigstruct_mrsigner(sig, h);
	CHECK(t_hex_eq(h, TE_MRSIGNER, 32));
	CHECK(t_hex_eq(sig->body.enclavehash, TE_MRENCLAVE, 32));
	CHECK_EQ(pad[0], 0x00);
	CHECK_EQ(pad[1], 0x01);
	CHECK_EQ(pad[331], 0xFF);
	CHECK_EQ(pad[332], 0x00);
	CHECK_EQ(pad[351], 0x20);
}

TEST(kat_sig1_sigstruct)
{
	size_t n;
	uint8_t *raw = vector("sig1.sigstruct.bin", &n);
	struct sgx_sigstruct *sig = aligned_alloc(4096, 4096);
	uint8_t h[32];

	REQUIRE(raw && n == 1808);
	memcpy(sig, raw, 1808);
	CHECK_EQ(sgx_sigstruct_check_fields(sig), 0);
	CHECK_EQ(sgx_sigstruct_verify_signature(sig, NULL), 0);
	sgx_sigstruct_mrsigner(sig, h);
	CHECK(t_hex_eq(h, T_SIG1_MRSIGNER, 32));
	sgx_sigstruct_digest(sig, h);
	CHECK(t_hex_eq(h, SIG1_DIGEST, 32));
	CHECK(t_hex_eq(sig->body.enclavehash, SIG1_HASH, 32));
	CHECK_EQ(sig->header.date, 0x20160109);
	sig->body.isvsvn ^= 1;
	CHECK_EQ(sgx_sigstruct_verify_signature(sig, NULL), SGX_INVALID_SIGNATURE);
}

/* The raw RSA vectors: modulus, digest, signature, Q1, Q2 (all LE). */
TEST(kat_sig1_raw_rsa)
{
	size_t nn, nd, ns, n1, n2;
	uint8_t *mod = vector("sig1.key_n.bin", &nn);
	uint8_t *dig = vector("sig1.data.bin", &nd);
	uint8_t *s = vector("sig1.sig.bin", &ns);
	uint8_t *q1 = vector("sig1.q1.bin", &n1);
	uint8_t *q2 = vector("sig1.q2.bin", &n2);
	uint8_t h[32];
	EVP_MD_CTX *md = EVP_MD_CTX_new();
	unsigned int len = 32;

	REQUIRE(mod && dig && s && q1 && q2);
	REQUIRE(nn == 384 && nd == 32 && ns == 384 && n1 == 384 && n2 == 384);
	REQUIRE(t_hex_eq(dig, "28696192072b91b09f908be53ef7b5a0ca48f0262008443ea28f8cb20a8b5e2a", 32));
	/* SHA-256 of the modulus file is the MRSIGNER (test-side OpenSSL) */
	REQUIRE(EVP_DigestInit_ex(md, EVP_sha256(), NULL) && EVP_DigestUpdate(md, mod, 384) &&
		EVP_DigestFinal_ex(md, h, &len));
	EVP_MD_CTX_free(md);
	CHECK(t_hex_eq(h, T_SIG1_MRSIGNER, 32));

	CHECK_EQ(sgx_rsa3072_verify(mod, s, q1, q2, dig, NULL), 0);
	dig[31] ^= 1;
	CHECK_EQ(sgx_rsa3072_verify(mod, s, q1, q2, dig, NULL), SGX_INVALID_SIGNATURE);
	dig[31] ^= 1;
	q1[200] ^= 1;
	CHECK_EQ(sgx_rsa3072_verify(mod, s, q1, q2, dig, NULL), SGX_INVALID_SIGNATURE);
	q1[200] ^= 1;
	q2[0] ^= 1;
	CHECK_EQ(sgx_rsa3072_verify(mod, s, q1, q2, dig, NULL), SGX_INVALID_SIGNATURE);
	q2[0] ^= 1;
	s[17] ^= 4;
	CHECK_EQ(sgx_rsa3072_verify(mod, s, q1, q2, dig, NULL), SGX_INVALID_SIGNATURE);
	s[17] ^= 4;
	CHECK_EQ(sgx_rsa3072_verify(mod, s, q1, q2, dig, NULL), 0);
}

/* sgx-facts §6.5 tiny enclave, end to end through EINIT with sig1's key. */
TEST(kat_tiny_enclave_einit)
{
	struct sgx_cpu cpu;
	struct sgx_sigstruct *sig = t_sigstruct();

	REQUIRE_EQ(t_cpu_init(&cpu), 0);
	REQUIRE_EQ(t_ecreate(&cpu, t_secs(T_BASE, 0x2000), 0), 0);
	REQUIRE_EQ(t_eadd(&cpu, 0, 1, T_BASE, SGX_SECINFO_REG | 3, t_page()), 0);
	REQUIRE_EQ(t_eextend_page(&cpu, 0, 1), 0);
	REQUIRE_EQ(t_eadd(&cpu, 0, 2, T_BASE + 0x1000, SGX_SECINFO_TCS, t_page()), 0);
	REQUIRE_EQ(t_eextend_page(&cpu, 0, 2), 0);
	test_unhex("c62b62b99c4d540a66201bbee6db951fb2545b704bd85a8fa139362a91b2635b",
		   sig->body.enclavehash, 32);
	sig->body.attributes.flags = SGX_ATTR_MODE64BIT | SGX_ATTR_DEBUG;
	sig->body.attributes.xfrm = 3;
	/* Any signer will do: the MRENCLAVE is the known answer here. */
	REQUIRE(t_sign_key(sig));
	REQUIRE(t_set_lehash(&cpu, t_key_mrsigner()));
	CHECK_EQ(sgx_einit(&cpu, sig, t_epc(&cpu, 0), t_token()), 0);
	CHECK(t_hex_eq(((struct sgx_secs *)t_epc(&cpu, 0))->mrenclave,
		       "c62b62b99c4d540a66201bbee6db951fb2545b704bd85a8fa139362a91b2635b", 32));
}
