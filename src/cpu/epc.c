/* SPDX-License-Identifier: MIT */
/*
 * The EPC, the EPCM, and what CPUID leaf 0x12 says about them.
 *
 * All EPC pages live in one memfd so that the engine can map any page at an
 * enclave linear address (MAP_SHARED of the same file offset); the
 * processor itself accesses them through its own mapping at cpu->epc. The
 * EPC is split into sections the way CPUID.(12H, n>=2) enumerates them, as
 * a multi-socket part would; sections are consecutive in the file.
 */
#include <cpuid.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "cpu/internal.h"

/* Intel's production launch-enclave key hash (sgx-facts.md §1.18). */
static const uint64_t sgx_default_lehash[4] = {
	0xa6053e051270b7acULL, 0x6cfbe8ba8b3b413dULL,
	0xc4916d99f2b3735dULL, 0xd4f8c05909f9bb3bULL,
};

uint64_t sgx_host_xcr0(void)
{
	unsigned int eax, ebx, ecx, edx;
	uint32_t lo, hi;

	/* XGETBV is #UD unless the OS enabled XSAVE (CPUID.1:ECX.OSXSAVE). */
	if (!__get_cpuid(1, &eax, &ebx, &ecx, &edx) || !(ecx & (1U << 27)))
		return SGX_XFRM_LEGACY;
	__asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
	return ((uint64_t)hi << 32) | lo;
}

/*
 * Size of the standard (non-compacted) XSAVE image for @xfrm: the end of the
 * highest enabled state component, as CPUID.(0DH, i) places it (offset in
 * EBX, size in EAX), never less than the legacy region plus the XSAVE
 * header. This is what the SSA frame must hold below GPRSGX.
 */
uint32_t sgx_xsave_size(uint64_t xfrm)
{
	uint32_t size = SGX_XSAVE_MIN_SIZE;

	for (unsigned i = 2; i < 63; i++) {
		unsigned int eax, ebx, ecx, edx;

		if (!(xfrm & (1ULL << i)))
			continue;
		__cpuid_count(0xD, i, eax, ebx, ecx, edx);
		(void)edx;
		/* ECX bit 0: supervisor state, not part of a user XSAVE image. */
		if (ecx & 1)
			continue;
		if (ebx + eax > size)
			size = ebx + eax;
	}
	return size;
}

/*
 * XSETBV's rules for XCR0 (SDM vol. 1, 13.3), which ECREATE applies to XFRM:
 * x87 always set; AVX needs SSE; the three AVX-512 bits go together and need
 * AVX; the two MPX bits go together; the two AMX bits go together.
 */
bool sgx_xfrm_legal(uint64_t xfrm)
{
	uint64_t avx512 = xfrm & SGX_XFRM_AVX512;
	uint64_t mpx = xfrm & SGX_XFRM_MPX;
	uint64_t amx = xfrm & SGX_XFRM_AMX;

	if (!(xfrm & SGX_XFRM_X87))
		return false;
	if ((xfrm & SGX_XFRM_AVX) && !(xfrm & SGX_XFRM_SSE))
		return false;
	if (avx512 && (avx512 != SGX_XFRM_AVX512 || !(xfrm & SGX_XFRM_AVX)))
		return false;
	if (mpx && mpx != SGX_XFRM_MPX)
		return false;
	if (amx && amx != SGX_XFRM_AMX)
		return false;
	return true;
}

uint32_t sgx_misc_size(uint32_t miscselect)
{
	return (miscselect & SGX_MISC_EXINFO) ? sizeof(struct sgx_exinfo) : 0;
}

uint64_t sgx_ssa_frame_min(uint64_t xfrm, uint32_t miscselect)
{
	return (uint64_t)sgx_xsave_size(xfrm) + sgx_misc_size(miscselect) +
	       SGX_GPRSGX_SIZE;
}

/*
 * Split @nr_pages of EPC into @n sections with distinct "physical" bases,
 * as a multi-socket part enumerates them.
 */
void sgx_epc_layout(size_t nr_pages, unsigned n, struct sgx_epc_section *out)
{
	size_t per = nr_pages / n, first = 0;
	uint64_t phys = SGX_DEFAULT_EPC_PHYS;

	for (unsigned i = 0; i < n; i++) {
		struct sgx_epc_section *s = &out[i];
		size_t bytes;

		s->first_page = first;
		s->nr_pages = (i == n - 1) ? nr_pages - first : per;
		s->phys_base = phys;
		first += s->nr_pages;
		/* Sections of a real part sit on different nodes: 1 GiB apart. */
		bytes = s->nr_pages << SGX_PAGE_SHIFT;
		phys += (bytes + (1ULL << 30) - 1) & ~((1ULL << 30) - 1);
	}
}

uint64_t sgx_attr_supported(const struct sgx_cpu_config *cfg)
{
	return SGX_ATTR_SUPPORTED | (cfg->aexnotify ? SGX_ATTR_AEXNOTIFY : 0);
}

int sgx_cpu_config_defaults(struct sgx_cpu_config *cfg)
{
	if (!cfg->epc_size)
		cfg->epc_size = SGX_DEFAULT_EPC_SIZE;
	if (!cfg->nr_sections)
		cfg->nr_sections = 1;
	if (!cfg->xfrm_supported)
		cfg->xfrm_supported = sgx_host_xcr0();
	if (!cfg->miscselect_supported)
		cfg->miscselect_supported = SGX_MISC_EXINFO;
	if (!cfg->max_enclave_size_64)
		cfg->max_enclave_size_64 = SGX_MAX_ENCLAVE_SIZE_64;
	if (cfg->epc_size % SGX_PAGE_SIZE ||
	    cfg->nr_sections > SGX_MAX_EPC_SECTIONS ||
	    cfg->nr_sections > cfg->epc_size / SGX_PAGE_SIZE ||
	    cfg->max_enclave_size_64 > 63)
		return -EINVAL;
	return 0;
}

int sgx_cpu_init(struct sgx_cpu *cpu, const struct sgx_cpu_config *config)
{
	struct sgx_cpu_config cfg = {0};
	int err;

	if (config)
		cfg = *config;
	if (sgx_cpu_config_defaults(&cfg))
		return -EINVAL;

	memset(cpu, 0, sizeof(*cpu));
	cpu->config = cfg;
	cpu->nr_pages = cfg.epc_size / SGX_PAGE_SIZE;
	cpu->epc_fd = memfd_create("sgxemu-epc", MFD_CLOEXEC);
	if (cpu->epc_fd < 0)
		return -errno;
	if (ftruncate(cpu->epc_fd, cfg.epc_size)) {
		err = -errno;
		goto out_fd;
	}
	cpu->epc = mmap(NULL, cfg.epc_size, PROT_READ | PROT_WRITE, MAP_SHARED,
			cpu->epc_fd, 0);
	if (cpu->epc == MAP_FAILED) {
		err = -errno;
		goto out_fd;
	}
	cpu->epcm = calloc(cpu->nr_pages, sizeof(*cpu->epcm));
	cpu->ctl = calloc(cpu->nr_pages, sizeof(*cpu->ctl));
	cpu->epc_used = calloc(cpu->nr_pages, 1);
	if (!cpu->epcm || !cpu->ctl || !cpu->epc_used) {
		err = -ENOMEM;
		goto out_map;
	}
	sgx_epc_layout(cpu->nr_pages, cfg.nr_sections, cpu->sections);
	cpu->nr_sections = cfg.nr_sections;
	memcpy(cpu->lepubkeyhash, sgx_default_lehash, sizeof(sgx_default_lehash));
	/* Deterministic root secrets until the platform loads its own. */
	sgx_keys_simulator_defaults(&cpu->keys);
	atomic_init(&cpu->next_eid, 1);
	pthread_mutex_init(&cpu->lock, NULL);
	return 0;

out_map:
	free(cpu->epcm);
	free(cpu->ctl);
	free(cpu->epc_used);
	munmap(cpu->epc, cfg.epc_size);
out_fd:
	close(cpu->epc_fd);
	memset(cpu, 0, sizeof(*cpu));
	cpu->epc_fd = -1;
	return err;
}

void sgx_cpu_epc_shared(struct sgx_cpu *cpu)
{
	if (cpu->epc_used)
		memset(cpu->epc_used, 1, cpu->nr_pages);
}

void sgx_encl_ctl_free(struct sgx_encl_ctl *ctl)
{
	if (!ctl)
		return;
	EVP_MD_CTX_free(ctl->mrenclave);
	free(ctl->pages);
	pthread_mutex_destroy(&ctl->lock);
	free(ctl);
}

void sgx_cpu_destroy(struct sgx_cpu *cpu)
{
	struct sgx_encl_ctl *ctl, *next;

	if (!cpu->epc)
		return;
	for (ctl = cpu->enclaves; ctl; ctl = next) {
		next = ctl->next;
		sgx_encl_ctl_free(ctl);
	}
	for (ctl = cpu->lost; ctl; ctl = next) {
		next = ctl->next;
		sgx_encl_ctl_free(ctl);
	}
	free(cpu->epcm);
	free(cpu->ctl);
	free(cpu->epc_used);
	munmap(cpu->epc, cpu->nr_pages << SGX_PAGE_SHIFT);
	close(cpu->epc_fd);
	pthread_mutex_destroy(&cpu->lock);
	memset(cpu, 0, sizeof(*cpu));
	cpu->epc_fd = -1;
}

void *sgx_epc_page(struct sgx_cpu *cpu, size_t index)
{
	if (index >= cpu->nr_pages)
		return NULL;
	return cpu->epc + (index << SGX_PAGE_SHIFT);
}

long sgx_epc_index(const struct sgx_cpu *cpu, const void *addr)
{
	uintptr_t a = (uintptr_t)addr, base = (uintptr_t)cpu->epc;

	if (!cpu->epc || a < base || a - base >= (cpu->nr_pages << SGX_PAGE_SHIFT))
		return -1;
	return (long)((a - base) >> SGX_PAGE_SHIFT);
}

/* Caller holds cpu->lock. */
static struct sgx_encl_ctl *find_enclave_locked(struct sgx_cpu *cpu,
						uint64_t linaddr)
{
	for (struct sgx_encl_ctl *ctl = cpu->enclaves; ctl; ctl = ctl->next)
		if (linaddr >= ctl->base && linaddr - ctl->base < ctl->size)
			return ctl;
	return NULL;
}

struct sgx_encl_ctl *sgx_cpu_find_enclave(struct sgx_cpu *cpu, uint64_t linaddr)
{
	struct sgx_encl_ctl *ctl;

	pthread_mutex_lock(&cpu->lock);
	ctl = find_enclave_locked(cpu, linaddr);
	pthread_mutex_unlock(&cpu->lock);
	return ctl;
}

long sgx_cpu_lookup(struct sgx_cpu *cpu, uint64_t linaddr)
{
	struct sgx_encl_ctl *ctl;
	long index = -1;

	pthread_mutex_lock(&cpu->lock);
	ctl = find_enclave_locked(cpu, linaddr);
	if (ctl) {
		uint32_t v = ctl->pages[(linaddr - ctl->base) >> SGX_PAGE_SHIFT];

		if (v)
			index = (long)v - 1;
	}
	pthread_mutex_unlock(&cpu->lock);
	return index;
}

/*
 * CPUID.(EAX=12H, ECX=subleaf) in the SDM's format:
 *  0: EAX SGX1/SGX2 bits, EBX MISCSELECT supported, EDX max enclave size
 *     log2 (7:0 outside 64-bit mode, 15:8 in 64-bit mode);
 *  1: EAX:EBX allowed ATTRIBUTES.FLAGS, ECX:EDX allowed XFRM;
 *  n>=2: EPC section n-2 (EAX[3:0]=1, base 31:12 in EAX, 51:32 in EBX[19:0];
 *     ECX[3:0]=1 confidentiality+integrity protected, size likewise in
 *     ECX/EDX), or all zero past the last section.
 */
void sgx_cpuid_leaf12(const struct sgx_cpu_config *cfg,
		      const struct sgx_epc_section *sections, unsigned nr,
		      uint32_t subleaf, uint32_t regs[4])
{
	regs[0] = regs[1] = regs[2] = regs[3] = 0;
	if (subleaf == 0) {
		regs[0] = 1U | (cfg->sgx2 ? 2U : 0U) |
			  (cfg->eupdatesvn ? 1U << 10 : 0U) |
			  (cfg->aexnotify ? 1U << 11 : 0U);
		regs[1] = cfg->miscselect_supported;
		regs[3] = SGX_MAX_ENCLAVE_SIZE_32 |
			  ((uint32_t)cfg->max_enclave_size_64 << 8);
	} else if (subleaf == 1) {
		uint64_t attr = sgx_attr_supported(cfg);

		regs[0] = (uint32_t)attr;
		regs[1] = (uint32_t)(attr >> 32);
		regs[2] = (uint32_t)cfg->xfrm_supported;
		regs[3] = (uint32_t)(cfg->xfrm_supported >> 32);
	} else if (subleaf - 2 < nr) {
		const struct sgx_epc_section *s = &sections[subleaf - 2];
		uint64_t size = (uint64_t)s->nr_pages << SGX_PAGE_SHIFT;

		regs[0] = 1U | ((uint32_t)s->phys_base & 0xFFFFF000U);
		regs[1] = (uint32_t)(s->phys_base >> 32) & 0xFFFFFU;
		regs[2] = 1U | ((uint32_t)size & 0xFFFFF000U);
		regs[3] = (uint32_t)(size >> 32) & 0xFFFFFU;
	}
}

void sgx_cpu_cpuid(const struct sgx_cpu *cpu, uint32_t subleaf, uint32_t regs[4])
{
	sgx_cpuid_leaf12(&cpu->config, cpu->sections, cpu->nr_sections,
			 subleaf, regs);
}
