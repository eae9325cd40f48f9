/* SPDX-License-Identifier: MIT */
/*
 * A test enclave for SGX2 / EDMM through the mainline API
 * (test_sgx2.c, bench/eaug.c): a host program's loader and an enclave
 * whose code runs one command from a mailbox in host memory.
 *
 * Layout (ELRANGE SGX2_SIZE):
 *   0x0000 TCS 0 (SSA 0x1000, 2 frames)   0x3000 TCS 1 (SSA 0x4000, 2 frames)
 *   0x6000 code (RX)                      0x7000 data (RW: SECINFO slots)
 *   0x8000 read-only page (0x5a bytes)    0x9000 .. 0xbfff RW pages
 *   0xc000 .. 0xdfff RW (SSA of a TCS made at run time in page 0xb000)
 *   0x10000 .. SGX2_SIZE: nothing added; one RW window over it (the heap)
 *
 * Command (RDI = struct sgx2_mail *): op, a, b, c in; rax, rflags, rbx out.
 * The code keeps no state and never uses the stack except for PUSHF.
 */
#ifndef SGX2_ENCL_H
#define SGX2_ENCL_H

#include "shim_encl.h"

#define SGX2_SIZE	0x800000UL	/* 8 MiB; the bench makes its own */
#define SGX2_TCS0	0x0000UL
#define SGX2_TCS1	0x3000UL
#define SGX2_CODE	0x6000UL
#define SGX2_DATA	0x7000UL
#define SGX2_RO		0x8000UL
#define SGX2_RW0	0x9000UL
#define SGX2_RW1	0xa000UL
#define SGX2_NEWTCS	0xb000UL
#define SGX2_NEWSSA	0xc000UL
#define SGX2_HEAP	0x10000UL

enum {
	SGX2_OP_EXIT = 0,	/* rax = 0x7c5, rbx = the TCS entered */
	SGX2_OP_EACCEPT,	/* SECINFO.FLAGS a, page b: rax, rflags */
	SGX2_OP_EMODPE,		/* SECINFO.FLAGS a, page b */
	SGX2_OP_EACCEPTCOPY,	/* SECINFO.FLAGS a, dst b, src c: rax, rflags */
	SGX2_OP_STORE,		/* *(u64 *)a = b */
	SGX2_OP_LOAD,		/* rax = *(u64 *)a */
	SGX2_OP_GROW,		/* b pages from a: EACCEPT (pending RW), store
				 * its address, load it back; rax = failures */
	SGX2_OP_SPIN,		/* *(u64 *)b = 1, then spin while *(u64 *)a
				 * is 0 (host memory) */
};

struct sgx2_mail {
	uint64_t op, a, b, c;
	uint64_t rax, rflags, rbx;
};

extern const uint8_t sgx2_encl_code[], sgx2_encl_code_end[];
__asm__(
	".pushsection .rodata\n"
	".balign 4096\n"
	"sgx2_encl_code:\n"
	"	mov %rcx, %r15\n"		/* EENTER's return address */
	"	mov %rbx, 48(%rdi)\n"
	"	mov (%rdi), %rax\n"
	"	lea sgx2_encl_code+0x1000(%rip), %rbx\n"	/* SECINFO slot */
	"	cmp $1, %rax\n"
	"	je 1f\n"
	"	cmp $2, %rax\n"
	"	je 2f\n"
	"	cmp $3, %rax\n"
	"	je 3f\n"
	"	cmp $4, %rax\n"
	"	je 4f\n"
	"	cmp $5, %rax\n"
	"	je 5f\n"
	"	cmp $6, %rax\n"
	"	je 6f\n"
	"	cmp $7, %rax\n"
	"	je 12f\n"
	"	movq $0x7c5, 32(%rdi)\n"
	"9:	mov %r15, %rbx\n"
	"	mov $4, %eax\n"			/* EEXIT */
	"	.byte 0x0f, 0x01, 0xd7\n"
	"	ud2\n"
	"1:	mov 8(%rdi), %r8\n"		/* EACCEPT */
	"	mov %r8, (%rbx)\n"
	"	mov 16(%rdi), %rcx\n"
	"	mov $5, %eax\n"
	"	.byte 0x0f, 0x01, 0xd7\n"
	"8:	mov %rax, 32(%rdi)\n"
	"	pushf\n"
	"	pop %r8\n"
	"	mov %r8, 40(%rdi)\n"
	"	jmp 9b\n"
	"2:	mov 8(%rdi), %r8\n"		/* EMODPE */
	"	mov %r8, (%rbx)\n"
	"	mov 16(%rdi), %rcx\n"
	"	xor %eax, %eax\n"
	"	mov $6, %eax\n"
	"	.byte 0x0f, 0x01, 0xd7\n"
	"	xor %eax, %eax\n"
	"	jmp 8b\n"
	"3:	mov 8(%rdi), %r8\n"		/* EACCEPTCOPY */
	"	mov %r8, (%rbx)\n"
	"	mov 16(%rdi), %rcx\n"
	"	mov 24(%rdi), %rdx\n"
	"	mov $7, %eax\n"
	"	.byte 0x0f, 0x01, 0xd7\n"
	"	jmp 8b\n"
	"4:	mov 8(%rdi), %rcx\n"		/* STORE */
	"	mov 16(%rdi), %r8\n"
	"	mov %r8, (%rcx)\n"
	"	xor %eax, %eax\n"
	"	jmp 8b\n"
	"5:	mov 8(%rdi), %rcx\n"		/* LOAD */
	"	mov (%rcx), %rax\n"
	"	jmp 8b\n"
	"6:	mov 8(%rdi), %rcx\n"		/* GROW */
	"	mov 16(%rdi), %r9\n"
	"	xor %r10, %r10\n"
	"	movq $0x20b, (%rbx)\n"		/* REG | PENDING | W | R */
	"7:	test %r9, %r9\n"
	"	jz 10f\n"
	"	mov $5, %eax\n"
	"	.byte 0x0f, 0x01, 0xd7\n"
	"	add %rax, %r10\n"
	"	mov %rcx, (%rcx)\n"
	"	cmp %rcx, (%rcx)\n"
	"	je 11f\n"
	"	inc %r10\n"
	"11:	add $4096, %rcx\n"
	"	dec %r9\n"
	"	jmp 7b\n"
	"10:	mov %r10, %rax\n"
	"	jmp 8b\n"
	"12:	mov 8(%rdi), %rcx\n"		/* SPIN */
	"	mov 16(%rdi), %rdx\n"
	"	movq $1, (%rdx)\n"
	"13:	pause\n"
	"	cmpq $0, (%rcx)\n"
	"	je 13b\n"
	"	xor %eax, %eax\n"
	"	jmp 8b\n"
	"sgx2_encl_code_end:\n"
	".popsection\n");

struct sgx2_page {
	uint64_t offset;
	uint64_t flags;		/* SECINFO flags */
	int prot;		/* the window's permissions */
};

#define SGX2_RW_FLAGS	(SGX_SECINFO_REG | SGX_SECINFO_R | SGX_SECINFO_W)
static const struct sgx2_page sgx2_pages[] = {
	{ 0x0000, SGX_SECINFO_TCS, PROT_READ | PROT_WRITE },
	{ 0x1000, SGX2_RW_FLAGS, PROT_READ | PROT_WRITE },
	{ 0x2000, SGX2_RW_FLAGS, PROT_READ | PROT_WRITE },
	{ 0x3000, SGX_SECINFO_TCS, PROT_READ | PROT_WRITE },
	{ 0x4000, SGX2_RW_FLAGS, PROT_READ | PROT_WRITE },
	{ 0x5000, SGX2_RW_FLAGS, PROT_READ | PROT_WRITE },
	{ 0x6000, SGX_SECINFO_REG | SGX_SECINFO_R | SGX_SECINFO_X,
	  PROT_READ | PROT_EXEC },
	{ 0x7000, SGX2_RW_FLAGS, PROT_READ | PROT_WRITE },
	{ 0x8000, SGX_SECINFO_REG | SGX_SECINFO_R, PROT_READ },
	{ 0x9000, SGX2_RW_FLAGS, PROT_READ | PROT_WRITE },
	{ 0xa000, SGX2_RW_FLAGS, PROT_READ | PROT_WRITE },
	{ 0xb000, SGX2_RW_FLAGS, PROT_READ | PROT_WRITE },
	{ 0xc000, SGX2_RW_FLAGS, PROT_READ | PROT_WRITE },
	{ 0xd000, SGX2_RW_FLAGS, PROT_READ | PROT_WRITE },
};
#define SGX2_NR_PAGES	(sizeof(sgx2_pages) / sizeof(sgx2_pages[0]))

struct sgx2_encl;

/* How the helpers reach the device: the program's libc by default (NULL),
 * or a test's own calls into the driver (test_host_access.c). */
struct sgx2_dev {
	long (*ioctl)(struct sgx2_encl *e, unsigned long cmd, void *arg);
	void *(*mmap)(struct sgx2_encl *e, void *addr, size_t len, int prot);
};

struct sgx2_encl {
	int fd;
	uint64_t base, size;
	uint8_t *reserve;
	uint8_t *img;		/* 0x10000 bytes: the added pages */
	struct sgx_sigstruct ss;
	const struct sgx2_dev *dev;
	void *dev_ctx;
};

/* An ioctl of the enclave's device: 0 or -errno. */
SHIM_FN long sgx2_ioctl(struct sgx2_encl *e, unsigned long cmd, void *arg)
{
	if (e->dev)
		return e->dev->ioctl(e, cmd, arg);
	return ioctl(e->fd, cmd, arg) ? -errno : 0;
}

/* A window of @len bytes at @addr: 0 or -errno. */
SHIM_FN int sgx2_mmap(struct sgx2_encl *e, uint64_t addr, size_t len, int prot)
{
	void *want = (void *)(uintptr_t)addr, *got;

	got = e->dev ? e->dev->mmap(e, want, len, prot) :
		       mmap(want, len, prot, MAP_SHARED | MAP_FIXED, e->fd, 0);
	return got == want ? 0 : got == MAP_FAILED ? -errno : -EEXIST;
}

SHIM_FN uint8_t *sgx2_encl_image(void)
{
	uint8_t *img = aligned_alloc(4096, SGX2_HEAP);
	uint64_t tcs[2] = { SGX2_TCS0, SGX2_TCS1 };

	if (!img)
		return NULL;
	memset(img, 0, SGX2_HEAP);
	for (int i = 0; i < 2; i++) {
		struct sgx_tcs *t = (void *)(img + tcs[i]);

		t->ossa = tcs[i] + 0x1000;
		t->nssa = 2;
		t->oentry = SGX2_CODE;
	}
	memcpy(img + SGX2_CODE, sgx2_encl_code,
	       (size_t)(sgx2_encl_code_end - sgx2_encl_code));
	memset(img + SGX2_RO, 0x5a, 4096);
	return img;
}

/*
 * MRENCLAVE of the added pages, from the tests' own measurement log
 * (meas_log.h, the rules of sgx-facts.md §2), not from src/cpu's code.
 */
SHIM_FN void sgx2_encl_measure(const uint8_t *img, uint64_t size,
			       uint8_t out[32])
{
	struct tm_log log;

	tm_init(&log, 1, size);
	for (size_t i = 0; i < SGX2_NR_PAGES; i++)
		tm_add(&log, sgx2_pages[i].offset, sgx2_pages[i].flags,
		       img + sgx2_pages[i].offset, 0xffff);
	if (tm_final(&log, out))
		memset(out, 0, 32);	/* EINIT then refuses the enclave */
}

/* Reserve ELRANGE and CREATE, on a device @e already has. */
SHIM_FN int sgx2_encl_ecreate(struct sgx2_encl *e, uint64_t size)
{
	struct sgx_enclave_create create;
	struct sgx_secs secs;

	e->size = size;
	e->reserve = mmap(NULL, 2 * size, PROT_NONE,
			  MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (e->reserve == MAP_FAILED)
		return -errno;
	e->base = ((uint64_t)(uintptr_t)e->reserve + size - 1) & ~(size - 1);
	memset(&secs, 0, sizeof(secs));
	secs.size = size;
	secs.base = e->base;
	secs.ssa_frame_size = 1;
	secs.attributes.flags = SHIM_ENCL_ATTRS;
	secs.attributes.xfrm = SGX_XFRM_LEGACY;
	create.src = (uint64_t)(uintptr_t)&secs;
	return (int)sgx2_ioctl(e, SGX_IOC_ENCLAVE_CREATE, &create);
}

/* Open, reserve ELRANGE, CREATE. */
SHIM_FN int sgx2_encl_create(struct sgx2_encl *e, uint64_t size)
{
	memset(e, 0, sizeof(*e));
	e->fd = open("/dev/sgx_enclave", O_RDWR);
	if (e->fd < 0)
		return -errno;
	return sgx2_encl_ecreate(e, size);
}

SHIM_FN int sgx2_encl_add(struct sgx2_encl *e)
{
	int ret;

	e->img = sgx2_encl_image();
	if (!e->img)
		return -ENOMEM;
	for (size_t i = 0; i < SGX2_NR_PAGES; i++) {
		struct sgx_enclave_add_pages add;
		struct sgx_secinfo si __attribute__((aligned(64)));

		memset(&si, 0, sizeof(si));
		si.flags = sgx2_pages[i].flags;
		add.src = (uint64_t)(uintptr_t)(e->img + sgx2_pages[i].offset);
		add.offset = sgx2_pages[i].offset;
		add.length = 4096;
		add.secinfo = (uint64_t)(uintptr_t)&si;
		add.flags = SGX_PAGE_MEASURE;
		add.count = 0;
		ret = (int)sgx2_ioctl(e, SGX_IOC_ENCLAVE_ADD_PAGES, &add);
		if (ret)
			return ret;
	}
	return 0;
}

SHIM_FN int sgx2_encl_init(struct sgx2_encl *e, EVP_PKEY *key)
{
	struct sgx_enclave_init init;
	uint8_t mr[32];

	sgx2_encl_measure(e->img, e->size, mr);
	if (shim_sign(key, mr, SHIM_ENCL_ATTRS, &e->ss))
		return -EBADMSG;
	init.sigstruct = (uint64_t)(uintptr_t)&e->ss;
	return (int)sgx2_ioctl(e, SGX_IOC_ENCLAVE_INIT, &init);
}

/* Windows: each added page with its permissions, the heap RW. */
SHIM_FN int sgx2_encl_map(struct sgx2_encl *e)
{
	int ret;

	for (size_t i = 0; i < SGX2_NR_PAGES; i++) {
		ret = sgx2_mmap(e, e->base + sgx2_pages[i].offset, 4096,
				sgx2_pages[i].prot);
		if (ret)
			return ret;
	}
	return sgx2_mmap(e, e->base + SGX2_HEAP, e->size - SGX2_HEAP,
			 PROT_READ | PROT_WRITE);
}

SHIM_FN int sgx2_encl_build(struct sgx2_encl *e, EVP_PKEY *key, uint64_t size)
{
	int ret = sgx2_encl_create(e, size);

	if (!ret)
		ret = sgx2_encl_add(e);
	if (!ret)
		ret = sgx2_encl_init(e, key);
	if (!ret)
		ret = sgx2_encl_map(e);
	if (!shim_vdso_fn)
		shim_vdso_fn = shim_vdso_sym("__vdso_sgx_enter_enclave");
	return ret;
}

/* One command on the TCS at offset @tcs: the vDSO's return value. */
/* An EENTER with the mailbox; through shim_enter(), so that an ERESUME
 * from the same test body comes from the same stack depth. */
#define sgx2_call(e, tcs, m, run)					\
	shim_enter((run), (e)->base + (tcs), SGX_EENTER,		\
		   (unsigned long)(uintptr_t)(m), NULL, 0)
#define sgx2_eresume(e, tcs, run)					\
	shim_enter((run), (e)->base + (tcs), SGX_ERESUME, 0, NULL, 0)

SHIM_FN void sgx2_encl_destroy(struct sgx2_encl *e)
{
	if (e->reserve && e->reserve != MAP_FAILED)
		munmap(e->reserve, 2 * e->size);
	if (e->fd >= 0)
		close(e->fd);
	free(e->img);
}

#endif /* SGX2_ENCL_H */
