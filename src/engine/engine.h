/* SPDX-License-Identifier: MIT */
/*
 * The native engine's internals (DESIGN.md, "How an enclave runs").
 *
 *   entry.S    the fast EENTER path, the signal-handler stub, the sigreturn
 *              restorer (the syscall-user-dispatch exempt range), the C
 *              API's entry helper
 *   thread.c   per-thread control blocks on per-thread alternate signal
 *              stacks, syscall user dispatch, FS/GS base helpers
 *   signal.c   the real signal handlers, the application's dispositions,
 *              chaining, and the dispatch of every signal
 *   classify.c what a signal says the thread did (ENCLU, SYSCALL, an
 *              exception, an interrupt), whichever vendor the host is
 *   aex.c      enclave-mode events: EEXIT and the other ENCLU leaves, AEX
 *              for faults and signals, fixups, host ENCLU emulation
 *   enter.c    the C side of the fast path and sgxemu_enter()
 *   map.c      ELRANGE mappings (EPCM AND mapping permissions) and guard
 *              mode
 *   platform.c the process-wide platform object
 *
 * The per-thread control block (TCB) sits at the base of a slot of one
 * big reserved region; the rest of the slot is the thread's alternate
 * signal stack. A handler finds its TCB from its own stack pointer without
 * touching FS (which may still hold the enclave's base), so the first
 * instructions of the stub can restore the host's FS base.
 */
#ifndef SGXEMU_ENGINE_H
#define SGXEMU_ENGINE_H

/* TCB field offsets the assembly uses. */
#define TCB_SELECTOR	0	/* u8: syscall user dispatch selector */
#define TCB_HOST_FS	8
#define TCB_HOST_GS	16
#define TCB_ENC_FS	24
#define TCB_ENC_GS	32
#define TCB_FS_HINT	40
#define TCB_KERN_GS	48
#define TCB_HANDLER_GS	56
#define TCB_RESUME_FRAME 72

#define SLOT_SHIFT	18	/* 256 KiB per thread */
#define SLOT_SIZE	(1 << SLOT_SHIFT)
#define NR_SLOTS	4096	/* threads that may enter at once */

#define SEL_ALLOW	0
#define SEL_BLOCK	1

#ifndef __ASSEMBLER__

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>
#include <ucontext.h>

#include "cpu/cpu.h"
#include "cpu/enclu.h"
#include "sgxemu/sgxemu.h"

/* Everything here is internal to the library; the assembly reaches it
 * RIP-relative, which needs hidden visibility in the shared object. */
#pragma GCC visibility push(hidden)

struct sgxemu_enclave;

/*
 * What the engine asks of whoever manages an enclave's pages (the driver:
 * src/driver/fault.c), as the kernel's fault path asks a VMA's
 * vm_operations. Set by the driver when it creates the enclave; NULL
 * members mean "nothing managed here".
 *
 * fault_enclave: in enclave mode, a #PF at @addr before any AEX: 0 = not
 *   a paging fault; 1 = resolved without an exit (continue); 2 = the page
 *   is paged out: AEX, then call fault() and continue at the AEP; 3 =
 *   stale (another thread brought it back): run the instruction again.
 *   @kerr is the kernel's #PF error code.
 * fault: out of enclave mode, bring the page at @addr back: 0, or -EFAULT
 *   when it cannot be loaded (the access then faults, as SIGBUS).
 * prefault_entry: before EENTER/ERESUME, load the TCS and SSA pages if
 *   paged out; true when something was loaded (retry the entry).
 * hidden: true when the host mapping of page @page is kept inaccessible
 *   (aging, being written back, paged out).
 */
struct sgxemu_encl_ops {
	int  (*fault_enclave)(struct sgxemu_enclave *e, uint64_t addr,
			      uint32_t kerr);
	int  (*fault)(struct sgxemu_enclave *e, uint64_t addr);
	bool (*prefault_entry)(struct sgxemu_enclave *e, uint64_t tcs);
	bool (*hidden)(struct sgxemu_enclave *e, size_t page);
	int  (*host_access)(struct sgxemu_enclave *e, uint64_t addr,
			    ucontext_t *uc);
};
#define SGXEMU_ENCL_OPS_HOST_ACCESS 1

/*
 * map_prot bit set by the driver on a page whose faults its handler
 * refuses: the window grants access bits beyond what the page may ever
 * have (linux-driver-facts §8.1 step 3.2; a page added, or made a TCS,
 * after the window was mapped). The kernel inserts no PTE there and every
 * access the window allows gets SIGBUS; the engine maps the page
 * PROT_NONE and leaves the faults to the driver. mmap and mprotect, which
 * check the existing pages first, set map_prot anew and so clear it.
 */
#define SGXEMU_MAP_REFUSED	0x80
#define SGXEMU_MAP_PROT		(PROT_READ | PROT_WRITE | PROT_EXEC)

/* An RD/WR FS/GS BASE instruction, decoded (fsgsbase.c). */
struct sgxemu_fsgsbase_insn {
	unsigned op;		/* ModRM.reg: 0 RDFS 1 RDGS 2 WRFS 3 WRGS */
	int reg;		/* ucontext REG_* of the operand */
	bool wide;		/* REX.W */
	unsigned len;
};

/* A WRFSBASE/WRGSBASE of enclave code made to trap (fsgs_sites.c). */
struct sgxemu_fsgs_site {
	uint64_t addr;
	struct sgxemu_fsgsbase_insn insn;
	_Atomic uint8_t native;		/* its F3 put back */
	_Atomic uint32_t same;		/* writes of the kernel's base in a row */
};

/* One enclave behind the C API (created by src/driver/encl.c). */
struct sgxemu_enclave {
	uint64_t base, size;
	size_t   npages;
	struct sgx_encl_ctl *ctl;	/* the processor's hidden state */
	long     secs_index;		/* EPC page of the SECS */
	unsigned flags;			/* SGXEMU_CREATE_* */
	uint8_t *map_prot;		/* per page: the mapping's PROT_* */
	/* Per page: what the host mapping at it is (map.c, HOST_*). */
	uint8_t *host_map;
	uint64_t xfrm;
	uint32_t miscselect;
	int      table_slot;		/* index in sgxemu__enclaves */
	size_t   nr_pages;		/* EPC pages (SECS excluded) */
	uint64_t last_index;		/* EPC index of the last page added */
	pthread_mutex_t lock;		/* build operations, mappings */
	struct sgxemu_paging *pg;	/* EPC paging (src/driver/paging.h) */
	const struct sgxemu_encl_ops *ops;	/* the driver's page hooks */
	/* An ADD_PAGES run (encl.c): pages [batch_lo, batch_hi) are added
	 * and measured, their mapping and LRU place wait for the run's end. */
	bool     batch;
	size_t   batch_lo, batch_hi;
	/* TCB slots of the threads in enclave mode here (kick.c). */
	_Atomic uint64_t inside[NR_SLOTS / 64];
	/* Trapping WRFSBASE/WRGSBASE sites, by address once initialized. */
	struct sgxemu_fsgs_site *fsgs;
	size_t   nr_fsgs, cap_fsgs;
};

/* The driver refuses the page at @addr (SGXEMU_MAP_REFUSED). */
static inline bool sgxemu__map_refused(const struct sgxemu_enclave *e,
				       uint64_t addr)
{
	return addr >= e->base && addr - e->base < e->size &&
	       (e->map_prot[(addr - e->base) >> SGX_PAGE_SHIFT] &
		SGXEMU_MAP_REFUSED);
}

/* The enclaves, for lock-free lookup by address (handlers, fast path):
 * encl_table.c; the driver registers what it creates. */
#define MAX_ENCLAVES 256
extern struct sgxemu_enclave *_Atomic sgxemu__enclaves[MAX_ENCLAVES];
struct sgxemu_enclave *sgxemu__encl_find(uint64_t addr);
int sgxemu__encl_register(struct sgxemu_enclave *e);
void sgxemu__encl_unregister(struct sgxemu_enclave *e);

/* What the stub saves and restores around the C handler. */
struct sgxemu_sigsave {
	uint64_t gs, fs, selector;
};

/* The per-thread control block. */
struct sgxemu_tcb {
	uint8_t  selector;		/* TCB_SELECTOR */
	uint8_t  pad0[7];
	uint64_t host_fs;		/* TCB_HOST_FS */
	uint64_t host_gs;		/* TCB_HOST_GS */
	uint64_t enc_fs;		/* TCB_ENC_FS */
	uint64_t enc_gs;		/* TCB_ENC_GS */
	/* Where the kernel does not track RD/WRFSBASE: the FS base enclave
	 * code ran with at its last exit or interruption if it wrote one
	 * itself, else 0; the kernel's copy at the next entry (TCB_FS_HINT,
	 * fsgsbase.c). */
	uint64_t fs_hint;
	/* Untracked FSGSBASE: the GS base the kernel restores at a context
	 * switch (its own copy, set only by arch_prctl), KERN_GS_UNKNOWN
	 * when the program may have changed it (TCB_KERN_GS, entry.S). */
	uint64_t kern_gs;
	/* Without FSGSBASE in the kernel: the GS base live while the
	 * engine's handler runs (TCB_HANDLER_GS). The stub leaves the
	 * enclave's loaded after an interruption in enclave mode, since the
	 * engine's C code does not use GS; the program's handlers get the
	 * host's (sgxemu__handler_gs_host) and the stub writes the base of
	 * the mode it returns to only if it differs. */
	uint64_t handler_gs;
	uint64_t magic;
	/* The fast ERESUME's frame for the rt_sigreturn (TCB_RESUME_FRAME,
	 * resume.c), 0 otherwise. */
	uint64_t resume_frame;
	bool     gs_deferred;		/* this handler left GS so */
	/* What the kernel wrote in this thread's last AEX signal frame and
	 * a frame of the fast ERESUME repeats: uc_flags, the CS/SS word,
	 * and the XSAVE image's software bytes (0 magic: none seen yet). */
	uint64_t frame_uc_flags, frame_csgsfs;
	uint8_t  frame_fpx_sw[48];
	/* The fast path's state for a signal inside its commit window. */
	uint64_t entry_rip, entry_rax, entry_rcx, entry_rsp, entry_rflags;
	/* An AEX went on at a rewritten AEP's trampoline on the slot's AEP
	 * stack (enclu_patch.c): the program's RSP there (URSP), and that
	 * the stack is in use until the ERESUME leaves it. */
	uint64_t aep_ursp;
	bool     aep_stack_busy;
	struct sgx_lp lp;		/* the enclave this thread is in */
	struct sgxemu_enclave *encl;
	bool     in_enclave;
	struct sgxemu_run *api_run;	/* sgxemu_enter() in progress */
	uint64_t aex_count;
	uint64_t debug_refault;		/* debugger.c: fault let run again */
	uint32_t stale_faults;		/* consecutive stale paging faults */
	bool     guard_kept;		/* guard reference kept across an
					 * exit that resumes at once */
	int      slot;
	int      tid;
	/* The program's own alternate signal stack, while the kernel's is
	 * the engine's (sgxemu_sigaltstack). */
	stack_t  app_ss;
	/* Set up without TLS: a thread made by a raw clone() that shares
	 * another thread's FS base (and so its TLS). */
	bool     foreign;
	bool     tick_armed;		/* SGXEMU_AEX_TICK timer (kick.c) */
	bool     tick_paused;		/* stopped by a tick in host mode */
	uint64_t tick_paused_at;	/* ... at this thread CPU time (ns) */
	uint64_t tick_left;		/* ... this long before its next expiry */
	timer_t  tick;
	/* The host's values of the XSAVE features XCR0 has and the
	 * enclave's XFRM lacks, kept while in enclave mode (xstate.c):
	 * which features, which of them were not in their initial
	 * configuration, and their image (standard format, in the slot). */
	uint64_t xstash_mask, xstash_bv;
	uint8_t *xstash;
};

/* The stash's size: 3 pages after the TCB's, enough for AMX (11 KiB). */
#define SGXEMU_XSTASH_SIZE	(3 * 4096)

/* xstate.c: enclave-mode XSAVE state beyond XFRM. */
void sgxemu__xstate_init(void);
/* A signal frame's XSAVE image (standard format), its size and (when
 * @features is not NULL) the features it holds; NULL with no such image
 * (none, or FXSAVE only). */
uint8_t *sgxemu__xsave_frame(ucontext_t *uc, uint32_t *size,
			     uint64_t *features);
/* An entry through a signal frame (@uc's image is what the kernel
 * restores) / the fast path (live registers); an exit (frame). */
void sgxemu__xstate_enter_frame(struct sgxemu_tcb *tcb, ucontext_t *uc,
				uint64_t xfrm);
void sgxemu__xstate_enter_live(struct sgxemu_tcb *tcb, uint64_t xfrm);
void sgxemu__xstate_exit_frame(struct sgxemu_tcb *tcb, ucontext_t *uc);

#define TCB_MAGIC 0x42435475656d7867ULL	/* "gxmeuTCB" */

/* Globals the stub reads RIP-relative (no FS needed). */
extern uintptr_t sgxemu__alt_base, sgxemu__alt_len;
extern uint8_t sgxemu__have_fsgsbase;
/* The platform offers FSGSBASE the host kernel does not (fsgsbase.c). */
extern bool sgxemu__fsgsbase_emulated;
/* RD/WR{FS,GS}BASE execute in user mode without kernel support: the stub
 * reads the live bases (fsgsbase.c). */
extern uint8_t sgxemu__fsgsbase_unmanaged;
bool sgxemu__fsgsbase_probe_unmanaged(void);
/* probe.c: @try run in a forked child; its exit status (0 when it
 * returned, SGXEMU_PROBE_FAULTED when it raised SIGILL or SIGSEGV, or
 * one of its own), or -1. */
#define SGXEMU_PROBE_FAULTED	3
int sgxemu__probe_child(void (*try)(void));
/* Never a user address, so never equal to a base. */
#define KERN_GS_UNKNOWN	(~0ULL)
/* The program's GS base, from the one live in host mode (fsgsbase.c). */
uint64_t sgxemu__host_gs(struct sgxemu_tcb *tcb, uint64_t live);
void sgxemu__handler_gs_host(struct sgxemu_tcb *tcb);

/* entry.S */
void sgxemu__sig_entry(int, siginfo_t *, void *);
extern char sgxemu__restorer[], sgxemu__restorer_end[];
extern char sgxemu__commit_start[], sgxemu__commit_end[];
/* The fast path's arch_prctl switch to the enclave's bases (no FSGSBASE):
 * still host mode, but with the enclave's GS from its first system call. */
extern char sgxemu__switch_start[];
/* Untracked FSGSBASE: the GS switch the fast path calls from that window
 * (and the stub, with signals blocked). */
extern char sgxemu__gs_set[], sgxemu__gs_set_end[];
extern char sgxemu__enclu_trap[];
extern char sgxemu__api_aep[], sgxemu__api_eexit[], sgxemu__api_fixup[];
void sgxemu__api_enter(struct sgxemu_run *run);

/* enter.c */
struct sgxemu_tcb *sgxemu__enter_fast(uint64_t *frame, uint64_t tcs);

/*
 * resume.c: ERESUME from the fast path, without a trap. @regs holds the
 * caller's registers at the ENCLU in ucontext order (REG_RAX... as a trap
 * frame would), @next the return point, @rsp the caller's RSP. NULL: the
 * trap path's turn (nothing changed).
 */
struct sgxemu_tcb *sgxemu__resume_fast(struct sgxemu_tcb *tcb,
				       struct sgxemu_enclave *e,
				       const greg_t *regs, uint64_t next,
				       uint64_t rsp);
/* Record what the kernel's signal frame @uc holds that a built one must
 * repeat (at each AEX). */
void sgxemu__resume_learn(struct sgxemu_tcb *tcb, const ucontext_t *uc);

/* thread.c */
struct sgxemu_tcb *sgxemu__tcb_self(void);
/* The errno value of this thread's last failed set-up (ENOMEM, EPERM). */
int sgxemu__tcb_errno(void);
struct sgxemu_tcb *sgxemu__tcb_prepare(void);
/* This thread's TCB without trusting TLS (whose FS base a raw clone()
 * may share with another thread): from the stack pointer when on a slot,
 * else TLS checked against the thread id. NULL if not set up. */
struct sgxemu_tcb *sgxemu__tcb_current(void);
/* This thread's TCB by its alternate stack (raw clone() threads too). */
struct sgxemu_tcb *sgxemu__tcb_by_altstack(void);
/* True when TLS names a TCB that is not this thread's (a raw clone()
 * without CLONE_SETTLS). */
bool sgxemu__tcb_foreign(void);
/* The kernel's id of this thread: from its TCB when running on its slot
 * (the handlers, where the paging lock is taken per fault), else gettid. */
int sgxemu__thread_tid(void);
/* Learn this thread's id and stack (thread.c), so that on that stack
 * sgxemu__thread_tid needs no system call and sgxemu__thread_on_own_stack
 * says TLS is this thread's. @owner: the caller knows TLS is its own (it
 * then tries only once). It allocates: never from a handler. */
void sgxemu__thread_learn(bool owner);
bool sgxemu__thread_on_own_stack(uintptr_t sp);
/* In a fork child: the surviving thread's TCB gets its new id. */
void sgxemu__thread_fork_child(void);
/* Set such a thread up: slot, alternate stack, syscall user dispatch, but
 * no TLS (it is someone else's). Handlers find it from their stack. */
struct sgxemu_tcb *sgxemu__tcb_prepare_foreign(void);
/* Keep the engine's alternate stack across the current handler's
 * rt_sigreturn (after a set-up inside it). */
void sgxemu__sigreturn_altstack(ucontext_t *uc);
/* Let the rt_sigreturn through @uc keep signal frames below host frames
 * that stay live at and above @live_sp on the alternate stack (thread.c). */
void sgxemu__altstack_fit(struct sgxemu_tcb *tcb, ucontext_t *uc,
			  uint64_t live_sp);
/* True when @sp is on @tcb's alternate stack (thread.c). */
bool sgxemu__on_altstack(const struct sgxemu_tcb *tcb, uint64_t sp);
bool sgxemu__altstack_fit_live(struct sgxemu_tcb *tcb, uint64_t live_sp);
/* The alternate stack sgxemu__altstack_fit wants with @live_sp live, in
 * @ss; false where there is no room for one. */
bool sgxemu__altstack_for(struct sgxemu_tcb *tcb, uint64_t live_sp,
			  stack_t *ss);
/* The TCB whose alternate stack @sp is on (the thread running there). */
struct sgxemu_tcb *sgxemu__tcb_of_altstack(uint64_t sp);
/* The top of @tcb's AEP stack (enclu_patch.c, thread.c). */
uint64_t sgxemu__aep_stack_top(const struct sgxemu_tcb *tcb);
/* The TCB whose AEP stack, in use, has its top at @sp; else NULL. */
struct sgxemu_tcb *sgxemu__aep_stack_owner(uint64_t sp);
uint64_t sgxemu__rdfsbase(void);
uint64_t sgxemu__rdgsbase(void);
int sgxemu__thread_init_global(void);

/*
 * trap_count.c: the engine's traps and the signals its handler takes, for
 * benchmarks and tests. One 128-byte line of counters per TCB slot (line
 * 1 + slot; line 0 for threads without one), so that threads do not share
 * a cache line; a reader adds the lines up (sgxemu__count_total).
 */
enum sgxemu_count {
	SGXEMU_C_HOST_ENCLU,	/* host ENCLU[EENTER/ERESUME] traps */
	SGXEMU_C_ENCLAVE_ENCLU,	/* ENCLU traps in enclave mode */
	SGXEMU_C_AEX,
	SGXEMU_C_FAST_EENTER,	/* host EENTERs without a trap */
	SGXEMU_C_SIGILL,	/* signals the engine's handler took */
	SGXEMU_C_SIGSEGV,
	SGXEMU_C_SIGSYS,
	SGXEMU_C_SIG_OTHER,	/* any other signal */
	SGXEMU_C_TICK_HOST,	/* AEX ticks that found host mode (each
				 * pauses the timer, kick.c) */
	SGXEMU_C_TICK_AEX,	/* AEX ticks that made an AEX */
	SGXEMU_C_FSGS_SITE,	/* WRFS/GSBASE done at a trapping site */
	SGXEMU_C_FAST_ERESUME,	/* host ERESUMEs without a trap */
	SGXEMU_NR_COUNTS
};
#define SGXEMU_COUNT_SLOTS	16	/* counters per line, the rest spare */
struct sgxemu_count_line {
	_Atomic uint64_t c[SGXEMU_COUNT_SLOTS];
} __attribute__((aligned(64)));
_Static_assert(SGXEMU_NR_COUNTS <= SGXEMU_COUNT_SLOTS, "counters fit");
_Static_assert(sizeof(struct sgxemu_count_line) == 128, "two cache lines");
#define SGXEMU_COUNT_LINES	(1 + NR_SLOTS)
extern struct sgxemu_count_line *sgxemu__counts;
void sgxemu__traps_init(void);
/* One counter added up over every thread's line. */
uint64_t sgxemu__count_total(enum sgxemu_count idx);
/* The signal's counter (SIGILL, SIGSEGV, SIGSYS or other). */
enum sgxemu_count sgxemu__count_of_signal(int signo);
#define SGXEMU_COUNT(tcb, idx)						\
	atomic_fetch_add_explicit(						\
		&sgxemu__counts[(tcb) ? 1 + (tcb)->slot : 0].c[idx], 1,	\
		memory_order_relaxed)

/* enclu_patch.c: host ENCLU[EENTER] sites rewritten to the fast entry. */
void sgxemu__enclu_patch_init(void);
void sgxemu__enclu_patch(uintptr_t enclu);
/* The same for an ERESUME site: a copy of the AEP's instructions up to
 * @enclu, which an AEX runs on the engine's AEP stack; the program's code
 * stays as it is. */
void sgxemu__enclu_patch_resume(uintptr_t enclu, uintptr_t aep);
/* That copy for @aep, or 0. */
uintptr_t sgxemu__aep_trampoline(uintptr_t aep);
bool sgxemu__enclu_patched_any(void);
/* Where a fault of the fast entry's ENCLU is seen: at the program's own
 * ENCLU when @next follows a rewritten site (as without the rewrite),
 * else at @aep (the vDSO convention). */
uint64_t sgxemu__enclu_fault_rip(uint64_t next, uint64_t aep);
/* The platform's own threads in this process (the reclaimer, reclaim.c;
 * the platform-event server, driver/power.c), which never run program
 * code. */
int sgxemu__platform_threads(void);

/* platform.c */
size_t sgxemu__parse_size(const char *s);
/* A 0/1 switch from the environment: unset or empty is @dflt, "0" off,
 * anything else on. */
int sgxemu__env_flag(const char *name, int dflt);
struct sgxemu_platform {
	struct sgx_cpu cpu;
	bool guard;
	bool host_enclu;
	bool debug;		/* SGXEMU_DEBUG: refused entries, AEXs */
	bool ready;
	uint64_t aex_tick_ns;	/* SGXEMU_AEX_TICK: timer interrupts, 0 off */
};
extern struct sgxemu_platform sgxemu__platform;
static inline struct sgx_cpu *sgxemu__cpu(void)
{
	return &sgxemu__platform.cpu;
}

/* The kernel's struct sigaction for the raw rt_sigaction system call:
 * the engine installs its handlers with its own restorer. */
struct kernel_sigaction {
	void *handler;
	unsigned long flags;
	void *restorer;
	uint64_t mask;
};

#ifndef SA_RESTORER
#define SA_RESTORER 0x04000000
#endif

/* signal.c */
int sgxemu__signals_init(void);
void sgxemu__signal(int signo, siginfo_t *info, ucontext_t *uc,
		    struct sgxemu_tcb *tcb, struct sgxemu_sigsave *save);
void sgxemu__signal_plain(int signo, siginfo_t *info, void *uc);
/* Run the application's handler for @signo in host context. */
void sgxemu__chain(int signo, siginfo_t *info, ucontext_t *uc, bool fault);
/* Signals never left blocked in the real mask (signal.c). */
uint64_t sgxemu__engine_sigs(void);
void sgxemu__write_str(const char *s);
void sgxemu__write_hex(uint64_t v);

/*
 * classify.c: what a signal says the thread did, independent of which
 * signal the host's vendor uses for it (DESIGN.md, "How an enclave runs").
 */
enum sgxemu_event_kind {
	SGXEMU_EV_INTERRUPT,	/* asynchronous: a signal, the kick */
	SGXEMU_EV_ENCLU,	/* ENCLU executed (any fault at 0f 01 d7) */
	SGXEMU_EV_SYSCALL,	/* SYSCALL trapped by user dispatch: #UD */
	SGXEMU_EV_CPUID,	/* enclave-mode CPUID stopped by CPUID faulting
				 * (vector: the #UD hardware raises) */
	SGXEMU_EV_EXCEPTION,	/* any other synchronous fault */
};

struct sgxemu_event {
	enum sgxemu_event_kind kind;
	unsigned vector;	/* X86_TRAP_*, as hardware would report it */
	uint32_t errcd;		/* the kernel's error code (#GP, #PF, ...) */
	uint64_t addr;		/* si_addr (the #PF address) */
	uint64_t rip;		/* the faulting instruction */
};

/* A fault-safe reader of @n bytes at @addr: false if unreadable. */
typedef bool (*sgxemu_read_fn)(void *ctx, uint64_t addr, uint8_t *buf,
			       size_t n);

bool sgxemu__host_read(void *ctx, uint64_t addr, uint8_t *buf, size_t n);
/* The same for an instruction the trap proves fetched (a #UD or #GP at
 * @addr): a page read safely before is read directly (classify.c). */
bool sgxemu__host_read_fetched(void *ctx, uint64_t addr, uint8_t *buf,
			       size_t n);
void sgxemu__classify(int signo, const siginfo_t *info, const ucontext_t *uc,
		      bool enclave_mode, sgxemu_read_fn read, void *ctx,
		      struct sgxemu_event *ev);

/* SGXEMU_FAULT_STYLE: deliver ENCLU faults as the other vendor does. */
enum sgxemu_fault_style {
	SGXEMU_STYLE_NATIVE,	/* as this host's kernel delivered them */
	SGXEMU_STYLE_UD,	/* #UD, SIGILL: AMD */
	SGXEMU_STYLE_GP,	/* #GP, or #PF for host EENTER/ERESUME: Intel */
};
extern enum sgxemu_fault_style sgxemu__fault_style;
void sgxemu__fault_style_init(void);
int sgxemu__fault_style_apply(int signo, siginfo_t *info, ucontext_t *uc,
			      bool enclave_mode, sgxemu_read_fn read,
			      void *ctx);

/* tsc.c: RDTSC/RDTSCP #UD in enclave mode on an SGX1 platform. */
extern bool sgxemu__tsc_trapped;
void sgxemu__tsc_init(bool sgx2);
void sgxemu__tsc_enter(void);
void sgxemu__tsc_leave(void);
int sgxemu__tsc_insn_len(const uint8_t *b, size_t n);
bool sgxemu__tsc_is_trap(int signo, const siginfo_t *info,
			 const uint8_t *b, size_t n);
size_t sgxemu__tsc_read(sgxemu_read_fn read, void *ctx, uint64_t rip,
			uint8_t b[3]);
/* A host-mode RDTSC/RDTSCP trapped only because the thread is between
 * an entry's TSC switch and its commit: carried out, true. */
bool sgxemu__tsc_emulate_host(int signo, siginfo_t *info, ucontext_t *uc);

/* aex.c */
/* Handle a signal that arrived in enclave mode (save->selector BLOCK). */
void sgxemu__enclave_signal(int signo, siginfo_t *info, ucontext_t *uc,
			    struct sgxemu_tcb *tcb,
			    struct sgxemu_sigsave *save);
/* Host-mode ENCLU (@ev classified as SGXEMU_EV_ENCLU): true if emulated
 * or reported. @tcb/@save are NULL on a thread never set up. */
bool sgxemu__host_enclu(const struct sgxemu_event *ev, siginfo_t *info,
			ucontext_t *uc, struct sgxemu_tcb *tcb,
			struct sgxemu_sigsave *save);
/* After a successful EENTER/ERESUME of @e (in tcb->lp): enclave mode in
 * @uc and @save, for the caller's RSP @rsp and return point @next. */
void sgxemu__entry_commit(struct sgxemu_tcb *tcb, struct sgxemu_enclave *e,
			  ucontext_t *uc, struct sgxemu_sigsave *save,
			  uint32_t leaf, uint64_t next, uint64_t rsp);
struct sgxemu_fixup_entry {
	_Atomic uintptr_t aep;
	uintptr_t fixup;
	unsigned flags;
};
uintptr_t sgxemu__fixup_find(uintptr_t aep, unsigned vector);
/* Guard mode at an entry (EENTER/ERESUME) of @tcb's thread. */
void sgxemu__guard_entry(struct sgxemu_tcb *tcb);

/*
 * fsgsbase.c: RD/WR{FS,GS}BASE on a host whose kernel left them off
 * (sgxemu__fsgsbase_emulated). decode: 0 and @insn filled for one of the
 * four at @b; emulate: 0 done (RIP advanced, *fs / *gs read or written),
 * 1 #GP(0) (non-canonical write), -1 not one of them.
 */
int sgxemu__fsgsbase_decode(const uint8_t *b, size_t n,
			    struct sgxemu_fsgsbase_insn *insn);
int sgxemu__fsgsbase_emulate(ucontext_t *uc, sgxemu_read_fn read, void *ctx,
			     uint64_t *fs, uint64_t *gs);
/*
 * fsgs_sites.c: where FSGSBASE runs untracked (or SGXEMU_FSGS_SITES=1),
 * the WRFSBASE/WRGSBASE of each executable page added trap, and their #UD
 * is the write with the kernel's copy of the base kept: a page's sites
 * (@prev: the page before it, or NULL), the table sorted at EINIT, the
 * #UD of a site (-1 not one, 0 done, 1 #GP).
 */
bool sgxemu__fsgs_sites_on(void);
int sgxemu__fsgs_scan_page(struct sgxemu_enclave *e, uint64_t linaddr,
			   uint8_t *page, const uint8_t *prev);
void sgxemu__fsgs_seal(struct sgxemu_enclave *e);
void sgxemu__fsgs_free(struct sgxemu_enclave *e);
int sgxemu__fsgs_emulate(struct sgxemu_tcb *tcb, struct sgxemu_enclave *e,
			 ucontext_t *uc, struct sgxemu_sigsave *save);
/*
 * xsave_replay.c: an enclave's XSAVE/XSAVEC/XSAVEOPT/XRSTOR at @rip whose
 * #PF comes only from the host's XCR0 reaching past an XFRM-sized image,
 * done with XFRM's reach: 0 done (RIP past it), 1 the #GP(0) hardware
 * raises, -1 the fault is the enclave's own.
 */
int sgxemu__xsave_replay(struct sgxemu_tcb *tcb, ucontext_t *uc,
			 const struct sgxemu_sigsave *save, uint64_t rip);
/* The decoded instruction on @uc: 0, or 1 for the #GP of a write. */
int sgxemu__fsgsbase_apply(ucontext_t *uc,
			   const struct sgxemu_fsgsbase_insn *insn,
			   uint64_t *fs, uint64_t *gs);

/* debugger.c: the page a debugger finds this process's processor by, and
 * the functions sgxemu.gdb breaks on (sgxemu.gdb.in). */
void sgxemu__debug_publish(struct sgx_cpu *cpu);
void sgxemu_debug_ready(void);
void sgxemu_debug_fatal(int signo);
/* The signals sgxemu.gdb lets pass silently, so that it learns through
 * sgxemu_debug_signal/_fatal that the program gets one. */
static inline bool sgxemu__debugger_sig(int signo)
{
	return signo == SIGILL || signo == SIGSEGV || signo == SIGBUS ||
	       signo == SIGSYS;
}
/* @addr is code of this library (the shim's own handlers, which chain to
 * the program's and report it themselves). */
bool sgxemu__debug_own_code(uintptr_t addr);
/* An enclave exception that a debugger should see at the faulting
 * instruction first: true when the handler is to return without the AEX,
 * so that the instruction faults again under the debugger (debugger.c). */
bool sgxemu__debug_refault(struct sgxemu_tcb *tcb, int signo,
			   const siginfo_t *info, const ucontext_t *uc,
			   unsigned vector, uint64_t fault_rip);
void sgxemu_debug_refault(int signo);
extern volatile int sgxemu_debugger;
void sgxemu_debug_signal(int signo, siginfo_t *info, void *ucontext);

/* map.c */
/* e->host_map: not known (a mapping of the program's), an anonymous
 * PROT_NONE page of the engine's, the page's own EPC page. */
enum { HOST_UNKNOWN, HOST_NONE, HOST_EPC };
/* True when the host mapping at @page is the engine's PROT_NONE
 * placeholder, which a page that stays inaccessible can keep (EAUG). */
bool sgxemu__map_is_placeholder(struct sgxemu_enclave *e, size_t page);
/* Apply the effective protections of pages [first, first+n): @remap
 * re-creates the mappings (after EADD / EREMOVE), else mprotect (which
 * becomes a remap where a page would open on a placeholder). */
int sgxemu__map_pages(struct sgxemu_enclave *e, size_t first, size_t n,
		      bool remap);
int sgxemu__epcm_prot(struct sgxemu_enclave *e, size_t page);
void sgxemu__guard_enter(void);
void sgxemu__guard_exit(void);
bool sgxemu__guard_closed(void);
void sgxemu__guard_init(bool on);

/* kick.c: the record of threads in enclave mode per enclave, and the
 * kick (SGXEMU_KICK_SIGNAL) that makes them AEX, as the kernel's IPI. */
void sgxemu__kick_enter(struct sgxemu_tcb *tcb, struct sgxemu_enclave *e);
void sgxemu__kick_leave(struct sgxemu_tcb *tcb);
/*
 * The timer interrupt (SGXEMU_AEX_TICK, on by default): a thread-CPU-time
 * timer per thread that kicks it every tick, so enclave code sees the
 * AEXs a hardware timer tick causes. Started at thread set-up, paused by
 * a tick that lands in host mode and resumed at the next entry, stopped
 * at exit.
 */
void sgxemu__tick_start(struct sgxemu_tcb *tcb);
void sgxemu__tick_pause(struct sgxemu_tcb *tcb);
void sgxemu__tick_resume(struct sgxemu_tcb *tcb);
void sgxemu__tick_stop(struct sgxemu_tcb *tcb);
/* The default: a kernel with HZ=250 ticks every 4 ms. */
#define SGXEMU_AEX_TICK_DEFAULT_NS	4000000ULL
int sgxemu__parse_tick(const char *v, uint64_t *ns);
int sgxemu__kick(struct sgxemu_enclave *e);
struct sgxemu_tcb *sgxemu__tcb_of_slot(int slot);

/* The driver's hooks (struct sgxemu_encl_ops), or what holds without. */
static inline int sgxemu__encl_fault_enclave(struct sgxemu_enclave *e,
					     uint64_t addr, uint32_t kerr)
{
	return e && e->ops && e->ops->fault_enclave ?
	       e->ops->fault_enclave(e, addr, kerr) : 0;
}

static inline int sgxemu__encl_fault(struct sgxemu_enclave *e, uint64_t addr)
{
	return e && e->ops && e->ops->fault ? e->ops->fault(e, addr) : -EFAULT;
}

static inline bool sgxemu__encl_prefault_entry(struct sgxemu_enclave *e,
					       uint64_t tcs)
{
	return e && e->ops && e->ops->prefault_entry &&
	       e->ops->prefault_entry(e, tcs);
}

static inline bool sgxemu__encl_hidden(struct sgxemu_enclave *e, size_t page)
{
	return e && e->ops && e->ops->hidden && e->ops->hidden(e, page);
}

#pragma GCC visibility pop
#endif /* __ASSEMBLER__ */
#endif /* SGXEMU_ENGINE_H */
