/* SPDX-License-Identifier: MIT */
/*
 * A library with a CPUID of its own, for tests/integration/test_cpuid_host.c:
 * dlopen'ed under `sgxemu run`, its CPUID must answer as the emulated part.
 */
#include <stdint.h>

__attribute__((noinline)) void cpuid_lib_probe(uint32_t leaf, uint32_t subleaf,
					       uint32_t regs[4])
{
	__asm__ volatile("cpuid"
			 : "=a"(regs[0]), "=b"(regs[1]), "=c"(regs[2]),
			   "=d"(regs[3])
			 : "0"(leaf), "2"(subleaf));
}
