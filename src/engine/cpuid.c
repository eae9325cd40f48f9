/* SPDX-License-Identifier: MIT */
/*
 * CPUID answers of the emulated SGX part for host code (engine/cpuid.h;
 * sgx-facts.md §1.18), the trap that delivers them, and the C API's
 * sgxemu_cpuid().
 *
 * The emulated part is the host CPU plus SGX: CPUID.(7,0):EBX[2] SGX and,
 * with flexible launch control, ECX[30] SGX_LC; leaf 0x12 as the platform's
 * processor enumerates it (sgx_cpuid_leaf12: the same code `sgxemu info`
 * prints from), EDECCSSA never (not implemented); leaf 0 reports at least
 * 0x12 as the highest basic leaf, since an AMD host stops lower and
 * runtimes read that first.
 *
 * An SGX part is an Intel core, and runtimes rely on its XSAVE layout:
 * Gramine checks the CPUID.(0DH) offsets and sizes that reach its enclave
 * against Intel's for every component of XFRM, and stops where they differ.
 * An AMD core places AVX-512's and PKRU's state elsewhere (Zen 4: OPMASK at
 * 832, not 1088). The part does not advertise such components: their
 * feature flags (leaf 7, and leaf 1 for AVX) read as absent, so a runtime
 * that picks XFRM from them does not ask for them. Leaf 0xD stays the
 * host's (XSAVE still writes the host's layout for all XCR0 holds), and so
 * does the XFRM that leaf 0x12.1 allows and ECREATE accepts: an enclave
 * that asks for AVX-512 on such a host still gets it.
 */
#include <asm/prctl.h>
#include <errno.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>

#include "engine/cpuid.h"
#include "engine/engine.h"

/* Intel's standard-format XSAVE layout (SDM vol. 1, 13.4; sgx-facts.md). */
static const uint32_t intel_xsave[SGXEMU_XSAVE_COMPONENTS][2] = {
	[2] = { 256, 576 },				/* AVX YMM_Hi128 */
	[3] = { 64, 960 }, [4] = { 64, 1024 },		/* MPX */
	[5] = { 64, 1088 }, [6] = { 512, 1152 },	/* AVX-512 */
	[7] = { 1024, 1664 },
	[9] = { 8, 2688 },				/* PKRU */
	[17] = { 64, 2752 }, [18] = { 8192, 2816 },	/* AMX */
};

#define XCOMP(i)	(1ULL << (i))
#define XSAVE_AVX	XCOMP(2)
#define XSAVE_MPX	(XCOMP(3) | XCOMP(4))
#define XSAVE_AVX512	(XCOMP(5) | XCOMP(6) | XCOMP(7))
#define XSAVE_PKRU	XCOMP(9)
#define XSAVE_AMX	(XCOMP(17) | XCOMP(18))

uint64_t sgxemu__xsave_foreign(uint64_t xcr0,
			       const uint32_t layout[SGXEMU_XSAVE_COMPONENTS][2])
{
	static const uint64_t groups[] = {
		XSAVE_AVX, XSAVE_MPX, XSAVE_AVX512, XSAVE_PKRU, XSAVE_AMX,
	};
	uint64_t hidden = 0;

	for (size_t g = 0; g < sizeof(groups) / sizeof(*groups); g++)
		for (unsigned i = 2; i < SGXEMU_XSAVE_COMPONENTS; i++)
			if ((groups[g] & xcr0 & XCOMP(i)) &&
			    (layout[i][0] != intel_xsave[i][0] ||
			     layout[i][1] != intel_xsave[i][1]))
				hidden |= groups[g];
	if (hidden & XSAVE_AVX)
		hidden |= XSAVE_AVX512;
	return hidden & xcr0;
}

/* The host's own layout, read past CPUID faulting. */
static uint64_t host_xsave_foreign(void)
{
	uint32_t layout[SGXEMU_XSAVE_COMPONENTS][2], r[4], lo, hi;
	uint64_t xcr0;

	/* XGETBV is #UD unless the OS enabled XSAVE (CPUID.1:ECX.OSXSAVE). */
	sgxemu__cpuid_native(1, 0, r);
	if (!(r[2] & (1U << 27)))
		return 0;
	__asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
	xcr0 = (uint64_t)hi << 32 | lo;

	for (unsigned i = 0; i < SGXEMU_XSAVE_COMPONENTS; i++) {
		if (i >= 2 && (xcr0 & XCOMP(i)))
			sgxemu__cpuid_native(0xD, i, r);
		else
			r[0] = r[1] = 0;
		layout[i][0] = r[0];
		layout[i][1] = r[1];
	}
	return sgxemu__xsave_foreign(xcr0, layout);
}

void sgxemu__cpuid_model_config(struct sgxemu_cpuid_model *m,
				const struct sgx_cpu_config *cfg,
				const struct sgx_epc_section *sections,
				unsigned nr, bool lc_flexible)
{
	static _Atomic uint64_t foreign = ~0ULL;	/* not read yet */
	uint64_t f = atomic_load(&foreign);

	if (f == ~0ULL) {
		f = host_xsave_foreign();
		atomic_store(&foreign, f);
	}
	memset(m, 0, sizeof(*m));
	m->lc_flexible = lc_flexible;
	m->xsave_hidden = f;
	if (nr > SGX_MAX_EPC_SECTIONS)
		nr = SGX_MAX_EPC_SECTIONS;
	/* Sub-leaf 2 + nr stays zero: the first invalid section. */
	for (uint32_t s = 0; s < 2 + nr; s++)
		sgx_cpuid_leaf12(cfg, sections, nr, s, m->leaf12[s]);
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
	v = getenv("SGXEMU_SGX2");
	cfg.sgx2 = !v || !*v || strcmp(v, "0") != 0;
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
#define LEAF7_EBX_SGX		(1U << 2)
#define LEAF7_ECX_SGX_LC	(1U << 30)

/*
 * The feature flags that need a hidden component's state: leaf 1 ECX (FMA,
 * AVX, F16C), leaf 7.0 EBX/ECX/EDX and leaf 7.1 EAX/EDX.
 */
#define L1_ECX_AVX	((1U << 12) | (1U << 28) | (1U << 29))
#define L7_EBX_AVX	(1U << 5)				/* AVX2 */
#define L7_EBX_MPX	(1U << 14)
#define L7_EBX_AVX512	((1U << 16) | (1U << 17) | (1U << 21) | (1U << 26) | \
			 (1U << 27) | (1U << 28) | (1U << 30) | (1U << 31))
#define L7_ECX_AVX512	((1U << 1) | (1U << 6) | (1U << 11) | (1U << 12) | \
			 (1U << 14))
#define L7_EDX_AVX512	((1U << 2) | (1U << 3) | (1U << 8) | (1U << 23))
#define L71_EAX_AVX512	(1U << 5)				/* BF16 */
#define L71_EDX_AVX512	(1U << 19)				/* AVX10 */
#define L7_ECX_PKRU	((1U << 3) | (1U << 4))			/* PKU, OSPKE */
#define L7_EDX_AMX	((1U << 22) | (1U << 24) | (1U << 25))
#define L71_EAX_AMX	(1U << 21)				/* AMX-FP16 */
#define L71_EDX_AMX	(1U << 8)				/* AMX-COMPLEX */

static void hide_features(uint64_t hidden, uint32_t leaf, uint32_t subleaf,
			  uint32_t regs[4])
{
	if (leaf == 1 && (hidden & XSAVE_AVX)) {
		regs[2] &= ~L1_ECX_AVX;
	} else if (leaf == 7 && subleaf == 0) {
		if (hidden & XSAVE_AVX)
			regs[1] &= ~L7_EBX_AVX;
		if (hidden & XSAVE_MPX)
			regs[1] &= ~L7_EBX_MPX;
		if (hidden & XSAVE_AVX512) {
			regs[1] &= ~L7_EBX_AVX512;
			regs[2] &= ~L7_ECX_AVX512;
			regs[3] &= ~L7_EDX_AVX512;
		}
		if (hidden & XSAVE_PKRU)
			regs[2] &= ~L7_ECX_PKRU;
		if (hidden & XSAVE_AMX)
			regs[3] &= ~L7_EDX_AMX;
	} else if (leaf == 7 && subleaf == 1) {
		if (hidden & XSAVE_AVX512) {
			regs[0] &= ~L71_EAX_AVX512;
			regs[3] &= ~L71_EDX_AVX512;
		}
		if (hidden & XSAVE_AMX) {
			regs[0] &= ~L71_EAX_AMX;
			regs[3] &= ~L71_EDX_AMX;
		}
	}
}

void sgxemu__cpuid_answer(const struct sgxemu_cpuid_model *m, uint32_t leaf,
			  uint32_t subleaf, uint32_t regs[4])
{
	switch (leaf) {
	case 0:
		if (regs[0] < CPUID_SGX_LEAF)
			regs[0] = CPUID_SGX_LEAF;
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
	hide_features(m->xsave_hidden, leaf, subleaf, regs);
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

/* SGXEMU_CPUID_ENCLAVE=ud: CPUID in enclave mode is #UD, as on hardware. */
static _Atomic bool enclave_ud;

void sgxemu__cpuid_set_mech(enum sgxemu_cpuid_mech m)
{
	const char *v = getenv("SGXEMU_CPUID_ENCLAVE");

	atomic_store(&enclave_ud, v && !strcmp(v, "ud"));
	atomic_store(&mech, (int)m);
}

bool sgxemu__cpuid_enclave_ud(void)
{
	return atomic_load(&enclave_ud);
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
	uint32_t regs[4];
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
	sgxemu__cpuid_native((uint32_t)g[REG_RAX], (uint32_t)g[REG_RCX], regs);
	sgxemu__cpuid_answer(m, (uint32_t)g[REG_RAX], (uint32_t)g[REG_RCX],
			     regs);
	/* CPUID writes the 32-bit registers: the upper halves become 0. */
	g[REG_RAX] = regs[0];
	g[REG_RBX] = regs[1];
	g[REG_RCX] = regs[2];
	g[REG_RDX] = regs[3];
	g[REG_RIP] += 2;
	return true;
}

bool sgxemu__cpuid_enclave(ucontext_t *uc)
{
	greg_t *g = uc->uc_mcontext.gregs;
	const struct sgxemu_cpuid_model *m;
	uint32_t regs[4];

	m = atomic_load_explicit(&current, memory_order_acquire);
	if (!m || atomic_load(&mech) != SGXEMU_CPUID_FAULT ||
	    atomic_load(&enclave_ud))
		return false;
	sgxemu__cpuid_native((uint32_t)g[REG_RAX], (uint32_t)g[REG_RCX], regs);
	sgxemu__cpuid_answer(m, (uint32_t)g[REG_RAX], (uint32_t)g[REG_RCX],
			     regs);
	g[REG_RAX] = regs[0];
	g[REG_RBX] = regs[1];
	g[REG_RCX] = regs[2];
	g[REG_RDX] = regs[3];
	g[REG_RIP] += 2;
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
