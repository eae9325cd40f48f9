/* SPDX-License-Identifier: MIT */
/*
 * Per-thread control blocks, alternate signal stacks, syscall user
 * dispatch and FS/GS base access.
 *
 * One region of NR_SLOTS slots is reserved (PROT_NONE) at start-up. A
 * thread that is about to enter an enclave takes a slot: its first page is
 * the TCB, then the XSAVE stash (xstate.c), a guard page, the AEP stack
 * (below), another guard page, and the rest the alternate signal stack.
 * The signal stub finds the TCB by rounding its stack pointer down to the
 * slot, which needs neither FS nor a lock.
 */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <asm/prctl.h>

#include "engine/engine.h"

#ifndef AT_MINSIGSTKSZ
#define AT_MINSIGSTKSZ 51
#endif
#ifndef SS_AUTODISARM
#define SS_AUTODISARM (1U << 31)
#endif
#define MIN_ALTSTACK 2048	/* the kernel's MINSIGSTKSZ check */

#ifndef PR_SET_SYSCALL_USER_DISPATCH
#define PR_SET_SYSCALL_USER_DISPATCH	59
#define PR_SYS_DISPATCH_OFF		0
#define PR_SYS_DISPATCH_ON		1
#endif

_Static_assert(offsetof(struct sgxemu_tcb, selector) == TCB_SELECTOR, "tcb");
_Static_assert(offsetof(struct sgxemu_tcb, host_fs) == TCB_HOST_FS, "tcb");
_Static_assert(offsetof(struct sgxemu_tcb, host_gs) == TCB_HOST_GS, "tcb");
_Static_assert(offsetof(struct sgxemu_tcb, enc_fs) == TCB_ENC_FS, "tcb");
_Static_assert(offsetof(struct sgxemu_tcb, enc_gs) == TCB_ENC_GS, "tcb");
_Static_assert(offsetof(struct sgxemu_tcb, fs_hint) == TCB_FS_HINT, "tcb");
_Static_assert(offsetof(struct sgxemu_tcb, kern_gs) == TCB_KERN_GS, "tcb");
_Static_assert(offsetof(struct sgxemu_tcb, resume_frame) == TCB_RESUME_FRAME,
	       "tcb");
_Static_assert(offsetof(struct sgxemu_tcb, handler_gs) == TCB_HANDLER_GS, "tcb");
_Static_assert(sizeof(struct sgxemu_tcb) <= 4096, "tcb fits its page");

uintptr_t sgxemu__alt_base, sgxemu__alt_len;
uint8_t sgxemu__have_fsgsbase;
bool sgxemu__fsgsbase_emulated;
uint8_t sgxemu__fsgsbase_unmanaged;

static _Atomic uint64_t slot_bits[NR_SLOTS / 64];
/* The thread ids of slots set up for threads without a TLS of their own
 * (raw clone()), 0 elsewhere: set once the slot is complete. */
static _Atomic int foreign_tid[NR_SLOTS];
static _Atomic unsigned foreign_setups;
static pthread_key_t tcb_key;
static bool have_sud = true;
static __thread struct sgxemu_tcb *tls_tcb
	__attribute__((tls_model("initial-exec")));

/*
 * The AEP stack: where an AEX that goes on at a rewritten AEP runs its
 * copy of the AEP's instructions and the fast ERESUME (enclu_patch.c).
 * Not the program's stack below URSP, which the program may be using
 * (Gramine's enclave keeps an OCALL's arguments there), nor the
 * alternate stack, whose frames may be live. Outside the alternate
 * stack's range, so that a signal there is delivered at its top.
 */
#define AEP_OFFSET	(4096 + SGXEMU_XSTASH_SIZE + 4096)
#define AEP_STACK_SIZE	(16 * 1024)
/* TCB page, the XSAVE stash, a guard page, the AEP stack, a guard page. */
#define ALT_OFFSET	(AEP_OFFSET + AEP_STACK_SIZE + 4096)


/* The engine's own changes go to the kernel directly, never through an
 * interposed sigaltstack() (the shim's). */
static int raw_sigaltstack(const stack_t *ss, stack_t *old)
{
	return syscall(SYS_sigaltstack, ss, old) ? -errno : 0;
}

/*
 * The host's FS base. Without FSGSBASE it is read from %fs:0: the x86-64
 * psABI's thread control block starts with a pointer to itself (glibc,
 * musl), which saves a system call per entry. Only ever called with the
 * host's FS loaded.
 */
uint64_t sgxemu__rdfsbase(void)
{
	uint64_t v = 0;

	if (sgxemu__have_fsgsbase)
		__asm__ volatile("rdfsbase %0" : "=r"(v));
	else
		__asm__ volatile("mov %%fs:0, %0" : "=r"(v));
	return v;
}

uint64_t sgxemu__rdgsbase(void)
{
	uint64_t v = 0;

	if (sgxemu__have_fsgsbase || sgxemu__fsgsbase_unmanaged)
		__asm__ volatile("rdgsbase %0" : "=r"(v));
	else
		syscall(SYS_arch_prctl, ARCH_GET_GS, &v);
	return v;
}

static void slot_free(int slot)
{
	atomic_fetch_and(&slot_bits[slot / 64], ~(1ULL << (slot % 64)));
}

/*
 * Slots of threads made by a raw clone() that have exited. Such a thread
 * has no TLS of its own, so no key destructor gives its slot back as
 * tcb_destroy does for the others; a runtime that makes and ends such
 * threads for as long as it runs (Gramine's loader) would use up the
 * NR_SLOTS. A slot is taken back once the kernel no longer knows its
 * thread (tgkill with signal 0: ESRCH), unless it is marked in enclave
 * mode (no thread ends there). A reused thread id only keeps a slot a
 * while longer. Lock-free and system calls only: it runs where
 * tcb_setup does, possibly in a signal handler.
 */
static void reap_foreign(void)
{
	pid_t pid = getpid();
	int saved = errno;

	for (int n = 0; n < NR_SLOTS; n++) {
		int tid = atomic_load(&foreign_tid[n]);
		struct sgxemu_tcb *tcb;
		uint8_t *slot;

		if (!tid || syscall(SYS_tgkill, pid, tid, 0) == 0 ||
		    errno != ESRCH)
			continue;
		slot = (uint8_t *)sgxemu__alt_base + (size_t)n * SLOT_SIZE;
		tcb = (struct sgxemu_tcb *)slot;
		if (tcb->in_enclave ||
		    !atomic_compare_exchange_strong(&foreign_tid[n], &tid, 0))
			continue;
		sgxemu__tick_stop(tcb);
		tcb->magic = 0;
		madvise(slot, SLOT_SIZE, MADV_DONTNEED);
		mprotect(slot, SLOT_SIZE, PROT_NONE);
		slot_free(n);
	}
	errno = saved;
}

static int slot_alloc(void)
{
	for (int w = 0; w < NR_SLOTS / 64; w++) {
		uint64_t v = atomic_load(&slot_bits[w]);

		while (~v) {
			int b = __builtin_ctzll(~v);

			if (atomic_compare_exchange_weak(&slot_bits[w], &v,
							 v | (1ULL << b)))
				return w * 64 + b;
		}
	}
	return -1;
}

/* Thread exit: give the slot back once nothing can run on it. */
static void tcb_destroy(void *p)
{
	struct sgxemu_tcb *tcb = p;
	stack_t ss = { .ss_flags = SS_DISABLE };
	uint8_t *slot = (uint8_t *)tcb;
	int n;

	if (!tcb || tcb->magic != TCB_MAGIC)
		return;
	n = tcb->slot;
	sgxemu__tick_stop(tcb);
	if (have_sud)
		prctl(PR_SET_SYSCALL_USER_DISPATCH, PR_SYS_DISPATCH_OFF, 0, 0, 0);
	if (raw_sigaltstack(&ss, NULL))
		return;		/* still on it: keep the slot */
	tls_tcb = NULL;
	tcb->magic = 0;
	madvise(slot, SLOT_SIZE, MADV_DONTNEED);
	mprotect(slot, SLOT_SIZE, PROT_NONE);
	slot_free(n);
}

int sgxemu__thread_init_global(void)
{
	size_t len = (size_t)NR_SLOTS * SLOT_SIZE;
	uint8_t *p;
	uintptr_t base;

	/*
	 * Every handler of the engine, and the program's handlers it calls,
	 * run on the slot's alternate stack: it must hold the largest signal
	 * frame this CPU's XSAVE features give (AT_MINSIGSTKSZ: about 3 KiB
	 * with AVX-512, 11 KiB with AMX) many times over.
	 */
	if (getauxval(AT_MINSIGSTKSZ) * 16 > SLOT_SIZE - ALT_OFFSET) {
		sgxemu__write_str("sgxemu: this CPU's signal frames are too "
				  "large for the engine's signal stacks\n");
		return -ENOMEM;
	}
	sgxemu__have_fsgsbase = (getauxval(AT_HWCAP2) & 2) != 0;
	/* For testing the arch_prctl path on machines that have FSGSBASE. */
	if (getenv("SGXEMU_NO_FSGSBASE"))
		sgxemu__have_fsgsbase = 0;
	sgxemu__fsgsbase_emulated = sgxemu_fsgsbase_emulated();
	if (!sgxemu__have_fsgsbase && !getenv("SGXEMU_NO_FSGSBASE"))
		sgxemu__fsgsbase_unmanaged = sgxemu__fsgsbase_probe_unmanaged();
	p = mmap(NULL, len + SLOT_SIZE, PROT_NONE,
		 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (p == MAP_FAILED)
		return -errno;
	base = ((uintptr_t)p + SLOT_SIZE - 1) & ~(uintptr_t)(SLOT_SIZE - 1);
	if (pthread_key_create(&tcb_key, tcb_destroy)) {
		munmap(p, len + SLOT_SIZE);
		return -EAGAIN;
	}
	sgxemu__alt_len = len;
	__atomic_store_n(&sgxemu__alt_base, base, __ATOMIC_RELEASE);
	return 0;
}

struct sgxemu_tcb *sgxemu__tcb_self(void)
{
	return tls_tcb;
}

/* Why this thread's last tcb_setup failed (an errno value). */
static __thread int tcb_errno;

/*
 * Set this thread up for enclave mode. Safe in the SIGILL handler of a
 * thread that executes a host ENCLU before any other entry: it only
 * makes system calls and lock-free updates. @foreign: TLS belongs to
 * another thread, so nothing is stored there.
 */
static struct sgxemu_tcb *tcb_setup(bool foreign)
{
	struct sgxemu_tcb *tcb;
	stack_t ss;
	uint8_t *slot;
	int n, err;

	tcb_errno = ENOMEM;

	if (!sgxemu__alt_base)
		return NULL;
	if (foreign && atomic_fetch_add(&foreign_setups, 1) % 64 == 63)
		reap_foreign();
	n = slot_alloc();
	if (n < 0 && foreign) {
		reap_foreign();
		n = slot_alloc();
	}
	if (n < 0)
		return NULL;
	slot = (uint8_t *)sgxemu__alt_base + (size_t)n * SLOT_SIZE;
	if (mprotect(slot, 4096 + SGXEMU_XSTASH_SIZE, PROT_READ | PROT_WRITE) ||
	    mprotect(slot + AEP_OFFSET, AEP_STACK_SIZE,
		     PROT_READ | PROT_WRITE) ||
	    mprotect(slot + ALT_OFFSET, SLOT_SIZE - ALT_OFFSET,
		     PROT_READ | PROT_WRITE)) {
		slot_free(n);
		return NULL;
	}
	tcb = (struct sgxemu_tcb *)slot;
	memset(tcb, 0, sizeof(*tcb));
	tcb->magic = TCB_MAGIC;
	tcb->slot = n;
	tcb->tid = (int)syscall(SYS_gettid);
	tcb->foreign = foreign;
	tcb->host_fs = sgxemu__rdfsbase();
	tcb->host_gs = sgxemu__rdgsbase();
	tcb->kern_gs = KERN_GS_UNKNOWN;
	tcb->xstash = slot + 4096;
	ss.ss_sp = slot + ALT_OFFSET;
	ss.ss_size = SLOT_SIZE - ALT_OFFSET;
	ss.ss_flags = 0;
	/* The program's stack, if it had one, is what it reads from now on
	 * (sgxemu_sigaltstack). */
	err = raw_sigaltstack(&ss, &tcb->app_ss);
	if (err) {
		/* EPERM: the thread runs on an alternate stack already. */
		if (err == -EPERM)
			sgxemu__write_str("sgxemu: a thread's first enclave "
					  "entry came from a signal handler on "
					  "another alternate stack, which the "
					  "kernel will not switch (EPERM)\n");
		tcb_errno = -err;
		goto fail;
	}
	tcb->app_ss.ss_flags &= ~SS_ONSTACK;
	if (have_sud &&
	    prctl(PR_SET_SYSCALL_USER_DISPATCH, PR_SYS_DISPATCH_ON,
		  (unsigned long)sgxemu__restorer,
		  (unsigned long)(sgxemu__restorer_end - sgxemu__restorer) + 1,
		  (unsigned long)&tcb->selector)) {
		/* No syscall user dispatch here: SYSCALL in an enclave is
		 * then not caught (reported once). */
		have_sud = false;
		sgxemu__write_str("sgxemu: syscall user dispatch unavailable;"
				  " SYSCALL in enclaves is not trapped\n");
	}
	if (!foreign) {
		pthread_setspecific(tcb_key, tcb);
		tls_tcb = tcb;
	}
	sgxemu__tick_start(tcb);
	if (foreign)
		atomic_store(&foreign_tid[n], tcb->tid);
	return tcb;
fail:
	tcb->magic = 0;
	mprotect(slot, SLOT_SIZE, PROT_NONE);
	slot_free(n);
	return NULL;
}

struct sgxemu_tcb *sgxemu__tcb_prepare(void)
{
	return tls_tcb ? tls_tcb : tcb_setup(false);
}

uint64_t sgxemu__aep_stack_top(const struct sgxemu_tcb *tcb)
{
	return (uintptr_t)tcb + AEP_OFFSET + AEP_STACK_SIZE;
}

/* The slot whose alternate stack @sp is on, if it holds a TCB. */
static struct sgxemu_tcb *tcb_from_sp(uintptr_t sp)
{
	uintptr_t base = __atomic_load_n(&sgxemu__alt_base, __ATOMIC_ACQUIRE);
	struct sgxemu_tcb *tcb;

	if (!base || sp - base >= sgxemu__alt_len)
		return NULL;
	tcb = (struct sgxemu_tcb *)(base + ((sp - base) & ~(uintptr_t)(SLOT_SIZE - 1)));
	return tcb->magic == TCB_MAGIC ? tcb : NULL;
}

/*
 * The calling thread's TCB by the kernel's alternate stack, which the
 * engine set to the thread's slot at its set-up and which the kernel
 * keeps per thread (a clone() with CLONE_VM starts with none). So it holds
 * for a thread made by a raw clone(), whose TLS names its creator's TCB,
 * where nothing in user memory could tell which thread runs. One system
 * call, against the trap the entry would cost otherwise.
 */
struct sgxemu_tcb *sgxemu__tcb_by_altstack(void)
{
	stack_t cur;

	if (raw_sigaltstack(NULL, &cur) || (cur.ss_flags & SS_DISABLE))
		return NULL;
	return tcb_from_sp((uintptr_t)cur.ss_sp);
}

struct sgxemu_tcb *sgxemu__tcb_current(void)
{
	struct sgxemu_tcb *tcb =
		tcb_from_sp((uintptr_t)__builtin_frame_address(0));

	if (tcb)
		return tcb;
	tcb = tls_tcb;
	return tcb && tcb->tid == (int)syscall(SYS_gettid) ? tcb : NULL;
}

/*
 * This thread's id and stack, once learned (sgxemu__thread_learn): the
 * paging lock names its owner by kernel thread id several times per page
 * added, and the fast entry asks whose TCB TLS holds; a gettid is over a
 * microsecond on some hosts. TLS alone cannot say whose id it holds (a
 * raw clone() shares its creator's, a fork child keeps its parent's), but
 * a stack pointer inside the learned stack can: no other thread runs on
 * that stack while its owner lives. Written once per thread, @hi last
 * (release), read @hi first (acquire), so that a sharer reading mid-write
 * sees no range yet.
 */
static __thread struct {
	int tid;
	bool tried;
	uintptr_t lo;
	_Atomic uintptr_t hi;
} self_id;

bool sgxemu__thread_on_own_stack(uintptr_t sp)
{
	uintptr_t hi = atomic_load_explicit(&self_id.hi, memory_order_acquire);

	return hi && sp - self_id.lo < hi - self_id.lo;
}

void sgxemu__thread_learn(bool owner)
{
	uintptr_t sp = (uintptr_t)__builtin_frame_address(0), lo;
	pthread_attr_t a;
	void *base;
	size_t n;
	int tid;

	if (atomic_load_explicit(&self_id.hi, memory_order_acquire) ||
	    self_id.tried || tcb_from_sp(sp))
		return;
	/* The owner of this TLS tries once; anyone else may be a sharer. */
	if (owner)
		self_id.tried = true;
	tid = (int)syscall(SYS_gettid);
	/* The stack pthread_self() names is this thread's only if the stack
	 * pointer is on it (not under a raw clone() sharing the TLS). */
	if (pthread_getattr_np(pthread_self(), &a))
		return;
	if (!pthread_attr_getstack(&a, &base, &n) &&
	    sp - (lo = (uintptr_t)base) < n) {
		self_id.tid = tid;
		self_id.lo = lo;
		atomic_store_explicit(&self_id.hi, lo + n, memory_order_release);
	}
	pthread_attr_destroy(&a);
}

int sgxemu__thread_tid(void)
{
	uintptr_t sp = (uintptr_t)__builtin_frame_address(0);
	struct sgxemu_tcb *tcb = tcb_from_sp(sp);

	if (tcb)
		return tcb->tid;
	if (sgxemu__thread_on_own_stack(sp))
		return self_id.tid;
	return (int)syscall(SYS_gettid);
}

void sgxemu__thread_fork_child(void)
{
	/* Same stack, new id: learned again when needed. */
	atomic_store_explicit(&self_id.hi, 0, memory_order_relaxed);
	self_id.tried = false;
	if (tls_tcb && tls_tcb->magic == TCB_MAGIC) {
		tls_tcb->tid = (int)syscall(SYS_gettid);
		/* Timers are not inherited: the child's thread needs its own. */
		tls_tcb->tick_armed = false;
		tls_tcb->tick_paused = false;
		sgxemu__tick_start(tls_tcb);
	}
	/* A thread made by a raw clone() that forked: its own slot is the
	 * child's thread's now (reap_foreign would take it by the old id). */
	{
		struct sgxemu_tcb *own = sgxemu__tcb_by_altstack();

		if (own && own->foreign) {
			own->tid = (int)syscall(SYS_gettid);
			atomic_store(&foreign_tid[own->slot], own->tid);
		}
	}
}

bool sgxemu__tcb_foreign(void)
{
	struct sgxemu_tcb *tcb = tls_tcb;

	return tcb && tcb->tid != (int)syscall(SYS_gettid);
}

struct sgxemu_tcb *sgxemu__tcb_prepare_foreign(void)
{
	return tcb_setup(true);
}

/*
 * A handler that set its thread up changed the kernel's alternate stack,
 * but the rt_sigreturn ending it puts back the one recorded in its frame
 * (uc_stack): record the engine's there instead, so that it stays.
 */
void sgxemu__sigreturn_altstack(ucontext_t *uc)
{
	stack_t cur;

	if (raw_sigaltstack(NULL, &cur) || (cur.ss_flags & SS_DISABLE) ||
	    !tcb_from_sp((uintptr_t)cur.ss_sp))
		return;
	uc->uc_stack = cur;
	uc->uc_stack.ss_flags = 0;
}

/*
 * sigaltstack(2) from a handler that runs on the alternate stack: the
 * kernel refuses (EPERM) while the caller's RSP is on it, so the call is
 * made with RSP at @fake_sp, off it (the system call touches no user
 * stack, and every signal is blocked in the handler).
 */
static long sigaltstack_off(const stack_t *ss, uintptr_t fake_sp)
{
	long ret;

	__asm__ volatile("mov %%rsp, %%r12\n\t"
			 "mov %[sp], %%rsp\n\t"
			 "syscall\n\t"
			 "mov %%r12, %%rsp"
			 : "=a"(ret)
			 : "a"((long)SYS_sigaltstack), "D"(ss), "S"(0L),
			   [sp] "r"(fake_sp)
			 : "rcx", "r11", "r12", "memory");
	return ret;
}

/*
 * The host frames at and above @live_sp stay live while the thread runs
 * elsewhere: enclave code entered from a handler on this alternate stack
 * (a runtime's signal handler that makes its exception ECALL, as the
 * Intel SDK's urts does without the vDSO), or host code that such a
 * nested call returned to. The kernel starts a signal frame at the top of
 * the alternate stack whenever RSP is off it, and would write over them:
 * so the alternate stack is made to end below them, and is the whole
 * slot again once the live host RSP is off it. Set now (with RSP off the
 * stack) and in @uc's uc_stack, which the rt_sigreturn restores.
 */
bool sgxemu__on_altstack(const struct sgxemu_tcb *tcb, uint64_t sp)
{
	uintptr_t lo = (uintptr_t)tcb + ALT_OFFSET;

	return sp > lo && sp - lo <= SLOT_SIZE - ALT_OFFSET;
}

/* The alternate stack that leaves the frames at @live_sp alone, in @ss;
 * false where no other frame would fit below them. */
static bool fit_below(struct sgxemu_tcb *tcb, uint64_t live_sp, stack_t *ss)
{
	uintptr_t lo = (uintptr_t)tcb + ALT_OFFSET;
	uintptr_t hi = (uintptr_t)tcb + SLOT_SIZE, top = hi;

	if (sgxemu__on_altstack(tcb, live_sp))
		top = (live_sp - 1024) & ~(uintptr_t)63;
	if (top < lo + getauxval(AT_MINSIGSTKSZ) + 16384)
		return false;
	ss->ss_sp = (void *)lo;
	ss->ss_size = top - lo;
	ss->ss_flags = 0;
	return true;
}

bool sgxemu__altstack_for(struct sgxemu_tcb *tcb, uint64_t live_sp,
			  stack_t *ss)
{
	return fit_below(tcb, live_sp, ss);
}

void sgxemu__altstack_fit(struct sgxemu_tcb *tcb, ucontext_t *uc,
			  uint64_t live_sp)
{
	stack_t ss;

	/* Too deep for another frame: leave it as it is. */
	if (!fit_below(tcb, live_sp, &ss))
		return;
	if (uc->uc_stack.ss_sp == ss.ss_sp &&
	    uc->uc_stack.ss_size == ss.ss_size)
		return;
	/* The TCB page is below the alternate stack: RSP there is off it. */
	if (sigaltstack_off(&ss, (uintptr_t)tcb + 2048))
		return;
	uc->uc_stack = ss;
}

/*
 * The same for the fast entry, called by a program's handler that runs on
 * this alternate stack (Gramine's, which enters the enclave's exception
 * handler): there is no frame of ours to record it in, and none is
 * needed, since the rt_sigreturn that ends that handler puts back the
 * alternate stack its own frame holds. False: the trap path's turn.
 */
bool sgxemu__altstack_fit_live(struct sgxemu_tcb *tcb, uint64_t live_sp)
{
	stack_t ss;

	return fit_below(tcb, live_sp, &ss) &&
	       sigaltstack_off(&ss, (uintptr_t)tcb + 2048) == 0;
}

struct sgxemu_tcb *sgxemu__tcb_of_altstack(uint64_t sp)
{
	struct sgxemu_tcb *tcb = tcb_from_sp((uintptr_t)sp);

	return tcb && sgxemu__on_altstack(tcb, sp) ? tcb : NULL;
}

struct sgxemu_tcb *sgxemu__aep_stack_owner(uint64_t sp)
{
	struct sgxemu_tcb *tcb = tcb_from_sp((uintptr_t)sp);

	return tcb && tcb->aep_stack_busy && sp == sgxemu__aep_stack_top(tcb) ?
	       tcb : NULL;
}

int sgxemu_thread_prepare(void)
{
	int ret = sgxemu_platform_init();

	if (ret)
		return ret;
	return sgxemu__tcb_prepare() ? 0 : -sgxemu__tcb_errno();
}

int sgxemu__tcb_errno(void)
{
	return tcb_errno ? tcb_errno : ENOMEM;
}

uint64_t sgxemu_thread_aex_count(void)
{
	struct sgxemu_tcb *tcb = tls_tcb;

	return tcb ? tcb->aex_count : 0;
}

/*
 * sigaltstack() as the program sees it. Before this thread is set up the
 * kernel's is the program's. Afterwards the kernel's alternate stack is
 * the engine's (its handlers find the TCB from their stack pointer), so a
 * change is recorded instead, with the kernel's checks, and read back as
 * set; the program's handlers then run on the engine's stack.
 */
int sgxemu_sigaltstack(const stack_t *ss, stack_t *old)
{
	uintptr_t sp = (uintptr_t)__builtin_frame_address(0);
	struct sgxemu_tcb *tcb = sgxemu__tcb_current();
	stack_t cur;
	bool on;
	int ret;

	/*
	 * A thread on another thread's TLS (raw clone()) is set up now,
	 * while its handlers do not run on the stack it asks for: once they
	 * do, the engine's could never be put in its place, and nothing
	 * else would find its TCB.
	 */
	if (!tcb && sgxemu__alt_base && sgxemu__tcb_foreign())
		tcb = sgxemu__tcb_prepare_foreign();
	if (!tcb) {
		ret = raw_sigaltstack(ss, old);
		if (ret) {
			errno = -ret;
			return -1;
		}
		return 0;
	}
	cur = tcb->app_ss;
	on = !(cur.ss_flags & SS_DISABLE) && cur.ss_size &&
	     sp - (uintptr_t)cur.ss_sp < cur.ss_size;
	if (ss) {
		int mode = (int)((unsigned)ss->ss_flags & ~SS_AUTODISARM);

		if (on) {
			errno = EPERM;
			return -1;
		}
		if (mode != 0 && mode != SS_DISABLE) {
			errno = EINVAL;
			return -1;
		}
		if (mode == 0 && ss->ss_size < MIN_ALTSTACK) {
			errno = ENOMEM;
			return -1;
		}
	}
	if (old) {
		*old = cur;
		if (on)
			old->ss_flags = SS_ONSTACK;
		else if (!cur.ss_size)
			old->ss_flags = SS_DISABLE;
	}
	if (ss) {
		tcb->app_ss = *ss;
		if (ss->ss_flags & SS_DISABLE) {
			tcb->app_ss.ss_sp = NULL;
			tcb->app_ss.ss_size = 0;
			tcb->app_ss.ss_flags = SS_DISABLE;
		}
	}
	return 0;
}
