/* SPDX-License-Identifier: MIT */
/*
 * Intel SGX architectural structures, constants and error codes.
 *
 * Layouts are the SDM's (Vol. 3D, "SGX data structures"); see
 * ../shared/reference/sgx-facts.md §1 for the offsets with their sources.
 * Every structure carries static size and offset asserts so that a typo in
 * a field list cannot silently shift an architectural layout.
 */
#ifndef SGXEMU_ARCH_H
#define SGXEMU_ARCH_H

#include <stddef.h>
#include <stdint.h>

#define SGX_PAGE_SIZE		4096UL
#define SGX_PAGE_SHIFT		12
#define SGX_MODULUS_SIZE	384
#define SGX_HASH_SIZE		32
#define SGX_CPUSVN_SIZE		16
#define SGX_KEYID_SIZE		32
#define SGX_REPORT_DATA_SIZE	64
#define SGX_MAC_SIZE		16
#define SGX_KEY_SIZE		16

/* ENCLS leaves (EAX). */
enum sgx_encls_leaf {
	SGX_ECREATE	= 0x00,
	SGX_EADD	= 0x01,
	SGX_EINIT	= 0x02,
	SGX_EREMOVE	= 0x03,
	SGX_EDBGRD	= 0x04,
	SGX_EDBGWR	= 0x05,
	SGX_EEXTEND	= 0x06,
	SGX_ELDB	= 0x07,
	SGX_ELDU	= 0x08,
	SGX_EBLOCK	= 0x09,
	SGX_EPA		= 0x0A,
	SGX_EWB		= 0x0B,
	SGX_ETRACK	= 0x0C,
	SGX_EAUG	= 0x0D,
	SGX_EMODPR	= 0x0E,
	SGX_EMODT	= 0x0F,
};

/* ENCLU leaves (EAX). */
enum sgx_enclu_leaf {
	SGX_EREPORT	= 0x00,
	SGX_EGETKEY	= 0x01,
	SGX_EENTER	= 0x02,
	SGX_ERESUME	= 0x03,
	SGX_EEXIT	= 0x04,
	SGX_EACCEPT	= 0x05,
	SGX_EMODPE	= 0x06,
	SGX_EACCEPTCOPY	= 0x07,
	SGX_EDECCSSA	= 0x09,	/* AEX-Notify parts */
};

/*
 * Error and information codes a leaf returns in RAX (ZF=1 on error).
 * Faults (#GP, #PF) are not codes: see SGX_FAULT() below.
 */
enum sgx_error {
	SGX_SUCCESS			= 0,
	SGX_INVALID_SIG_STRUCT		= 1,
	SGX_INVALID_ATTRIBUTE		= 2,
	SGX_BLKSTATE			= 3,
	SGX_INVALID_MEASUREMENT		= 4,
	SGX_NOTBLOCKABLE		= 5,
	SGX_PG_INVLD			= 6,
	SGX_EPC_PAGE_CONFLICT		= 7,	/* also SGX_LOCKFAIL */
	SGX_INVALID_SIGNATURE		= 8,
	SGX_MAC_COMPARE_FAIL		= 9,
	SGX_PAGE_NOT_BLOCKED		= 10,
	SGX_NOT_TRACKED			= 11,
	SGX_VA_SLOT_OCCUPIED		= 12,
	SGX_CHILD_PRESENT		= 13,
	SGX_ENCLAVE_ACT			= 14,
	SGX_ENTRYEPOCH_LOCKED		= 15,
	SGX_INVALID_EINITTOKEN		= 16,
	SGX_PREV_TRK_INCMPL		= 17,
	SGX_PG_IS_SECS			= 18,
	SGX_PAGE_ATTRIBUTES_MISMATCH	= 19,
	SGX_PAGE_NOT_MODIFIABLE		= 20,
	SGX_PAGE_NOT_DEBUGGABLE		= 21,
	SGX_INSUFFICIENT_ENTROPY	= 29,	/* EUPDATESVN: RDSEED failed */
	SGX_EPC_NOT_READY		= 30,	/* EUPDATESVN: a valid EPC page */
	SGX_NO_UPDATE			= 31,	/* EUPDATESVN: CPUSVN already
						 * current (CF=1, not an error) */
	SGX_INVALID_CPUSVN		= 32,
	SGX_INVALID_ISVSVN		= 64,
	SGX_UNMASKED_EVENT		= 128,
	SGX_INVALID_KEYNAME		= 256,
};

/*
 * A leaf's result is an int: 0 on success, a positive SGX error code, or a
 * fault encoded as the kernel's ENCLS wrappers encode it (bit 30 set plus
 * the exception vector). No SGX code has bit 30 set, so the three never
 * collide.
 */
#define SGX_FAULT_FLAG		0x40000000
#define SGX_FAULT(vector)	(SGX_FAULT_FLAG | (vector))
#define SGX_IS_FAULT(ret)	((ret) > 0 && ((ret) & SGX_FAULT_FLAG))
#define SGX_FAULT_VECTOR(ret)	((ret) & ~SGX_FAULT_FLAG)

/* Exception vectors. */
enum x86_vector {
	X86_TRAP_DE	= 0,
	X86_TRAP_DB	= 1,
	X86_TRAP_NMI	= 2,
	X86_TRAP_BP	= 3,
	X86_TRAP_OF	= 4,
	X86_TRAP_BR	= 5,
	X86_TRAP_UD	= 6,
	X86_TRAP_NM	= 7,
	X86_TRAP_DF	= 8,
	X86_TRAP_GP	= 13,
	X86_TRAP_PF	= 14,
	X86_TRAP_MF	= 16,
	X86_TRAP_AC	= 17,
	X86_TRAP_XF	= 19,
};

#define SGX_GP		SGX_FAULT(X86_TRAP_GP)
#define SGX_PF		SGX_FAULT(X86_TRAP_PF)
#define SGX_UD		SGX_FAULT(X86_TRAP_UD)

/* #PF error code bits. */
#define X86_PF_PROT	(1U << 0)
#define X86_PF_WRITE	(1U << 1)
#define X86_PF_USER	(1U << 2)
#define X86_PF_RSVD	(1U << 3)
#define X86_PF_INSTR	(1U << 4)
#define X86_PF_PK	(1U << 5)
#define X86_PF_SGX	(1U << 15)

/* Page types (EPCM.PT, SECINFO.FLAGS[15:8]). */
enum sgx_page_type {
	SGX_PT_SECS	= 0,
	SGX_PT_TCS	= 1,
	SGX_PT_REG	= 2,
	SGX_PT_VA	= 3,
	SGX_PT_TRIM	= 4,
};

/* SECINFO.FLAGS */
#define SGX_SECINFO_R		(1ULL << 0)
#define SGX_SECINFO_W		(1ULL << 1)
#define SGX_SECINFO_X		(1ULL << 2)
#define SGX_SECINFO_PENDING	(1ULL << 3)
#define SGX_SECINFO_MODIFIED	(1ULL << 4)
#define SGX_SECINFO_PR		(1ULL << 5)
#define SGX_SECINFO_PERM_MASK	0x7ULL
#define SGX_SECINFO_PT_SHIFT	8
#define SGX_SECINFO_PT_MASK	(0xFFULL << SGX_SECINFO_PT_SHIFT)
#define SGX_SECINFO_SECS	((uint64_t)SGX_PT_SECS << SGX_SECINFO_PT_SHIFT)
#define SGX_SECINFO_TCS		((uint64_t)SGX_PT_TCS << SGX_SECINFO_PT_SHIFT)
#define SGX_SECINFO_REG		((uint64_t)SGX_PT_REG << SGX_SECINFO_PT_SHIFT)
#define SGX_SECINFO_VA		((uint64_t)SGX_PT_VA << SGX_SECINFO_PT_SHIFT)
#define SGX_SECINFO_TRIM	((uint64_t)SGX_PT_TRIM << SGX_SECINFO_PT_SHIFT)
/* Bits EADD and ECREATE accept: permissions and page type only. */
#define SGX_SECINFO_EADD_RESERVED \
	(~(SGX_SECINFO_PERM_MASK | SGX_SECINFO_PT_MASK))

/* ATTRIBUTES.FLAGS */
#define SGX_ATTR_INIT		(1ULL << 0)
#define SGX_ATTR_DEBUG		(1ULL << 1)
#define SGX_ATTR_MODE64BIT	(1ULL << 2)
#define SGX_ATTR_PROVISIONKEY	(1ULL << 4)
#define SGX_ATTR_EINITTOKENKEY	(1ULL << 5)
#define SGX_ATTR_CET		(1ULL << 6)
#define SGX_ATTR_KSS		(1ULL << 7)
#define SGX_ATTR_AEXNOTIFY	(1ULL << 10)
/* The flags sgxemu's processor supports (CPUID.(12H,1):EAX:EBX). */
#define SGX_ATTR_SUPPORTED \
	(SGX_ATTR_INIT | SGX_ATTR_DEBUG | SGX_ATTR_MODE64BIT | \
	 SGX_ATTR_PROVISIONKEY | SGX_ATTR_EINITTOKENKEY | SGX_ATTR_KSS)
/* Controlled attributes: EINIT demands MRSIGNER == LE hash for these. */
#define SGX_ATTR_CONTROLLED	SGX_ATTR_EINITTOKENKEY

/* XFRM bits (XCR0 layout). */
#define SGX_XFRM_X87		(1ULL << 0)
#define SGX_XFRM_SSE		(1ULL << 1)
#define SGX_XFRM_AVX		(1ULL << 2)
#define SGX_XFRM_MPX		(3ULL << 3)
#define SGX_XFRM_AVX512		(7ULL << 5)
#define SGX_XFRM_PKRU		(1ULL << 9)
#define SGX_XFRM_AMX		(3ULL << 17)
#define SGX_XFRM_LEGACY		(SGX_XFRM_X87 | SGX_XFRM_SSE)

/* MISCSELECT */
#define SGX_MISC_EXINFO		(1U << 0)

/* KEYREQUEST.KEYNAME */
enum sgx_keyname {
	SGX_KEYNAME_EINITTOKEN		= 0,
	SGX_KEYNAME_PROVISION		= 1,
	SGX_KEYNAME_PROVISION_SEAL	= 2,
	SGX_KEYNAME_REPORT		= 3,
	SGX_KEYNAME_SEAL		= 4,
};

/* KEYREQUEST.KEYPOLICY */
#define SGX_KEYPOLICY_MRENCLAVE		(1U << 0)
#define SGX_KEYPOLICY_MRSIGNER		(1U << 1)
#define SGX_KEYPOLICY_NOISVPRODID	(1U << 2)
#define SGX_KEYPOLICY_CONFIGID		(1U << 3)
#define SGX_KEYPOLICY_ISVFAMILYID	(1U << 4)
#define SGX_KEYPOLICY_ISVEXTPRODID	(1U << 5)
#define SGX_KEYPOLICY_KSS_MASK		0x3CU
#define SGX_KEYPOLICY_RESERVED		(~0x3FU & 0xFFFFU)

/* TCS.FLAGS */
#define SGX_TCS_DBGOPTIN	(1ULL << 0)
#define SGX_TCS_AEXNOTIFY	(1ULL << 1)
#define SGX_TCS_FLAGS_RESERVED	(~(SGX_TCS_DBGOPTIN | SGX_TCS_AEXNOTIFY))

/* EXITINFO */
#define SGX_EXITINFO_VECTOR_MASK	0xFFU
#define SGX_EXITINFO_TYPE_SHIFT		8
#define SGX_EXITINFO_TYPE_HW		3U
#define SGX_EXITINFO_TYPE_SW		6U
#define SGX_EXITINFO_VALID		(1U << 31)

/* Measurement record tags (first 8 bytes of each 64-byte block). */
#define SGX_MEAS_ECREATE	0x0045544145524345ULL	/* "ECREATE\0" */
#define SGX_MEAS_EADD		0x0000000044444145ULL	/* "EADD\0\0\0\0" */
#define SGX_MEAS_EEXTEND	0x00444E4554584545ULL	/* "EEXTEND\0" */
#define SGX_MEAS_UNMEASURED	0x44525341454d4e55ULL	/* "UNMEASRD" (.sgxs) */

/* Launch-control MSRs. */
#define MSR_IA32_SGXLEPUBKEYHASH0	0x8C
#define MSR_IA32_SGXLEPUBKEYHASH1	0x8D
#define MSR_IA32_SGXLEPUBKEYHASH2	0x8E
#define MSR_IA32_SGXLEPUBKEYHASH3	0x8F

#define SGX_STATIC_OFFSET(type, field, off) \
	_Static_assert(offsetof(type, field) == (off), \
		       #type "." #field " must be at " #off)
#define SGX_STATIC_SIZE(type, size) \
	_Static_assert(sizeof(type) == (size), #type " must be " #size " bytes")

struct sgx_attributes {
	uint64_t flags;
	uint64_t xfrm;
} __attribute__((packed));
SGX_STATIC_SIZE(struct sgx_attributes, 16);

/* SECS: 4096 bytes, the enclave control structure. */
struct sgx_secs {
	uint64_t size;
	uint64_t base;
	uint32_t ssa_frame_size;
	uint32_t miscselect;
	uint8_t  reserved1[24];
	struct sgx_attributes attributes;
	uint8_t  mrenclave[SGX_HASH_SIZE];
	uint8_t  reserved2[32];
	uint8_t  mrsigner[SGX_HASH_SIZE];
	uint8_t  reserved3[32];
	uint8_t  config_id[64];
	uint16_t isvprodid;
	uint16_t isvsvn;
	uint16_t config_svn;
	uint8_t  reserved4[3834];
} __attribute__((packed));
SGX_STATIC_SIZE(struct sgx_secs, 4096);
SGX_STATIC_OFFSET(struct sgx_secs, ssa_frame_size, 16);
SGX_STATIC_OFFSET(struct sgx_secs, miscselect, 20);
SGX_STATIC_OFFSET(struct sgx_secs, attributes, 48);
SGX_STATIC_OFFSET(struct sgx_secs, mrenclave, 64);
SGX_STATIC_OFFSET(struct sgx_secs, mrsigner, 128);
SGX_STATIC_OFFSET(struct sgx_secs, config_id, 192);
SGX_STATIC_OFFSET(struct sgx_secs, isvprodid, 256);
SGX_STATIC_OFFSET(struct sgx_secs, isvsvn, 258);
SGX_STATIC_OFFSET(struct sgx_secs, config_svn, 260);
SGX_STATIC_OFFSET(struct sgx_secs, reserved4, 262);

/* TCS: 4096 bytes, one per enclave thread. */
struct sgx_tcs {
	uint64_t state;
	uint64_t flags;
	uint64_t ossa;
	uint32_t cssa;
	uint32_t nssa;
	uint64_t oentry;
	uint64_t aep;
	uint64_t ofsbase;
	uint64_t ogsbase;
	uint32_t fslimit;
	uint32_t gslimit;
	uint8_t  reserved[4024];
} __attribute__((packed));
SGX_STATIC_SIZE(struct sgx_tcs, 4096);
SGX_STATIC_OFFSET(struct sgx_tcs, ossa, 16);
SGX_STATIC_OFFSET(struct sgx_tcs, cssa, 24);
SGX_STATIC_OFFSET(struct sgx_tcs, nssa, 28);
SGX_STATIC_OFFSET(struct sgx_tcs, oentry, 32);
SGX_STATIC_OFFSET(struct sgx_tcs, aep, 40);
SGX_STATIC_OFFSET(struct sgx_tcs, ofsbase, 48);
SGX_STATIC_OFFSET(struct sgx_tcs, ogsbase, 56);
SGX_STATIC_OFFSET(struct sgx_tcs, fslimit, 64);
SGX_STATIC_OFFSET(struct sgx_tcs, reserved, 72);

/* GPRSGX: the last 184 bytes of every SSA frame. */
struct sgx_gprsgx {
	uint64_t rax, rcx, rdx, rbx, rsp, rbp, rsi, rdi;
	uint64_t r8, r9, r10, r11, r12, r13, r14, r15;
	uint64_t rflags;
	uint64_t rip;
	uint64_t ursp;
	uint64_t urbp;
	uint32_t exitinfo;
	uint8_t  reserved[3];
	uint8_t  aexnotify;
	uint64_t fsbase;
	uint64_t gsbase;
} __attribute__((packed));
SGX_STATIC_SIZE(struct sgx_gprsgx, 184);
SGX_STATIC_OFFSET(struct sgx_gprsgx, rflags, 128);
SGX_STATIC_OFFSET(struct sgx_gprsgx, rip, 136);
SGX_STATIC_OFFSET(struct sgx_gprsgx, ursp, 144);
SGX_STATIC_OFFSET(struct sgx_gprsgx, urbp, 152);
SGX_STATIC_OFFSET(struct sgx_gprsgx, exitinfo, 160);
SGX_STATIC_OFFSET(struct sgx_gprsgx, fsbase, 168);
SGX_STATIC_OFFSET(struct sgx_gprsgx, gsbase, 176);

/* MISC.EXINFO: 16 bytes directly below GPRSGX when MISCSELECT.EXINFO=1. */
struct sgx_exinfo {
	uint64_t maddr;
	uint32_t errcd;
	uint32_t reserved;
} __attribute__((packed));
SGX_STATIC_SIZE(struct sgx_exinfo, 16);

#define SGX_XSAVE_LEGACY_SIZE	512
#define SGX_XSAVE_HEADER_SIZE	64
#define SGX_XSAVE_MIN_SIZE	(SGX_XSAVE_LEGACY_SIZE + SGX_XSAVE_HEADER_SIZE)

/* SECINFO: 64 bytes, 64-byte aligned. */
struct sgx_secinfo {
	uint64_t flags;
	uint8_t  reserved[56];
} __attribute__((packed, aligned(64)));
SGX_STATIC_SIZE(struct sgx_secinfo, 64);

/* PAGEINFO: 32 bytes, 32-byte aligned. */
struct sgx_pageinfo {
	uint64_t linaddr;
	uint64_t srcpge;
	uint64_t secinfo;	/* or PCMD for EWB/ELDB/ELDU */
	uint64_t secs;
} __attribute__((packed, aligned(32)));
SGX_STATIC_SIZE(struct sgx_pageinfo, 32);

/* PCMD: 128 bytes, 128-byte aligned. */
struct sgx_pcmd {
	struct sgx_secinfo secinfo;
	uint64_t enclave_id;
	uint8_t  reserved[40];
	uint8_t  mac[SGX_MAC_SIZE];
} __attribute__((packed, aligned(128)));
SGX_STATIC_SIZE(struct sgx_pcmd, 128);
SGX_STATIC_OFFSET(struct sgx_pcmd, enclave_id, 64);
SGX_STATIC_OFFSET(struct sgx_pcmd, mac, 112);

#define SGX_VA_SLOT_COUNT	512

/* SIGSTRUCT: 1808 bytes. Signed: bytes [0,128) and [900,1028). */
struct sgx_sigstruct_header {
	uint8_t  header[16];
	uint32_t vendor;
	uint32_t date;
	uint8_t  header2[16];
	uint32_t swdefined;
	uint8_t  reserved1[84];
} __attribute__((packed));
SGX_STATIC_SIZE(struct sgx_sigstruct_header, 128);

struct sgx_sigstruct_body {
	uint32_t miscselect;
	uint32_t miscmask;
	uint8_t  reserved2[4];
	uint8_t  isvfamilyid[16];
	struct sgx_attributes attributes;
	struct sgx_attributes attributemask;
	uint8_t  enclavehash[SGX_HASH_SIZE];
	uint8_t  reserved3[16];
	uint8_t  isvextprodid[16];
	uint16_t isvprodid;
	uint16_t isvsvn;
} __attribute__((packed));
SGX_STATIC_SIZE(struct sgx_sigstruct_body, 128);

struct sgx_sigstruct {
	struct sgx_sigstruct_header header;
	uint8_t  modulus[SGX_MODULUS_SIZE];
	uint32_t exponent;
	uint8_t  signature[SGX_MODULUS_SIZE];
	struct sgx_sigstruct_body body;
	uint8_t  reserved4[12];
	uint8_t  q1[SGX_MODULUS_SIZE];
	uint8_t  q2[SGX_MODULUS_SIZE];
} __attribute__((packed));
SGX_STATIC_SIZE(struct sgx_sigstruct, 1808);
SGX_STATIC_OFFSET(struct sgx_sigstruct, modulus, 128);
SGX_STATIC_OFFSET(struct sgx_sigstruct, exponent, 512);
SGX_STATIC_OFFSET(struct sgx_sigstruct, signature, 516);
SGX_STATIC_OFFSET(struct sgx_sigstruct, body, 900);
SGX_STATIC_OFFSET(struct sgx_sigstruct, body.isvfamilyid, 912);
SGX_STATIC_OFFSET(struct sgx_sigstruct, body.attributes, 928);
SGX_STATIC_OFFSET(struct sgx_sigstruct, body.attributemask, 944);
SGX_STATIC_OFFSET(struct sgx_sigstruct, body.enclavehash, 960);
SGX_STATIC_OFFSET(struct sgx_sigstruct, body.isvextprodid, 1008);
SGX_STATIC_OFFSET(struct sgx_sigstruct, body.isvprodid, 1024);
SGX_STATIC_OFFSET(struct sgx_sigstruct, reserved4, 1028);
SGX_STATIC_OFFSET(struct sgx_sigstruct, q1, 1040);
SGX_STATIC_OFFSET(struct sgx_sigstruct, q2, 1424);

/* The 16-byte HEADER and HEADER2 constants EINIT compares against. */
#define SGX_SIGSTRUCT_HEADER \
	{ 0x06, 0x00, 0x00, 0x00, 0xE1, 0x00, 0x00, 0x00, \
	  0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x00, 0x00 }
#define SGX_SIGSTRUCT_HEADER2 \
	{ 0x01, 0x01, 0x00, 0x00, 0x60, 0x00, 0x00, 0x00, \
	  0x60, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00 }
#define SGX_SIGSTRUCT_VENDOR_INTEL	0x8086

/* EINITTOKEN: 304 bytes, 512-byte aligned. MAC covers [0,192). */
struct sgx_einittoken {
	uint32_t valid;
	uint8_t  reserved1[44];
	struct sgx_attributes attributes;
	uint8_t  mrenclave[SGX_HASH_SIZE];
	uint8_t  reserved2[32];
	uint8_t  mrsigner[SGX_HASH_SIZE];
	uint8_t  reserved3[32];
	uint8_t  cpusvnle[SGX_CPUSVN_SIZE];
	uint16_t isvprodidle;
	uint16_t isvsvnle;
	uint8_t  reserved4[24];
	uint32_t maskedmiscselectle;
	struct sgx_attributes maskedattributesle;
	uint8_t  keyid[SGX_KEYID_SIZE];
	uint8_t  mac[SGX_MAC_SIZE];
} __attribute__((packed));
SGX_STATIC_SIZE(struct sgx_einittoken, 304);
SGX_STATIC_OFFSET(struct sgx_einittoken, attributes, 48);
SGX_STATIC_OFFSET(struct sgx_einittoken, mrsigner, 128);
SGX_STATIC_OFFSET(struct sgx_einittoken, cpusvnle, 192);
SGX_STATIC_OFFSET(struct sgx_einittoken, maskedmiscselectle, 236);
SGX_STATIC_OFFSET(struct sgx_einittoken, keyid, 256);
SGX_STATIC_OFFSET(struct sgx_einittoken, mac, 288);
#define SGX_EINITTOKEN_MACED_SIZE	192

/* REPORT body (384 bytes) and REPORT (432 bytes, 512-byte aligned). */
struct sgx_report_body {
	uint8_t  cpusvn[SGX_CPUSVN_SIZE];
	uint32_t miscselect;
	uint8_t  reserved1[12];
	uint8_t  isvextprodid[16];
	struct sgx_attributes attributes;
	uint8_t  mrenclave[SGX_HASH_SIZE];
	uint8_t  reserved2[32];
	uint8_t  mrsigner[SGX_HASH_SIZE];
	uint8_t  reserved3[32];
	uint8_t  config_id[64];
	uint16_t isvprodid;
	uint16_t isvsvn;
	uint16_t config_svn;
	uint8_t  reserved4[42];
	uint8_t  isvfamilyid[16];
	uint8_t  report_data[SGX_REPORT_DATA_SIZE];
} __attribute__((packed));
SGX_STATIC_SIZE(struct sgx_report_body, 384);
SGX_STATIC_OFFSET(struct sgx_report_body, attributes, 48);
SGX_STATIC_OFFSET(struct sgx_report_body, mrenclave, 64);
SGX_STATIC_OFFSET(struct sgx_report_body, mrsigner, 128);
SGX_STATIC_OFFSET(struct sgx_report_body, isvprodid, 256);
SGX_STATIC_OFFSET(struct sgx_report_body, isvfamilyid, 304);
SGX_STATIC_OFFSET(struct sgx_report_body, report_data, 320);

struct sgx_report {
	struct sgx_report_body body;
	uint8_t keyid[SGX_KEYID_SIZE];
	uint8_t mac[SGX_MAC_SIZE];
} __attribute__((packed));
SGX_STATIC_SIZE(struct sgx_report, 432);
SGX_STATIC_OFFSET(struct sgx_report, keyid, 384);
SGX_STATIC_OFFSET(struct sgx_report, mac, 416);

/* TARGETINFO: 512 bytes, 512-byte aligned. */
struct sgx_targetinfo {
	uint8_t  measurement[SGX_HASH_SIZE];
	struct sgx_attributes attributes;
	uint8_t  reserved1[2];
	uint16_t config_svn;
	uint32_t miscselect;
	uint8_t  reserved2[8];
	uint8_t  config_id[64];
	uint8_t  reserved3[384];
} __attribute__((packed));
SGX_STATIC_SIZE(struct sgx_targetinfo, 512);
SGX_STATIC_OFFSET(struct sgx_targetinfo, config_svn, 50);
SGX_STATIC_OFFSET(struct sgx_targetinfo, miscselect, 52);
SGX_STATIC_OFFSET(struct sgx_targetinfo, config_id, 64);

/* KEYREQUEST: 512 bytes, 512-byte aligned. */
struct sgx_keyrequest {
	uint16_t keyname;
	uint16_t keypolicy;
	uint16_t isvsvn;
	uint8_t  reserved1[2];
	uint8_t  cpusvn[SGX_CPUSVN_SIZE];
	struct sgx_attributes attributemask;
	uint8_t  keyid[SGX_KEYID_SIZE];
	uint32_t miscmask;
	uint16_t config_svn;
	uint8_t  reserved2[434];
} __attribute__((packed));
SGX_STATIC_SIZE(struct sgx_keyrequest, 512);
SGX_STATIC_OFFSET(struct sgx_keyrequest, cpusvn, 8);
SGX_STATIC_OFFSET(struct sgx_keyrequest, attributemask, 24);
SGX_STATIC_OFFSET(struct sgx_keyrequest, keyid, 40);
SGX_STATIC_OFFSET(struct sgx_keyrequest, miscmask, 72);
SGX_STATIC_OFFSET(struct sgx_keyrequest, config_svn, 76);

/* Name of an SGX error code ("SGX_INVALID_SIGNATURE"), or "SGX_UNKNOWN". */
const char *sgx_error_name(int code);

#endif /* SGXEMU_ARCH_H */
