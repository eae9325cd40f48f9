/* SPDX-License-Identifier: MIT */
/*
 * sgxemu public C API: build an enclave on the emulated processor and run
 * its unmodified code natively on the calling thread.
 *
 * Conventions
 *  - Functions return 0 (or a non-negative value) on success and a negative
 *    errno on failure. Where a processor leaf failed, the function returns
 *    -EIO and stores the leaf's result in *sgx_err (if sgx_err is not NULL):
 *    a positive SGX error code (enum sgx_error) or SGX_FAULT(vector) (see
 *    sgxemu/arch.h). *sgx_err is 0 when no leaf failed.
 *  - Addresses of enclave memory are enclave linear addresses (uint64_t);
 *    ELRANGE lives at SECS.BASEADDR in this process's address space, as on
 *    hardware.
 *  - Every function is thread-safe. None may be called from a signal
 *    handler except those marked async-signal-safe.
 *
 * Environment (read once, when the platform is first used):
 *   SGXEMU_EPC_SIZE      EPC bytes (suffix K, M or G; default 1G)
 *   SGXEMU_EPC_SECTIONS  number of EPC sections (default 1)
 *   SGXEMU_SGX2          1: enumerate SGX2 (default 1)
 *   SGXEMU_GUARD         1: guard mode on (default 0), see below
 *   SGXEMU_HOST_ENCLU    0: do not emulate ENCLU executed by host code
 *                        (default 1)
 *   SGXEMU_CPUID         auto (default), fault, rewrite or off: how host
 *                        CPUID is made to answer as an SGX part under
 *                        `sgxemu run` (see sgxemu_cpuid_mechanism)
 */
#ifndef SGXEMU_SGXEMU_H
#define SGXEMU_SGXEMU_H

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sgxemu/arch.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------------ */
/* Platform: the process-wide emulated processor.                      */
/* ------------------------------------------------------------------ */

struct sgxemu_platform_config {
	size_t   epc_size;		/* bytes, 4 KiB multiple; 0 = default */
	unsigned nr_sections;		/* 0 = 1 */
	int      sgx2;			/* -1 default, 0 off, 1 on */
	int      guard;			/* -1 default (env), 0 off, 1 on */
	int      host_enclu;		/* -1 default (env), 0 off, 1 on */
	int      aexnotify;		/* -1 default (env), 0 off, 1 on */
};

/*
 * Configure the platform before its first use (values left at 0 / -1 are
 * taken from the environment, then from the defaults). -EBUSY once the
 * platform exists. Not needed when the environment is enough.
 */
int sgxemu_platform_configure(const struct sgxemu_platform_config *cfg);

/*
 * Create the platform if needed (EPC, EPCM, the engine's signal handlers).
 * 0 or -errno. Every other function calls it implicitly.
 */
int sgxemu_platform_init(void);

/* The processor model behind the platform (src/cpu/cpu.h), for the driver
 * and the shim. NULL if the platform cannot be created. */
struct sgx_cpu;
struct sgx_cpu *sgxemu_platform_cpu(void);

/* CPUID leaf 0x12 sub-leaf @subleaf as the emulated processor answers. */
void sgxemu_platform_cpuid(uint32_t subleaf, uint32_t regs[4]);

/*
 * CPUID.(EAX=@leaf, ECX=@subleaf) as host code sees it on the emulated
 * platform: the host CPU's answer with CPUID.(7,0):EBX[2] (SGX) set and
 * ECX[30] (SGX_LC) set when launch control is flexible, cleared when
 * locked; leaf 0x12 as sgxemu_platform_cpuid() (EPC sections from
 * sub-leaf 2, then an invalid sub-leaf); leaf 0 EAX at least 0x12. Every
 * other leaf is the host's. regs[] = EAX, EBX, ECX, EDX. For programs
 * linked against the library (under `sgxemu run` the CPUID instruction
 * itself answers this way). 0, or -errno when the platform cannot be
 * created.
 */
int sgxemu_cpuid(uint32_t leaf, uint32_t subleaf, uint32_t regs[4]);

/*
 * True when the host kernel has not enabled FSGSBASE (no HWCAP2_FSGSBASE)
 * and the platform offers it anyway, as every Linux SGX machine does: the
 * engine then emulates RD/WR{FS,GS}BASE, one trap each, in enclave and
 * host code, and `sgxemu run` sets HWCAP2_FSGSBASE in the program's
 * auxiliary vector. SGXEMU_FSGSBASE=0 turns this off.
 */
bool sgxemu_fsgsbase_emulated(void);
/*
 * FSGSBASE on this host: "kernel" (the host kernel's, HWCAP2_FSGSBASE),
 * "emulated" (the instructions are #UD here; the engine does them, one
 * trap each), "untracked" (they run, but this kernel restores only the
 * bases set by arch_prctl at a context switch: a base enclave code wrote
 * since its last interruption can be lost at a preemption), or "off"
 * (SGXEMU_FSGSBASE=0 on a host without them).
 */
const char *sgxemu_fsgsbase_mode(void);

/*
 * RDTSC/RDTSCP in enclave mode on the platform (after init): "allowed"
 * (an SGX2 part, as hardware), "ud" (an SGX1 part: #UD, trapped with
 * PR_SET_TSC around enclave mode), "native" (an SGX1 part on a host whose
 * CR4.TSD does not trap, or SGXEMU_TSC=native: they run, unlike on
 * hardware). sgxemu_tsc_trappable() says whether this host traps them.
 */
const char *sgxemu_tsc_mode(void);
bool sgxemu_tsc_trappable(void);

/*
 * How `sgxemu run` makes host CPUID instructions answer as above on this
 * machine, after SGXEMU_CPUID (auto, fault, rewrite, off): "fault" (CPUID
 * faulting: the CPU's cpuid_fault feature, Intel), "rewrite" (CPUID
 * instructions of the program's executable mappings rewritten to trap;
 * AMD, or SGXEMU_CPUID=rewrite) or "off" (native CPUID).
 */
const char *sgxemu_cpuid_mechanism(void);

/* Guard mode (ELRANGE inaccessible to host code while no thread of the
 * process is in enclave mode). May be switched at any time. */
void sgxemu_set_guard(bool on);
bool sgxemu_guard(void);

/* ------------------------------------------------------------------ */
/* Enclaves.                                                            */
/* ------------------------------------------------------------------ */

struct sgxemu_enclave;

/* sgxemu_enclave_create() flags. */
/*
 * The caller has already reserved [BASEADDR, BASEADDR+SIZE) (e.g. an
 * anonymous PROT_NONE mapping, or the driver's device mapping): the engine
 * maps enclave pages over it with MAP_FIXED and, on destroy, leaves a
 * PROT_NONE reservation in place instead of unmapping.
 * Without this flag the engine reserves the range itself
 * (MAP_FIXED_NOREPLACE; -EEXIST if something is mapped there) and unmaps
 * it on destroy.
 */
#define SGXEMU_CREATE_RESERVED	(1U << 0)

/*
 * ECREATE: a new enclave from @secs (SIZE, BASEADDR, SSAFRAMESIZE,
 * MISCSELECT, ATTRIBUTES, ...). -EIO with *sgx_err for an ECREATE fault,
 * -ENOMEM when the EPC is full, -EINVAL for bad flags.
 */
int sgxemu_enclave_create(const struct sgx_secs *secs, unsigned flags,
			  struct sgxemu_enclave **encl, int *sgx_err);

/*
 * EADD (+ EEXTEND of the 256-byte chunks whose bit is set in
 * @measure_mask: bit i = bytes [256*i, 256*i+256) of the page; 0xFFFF
 * measures the whole page) of the page at @linaddr with the contents of
 * @src (4096 bytes, any alignment) and @secinfo. @prot (PROT_READ /
 * PROT_WRITE / PROT_EXEC) is the host mapping's permission for the page,
 * what the driver's VMA grants; the effective protection of the page is
 * EPCM permissions AND @prot. -EEXIST if a page is already there.
 */
int sgxemu_enclave_add_page(struct sgxemu_enclave *encl, uint64_t linaddr,
			    const void *src, const struct sgx_secinfo *secinfo,
			    uint16_t measure_mask, int prot, int *sgx_err);

/*
 * EINIT with @sigstruct and the optional @token (NULL: an all-zero token,
 * as the Linux driver passes on flexible-launch-control parts). Like
 * Linux on FLC parts, the launch-control MSRs are first written with
 * SHA-256(SIGSTRUCT.MODULUS). -EIO with *sgx_err = the EINIT code
 * (e.g. SGX_INVALID_SIGNATURE) on failure.
 */
int sgxemu_enclave_init(struct sgxemu_enclave *encl,
			const struct sgx_sigstruct *sigstruct,
			const struct sgx_einittoken *token, int *sgx_err);

/*
 * Set the host mapping's permissions for [addr, addr+len) (page aligned,
 * inside ELRANGE): what the driver calls from mmap and mprotect. The
 * effective protection of each page becomes EPCM AND @prot (pages not yet
 * added stay inaccessible). Checking @prot against the EPCM (the driver's
 * may_mprotect rule) is the caller's business; this only applies it.
 */
int sgxemu_enclave_set_prot(struct sgxemu_enclave *encl, uint64_t addr,
			    size_t len, int prot);

/* What is known about one enclave page. */
struct sgxemu_page_info {
	bool     present;		/* an EPC page is mapped there */
	uint8_t  type;			/* enum sgx_page_type */
	int      epcm_prot;		/* EPCM R/W/X as PROT_* bits */
	int      map_prot;		/* the mapping's permissions */
	bool     pending, modified;	/* SGX2 states */
	bool     refused;		/* the driver SIGBUSes its faults */
};
int sgxemu_enclave_page_info(struct sgxemu_enclave *encl, uint64_t linaddr,
			     struct sgxemu_page_info *info);

/* EREMOVE of one page (not the SECS); the range becomes inaccessible. */
int sgxemu_enclave_remove_page(struct sgxemu_enclave *encl, uint64_t linaddr,
			       int *sgx_err);

struct sgxemu_enclave_info {
	uint64_t base, size;
	uint32_t ssa_frame_size;	/* pages */
	uint32_t miscselect;
	struct sgx_attributes attributes;
	bool     initialized;
	uint8_t  mrenclave[SGX_HASH_SIZE];	/* final after init */
	uint8_t  mrsigner[SGX_HASH_SIZE];
	size_t   nr_pages;		/* EPC pages, SECS excluded */
};
int sgxemu_enclave_get_info(const struct sgxemu_enclave *encl,
			    struct sgxemu_enclave_info *info);

/* The enclave whose ELRANGE contains @addr, or NULL. Async-signal-safe. */
struct sgxemu_enclave *sgxemu_enclave_find(uint64_t addr);

/*
 * EREMOVE every page, the SECS last, and release ELRANGE (see
 * SGXEMU_CREATE_RESERVED). -EBUSY (nothing done) while a thread is in
 * enclave mode in it.
 */
int sgxemu_enclave_destroy(struct sgxemu_enclave *encl);

/* ------------------------------------------------------------------ */
/* Running enclave code through the C API.                              */
/* ------------------------------------------------------------------ */

/* General-purpose registers passed in and out. */
struct sgxemu_regs {
	uint64_t rax, rbx, rcx, rdx, rsi, rdi, rbp, rsp;
	uint64_t r8, r9, r10, r11, r12, r13, r14, r15;
	uint64_t rflags;
};

enum sgxemu_exit_reason {
	SGXEMU_EXIT_NONE	= 0,	/* the entry did not happen */
	SGXEMU_EXIT_EEXIT	= 1,	/* the enclave executed EEXIT */
	SGXEMU_EXIT_EXCEPTION	= 2,	/* an exception caused an AEX, or
					 * EENTER/ERESUME itself faulted */
};

struct sgxemu_exception {
	uint32_t vector;		/* enum x86_vector */
	uint32_t error_code;		/* #PF/#GP error code, else 0 */
	uint64_t address;		/* #PF: page-aligned linear address
					 * (what hardware reports to the
					 * OS as CR2), else 0 */
};

struct sgxemu_run {
	uint64_t tcs;			/* in: TCS linear address */
	uint32_t leaf;			/* in: SGX_EENTER or SGX_ERESUME;
					 * out: the leaf that faulted, or
					 * SGX_EEXIT */
	uint32_t exit_reason;		/* out: enum sgxemu_exit_reason */
	struct sgxemu_exception exception;	/* out, EXCEPTION only */
	/*
	 * in: RDX, RSI, RDI, RBP, R8-R15 and RFLAGS (arithmetic flags and DF)
	 *     as the enclave sees them at OENTRY (RAX = CSSA, RBX = TCS and
	 *     RCX = the return address are set by EENTER; RSP is the
	 *     engine's stack). Ignored for ERESUME.
	 * out: after EEXIT every register as the enclave left it (RBX = the
	 *     EEXIT target, RCX = AEP); after an exception the AEX synthetic
	 *     state (RAX = 3, RBX = TCS, RCX = AEP, others 0 but RSP/RBP).
	 */
	struct sgxemu_regs regs;
};

/*
 * Run the enclave: EENTER (run->leaf == SGX_EENTER) or ERESUME
 * (SGX_ERESUME) of run->tcs, until it leaves by EEXIT or by an exception.
 * The enclave must EEXIT to the address it received in RCX (the return
 * address), like the Linux vDSO entry expects; it may leave RSP/RBP as it
 * likes. Asynchronous exits (signals) are transparent: the application's
 * handler runs, then the enclave is resumed.
 * Returns 0 with run->exit_reason set (exceptions are not errors: the
 * caller decides, typically ERESUME after handling), or -EINVAL for a bad
 * leaf, -EFAULT for a TCS address no enclave contains.
 */
int sgxemu_enter(struct sgxemu_run *run);

/* Number of AEXs (synchronous and asynchronous) on this thread so far. */
uint64_t sgxemu_thread_aex_count(void);

/* ------------------------------------------------------------------ */
/* Engine entry points for the shim (the vDSO entry and host ENCLU).    */
/* ------------------------------------------------------------------ */

/*
 * The native ENCLU[EENTER]/ENCLU[ERESUME] for host code. Called as
 *     call *slot(%rip)        ; slot holds sgxemu_enclu_entry
 * with RAX = leaf (2 or 3), RBX = TCS, RCX = AEP. It behaves as the ENCLU
 * instruction at the call would: every other GPR reaches the enclave
 * untouched, the enclave sees RSP as it was before the call (the return
 * address slot below it is scratch), RCX = the instruction after the call,
 * RAX = CSSA. On EEXIT to that address execution continues there with
 * RCX = AEP and every other register as the enclave left it. On an
 * exception the fault is handled as an exception at the AEP (see the
 * fixups below); faults of EENTER/ERESUME itself (busy TCS, CSSA, ...)
 * are reported the same way with RAX = the leaf.
 * Not a C function: do not call it from C.
 */
extern void sgxemu_enclu_entry(void);

/*
 * Before a thread's first entry through sgxemu_enclu_entry the engine sets
 * it up (alternate signal stack, syscall user dispatch) lazily; calling
 * this first moves that cost out of the first entry. 0 or -errno.
 */
int sgxemu_thread_prepare(void);

/*
 * Exception fixup (what Linux's vDSO exception table does): an exception
 * in enclave mode whose AEX would continue at @aep (or a fault of
 * EENTER/ERESUME entered with RCX = @aep) continues at @fixup instead,
 * in the AEX synthetic state (RAX = leaf: 3 after an AEX, RBX = TCS,
 * RCX = AEP, RSP/RBP = URSP/URBP) except RDI = vector, RSI = error code,
 * RDX = fault address (page aligned for #PF, else 0). No signal reaches
 * the application. @flags selects the vectors:
 *   SGXEMU_FIXUP_LINUX  as Linux: not #DB and #BP, which are delivered as
 *                       SIGTRAP (below);
 *   SGXEMU_FIXUP_ALL    every exception.
 * Without a fixup, an exception is delivered to the application's own
 * handler for its signal (SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGTRAP) as if
 * it occurred at the AEP with the AEX synthetic state (si_addr page
 * aligned for #PF); with no handler (SIG_DFL) the process dies of that
 * signal, as it would on hardware. Asynchronous exits never use fixups.
 * Returns 0, -ENOSPC (table full: 64 entries), -EINVAL.
 */
#define SGXEMU_FIXUP_LINUX	0U
#define SGXEMU_FIXUP_ALL	1U
int sgxemu_register_fixup(uintptr_t aep, uintptr_t fixup, unsigned flags);
int sgxemu_unregister_fixup(uintptr_t aep);

/*
 * Signal chaining. The engine owns the process's real handlers for
 * SIGILL, SIGSEGV, SIGBUS, SIGFPE, SIGTRAP and SIGSYS, and for every signal
 * the application gives a handler through these functions, so that a
 * signal arriving in enclave mode performs an AEX first. The application's
 * handler then runs in host context as if the signal had arrived at the
 * AEP; when it returns, the AEP's ERESUME continues the enclave.
 * The shim's sigaction()/signal() call these; programs linked against
 * libsgxemu directly should too (a handler installed with plain
 * sigaction() for one of the signals above replaces the engine's and
 * breaks enclave execution).
 * sgxemu_sigaction has sigaction()'s contract (errno-style: 0 or -1 with
 * errno). SA_ONSTACK of the application is honoured only in that the
 * handler runs on the engine's per-thread alternate stack.
 */
int sgxemu_sigaction(int signo, const struct sigaction *act,
		     struct sigaction *oldact);
/* The application's view of a disposition (what sigaction() returns). */
int sgxemu_app_sigaction(int signo, struct sigaction *act);
/*
 * sigaltstack() for the application: once a thread has entered an enclave
 * the kernel's alternate stack is the engine's, so this records and
 * reports the application's own instead (with the kernel's EPERM, EINVAL,
 * ENOMEM), and the application's handlers run on the engine's stack. The
 * shim routes sigaltstack() here. 0, or -1 with errno.
 */
int sgxemu_sigaltstack(const stack_t *ss, stack_t *old);

/*
 * sigprocmask() for the application (pthread_sigmask() is the same with
 * its errno-value return): the signals the engine takes for ENCLU, CPUID
 * faulting, enclave paging and raw system calls (SIGILL, SIGSEGV, SIGSYS)
 * and SGXEMU_KICK_SIGNAL never enter the thread's real mask, since the
 * kernel kills a thread that faults with its fault signal blocked and on
 * hardware ENCLU does not depend on the mask. Blocking them is recorded
 * per thread and reported back in @old, so the program sees the mask it
 * set. The shim routes sigprocmask() and pthread_sigmask() here.
 * 0, or -1 with errno EINVAL for an unknown @how (as glibc's, the sets
 * are read and written directly: bad pointers fault).
 */
int sgxemu_sigprocmask(int how, const sigset_t *set, sigset_t *old);

/*
 * The same rule for a mask the thread is about to run with rather than its
 * current one: a raw rt_sigprocmask served in a signal handler changes the
 * mask that the handler's return restores (its frame's uc_sigmask, @mask,
 * 64 signals). @old (may be NULL) gets the program's view before the
 * change. 0, or -EINVAL for an unknown @how with a @set.
 */
int sgxemu_sigmask_apply(int how, const uint64_t *set, uint64_t *mask,
			 uint64_t *old);

/*
 * ENCLU executed by host code (0f 01 d7 outside enclave mode: #UD on AMD
 * hosts, #GP or #PF on Intel ones) with EAX = EENTER or ERESUME is
 * emulated: the entry happens with the return point after the 3-byte
 * instruction. On by default (SGXEMU_HOST_ENCLU=0 switches it off: the
 * host's fault then reaches the application's handler unchanged). Other
 * leaves from host code get #GP(0) as on SGX hardware: SIGSEGV, SI_KERNEL,
 * trap 13.
 */
void sgxemu_set_host_enclu(bool on);
bool sgxemu_host_enclu(void);

/*
 * What this host's processor raises for ENCLU, probed once by executing
 * it (src/engine/probe.c): the trap every engine exit costs. @signo is
 * SIGILL for #UD (AMD, vector 6) or SIGSEGV for #GP (Intel, vector 13);
 * the eenter_* fields are what ENCLU[EENTER] on a TCS that is not EPC
 * raises (a #PF with the SGX bit, vector 14, on Intel). @forced names the
 * SGXEMU_FAULT_STYLE the engine converts these to ("ud", "gp"), or NULL.
 */
struct sgxemu_trap_info {
	int      signo, code;
	unsigned vector;
	uint32_t error_code;
	int      eenter_signo;
	unsigned eenter_vector;
	uint32_t eenter_error_code;
	const char *forced;
};
int sgxemu_trap_probe(struct sgxemu_trap_info *info);
/* "#UD (SIGILL)", "#GP (SIGSEGV)", ...: for @vector. */
const char *sgxemu_trap_name(unsigned vector);
/*
 * The round trip, in ns (median of @iters), of one ENCLU fault of the
 * kind this host delivers to a minimal handler that skips it: the floor
 * any ENCLU-driven exit is measured against (bench/ecall). Single-threaded
 * callers only: it replaces the fault's handler while it runs. Negative
 * errno on failure.
 */
double sgxemu_trap_cost_ns(unsigned iters);

/*
 * The signal the engine reserves for kicking threads out of enclave mode
 * (the kernel's IPI after ETRACK, before EWB of an EPC page): it arrives in
 * enclave mode as an asynchronous exit and the thread continues at its
 * AEP. The application must neither handle nor block it: sgxemu_sigaction
 * refuses it (EINVAL), and the shim keeps programs from taking it.
 */
#define SGXEMU_KICK_SIGNAL	63

/*
 * Platform events on request (`sgxemu platform power-cycle PID`): once a
 * process under the shim has opened an enclave device it listens on the
 * abstract UNIX socket named by this format and its PID (in decimal),
 * for processes of its own user (SO_PEERCRED) and root. One request per
 * connection, one line each way: "power-cycle\n" loses every enclave of
 * the process, as a suspend to S3 does, and is answered "ok N\n" (N
 * enclaves lost) or "error ERRNO\n" (a positive errno value).
 */
#define SGXEMU_PLATFORM_SOCKET_FMT	"sgxemu-platform-%ld"

/* ------------------------------------------------------------------ */
/* EPC paging statistics.                                               */
/* ------------------------------------------------------------------ */

#define SGXEMU_MAX_EPC_SECTIONS	8

struct sgxemu_epc_section_stats {
	uint64_t phys_base;
	uint64_t total_pages, free_pages;
};

struct sgxemu_platform_stats {
	uint64_t epc_total_pages, epc_free_pages;
	unsigned nr_sections;
	struct sgxemu_epc_section_stats sections[SGXEMU_MAX_EPC_SECTIONS];
	uint64_t pages_evicted;		/* EWB of enclave pages */
	uint64_t pages_reloaded;	/* ELDU of enclave pages */
	uint64_t reload_failures;	/* ELDU refused (tampered / replayed) */
	uint64_t reclaimer_runs;	/* batches run by the reclaimer thread */
	uint64_t direct_reclaims;	/* batches run by allocations */
	uint64_t aging_faults;		/* accesses observed for aging */
	uint64_t kicks;			/* threads kicked out of enclave mode */
	unsigned nr_enclaves;
};

struct sgxemu_enclave_stats {
	uint64_t resident_pages;	/* child pages in the EPC */
	uint64_t evicted_pages;		/* child pages in backing memory */
	uint64_t va_pages;		/* EPC pages holding its VA slots */
	uint64_t evictions, reloads;	/* since creation */
};

/* 0 or -errno. */
int sgxemu_platform_stats(struct sgxemu_platform_stats *stats);
int sgxemu_enclave_stats(const struct sgxemu_enclave *encl,
			 struct sgxemu_enclave_stats *stats);
/*
 * The statistics as one JSON object (platform, sections, enclaves) on
 * @fd. With SGXEMU_STATS=FILE set ('-' = stderr) the library writes them
 * at exit.
 */
int sgxemu_stats_write_json(int fd);

/* Version string of the library. */
const char *sgxemu_version(void);

#ifdef __cplusplus
}
#endif

#endif /* SGXEMU_SGXEMU_H */
