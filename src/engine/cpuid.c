/* SPDX-License-Identifier: MIT */
/*
 * CPUID answers of the emulated SGX part for host code (engine/cpuid.h;
 * sgx-facts.md §1.18), the trap that delivers them, and the C API's
 * sgxemu_cpuid().
 *
 * The emulated part is the host CPU plus SGX: CPUID.(7,0):EBX[2] SGX and,
 * with flexible launch control, ECX[30] SGX_LC; leaf 0x12 as the platform's
 * processor enumerates it (sgx_cpuid_leaf12: the same code `sgxemu info`
 * prints from, EDECCSSA and the AEXNOTIFY attribute unless
 * SGXEMU_AEXNOTIFY=0); leaves 0x15 and 0x16
 * (TSC/crystal ratio, frequencies) where the host has none, from this
 * host's TSC frequency (tsc_freq.c), so runtimes keep a clock on RDTSC;
 * leaf 0 reports at least 0x16 as the highest basic leaf, since an AMD
 * host stops lower and runtimes read that first, and the leaves between
 * the host's maximum and that read as 0. Every other leaf is the host's.
 */
#include <asm/prctl.h>
#include <errno.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>

#include "engine/cpuid.h"
#include "engine/engine.h"

void sgxemu__cpuid_model_config(struct sgxemu_cpuid_model *m,
				const struct sgx_cpu_config *cfg,
				const struct sgx_epc_section *sections,
				unsigned nr, bool lc_flexible)
{
	uint32_t r[4];

	memset(m, 0, sizeof(*m));
	m->lc_flexible = lc_flexible;
	if (nr > SGX_MAX_EPC_SECTIONS)
		nr = SGX_MAX_EPC_SECTIONS;
	/* Sub-leaf 2 + nr stays zero: the first invalid section. */
	for (uint32_t s = 0; s < 2 + nr; s++)
		sgx_cpuid_leaf12(cfg, sections, nr, s, m->leaf12[s]);
	sgxemu__cpuid_native(0, 0, r);
	m->host_max_leaf = r[0];
}

void sgxemu__cpuid_model_cpu(struct sgxemu_cpuid_model *m,
			     const struct sgx_cpu *cpu)
{
	sgxemu__cpuid_model_config(m, &cpu->config, cpu->sections,
				   cpu->nr_sections, !cpu->lc_locked);
}

int sgxemu__cpuid_model_env(struct sgxemu_cpuid_model *m)
{
	struct sgx_cpu_config cfg = {0};
	struct sgx_epc_section sections[SGX_MAX_EPC_SECTIONS];
	const char *v;
	bool lc_flexible = true;

	if ((v = getenv("SGXEMU_EPC_SIZE")) != NULL) {
		cfg.epc_size = sgxemu__parse_size(v);
		if (!cfg.epc_size)
			return -EINVAL;
	}
	if ((v = getenv("SGXEMU_EPC_SECTIONS")) != NULL)
		cfg.nr_sections = (unsigned)atoi(v);
	cfg.sgx2 = sgxemu__env_flag("SGXEMU_SGX2", 1);
	cfg.aexnotify = sgxemu__env_flag("SGXEMU_AEXNOTIFY", 1);
	cfg.eupdatesvn = sgxemu__env_flag("SGXEMU_EUPDATESVN", 1);
	v = getenv("SGXEMU_LAUNCH_CONTROL");
	if (v && *v) {
		if (!strcmp(v, "locked"))
			lc_flexible = false;
		else if (strcmp(v, "flexible"))
			return -EINVAL;
	}
	if (sgx_cpu_config_defaults(&cfg))
		return -EINVAL;
	sgx_epc_layout(cfg.epc_size / SGX_PAGE_SIZE, cfg.nr_sections, sections);
	sgxemu__cpuid_model_config(m, &cfg, sections, cfg.nr_sections,
				   lc_flexible);
	return 0;
}

#define CPUID_SGX_LEAF		0x12
#define CPUID_TSC_LEAF		0x15
#define CPUID_FREQ_LEAF		0x16
#define LEAF7_EBX_SGX		(1U << 2)
#define LEAF7_ECX_SGX_LC	(1U << 30)

/* Leaf 0x15 or 0x16 as the part: the host's where it enumerates them
 * (0x15 with its crystal frequency, 0x16 with a base frequency), else
 * from the TSC frequency. */
static void tsc_leaf(const struct sgxemu_cpuid_model *m, uint32_t leaf,
		     uint32_t regs[4])
{
	uint32_t l15[4], l16[4];
	uint64_t hz;

	if (leaf <= m->host_max_leaf &&
	    (leaf == CPUID_TSC_LEAF ? regs[0] && regs[1] && regs[2] :
				      (regs[0] & 0xffff) != 0))
		return;
	hz = m->tsc_hz ? m->tsc_hz : sgxemu__tsc_hz(NULL);
	sgxemu__cpuid_tsc_leaves(hz, l15, l16);
	memcpy(regs, leaf == CPUID_TSC_LEAF ? l15 : l16, sizeof(l15));
}

void sgxemu__cpuid_answer(const struct sgxemu_cpuid_model *m, uint32_t leaf,
			  uint32_t subleaf, uint32_t regs[4])
{
	/* Past the host's maximum the CPU answers with another leaf's
	 * values (Intel) or zeros (AMD): the part's own leaves there are
	 * zeros unless modelled below. */
	if (leaf > m->host_max_leaf && leaf <= SGXEMU_CPUID_MAX_LEAF)
		memset(regs, 0, 4 * sizeof(uint32_t));
	switch (leaf) {
	case 0:
		if (regs[0] < SGXEMU_CPUID_MAX_LEAF)
			regs[0] = SGXEMU_CPUID_MAX_LEAF;
		break;
	case CPUID_TSC_LEAF:
	case CPUID_FREQ_LEAF:
		tsc_leaf(m, leaf, regs);
		break;
	case 7:
		if (subleaf != 0)
			break;
		regs[1] |= LEAF7_EBX_SGX;
		if (m->lc_flexible)
			regs[2] |= LEAF7_ECX_SGX_LC;
		else
			regs[2] &= ~LEAF7_ECX_SGX_LC;
		break;
	case CPUID_SGX_LEAF:
		if (subleaf < SGXEMU_CPUID_SUBLEAVES)
			memcpy(regs, m->leaf12[subleaf], 4 * sizeof(uint32_t));
		else
			memset(regs, 0, 4 * sizeof(uint32_t));
		break;
	default:
		break;
	}
}

/* --- the host CPU ------------------------------------------------------- */

/* arch_prctl without libc: no errno (handlers run on any code's errno). */
static long raw_arch_prctl(long code, unsigned long arg)
{
	long ret;

	__asm__ volatile("syscall"
			 : "=a"(ret)
			 : "0"((long)SYS_arch_prctl), "D"(code), "S"(arg)
			 : "rcx", "r11", "memory");
	return ret;
}

static void raw_cpuid(uint32_t leaf, uint32_t subleaf, uint32_t regs[4])
{
	__asm__ volatile("cpuid"
			 : "=a"(regs[0]), "=b"(regs[1]), "=c"(regs[2]),
			   "=d"(regs[3])
			 : "0"(leaf), "2"(subleaf));
}

bool sgxemu__cpuid_fault_enabled(void)
{
	/* ARCH_GET_CPUID: 1 = CPUID runs, 0 = it faults. */
	return raw_arch_prctl(ARCH_GET_CPUID, 0) == 0;
}

void sgxemu__cpuid_native(uint32_t leaf, uint32_t subleaf, uint32_t regs[4])
{
	/* Faulting is per thread and only this thread's matters; switching
	 * it off for one instruction costs two system calls. */
	bool faulting = sgxemu__cpuid_fault_enabled();

	if (faulting)
		raw_arch_prctl(ARCH_SET_CPUID, 1);
	raw_cpuid(leaf, subleaf, regs);
	if (faulting)
		raw_arch_prctl(ARCH_SET_CPUID, 0);
}

bool sgxemu__cpuid_fault_available(void)
{
	static int known;	/* 0 unknown, 1 yes, 2 no */

	if (!known) {
		bool was = sgxemu__cpuid_fault_enabled();

		if (raw_arch_prctl(ARCH_SET_CPUID, 0) == 0) {
			known = 1;
			if (!was)
				raw_arch_prctl(ARCH_SET_CPUID, 1);
		} else {
			known = 2;	/* -ENODEV: no cpuid_fault */
		}
	}
	return known == 1;
}

int sgxemu__cpuid_fault_enable(void)
{
	long ret = raw_arch_prctl(ARCH_SET_CPUID, 0);

	return ret < 0 ? (int)ret : 0;
}

/* --- the mechanism ------------------------------------------------------ */

static _Atomic int mech = SGXEMU_CPUID_OFF;

enum sgxemu_cpuid_mech sgxemu__cpuid_choose(const char **note)
{
	const char *v = getenv("SGXEMU_CPUID");

	*note = NULL;
	if (v && !strcmp(v, "off"))
		return SGXEMU_CPUID_OFF;
	if (v && !strcmp(v, "rewrite"))
		return SGXEMU_CPUID_REWRITE;
	if (v && !strcmp(v, "fault")) {
		if (sgxemu__cpuid_fault_available())
			return SGXEMU_CPUID_FAULT;
		*note = "SGXEMU_CPUID=fault: this CPU has no CPUID faulting "
			"(cpuid_fault); rewriting CPUID instructions instead";
		return SGXEMU_CPUID_REWRITE;
	}
	if (v && *v && strcmp(v, "auto"))
		*note = "SGXEMU_CPUID must be auto, fault, rewrite or off; "
			"using auto";
	return sgxemu__cpuid_fault_available() ? SGXEMU_CPUID_FAULT :
						  SGXEMU_CPUID_REWRITE;
}

/* SGXEMU_CPUID_ENCLAVE=ud, read when the mechanism is set (the handler
 * does not read the environment). */
static _Atomic bool enclave_ud;

bool sgxemu__cpuid_enclave_ud(void)
{
	const char *v = getenv("SGXEMU_CPUID_ENCLAVE");

	return v && !strcmp(v, "ud");
}

void sgxemu__cpuid_set_mech(enum sgxemu_cpuid_mech m)
{
	atomic_store(&enclave_ud, sgxemu__cpuid_enclave_ud());
	atomic_store(&mech, (int)m);
}

enum sgxemu_cpuid_mech sgxemu__cpuid_mech(void)
{
	return (enum sgxemu_cpuid_mech)atomic_load(&mech);
}

const char *sgxemu__cpuid_mech_name(enum sgxemu_cpuid_mech m)
{
	switch (m) {
	case SGXEMU_CPUID_FAULT: return "fault";
	case SGXEMU_CPUID_REWRITE: return "rewrite";
	default: return "off";
	}
}

/* --- rewritten sites ---------------------------------------------------- */

/*
 * An open-addressing set of addresses, read lock-free by the handler.
 * Slots go 0 -> address -> TOMBSTONE, never back to 0, so a probe that
 * meets 0 may stop. Writers (the shim's scanner) serialise among
 * themselves with their own lock.
 */
#define SITE_SLOTS	16384
#define TOMBSTONE	((uintptr_t)1)

static _Atomic uintptr_t sites[SITE_SLOTS];
static atomic_size_t nr_sites, used_slots;

static size_t site_hash(uintptr_t a)
{
	return (size_t)((a * 0x9E3779B97F4A7C15ULL) >> 50) & (SITE_SLOTS - 1);
}

int sgxemu__cpuid_site_add(uintptr_t addr)
{
	if (addr <= TOMBSTONE)
		return -EINVAL;
	if (sgxemu__cpuid_site_known(addr))
		return 0;
	/* Keep the table at most 3/4 full so probes stay short. */
	if (atomic_load(&used_slots) >= SITE_SLOTS / 4 * 3)
		return -ENOSPC;
	for (size_t i = site_hash(addr), n = 0; n < SITE_SLOTS;
	     i = (i + 1) & (SITE_SLOTS - 1), n++) {
		uintptr_t zero = 0;

		if (atomic_compare_exchange_strong(&sites[i], &zero, addr)) {
			atomic_fetch_add(&used_slots, 1);
			atomic_fetch_add(&nr_sites, 1);
			return 0;
		}
		if (zero == addr)
			return 0;
	}
	return -ENOSPC;
}

void sgxemu__cpuid_site_del(uintptr_t addr)
{
	for (size_t i = site_hash(addr), n = 0; n < SITE_SLOTS;
	     i = (i + 1) & (SITE_SLOTS - 1), n++) {
		uintptr_t v = atomic_load(&sites[i]);

		if (!v)
			return;
		if (v == addr) {
			atomic_store(&sites[i], TOMBSTONE);
			atomic_fetch_sub(&nr_sites, 1);
			return;
		}
	}
}

bool sgxemu__cpuid_site_known(uintptr_t addr)
{
	for (size_t i = site_hash(addr), n = 0; n < SITE_SLOTS;
	     i = (i + 1) & (SITE_SLOTS - 1), n++) {
		uintptr_t v = atomic_load_explicit(&sites[i],
						   memory_order_acquire);

		if (!v)
			return false;
		if (v == addr)
			return true;
	}
	return false;
}

size_t sgxemu__cpuid_nr_sites(void)
{
	return atomic_load(&nr_sites);
}

/* --- the trap ----------------------------------------------------------- */

/* Perform the CPUID at @g as the part @m, and step over it. */
static void answer_at(const struct sgxemu_cpuid_model *m, greg_t *g)
{
	uint32_t regs[4];

	sgxemu__cpuid_native((uint32_t)g[REG_RAX], (uint32_t)g[REG_RCX], regs);
	sgxemu__cpuid_answer(m, (uint32_t)g[REG_RAX], (uint32_t)g[REG_RCX],
			     regs);
	/* CPUID writes the 32-bit registers: the upper halves become 0. */
	g[REG_RAX] = regs[0];
	g[REG_RBX] = regs[1];
	g[REG_RCX] = regs[2];
	g[REG_RDX] = regs[3];
	g[REG_RIP] += 2;
}

/*
 * Two models, one published: a trap on another thread keeps reading the
 * one it found while the next is written. (Replacements are rare: start,
 * then the platform's own values once it exists.)
 */
static struct sgxemu_cpuid_model models[2];
static struct sgxemu_cpuid_model *_Atomic current;
static atomic_int next_model;

void sgxemu__cpuid_publish(const struct sgxemu_cpuid_model *m)
{
	int i = atomic_fetch_add(&next_model, 1) & 1;

	models[i] = *m;
	atomic_store_explicit(&current, &models[i], memory_order_release);
}

#define X86_TRAP_UD_NR	6
#define X86_TRAP_GP_NR	13

bool sgxemu__cpuid_trap(ucontext_t *uc)
{
	greg_t *g = uc->uc_mcontext.gregs;
	const uint8_t *ip = (const uint8_t *)(uintptr_t)g[REG_RIP];
	const struct sgxemu_cpuid_model *m;
	int mode = atomic_load(&mech);

	m = atomic_load_explicit(&current, memory_order_acquire);
	if (!m || mode == SGXEMU_CPUID_OFF || !ip)
		return false;
	if (g[REG_TRAPNO] == X86_TRAP_GP_NR) {
		/* A #GP at CPUID is faulting (CPUID has no operand that
		 * could fault otherwise). */
		if (ip[0] != 0x0f || ip[1] != 0xa2)
			return false;
	} else if (g[REG_TRAPNO] == X86_TRAP_UD_NR) {
		if (ip[0] != 0x0f || ip[1] != 0x0b ||
		    !sgxemu__cpuid_site_known((uintptr_t)ip))
			return false;
	} else {
		return false;
	}
	answer_at(m, g);
	return true;
}

/* The standard XSAVE image's size for @xfrm (sgx_xsave_layout: no CPUID
 * here, in the handler of CPUID's own fault). */
static uint32_t xsave_size(uint64_t xfrm)
{
	uint32_t size = 576;

	for (unsigned i = 2; i < 64; i++) {
		uint32_t end = sgx_xsave_layout.offset[i] +
			       sgx_xsave_layout.size[i];

		if ((xfrm & (1ULL << i)) && sgx_xsave_layout.size[i] &&
		    end > size)
			size = end;
	}
	return size;
}

bool sgxemu__cpuid_enclave(ucontext_t *uc, uint64_t xfrm)
{
	const struct sgxemu_cpuid_model *m;
	greg_t *g = uc->uc_mcontext.gregs;
	uint32_t leaf = (uint32_t)g[REG_RAX], subleaf = (uint32_t)g[REG_RCX];

	m = atomic_load_explicit(&current, memory_order_acquire);
	if (!m || atomic_load(&mech) != SGXEMU_CPUID_FAULT ||
	    atomic_load(&enclave_ud))
		return false;
	answer_at(m, g);
	/* In enclave mode XCR0 is XFRM on hardware: leaf 0xD's EBX, the
	 * size of the features XCR0 enables, is XFRM's. */
	if (leaf == 0xd && subleaf == 0)
		g[REG_RBX] = xsave_size(xfrm);
	return true;
}

bool sgxemu__cpuid_faulted(const ucontext_t *uc)
{
	const greg_t *g = uc->uc_mcontext.gregs;
	const uint8_t *ip = (const uint8_t *)(uintptr_t)g[REG_RIP];

	return atomic_load(&mech) == SGXEMU_CPUID_FAULT &&
	       g[REG_TRAPNO] == X86_TRAP_GP_NR && ip && ip[0] == 0x0f &&
	       ip[1] == 0xa2;
}

/* --- the C API ---------------------------------------------------------- */

int sgxemu_cpuid(uint32_t leaf, uint32_t subleaf, uint32_t regs[4])
{
	struct sgxemu_cpuid_model m;
	int ret;

	if (!regs)
		return -EINVAL;
	ret = sgxemu_platform_init();
	if (ret)
		return ret;
	sgxemu__cpuid_model_cpu(&m, sgxemu__cpu());
	sgxemu__cpuid_native(leaf, subleaf, regs);
	sgxemu__cpuid_answer(&m, leaf, subleaf, regs);
	return 0;
}

const char *sgxemu_cpuid_mechanism(void)
{
	const char *note;

	return sgxemu__cpuid_mech_name(sgxemu__cpuid_choose(&note));
}
