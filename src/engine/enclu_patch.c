/* SPDX-License-Identifier: MIT */
/*
 * Host ENCLU[EENTER] without a trap (issue 26): runtimes that execute
 * ENCLU themselves (Gramine's loader) pay a trap for every entry, so an
 * OCALL round trip costs two (the enclave's EEXIT, then the host's
 * EENTER). Host code is not measured, so, as host CPUID is rewritten,
 * the EENTER site is rewritten into a jump to the engine's fast entry
 * (sgxemu_enclu_entry, the vDSO's way in), leaving one trap per OCALL.
 *
 * Which sites: found by their first trap, not by scanning. The handler of
 * a host ENCLU[EENTER] trap knows the instruction really is ENCLU at RIP
 * and that RAX is EENTER; the site is rewritten only when the 5 or 7
 * bytes before it are `mov $2,%eax` or `mov $2,%rax` (how runtimes load
 * the leaf: Gramine's `mov $EENTER,%rax; ENCLU`), in the same page. The
 * mov becomes `jmp trampoline` (plus a 2-byte nop for the 7-byte form);
 * the ENCLU bytes stay, so code that jumps to the ENCLU itself still
 * traps and is still served. The trampoline, mapped within reach of a
 * rel32 jump:
 *     mov  $2, %eax            the mov it replaces (also zero-extends)
 *     pushq ret(%rip)          the ENCLU's return point, as a `call` of
 *                              the vDSO entry at the ENCLU would push it
 *     jmp  *entry(%rip)        sgxemu_enclu_entry
 *     ret:   .quad ENCLU + 3
 *     entry: .quad sgxemu_enclu_entry
 * No register but RAX changes (RAX = 2 as before), flags neither, and the
 * 8 bytes below RSP are used as by the vDSO call. The entry's contract is
 * ENCLU's: the enclave's RCX is the return point, AEP and TCS are the
 * program's RCX and RBX; whatever the fast path does not take (ERESUME,
 * a fault of EENTER, a thread set up without TLS) goes on as a real
 * ENCLU at sgxemu__enclu_trap, which the trap handler treats as the
 * caller's ENCLU (aex.c), with either vendor's fault.
 *
 * When: only while the process has one thread of the program's (the 5 or
 * 7 bytes are not written atomically; runtimes make their first entry
 * before their threads; the platform's reclaimer never runs program
 * code), and only once per site (a site refused stays trapping).
 * Threads created later that share their creator's TLS (raw clone) are
 * caught by the fast path's thread check (enter.c): their first entry
 * traps and sets them up, later ones find their TCB by their alternate
 * stack (sgxemu__tcb_by_altstack).
 * SGXEMU_ENCLU_PATCH=0 turns it off.
 *
 * ERESUME sites too (sgxemu__enclu_patch_resume): a runtime's AEP is
 * code of its own that ends in ENCLU (Gramine's: `lock incq
 * %gs:AEX_COUNT; enclu`, RAX = ERESUME from the AEX), with no mov of the
 * leaf to replace. The instructions from the AEP (the thread's RCX at the
 * trap) to the ENCLU are copied into a trampoline, which runs them and
 * then enters as above; the program's code is not changed. It is the AEX
 * that goes there instead of to the AEP (aex.c, aep_trampoline), when
 * nothing is to see the thread at the AEP first (the tick's AEX, a paging
 * exit's, one whose program handler has returned there): RSP is
 * then the top of the thread's AEP stack (thread.c), URSP kept in the
 * TCB, and the entry (enter.c) and the trap of its ENCLU (aex.c) take
 * URSP as the caller's RSP. Not the program's stack: the memory below
 * URSP may be the program's, as nothing writes there on hardware
 * between AEX and ERESUME (Gramine's enclave keeps an OCALL's arguments
 * there while it prepares them, which an AEX interrupts; a push there
 * corrupted them). Only where those instructions run the same anywhere
 * and on any stack (no RIP-relative operand, no branch, call, return or
 * system call, no RSP, implicit or explicit: checked by decoding them),
 * within one page. Whatever the fast path does not take goes on at the
 * program's own ENCLU, on URSP, as an ERESUME there would. An AEP that is
 * the ENCLU (the vDSO's, the API's) has nothing to copy and needs none of
 * this: it is the entry's own.
 *
 * Async-signal-safe: runs in the ENCLU trap's handler; system calls and
 * lock-free updates only (Zydis decodes without allocating), errno kept.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <Zydis/Zydis.h>

#include "engine/engine.h"

#define MAX_SITES	16
/* The most bytes of an AEP's instructions moved into a trampoline. */
#define MAX_MOVED	32

static _Atomic uintptr_t sites[MAX_SITES];	/* patched or refused */
static _Atomic uintptr_t patched[MAX_SITES];
static _Atomic int nr_patched;
/* AEPs with a trampoline, and theirs (stored first). */
static _Atomic uintptr_t aeps[MAX_SITES], aep_tramps[MAX_SITES];
static _Atomic int nr_aeps;
static bool enabled;

void sgxemu__enclu_patch_init(void)
{
	const char *v = getenv("SGXEMU_ENCLU_PATCH");

	enabled = !v || strcmp(v, "0") != 0;
}

bool sgxemu__enclu_patched_any(void)
{
	return atomic_load_explicit(&nr_patched, memory_order_relaxed) != 0;
}

uint64_t sgxemu__enclu_fault_rip(uint64_t next, uint64_t aep)
{
	int n = atomic_load(&nr_patched);

	for (int i = 0; i < n && i < MAX_SITES; i++)
		if (atomic_load(&patched[i]) + 3 == next)
			return next - 3;
	return aep;
}

uintptr_t sgxemu__aep_trampoline(uintptr_t aep)
{
	int n = atomic_load(&nr_aeps);

	for (int i = 0; i < n && i < MAX_SITES; i++)
		if (atomic_load(&aeps[i]) == aep)
			return atomic_load(&aep_tramps[i]);
	return 0;
}

/* Claim @site once; false when it was seen before (or the table is
 * full, and it stays trapping). */
static bool claim(uintptr_t site)
{
	for (int i = 0; i < MAX_SITES; i++) {
		uintptr_t zero = 0;

		if (atomic_compare_exchange_strong(&sites[i], &zero, site))
			return true;
		if (zero == site)
			return false;
	}
	return false;
}

/* The number of threads of this process (field 20 of /proc/self/stat),
 * or 0 when it cannot be read. */
static int nr_threads(void)
{
	char buf[512], *p;
	int fd = open("/proc/self/stat", O_RDONLY | O_CLOEXEC), field = 2;
	ssize_t n;

	if (fd < 0)
		return 0;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return 0;
	buf[n] = 0;
	/* The command name may hold spaces: count from its closing ')'. */
	p = strrchr(buf, ')');
	if (!p)
		return 0;
	for (; *p && field < 20; p++)
		if (*p == ' ')
			field++;
	return atoi(p);
}

/* A page for the trampoline within rel32 reach of @near, or NULL. */
static uint8_t *map_near(uintptr_t near)
{
	const uintptr_t step = 1UL << 20, span = 1UL << 30;

	for (uintptr_t d = step; d < span; d += step) {
		uintptr_t cand[2] = { (near & ~(step - 1)) - d,
				      (near & ~(step - 1)) + d };

		for (int k = 0; k < 2; k++) {
			void *p;

			if (cand[k] < 0x10000 || cand[k] > (1UL << 47) - 4096)
				continue;
			p = mmap((void *)cand[k], 4096, PROT_READ | PROT_WRITE,
				 MAP_PRIVATE | MAP_ANONYMOUS |
				 MAP_FIXED_NOREPLACE, -1, 0);
			if (p == MAP_FAILED)
				continue;
			if ((uintptr_t)p == cand[k])
				return p;
			munmap(p, 4096);	/* an old kernel's hint */
		}
	}
	return NULL;
}

/* Store @n bytes of code at @dst: /proc/self/mem (copy-on-write of the
 * private text page, no protection change), else a short mprotect. */
static bool write_code(uint8_t *dst, const uint8_t *src, size_t n)
{
	uintptr_t page = (uintptr_t)dst & ~(uintptr_t)4095;
	int fd = open("/proc/self/mem", O_RDWR | O_CLOEXEC);
	bool ok = false;

	if (fd >= 0) {
		ok = pwrite(fd, src, n, (off_t)(uintptr_t)dst) == (ssize_t)n;
		close(fd);
	}
	if (!ok && !mprotect((void *)page, 4096,
			     PROT_READ | PROT_WRITE | PROT_EXEC)) {
		memcpy(dst, src, n);
		mprotect((void *)page, 4096, PROT_READ | PROT_EXEC);
		ok = true;
	}
	return ok;
}

static const uint8_t mov_rax[7] = { 0x48, 0xc7, 0xc0, 0x02, 0, 0, 0 };
static const uint8_t mov_eax[5] = { 0xb8, 0x02, 0, 0, 0 };

/*
 * Map a trampoline near @near holding @lead (@n bytes), then `pushq ret;
 * jmp *entry` with ret = @ret. NULL: none.
 */
static uint8_t *trampoline(uintptr_t near, const uint8_t *lead, size_t n,
			   uint64_t ret)
{
	uint64_t entry = (uintptr_t)sgxemu_enclu_entry;
	uint8_t code[MAX_MOVED + 28];
	uint8_t *t;

	if (n > MAX_MOVED || !(t = map_near(near)))
		return NULL;
	/* lead; pushq 6(%rip); jmp *8(%rip); ret; entry */
	memcpy(code, lead, n);
	memcpy(code + n, "\xff\x35\x06\x00\x00\x00", 6);
	memcpy(code + n + 6, "\xff\x25\x08\x00\x00\x00", 6);
	memcpy(code + n + 12, &ret, 8);
	memcpy(code + n + 20, &entry, 8);
	memcpy(t, code, n + 28);
	if (mprotect(t, 4096, PROT_READ | PROT_EXEC)) {
		munmap(t, 4096);
		return NULL;
	}
	return t;
}

/*
 * A trampoline for @lead (@n bytes) returning to @ret, and @site (@len
 * bytes, in one page) a jump to it followed by nops. False: nothing
 * changed.
 */
static bool install(uintptr_t site, size_t len, const uint8_t *lead,
		    size_t n, uint64_t ret)
{
	uint8_t jmp[MAX_MOVED + 3];
	intptr_t rel;
	uint8_t *t;

	if (len < 5 || len > sizeof(jmp) ||
	    !(t = trampoline(site, lead, n, ret)))
		return false;
	rel = (intptr_t)t - (intptr_t)(site + 5);
	jmp[0] = 0xe9;
	memcpy(jmp + 1, &(int32_t){ (int32_t)rel }, 4);
	memset(jmp + 5, 0x90, len - 5);
	if (len == 7) {
		jmp[5] = 0x66;		/* 66 90: a 2-byte nop */
		jmp[6] = 0x90;
	}
	if (!write_code((uint8_t *)site, jmp, len)) {
		munmap(t, 4096);
		return false;
	}
	return true;
}

/* Only while the program has one thread (see above). */
static bool single_threaded(const char *what)
{
	if (nr_threads() == 1 + sgxemu__platform_threads())
		return true;
	if (sgxemu__platform.debug) {
		sgxemu__write_str("sgxemu: host ENCLU[");
		sgxemu__write_str(what);
		sgxemu__write_str("] site not rewritten: the process has "
				  "threads already\n");
	}
	return false;
}

void sgxemu__enclu_patch(uintptr_t enclu)
{
	const uint8_t *p = (const uint8_t *)enclu;
	size_t len;
	int saved = errno;

	if (!enabled || (enclu & 4095) < sizeof(mov_rax) || !claim(enclu))
		goto out;
	if (!memcmp(p - 7, mov_rax, 7))
		len = 7;
	else if (!memcmp(p - 5, mov_eax, 5))
		len = 5;
	else
		goto out;
	if (!single_threaded("EENTER") ||
	    !install(enclu - len, len, mov_eax, 5, enclu + 3))
		goto out;
	patched[atomic_fetch_add(&nr_patched, 1)] = enclu;
	if (sgxemu__platform.debug) {
		sgxemu__write_str("sgxemu: host ENCLU[EENTER] at ");
		sgxemu__write_hex(enclu);
		sgxemu__write_str(" now enters without a trap\n");
	}
out:
	errno = saved;
}

/* Whether @reg is (part of) RSP. */
static bool is_rsp(ZydisRegister reg)
{
	return reg != ZYDIS_REGISTER_NONE &&
	       ZydisRegisterGetLargestEnclosing(ZYDIS_MACHINE_MODE_LONG_64,
						reg) == ZYDIS_REGISTER_RSP;
}

/*
 * Whether the @n bytes at @p are whole instructions that run the same at
 * any address and on any stack: no RIP-relative operand, no control
 * transfer, no RSP (the hidden operands count: push, pop, enter).
 */
static bool movable(const uint8_t *p, size_t n)
{
	ZydisDecodedOperand ops[ZYDIS_MAX_OPERAND_COUNT];
	ZydisDecodedInstruction insn;
	ZydisDecoder dec;
	size_t off = 0;

	ZydisDecoderInit(&dec, ZYDIS_MACHINE_MODE_LONG_64,
			 ZYDIS_STACK_WIDTH_64);
	while (off < n) {
		if (!ZYAN_SUCCESS(ZydisDecoderDecodeFull(&dec, p + off, n - off,
							 &insn, ops)) ||
		    (insn.attributes & ZYDIS_ATTRIB_IS_RELATIVE))
			return false;
		switch (insn.meta.category) {
		case ZYDIS_CATEGORY_CALL:
		case ZYDIS_CATEGORY_COND_BR:
		case ZYDIS_CATEGORY_UNCOND_BR:
		case ZYDIS_CATEGORY_RET:
		case ZYDIS_CATEGORY_SYSCALL:
		case ZYDIS_CATEGORY_INTERRUPT:
		case ZYDIS_CATEGORY_SYSTEM:
			return false;
		default:
			break;
		}
		for (unsigned i = 0; i < insn.operand_count; i++) {
			if (ops[i].type == ZYDIS_OPERAND_TYPE_REGISTER &&
			    is_rsp(ops[i].reg.value))
				return false;
			if (ops[i].type == ZYDIS_OPERAND_TYPE_MEMORY &&
			    (ops[i].mem.base == ZYDIS_REGISTER_RIP ||
			     is_rsp(ops[i].mem.base) ||
			     is_rsp(ops[i].mem.index)))
				return false;
		}
		off += insn.length;
	}
	return off == n;
}

void sgxemu__enclu_patch_resume(uintptr_t enclu, uintptr_t aep)
{
	size_t n = enclu - aep;
	uint8_t *t;
	int i, saved = errno;

	if (!enabled || aep > enclu || n < 1 || n > MAX_MOVED ||
	    (aep & ~(uintptr_t)4095) != ((enclu - 1) & ~(uintptr_t)4095) ||
	    !claim(enclu))
		goto out;
	if (!movable((const uint8_t *)aep, n) ||
	    !(t = trampoline(aep, (const uint8_t *)aep, n, enclu + 3)))
		goto out;
	i = atomic_fetch_add(&nr_aeps, 1);
	if (i >= MAX_SITES) {
		munmap(t, 4096);
		goto out;
	}
	atomic_store(&aep_tramps[i], (uintptr_t)t);
	atomic_store(&aeps[i], aep);
	if (sgxemu__platform.debug) {
		sgxemu__write_str("sgxemu: host ENCLU[ERESUME] at ");
		sgxemu__write_hex(enclu);
		sgxemu__write_str(" (AEP ");
		sgxemu__write_hex(aep);
		sgxemu__write_str(") now resumes without a trap\n");
	}
out:
	errno = saved;
}
