// SPDX-License-Identifier: MIT
/*
 * Reading enclave memory for coverage, by the rule a debugger's reads
 * follow (the kernel's sgx_vma_access, src/dbg/ptrace.c): qword by qword
 * through EDBGRD, so only a DEBUG enclave's pages can be read and the
 * EPCM decides as it does for a debugger; an evicted page is loaded back
 * first. Host code's plain loads would not do: on hardware they see the
 * abort page, and here the driver gives them that too.
 */
#include <errno.h>
#include <string.h>

#include "cov/cov.h"
#include "cpu/cpu.h"
#include "driver/paging.h"
#include "engine/engine.h"

/* The EPC page at @addr, loading it back if it was evicted; -1 if none. */
static long epc_page_at(struct sgxemu_enclave *e, uint64_t addr)
{
	struct sgx_cpu *cpu = sgxemu__cpu();
	long idx = sgx_cpu_lookup(cpu, addr);
	size_t n = (addr - e->base) >> SGX_PAGE_SHIFT;

	if (idx >= 0)
		return idx;
	/* Only a page written back is brought in: an EDMM enclave's
	 * absent page is not EAUGed by a read. */
	if (e->pg && (e->pg->state[n] & PS_EVICTED) &&
	    !sgxemu__paging_fault(e, addr))
		return sgx_cpu_lookup(cpu, addr);
	return -1;
}

int cov_read(struct sgxemu_enclave *e, uint64_t addr, void *buf, size_t len)
{
	struct sgx_cpu *cpu = sgxemu__cpu();
	uint8_t *out = buf;
	size_t done = 0;

	if (addr < e->base || addr - e->base > e->size ||
	    len > e->size - (addr - e->base))
		return -EFAULT;
	while (done < len) {
		uint64_t a = addr + done, q = a & ~7ULL, word;
		size_t in = a & 7, n = len - done < 8 - in ? len - done : 8 - in;
		long idx = epc_page_at(e, q);
		int r;

		if (idx < 0)
			return -EFAULT;
		r = sgx_edbgrd(cpu, (uint8_t *)sgx_epc_page(cpu, (size_t)idx) +
			       (q & (SGX_PAGE_SIZE - 1)), &word);
		if (r == SGX_PAGE_NOT_DEBUGGABLE)
			return -EFAULT;
		if (r)
			return -EPERM;
		memcpy(out + done, (uint8_t *)&word + in, n);
		done += n;
	}
	return 0;
}

int cov_read_str(struct sgxemu_enclave *e, uint64_t addr, char *buf,
		 size_t max)
{
	for (size_t i = 0; i < max; i++) {
		int r = cov_read(e, addr + i, buf + i, 1);

		if (r)
			return r;
		if (!buf[i])
			return 0;
	}
	return -ENAMETOOLONG;
}
