/* SPDX-License-Identifier: MIT */
/*
 * The shim tests' enclave and a host-side loader written the way an SGX
 * runtime for Linux >= 5.11 writes one: only <asm/sgx.h>, /dev/sgx_enclave,
 * the ioctls, mmap, and __vdso_sgx_enter_enclave found through
 * AT_SYSINFO_EHDR. Included by tests/integration/test_shim_*.c and
 * bench/ecall_vdso.c, which run under the shim (they re-execute themselves
 * through `sgxemu run` when they are not already under it).
 *
 * Layout (16 pages, SIZE 64 KiB, base aligned to SIZE):
 *   0x0000 TCS0  0x1000-0x2fff its two SSA frames
 *   0x3000 TCS1  0x4000-0x5fff SSA       (NSSA = 2 for every TCS)
 *   0x6000 TCS2  0x7000-0x8fff SSA
 *   0x9000 TCS3  0xa000-0xbfff SSA
 *   0xc000 code (R-X)   0xd000 data (RW-)   0xe000 read-only (R--)
 *   0xf000 no page (ELRANGE left unpopulated)
 *
 * The code needs no stack: EENTER gives RAX = CSSA, RBX = TCS, RCX = the
 * return point; the host passes RDI = op, RSI = output pointer (host
 * memory), RDX = argument.
 *   op 0  out[0] = RDX + 1, out[1] = TCS address          (echo)
 *   op 1  load from RDX (fault there), then out[0] = 0x600d
 *   op 2  ud2 (#UD), then out[0] = 0x600d
 *   op 3  write to the read-only page (#PF), then out[0] = 0x600d
 *   op 4  CPUID leaf RDX, sub-leaf 0: out[0] = RBX, out[1] = RAX (#UD
 *         on hardware; skipped by the handler, RBX and RAX stay the TCS
 *         and the leaf)
 *   op 5  out[0] = 1, then spin in enclave mode until the host qword at
 *         RDX is not zero, then out[0] = 0x600d (a thread caught inside)
 *   CSSA > 0 (entered after an exception): out[0] = EXITINFO of SSA
 *         frame 0, GPRSGX.RIP += RDX (skips the faulting instruction)
 */
#ifndef SHIM_ENCL_H
#define SHIM_ENCL_H

#include <dlfcn.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <asm/sgx.h>
#include <openssl/bn.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/rsa.h>

#include "meas_log.h"
#include "sgxemu/arch.h"

/* Built with AddressSanitizer? (gcc defines the first, clang the second) */
#if defined(__SANITIZE_ADDRESS__)
#define SHIM_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define SHIM_ASAN 1
#endif
#endif
#ifndef SHIM_ASAN
#define SHIM_ASAN 0
#endif

/* Each includer uses a different subset of the helpers below. */
#define SHIM_FN static __attribute__((unused))

#define SHIM_ENCL_SIZE		0x10000UL
#define SHIM_ENCL_NR_TCS	4
#define SHIM_ENCL_TCS(i)	(0x3000UL * (i))
#define SHIM_ENCL_CODE		0xc000UL
#define SHIM_ENCL_DATA		0xd000UL
#define SHIM_ENCL_RO		0xe000UL
#define SHIM_ENCL_ATTRS		(SGX_ATTR_MODE64BIT | SGX_ATTR_DEBUG)

/* Lengths of the faulting instructions in ops 1, 2 and 3. */
#define SHIM_OP1_LEN	3
#define SHIM_OP2_LEN	2
#define SHIM_OP3_LEN	11
#define SHIM_OP4_LEN	2

/* The enclave's code: assembled into the host binary as plain bytes. */
extern const uint8_t shim_encl_code[], shim_encl_code_end[];
__asm__(
	".pushsection .rodata\n"
	".balign 16\n"
	"shim_encl_code:\n"
	"	test %eax, %eax\n"
	"	jnz 5f\n"
	"	cmp $1, %rdi\n"
	"	je 2f\n"
	"	cmp $2, %rdi\n"
	"	je 3f\n"
	"	cmp $3, %rdi\n"
	"	je 4f\n"
	"	cmp $4, %rdi\n"
	"	je 6f\n"
	"	cmp $5, %rdi\n"
	"	je 7f\n"
	"	lea 1(%rdx), %r8\n"
	"	mov %r8, (%rsi)\n"
	"	mov %rbx, 8(%rsi)\n"
	"1:	mov %rcx, %rbx\n"		/* EEXIT to the return point */
	"	mov $4, %eax\n"
	"	.byte 0x0f, 0x01, 0xd7\n"
	"2:	mov (%rdx), %r8\n"		/* 3 bytes */
	"	mov $0x600d, %r8d\n"
	"	mov %r8, (%rsi)\n"
	"	jmp 1b\n"
	"3:	ud2\n"				/* 2 bytes */
	"	mov $0x600d, %r8d\n"
	"	mov %r8, (%rsi)\n"
	"	jmp 1b\n"
	"4:	movq $1, 0xe000(%rbx)\n"	/* 11 bytes */
	"	mov $0x600d, %r8d\n"
	"	mov %r8, (%rsi)\n"
	"	jmp 1b\n"
	/* Frame 0's GPRSGX is at TCS + 0x1000 + 4096 - 184 = TCS + 0x1f48:
	 * RIP at +136 (0x1fd0), EXITINFO at +160 (0x1fe8). */
	"5:	mov 0x1fe8(%rbx), %r8d\n"
	"	mov %r8, (%rsi)\n"
	"	add %rdx, 0x1fd0(%rbx)\n"
	"	jmp 1b\n"
	"6:	mov %rcx, %r9\n"		/* CPUID writes RBX and RCX */
	"	mov %edx, %eax\n"
	"	xor %ecx, %ecx\n"
	"	cpuid\n"			/* 2 bytes */
	"	mov %rbx, (%rsi)\n"
	"	mov %rax, 8(%rsi)\n"
	"	mov %r9, %rcx\n"
	"	jmp 1b\n"
	"7:	movq $1, (%rsi)\n"
	"8:	pause\n"
	"	cmpq $0, (%rdx)\n"
	"	je 8b\n"
	"	mov $0x600d, %r8d\n"
	"	mov %r8, (%rsi)\n"
	"	jmp 1b\n"
	"shim_encl_code_end:\n"
	".popsection\n");

/* The callee-saved registers, around the entry stubs below: an enclave
 * entry keeps none of them but RBP. */
#define SHIM_ASM_SAVE \
	"	push %rbx\n	push %rbp\n	push %r12\n" \
	"	push %r13\n	push %r14\n	push %r15\n"
#define SHIM_ASM_RESTORE \
	"	pop %r15\n	pop %r14\n	pop %r13\n" \
	"	pop %r12\n	pop %rbp\n	pop %rbx\n"

/*
 * A call of __vdso_sgx_enter_enclave from C: after an exception the
 * enclave's AEX leaves R12-R15 zeroed (the synthetic state), which C code
 * must not see, so this wrapper keeps every callee-saved register.
 * Same arguments as vdso_sgx_enter_enclave_t.
 */
extern void *shim_vdso_fn;
int shim_vdso_call(unsigned long rdi, unsigned long rsi, unsigned long rdx,
		   unsigned int function, unsigned long r8, unsigned long r9,
		   struct sgx_enclave_run *run);
__asm__(
	".pushsection .data\n"
	".balign 8\n"
	"shim_vdso_fn: .quad 0\n"
	".popsection\n"
	".text\n"
	".globl shim_vdso_call\n"
	"shim_vdso_call:\n"
	SHIM_ASM_SAVE
	"	pushq 56(%rsp)\n"		/* run, the 7th argument */
	"	call *shim_vdso_fn(%rip)\n"
	"	add $8, %rsp\n"
	SHIM_ASM_RESTORE
	"	ret\n");

/*
 * ENCLU[EENTER] executed by host code (RDI, RSI, RDX as given, RBX = @tcs),
 * with the AEP at the ENCLU itself as a runtime without the vDSO has it:
 * EEXIT comes back after it, and the program's own handlers see the
 * enclave's faults.
 */
void host_enclu_eenter(unsigned long rdi, unsigned long rsi,
		       unsigned long rdx, uint64_t tcs);
__asm__(
	".text\n"
	".globl host_enclu_eenter\n"
	"host_enclu_eenter:\n"
	SHIM_ASM_SAVE
	"	mov %rcx, %rbx\n"
	"	lea 1f(%rip), %rcx\n"
	"	mov $2, %eax\n"
	"1:	.byte 0x0f, 0x01, 0xd7\n"
	SHIM_ASM_RESTORE
	"	ret\n");

/* --- the vDSO ------------------------------------------------------------ */

SHIM_FN unsigned long shim_elf_hash(const char *name)
{
	unsigned long h = 0, g;

	while (*name) {
		h = (h << 4) + (unsigned char)*name++;
		g = h & 0xf0000000UL;
		if (g)
			h ^= g >> 24;
		h &= ~g;
	}
	return h;
}

/* A vDSO symbol found through DT_HASH, as the selftests look it up. */
SHIM_FN void *shim_vdso_sym(const char *name)
{
	uint8_t *base = (void *)getauxval(AT_SYSINFO_EHDR);
	Elf64_Ehdr *eh = (void *)base;
	Elf64_Phdr *ph;
	Elf64_Dyn *dyn = NULL;
	Elf64_Sym *sym = NULL;
	const char *str = NULL;
	Elf64_Word *hash = NULL;

	if (!base)
		return NULL;
	ph = (void *)(base + eh->e_phoff);
	for (int i = 0; i < eh->e_phnum; i++)
		if (ph[i].p_type == PT_DYNAMIC)
			dyn = (void *)(base + ph[i].p_offset);
	if (!dyn)
		return NULL;
	for (; dyn->d_tag != DT_NULL; dyn++) {
		if (dyn->d_tag == DT_SYMTAB)
			sym = (void *)(base + dyn->d_un.d_ptr);
		else if (dyn->d_tag == DT_STRTAB)
			str = (void *)(base + dyn->d_un.d_ptr);
		else if (dyn->d_tag == DT_HASH)
			hash = (void *)(base + dyn->d_un.d_ptr);
	}
	if (!sym || !str || !hash)
		return NULL;
	for (Elf64_Word i = hash[2 + shim_elf_hash(name) % hash[0]]; i;
	     i = hash[2 + hash[0] + i])
		if (!strcmp(str + sym[i].st_name, name))
			return base + sym[i].st_value;
	return NULL;
}

/* --- image, measurement, signature ------------------------------------- */

struct shim_page {
	uint64_t offset;
	uint64_t flags;		/* SECINFO flags */
	int prot;		/* the window's permissions */
};

static const struct shim_page shim_pages[] = {
	{ 0x0000, SGX_SECINFO_TCS, PROT_READ | PROT_WRITE },
	{ 0x1000, SGX_SECINFO_REG | SGX_SECINFO_R | SGX_SECINFO_W, PROT_READ | PROT_WRITE },
	{ 0x2000, SGX_SECINFO_REG | SGX_SECINFO_R | SGX_SECINFO_W, PROT_READ | PROT_WRITE },
	{ 0x3000, SGX_SECINFO_TCS, PROT_READ | PROT_WRITE },
	{ 0x4000, SGX_SECINFO_REG | SGX_SECINFO_R | SGX_SECINFO_W, PROT_READ | PROT_WRITE },
	{ 0x5000, SGX_SECINFO_REG | SGX_SECINFO_R | SGX_SECINFO_W, PROT_READ | PROT_WRITE },
	{ 0x6000, SGX_SECINFO_TCS, PROT_READ | PROT_WRITE },
	{ 0x7000, SGX_SECINFO_REG | SGX_SECINFO_R | SGX_SECINFO_W, PROT_READ | PROT_WRITE },
	{ 0x8000, SGX_SECINFO_REG | SGX_SECINFO_R | SGX_SECINFO_W, PROT_READ | PROT_WRITE },
	{ 0x9000, SGX_SECINFO_TCS, PROT_READ | PROT_WRITE },
	{ 0xa000, SGX_SECINFO_REG | SGX_SECINFO_R | SGX_SECINFO_W, PROT_READ | PROT_WRITE },
	{ 0xb000, SGX_SECINFO_REG | SGX_SECINFO_R | SGX_SECINFO_W, PROT_READ | PROT_WRITE },
	{ 0xc000, SGX_SECINFO_REG | SGX_SECINFO_R | SGX_SECINFO_X, PROT_READ | PROT_EXEC },
	{ 0xd000, SGX_SECINFO_REG | SGX_SECINFO_R | SGX_SECINFO_W, PROT_READ | PROT_WRITE },
	{ 0xe000, SGX_SECINFO_REG | SGX_SECINFO_R, PROT_READ },
};
#define SHIM_NR_PAGES	(sizeof(shim_pages) / sizeof(shim_pages[0]))

/* The 64 KiB image: page i of the enclave at offset i * 4096. */
SHIM_FN uint8_t *shim_encl_image(void)
{
	uint8_t *img = aligned_alloc(4096, SHIM_ENCL_SIZE);

	if (!img)
		return NULL;
	memset(img, 0, SHIM_ENCL_SIZE);
	for (int i = 0; i < SHIM_ENCL_NR_TCS; i++) {
		struct sgx_tcs *tcs = (void *)(img + SHIM_ENCL_TCS(i));

		tcs->ossa = SHIM_ENCL_TCS(i) + 0x1000;
		tcs->nssa = 2;
		tcs->oentry = SHIM_ENCL_CODE;
		tcs->fslimit = 0xfff;
		tcs->gslimit = 0xfff;
	}
	memcpy(img + SHIM_ENCL_CODE, shim_encl_code,
	       (size_t)(shim_encl_code_end - shim_encl_code));
	memset(img + SHIM_ENCL_RO, 0x5a, 4096);
	return img;
}

SHIM_FN void shim_encl_secs(struct sgx_secs *secs, uint64_t base, uint64_t attrs)
{
	memset(secs, 0, sizeof(*secs));
	secs->size = SHIM_ENCL_SIZE;
	secs->base = base;
	secs->ssa_frame_size = 1;
	secs->attributes.flags = attrs;
	secs->attributes.xfrm = SGX_XFRM_LEGACY;
}

/*
 * MRENCLAVE of the image as the loader below builds it, from the tests'
 * own measurement log (meas_log.h), never from src/cpu's code: EINIT of
 * a SIGSTRUCT over this value fails if the processor model measures the
 * same pages differently.
 */
SHIM_FN void shim_encl_measure(const uint8_t *img, uint8_t out[32])
{
	struct tm_log log;

	tm_init(&log, 1, SHIM_ENCL_SIZE);
	for (size_t i = 0; i < SHIM_NR_PAGES; i++)
		tm_add(&log, shim_pages[i].offset, shim_pages[i].flags,
		       img + shim_pages[i].offset, 0xffff);
	if (tm_final(&log, out))
		memset(out, 0, 32);	/* EINIT then refuses the enclave */
}

/* Why the last shim_load_key() returned NULL. */
static char shim_key_why[600];

/*
 * The signing key from @pem, or NULL with the reason in shim_key_why: a
 * missing key is the caller's to report (the build makes the tests' key,
 * so a test fails without it). A made-up key would sign just as well and
 * hide that the tests no longer use the key they name.
 */
SHIM_FN EVP_PKEY *shim_load_key(const char *pem)
{
	EVP_PKEY *key = NULL;
	FILE *f = pem ? fopen(pem, "r") : NULL;

	if (!pem) {
		snprintf(shim_key_why, sizeof(shim_key_why),
			 "signing key not found (make keys builds it; tests/lib/test.h)");
		return NULL;
	}
	if (!f) {
		snprintf(shim_key_why, sizeof(shim_key_why),
			 "cannot open signing key %.400s: %s", pem, strerror(errno));
		return NULL;
	}
	key = PEM_read_PrivateKey(f, NULL, NULL, NULL);
	fclose(f);
	if (!key)
		snprintf(shim_key_why, sizeof(shim_key_why),
			 "%.400s is not a PEM private key", pem);
	return key;
}

/* Little-endian fixed-width copy of @bn. */
SHIM_FN void shim_bn_le(const BIGNUM *bn, uint8_t *out, int len)
{
	BN_bn2lebinpad(bn, out, len);
}

/* A SIGSTRUCT for @mrenclave signed with @key. 0 or -1. */
SHIM_FN int shim_sign(EVP_PKEY *key, const uint8_t mrenclave[32], uint64_t attrs,
		     struct sgx_sigstruct *ss)
{
	static const uint8_t h1[16] = SGX_SIGSTRUCT_HEADER;
	static const uint8_t h2[16] = SGX_SIGSTRUCT_HEADER2;
	uint8_t digest_in[256], digest[32], sig_be[384];
	size_t siglen = sizeof(sig_be);
	BIGNUM *n = NULL, *s, *q1, *q2, *t;
	BN_CTX *bc;
	EVP_PKEY_CTX *ctx;
	int ret = -1;

	memset(ss, 0, sizeof(*ss));
	memcpy(ss->header.header, h1, 16);
	memcpy(ss->header.header2, h2, 16);
	ss->exponent = 3;
	ss->body.attributes.flags = attrs;
	ss->body.attributes.xfrm = SGX_XFRM_LEGACY;
	ss->body.attributemask.flags = ~0ULL;
	ss->body.attributemask.xfrm = ~0ULL;
	memcpy(ss->body.enclavehash, mrenclave, 32);

	memcpy(digest_in, ss, 128);
	memcpy(digest_in + 128, (uint8_t *)ss + 900, 128);
	EVP_Digest(digest_in, sizeof(digest_in), digest, NULL, EVP_sha256(), NULL);
	ctx = EVP_PKEY_CTX_new(key, NULL);
	if (!ctx || EVP_PKEY_sign_init(ctx) <= 0 ||
	    EVP_PKEY_CTX_set_rsa_padding(ctx, RSA_PKCS1_PADDING) <= 0 ||
	    EVP_PKEY_CTX_set_signature_md(ctx, EVP_sha256()) <= 0 ||
	    EVP_PKEY_sign(ctx, sig_be, &siglen, digest, sizeof(digest)) <= 0 ||
	    siglen != 384) {
		EVP_PKEY_CTX_free(ctx);
		return -1;
	}
	EVP_PKEY_CTX_free(ctx);
	if (!EVP_PKEY_get_bn_param(key, "n", &n))
		return -1;
	bc = BN_CTX_new();
	s = BN_bin2bn(sig_be, 384, NULL);
	q1 = BN_new();
	q2 = BN_new();
	t = BN_new();
	if (bc && s && q1 && q2 && t &&
	    /* Q1 = floor(S^2 / N), Q2 = floor((S^3 - Q1*S*N) / N) */
	    BN_sqr(t, s, bc) && BN_div(q1, NULL, t, n, bc) &&
	    BN_mul(t, t, s, bc) && BN_mul(q2, q1, s, bc) &&
	    BN_mul(q2, q2, n, bc) && BN_sub(t, t, q2) &&
	    BN_div(q2, NULL, t, n, bc)) {
		shim_bn_le(n, ss->modulus, 384);
		shim_bn_le(s, ss->signature, 384);
		shim_bn_le(q1, ss->q1, 384);
		shim_bn_le(q2, ss->q2, 384);
		ret = 0;
	}
	BN_free(n);
	BN_free(s);
	BN_free(q1);
	BN_free(q2);
	BN_free(t);
	BN_CTX_free(bc);
	return ret;
}

/* --- the loader ------------------------------------------------------------ */

struct shim_encl {
	int fd;
	uint64_t base;
	uint8_t *reserve;	/* the anonymous reservation (2 x SIZE) */
	struct sgx_sigstruct ss;
	uint8_t *img;
};

/* Reserve ELRANGE (anonymous PROT_NONE, aligned), then CREATE. */
SHIM_FN int shim_encl_create(struct shim_encl *e, const char *dev, uint64_t attrs)
{
	struct sgx_enclave_create create;
	struct sgx_secs secs;

	memset(e, 0, sizeof(*e));
	e->fd = open(dev, O_RDWR);
	if (e->fd < 0)
		return -errno;
	e->reserve = mmap(NULL, 2 * SHIM_ENCL_SIZE, PROT_NONE,
			  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (e->reserve == MAP_FAILED)
		return -errno;
	/* Aligned above the reservation's first page, so that the page
	 * below ELRANGE is always the reservation's (tests map there). */
	e->base = ((uint64_t)(uintptr_t)e->reserve + 4096 + SHIM_ENCL_SIZE - 1) &
		  ~(SHIM_ENCL_SIZE - 1);
	shim_encl_secs(&secs, e->base, attrs);
	create.src = (uint64_t)(uintptr_t)&secs;
	if (ioctl(e->fd, SGX_IOC_ENCLAVE_CREATE, &create))
		return -errno;
	return 0;
}

/* ADD_PAGES of every page (one call per run of equal SECINFO). */
SHIM_FN int shim_encl_add(struct shim_encl *e)
{
	if (!e->img)
		e->img = shim_encl_image();
	if (!e->img)
		return -ENOMEM;
	for (size_t i = 0; i < SHIM_NR_PAGES; ) {
		struct sgx_enclave_add_pages add;
		struct sgx_secinfo si __attribute__((aligned(64)));
		size_t j = i + 1;

		while (j < SHIM_NR_PAGES && shim_pages[j].flags == shim_pages[i].flags &&
		       shim_pages[j].offset == shim_pages[j - 1].offset + 4096)
			j++;
		memset(&si, 0, sizeof(si));
		si.flags = shim_pages[i].flags;
		add.src = (uint64_t)(uintptr_t)(e->img + shim_pages[i].offset);
		add.offset = shim_pages[i].offset;
		add.length = (j - i) * 4096;
		add.secinfo = (uint64_t)(uintptr_t)&si;
		add.flags = SGX_PAGE_MEASURE;
		add.count = 0;
		if (ioctl(e->fd, SGX_IOC_ENCLAVE_ADD_PAGES, &add))
			return -errno;
		if (add.count != add.length)
			return -EIO;
		i = j;
	}
	return 0;
}

SHIM_FN int shim_encl_init(struct shim_encl *e, EVP_PKEY *key, uint64_t attrs)
{
	struct sgx_enclave_init init;
	uint8_t mr[32];

	shim_encl_measure(e->img, mr);
	if (shim_sign(key, mr, attrs, &e->ss))
		return -EBADMSG;
	init.sigstruct = (uint64_t)(uintptr_t)&e->ss;
	if (ioctl(e->fd, SGX_IOC_ENCLAVE_INIT, &init))
		return -errno;
	return 0;
}

/* The device windows, each with its pages' permissions. */
SHIM_FN int shim_encl_map(struct shim_encl *e)
{
	for (size_t i = 0; i < SHIM_NR_PAGES; i++) {
		void *want = (void *)(uintptr_t)(e->base + shim_pages[i].offset);

		if (mmap(want, 4096, shim_pages[i].prot, MAP_SHARED | MAP_FIXED,
			 e->fd, 0) != want)
			return -errno;
	}
	return 0;
}

/* Everything: a ready enclave. 0 or -errno. */
SHIM_FN int shim_encl_build(struct shim_encl *e, EVP_PKEY *key)
{
	int ret = shim_encl_create(e, "/dev/sgx_enclave", SHIM_ENCL_ATTRS);

	if (!ret)
		ret = shim_encl_add(e);
	if (!ret)
		ret = shim_encl_init(e, key, SHIM_ENCL_ATTRS);
	if (!ret)
		ret = shim_encl_map(e);
	if (!shim_vdso_fn)
		shim_vdso_fn = shim_vdso_sym("__vdso_sgx_enter_enclave");
	return ret;
}

/* One call of the enclave through the vDSO on TCS @tcs. */
/*
 * One vDSO call, EENTER or ERESUME. An ERESUME continues the enclave with
 * the RBP it had when it was interrupted, which this enclave gives back at
 * EEXIT, and the vDSO finds its frame through RBP: as with the kernel's
 * vDSO, the ERESUME must come from the same stack depth as the EENTER it
 * resumes. So every call goes through this one function, never inlined,
 * with register arguments only (no stack argument to move RSP), from the
 * test body: the vDSO's frame is then at the same address each time, in
 * any build (ASan frames differ from plain ones, so different call sites
 * would not line up).
 */
__attribute__((noinline)) SHIM_FN int shim_enter(struct sgx_enclave_run *run,
						  uint64_t tcs,
						  unsigned function,
						  unsigned long op,
						  uint64_t *out,
						  unsigned long arg)
{
	memset(run, 0, sizeof(*run));
	run->tcs = tcs;
	return shim_vdso_call(op, (unsigned long)(uintptr_t)out, arg, function,
			      0, 0, run);
}

#define shim_ecall(e, tcs, op, out, arg, run)				\
	shim_enter((run), (e)->base + SHIM_ENCL_TCS(tcs), SGX_EENTER,	\
		   (op), (out), (arg))
#define shim_eresume(e, tcs, run)					\
	shim_enter((run), (e)->base + SHIM_ENCL_TCS(tcs), SGX_ERESUME,	\
		   0, NULL, 0)

/*
 * Run under the shim: if libsgxemu.so is not preloaded, execute this very
 * program again through `B/sgxemu run`. Returns only when that is not
 * possible (the caller then skips).
 */
SHIM_FN const char *shim_reexec(char **argv)
{
	const char *b = getenv("B");
	static char cli[2048], lib[2048], why[8192];

	/* The shim keeps LD_PRELOAD to itself: ask the loader instead. */
	if (dlsym(RTLD_DEFAULT, "sgxemu_shim_audit_start"))
		return NULL;
	if (!b)
		b = "build";
	snprintf(cli, sizeof(cli), "%s/sgxemu", b);
	snprintf(lib, sizeof(lib), "%s/libsgxemu.so", b);
	if (access(cli, X_OK) || access(lib, R_OK)) {
		snprintf(why, sizeof(why), "%s or %s is not built", cli, lib);
		return why;
	}
	{
		int argc = 0;
		char **nargv;

		while (argv[argc])
			argc++;
		nargv = calloc((size_t)argc + 5, sizeof(*nargv));
		if (!nargv)
			return "out of memory";
		nargv[0] = cli;
		nargv[1] = (char *)"run";
		nargv[2] = (char *)"--lib";
		nargv[3] = lib;
		for (int i = 0; i < argc; i++)
			nargv[4 + i] = argv[i];
		/* An ASan build's runtime is not first in a preloaded list. */
		setenv("ASAN_OPTIONS", "verify_asan_link_order=0", 0);
		execv(cli, nargv);
	}
	snprintf(why, sizeof(why), "cannot execute %s: %s", cli, strerror(errno));
	return why;
}

#endif /* SHIM_ENCL_H */
