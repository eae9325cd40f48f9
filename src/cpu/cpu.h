/* SPDX-License-Identifier: MIT */
/*
 * The emulated SGX processor: EPC, EPCM, per-enclave hidden SECS state,
 * launch-control MSRs, and the leaf functions.
 *
 * Everything here follows the SDM's instruction pages: a leaf takes the
 * operands the instruction takes (addresses are host pointers: EPC pages are
 * pointers into cpu->epc, the processor's own mapping of the EPC; PAGEINFO
 * source pages are ordinary memory) and returns 0, a positive SGX error code
 * or SGX_FAULT(vector) (see include/sgxemu/arch.h). A leaf never crashes on
 * bad operands: the checks come first, in the SDM's order.
 *
 * This layer knows nothing of files, processes or signals; the one Linux
 * object it owns is the memfd that backs the EPC, so that the engine can map
 * EPC pages at enclave linear addresses.
 */
#ifndef SGXEMU_CPU_H
#define SGXEMU_CPU_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <openssl/evp.h>

#include "sgxemu/arch.h"
#include "cpu/keys.h"

/* One EPCM entry: the processor's access-control metadata for one page. */
struct sgx_epcm_entry {
	uint8_t  valid:1;
	uint8_t  r:1;
	uint8_t  w:1;
	uint8_t  x:1;
	uint8_t  blocked:1;
	uint8_t  pending:1;
	uint8_t  modified:1;
	uint8_t  pr:1;
	uint8_t  page_type;		/* enum sgx_page_type */
	uint32_t secs;			/* EPC index of the owning SECS */
	uint64_t enclave_address;	/* linear address (child pages) */
	uint64_t blocked_epoch;		/* tracking epoch at EBLOCK */
	uint64_t mod_epoch;		/* tracking epoch at EMODPR/EMODT */
};

/* The XCR0 of the CPU we run on (x87|SSE if XSAVE is not enabled). */
uint64_t sgx_host_xcr0(void);

/*
 * Hidden per-enclave state that hardware keeps inside the SECS page at
 * implementation-specific places (sgx-facts.md §1.9, §1.17). Allocated by
 * ECREATE, freed by EREMOVE of the SECS.
 */
struct sgx_encl_ctl {
	size_t   secs_index;		/* EPC index of the SECS page */
	uint64_t eid;			/* enclave identifier (global counter) */
	uint64_t base;			/* copies of SECS.BASEADDR / SIZE */
	uint64_t size;
	bool     initialized;		/* SECS.ATTRIBUTES.INIT */
	EVP_MD_CTX *mrenclave;		/* running measurement until EINIT */
	uint64_t update_counter;	/* 64-byte blocks hashed so far */
	uint32_t child_count;		/* pages whose EPCM.SECS is this SECS */
	atomic_uint active_threads;	/* logical processors in enclave mode */
	uint8_t  padding[352];		/* top of the PKCS#1 encoding (EINIT) */
	uint8_t  isvfamilyid[16];
	uint8_t  isvextprodid[16];
	uint32_t *pages;		/* (linaddr - base) >> 12 -> EPC index + 1 */
	pthread_mutex_t lock;		/* serialises leaves on this enclave */
	struct sgx_encl_ctl *next;	/* cpu->enclaves list */
	/*
	 * TLB tracking (EBLOCK/ETRACK/EWB): the entry epoch advances at each
	 * ETRACK; threads_at[e & 1] counts the logical processors in enclave
	 * mode that entered during epoch e. Only two epochs can have threads
	 * at once, because ETRACK refuses to start a cycle before the
	 * previous one has drained (see etrack.c).
	 */
	atomic_uint_fast64_t epoch;
	atomic_uint threads_at[2];
	bool     secs_evicted;		/* SECS page written back by EWB */
};

/* One EPC section as CPUID.(12H, n>=2) enumerates it. */
struct sgx_epc_section {
	uint64_t phys_base;		/* the "physical" base CPUID reports */
	size_t   first_page;		/* index of its first page in the EPC */
	size_t   nr_pages;
};

#define SGX_MAX_EPC_SECTIONS	8
/*
 * 1 GiB, as a server part's EPC (docs/guide.md, "Configuration"): three
 * of Gramine's default 256 MiB enclaves (a fork and exec pipeline) fit
 * without paging, and the kernel selftests' oversubscribed cases, which
 * build an enclave the size of the whole EPC, stay near 1 GiB of RAM. The
 * EPC is a memfd: only pages enclaves use take memory.
 */
#define SGX_DEFAULT_EPC_SIZE	(1024UL * 1024 * 1024)
#define SGX_DEFAULT_EPC_PHYS	0x0000000080200000ULL

struct sgx_cpu_config {
	size_t   epc_size;		/* bytes, multiple of 4096; 0 = default */
	unsigned nr_sections;		/* 0 = 1 */
	uint64_t xfrm_supported;	/* 0 = this CPU's XCR0 */
	uint32_t miscselect_supported;	/* CPUID.(12H,0):EBX; 0 = EXINFO */
	uint8_t  max_enclave_size_64;	/* log2; 0 = 47 (128 TiB) */
	bool     sgx2;			/* CPUID.(12H,0):EAX bit 1 */
	bool     aexnotify;		/* AEX-Notify: the AEXNOTIFY attribute,
					 * TCS.FLAGS/SSA bits, EDECCSSA
					 * (CPUID.(12H,0):EAX bit 11) */
	bool     eupdatesvn;		/* ENCLS[EUPDATESVN]
					 * (CPUID.(12H,0):EAX bit 10) */
};

struct sgx_cpu {
	struct sgx_cpu_config config;
	int      epc_fd;		/* memfd holding every EPC page */
	uint8_t *epc;			/* the processor's mapping of the EPC */
	size_t   nr_pages;
	struct sgx_epcm_entry *epcm;	/* one per EPC page */
	/* Per page: has held data since the EPC was made. A page that has
	 * not is still the memfd's hole and reads as zero, so EAUG need
	 * not clear it (nor fault in the processor's mapping to do so). */
	uint8_t *epc_used;
	struct sgx_encl_ctl **ctl;	/* per page: non-NULL for SECS pages */
	struct sgx_epc_section sections[SGX_MAX_EPC_SECTIONS];
	unsigned nr_sections;
	uint64_t lepubkeyhash[4];	/* IA32_SGXLEPUBKEYHASH0..3 */
	bool     lc_locked;		/* launch-control MSRs read-only */
	struct sgx_platform_keys keys;	/* root secrets, CPUSVN, report key id */
	atomic_uint_fast64_t next_eid;
	uint8_t  paging_key[16];	/* CR_BASE_PK: per boot, for EWB/ELD* */
	bool     paging_key_set;
	uint64_t next_version;		/* EWB versions (under cpu->lock) */
	/*
	 * The security version of the microcode loaded now: what
	 * EUPDATESVN brings keys.cpusvn up to (Intel document 648682). A
	 * runtime microcode update raises it; CPUSVN follows only when
	 * EUPDATESVN runs on an empty EPC. All zero: none loaded yet.
	 */
	uint8_t  ucode_cpusvn[SGX_CPUSVN_SIZE];
	/* Test injection: the next N RDSEEDs of EUPDATESVN fail
	 * (UINT_MAX: every one), as under a starved entropy source. */
	atomic_uint rdseed_failures;
	struct sgx_encl_ctl *enclaves;	/* every live SECS */
	/* Enclaves a power loss took (power.c): their hidden state stays
	 * allocated for the engine's and driver's references until EREMOVE
	 * of the page their SECS was in, or teardown. */
	struct sgx_encl_ctl *lost;
	/* Asleep (S3) on request: EENTER and ERESUME wait (power.c). */
	atomic_bool suspended;
	pthread_mutex_t lock;		/* EPCM, enclave list, MSRs */
	/*
	 * Called (without cpu->lock) after an enclave-mode leaf changed the
	 * EPCM permissions or state of the page at @linaddr (EACCEPT,
	 * EACCEPTCOPY, EMODPE). Hardware consults the EPCM at every access;
	 * the emulator's host mappings cache "EPCM AND VMA" and must follow.
	 * Optional; async-signal context (the engine's handlers).
	 */
	void (*epcm_changed)(struct sgx_cpu *cpu, struct sgx_encl_ctl *ctl,
			     uint64_t linaddr);
};

/* The EPC memfd is shared with another process now (fork): any page may
 * hold data the EPCM here does not know of. */
void sgx_cpu_epc_shared(struct sgx_cpu *cpu);

/* Set up the EPC (memfd + mapping) and EPCM. Returns 0 or -errno. */
int sgx_cpu_init(struct sgx_cpu *cpu, const struct sgx_cpu_config *config);
void sgx_cpu_destroy(struct sgx_cpu *cpu);

/* EPC address of page @index, or the index of an EPC address (-1 if none). */
void *sgx_epc_page(struct sgx_cpu *cpu, size_t index);
long sgx_epc_index(const struct sgx_cpu *cpu, const void *addr);

/*
 * The EPC page mapped at enclave linear address @linaddr, as the enclave's
 * page tables would resolve it: -1 when no enclave page is there.
 */
long sgx_cpu_lookup(struct sgx_cpu *cpu, uint64_t linaddr);
/* The enclave whose ELRANGE contains @linaddr, or NULL. */
struct sgx_encl_ctl *sgx_cpu_find_enclave(struct sgx_cpu *cpu,
					  uint64_t linaddr);

/* CPUID leaf 0x12 (SGX) as this processor enumerates it. */
void sgx_cpu_cpuid(const struct sgx_cpu *cpu, uint32_t subleaf,
		   uint32_t regs[4]);
/* The same from a configuration (after sgx_cpu_config_defaults) and its
 * EPC sections, without a processor: what the platform will enumerate. */
void sgx_cpuid_leaf12(const struct sgx_cpu_config *cfg,
		      const struct sgx_epc_section *sections, unsigned nr,
		      uint32_t subleaf, uint32_t regs[4]);
/* ATTRIBUTES.FLAGS bits ECREATE accepts (CPUID.(12H,1):EAX:EBX). */
uint64_t sgx_attr_supported(const struct sgx_cpu_config *cfg);
/* Fill in a configuration's defaults (as sgx_cpu_init does); -EINVAL for
 * values the processor refuses. */
int sgx_cpu_config_defaults(struct sgx_cpu_config *cfg);
/* The EPC sections of @nr_pages split in @n, as sgx_cpu_init lays them. */
void sgx_epc_layout(size_t nr_pages, unsigned n, struct sgx_epc_section *out);

/* Launch-control MSRs. Returns 0, or SGX_GP for a locked/unknown MSR. */
int sgx_wrmsr(struct sgx_cpu *cpu, uint32_t msr, uint64_t value);
int sgx_rdmsr(const struct sgx_cpu *cpu, uint32_t msr, uint64_t *value);

/*
 * ENCLS leaves (kernel-mode instructions). ECREATE alone can also return
 * -ENOMEM: the emulator could not allocate the enclave's hidden state.
 */
int sgx_ecreate(struct sgx_cpu *cpu, const struct sgx_pageinfo *pageinfo,
		void *epc_page);
int sgx_eadd(struct sgx_cpu *cpu, const struct sgx_pageinfo *pageinfo,
	     void *epc_page);
int sgx_eextend(struct sgx_cpu *cpu, void *secs, void *chunk);
int sgx_einit(struct sgx_cpu *cpu, const struct sgx_sigstruct *sigstruct,
	      void *secs, const struct sgx_einittoken *token);
int sgx_eremove(struct sgx_cpu *cpu, void *epc_page);
int sgx_edbgrd(struct sgx_cpu *cpu, void *epc_addr, uint64_t *data);
int sgx_edbgwr(struct sgx_cpu *cpu, void *epc_addr, uint64_t data);
/*
 * EDBGRD's (@write false) or EDBGWR's checks on the qword at page offset
 * @off of the page @epcm describes, whose enclave has @secs_attributes
 * (SECS.ATTRIBUTES.FLAGS): 0, SGX_GP, SGX_PF or SGX_PAGE_NOT_DEBUGGABLE.
 * The leaves use it on their own EPCM; a debugger's access hook
 * (src/dbg/) on a copy of another process's entry.
 */
int sgx_edbg_rules(const struct sgx_epcm_entry *epcm, uint64_t secs_attributes,
		   uintptr_t off, bool write);

/* ENCLS leaves of EPC paging (etrack.c, eblock.c, epa.c, ewb.c, eldu.c). */
int sgx_epa(struct sgx_cpu *cpu, uint64_t page_type, void *epc_page);
int sgx_eblock(struct sgx_cpu *cpu, void *epc_page);
int sgx_etrack(struct sgx_cpu *cpu, void *secs);
int sgx_ewb(struct sgx_cpu *cpu, struct sgx_pageinfo *pageinfo,
	    void *epc_page, uint64_t *va_slot);
int sgx_eldb(struct sgx_cpu *cpu, const struct sgx_pageinfo *pageinfo,
	     void *epc_page, uint64_t *va_slot);
int sgx_eldu(struct sgx_cpu *cpu, const struct sgx_pageinfo *pageinfo,
	     void *epc_page, uint64_t *va_slot);

/*
 * ENCLS[EUPDATESVN] (leaf 0x18, eupdatesvn.c): with no valid page in the
 * EPC, draw a fresh paging key and bring CPUSVN up to ucode_cpusvn.
 * Returns 0 (CPUSVN raised), SGX_NO_UPDATE (the loaded microcode is not
 * newer; the paging key is new all the same), SGX_EPC_NOT_READY,
 * SGX_INSUFFICIENT_ENTROPY, or #GP on a processor without the leaf.
 * sgx_cpu_load_microcode is the late microcode load an OS does: it sets
 * ucode_cpusvn and changes nothing else.
 */
int sgx_eupdatesvn(struct sgx_cpu *cpu);
void sgx_cpu_load_microcode(struct sgx_cpu *cpu,
			    const uint8_t svn[SGX_CPUSVN_SIZE]);

/*
 * SGX2 ENCLS leaves (eaug.c, emod.c): EAUG adds a PENDING page to an
 * initialised enclave; EMODPR restricts a page's permissions, EMODT changes
 * its type to TCS or TRIM. EMODPR/EMODT return 0, an SGX error code
 * (SGX_PAGE_NOT_MODIFIABLE, SGX_EPC_PAGE_CONFLICT) or a fault. All three
 * are #GP (undefined leaf) on a processor without SGX2.
 */
int sgx_eaug(struct sgx_cpu *cpu, const struct sgx_pageinfo *pageinfo,
	     void *epc_page);
int sgx_emodpr(struct sgx_cpu *cpu, const struct sgx_secinfo *secinfo,
	       void *epc_page);
int sgx_emodt(struct sgx_cpu *cpu, const struct sgx_secinfo *secinfo,
	      void *epc_page);

/*
 * A power transition (S3/S4; power.c), in three steps. Suspend: no
 * logical processor enters enclave mode any more (EENTER and ERESUME
 * wait), while the caller makes those in it leave (the interrupt's AEX).
 * Loss: the EPC's contents and the EPCM are gone, every entry invalid, as
 * hardware finds them at resume, and the paging key of the next "boot" is
 * a new one; every leaf on those pages then faults as on an invalid page,
 * and EREMOVE of them succeeds without doing anything. Returns the number
 * of enclaves (SECS pages) lost. Resume: the waiting entries go on, to
 * their faults.
 */
void sgx_power_suspend(struct sgx_cpu *cpu);
/* Logical processors in enclave mode (or entering it) now: the suspend
 * waits for none. */
unsigned sgx_power_lps_inside(struct sgx_cpu *cpu);
unsigned sgx_power_loss(struct sgx_cpu *cpu);
void sgx_power_resume(struct sgx_cpu *cpu);

/*
 * Entry-epoch accounting the engine calls when a logical processor enters
 * (EENTER/ERESUME) and leaves (EEXIT/AEX) enclave mode: sgx_track_enter
 * returns the epoch to hand back to sgx_track_exit. Lock-free, so the
 * enclave-exit path in a signal handler may call it.
 */
uint64_t sgx_track_enter(struct sgx_encl_ctl *ctl);
void sgx_track_exit(struct sgx_encl_ctl *ctl, uint64_t entry_epoch);
/* Has the last ETRACK cycle completed (every thread that was inside left)? */
bool sgx_track_cycle_done(struct sgx_encl_ctl *ctl);

/*
 * ENCLU leaves that read and write enclave memory, executed by a thread in
 * enclave mode of @ctl's enclave; operands are enclave linear addresses.
 */
int sgx_egetkey(struct sgx_cpu *cpu, struct sgx_encl_ctl *ctl,
		uint64_t keyrequest, uint64_t outputdata);
int sgx_ereport(struct sgx_cpu *cpu, struct sgx_encl_ctl *ctl,
		uint64_t targetinfo, uint64_t reportdata, uint64_t outputdata);
/* SGX2 ENCLU leaves (eaccept.c): 0, an SGX error code or a fault. */
int sgx_eaccept(struct sgx_cpu *cpu, struct sgx_encl_ctl *ctl,
		uint64_t secinfo, uint64_t page);
int sgx_eacceptcopy(struct sgx_cpu *cpu, struct sgx_encl_ctl *ctl,
		    uint64_t secinfo, uint64_t dst, uint64_t src);
int sgx_emodpe(struct sgx_cpu *cpu, struct sgx_encl_ctl *ctl,
	       uint64_t secinfo, uint64_t page);

#endif /* SGXEMU_CPU_H */
