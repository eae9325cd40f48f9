/* SPDX-License-Identifier: MIT */
/*
 * Abort-page semantics for host code (sgx-facts.md §4.17,
 * linux-driver-facts.md §8.3 hardware note): a non-enclave access to an
 * EPC page the kernel has mapped reads all ones and drops writes, with no
 * fault. sgxemu keeps such pages inaccessible (the same page tables serve
 * enclave mode, where the EPCM must fault), so the host's access faults
 * and the faulting instruction is carried out here as the hardware would.
 */
#ifndef SGXEMU_DRIVER_ABORT_PAGE_H
#define SGXEMU_DRIVER_ABORT_PAGE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <ucontext.h>

#pragma GCC visibility push(hidden)

/*
 * Memory other than the abort page, for the string instructions: fault-safe
 * copies (false where the access faults) and whether @n bytes at @addr are
 * on an abort page for a read or a @write.
 */
struct sgxemu_abort_mem {
	bool (*read)(void *ctx, uint64_t addr, uint8_t *buf, size_t n);
	bool (*write)(void *ctx, uint64_t addr, const void *buf, size_t n);
	bool (*is_abort)(void *ctx, uint64_t addr, size_t n, bool write);
	void *ctx;
};

/*
 * Carry out the instruction @insn (@len bytes, fetched at the RIP of @uc)
 * whose memory access faulted on an abort page, which reads as all ones
 * and drops writes:
 *  - loads into a general-purpose register (MOV, MOVZX, MOVSX, MOVSXD) or
 *    a vector register (the SSE, VEX and unmasked EVEX moves, with their
 *    rules for the bits above the load: kept by SSE, cleared by VEX and
 *    EVEX, in the frame's XSAVE area), and the stores of those, dropped;
 *  - ALU instructions with a memory operand (ADD, ADC, SUB, SBB, CMP,
 *    AND, OR, XOR, TEST, INC, DEC, NEG, NOT, XCHG, XADD, CMPXCHG), their
 *    flags and register results computed on all ones;
 *  - MOVS, STOS, LODS (REP too), element by element through @mem, while
 *    an element is on an abort page; then RIP stays for the CPU to finish.
 * RIP moves past the instruction when it is done. False, with @uc
 * untouched, for any other instruction, and for an operand that crosses
 * from an abort page into ordinary memory (the caller lets the fault
 * through). @mem may be NULL: no string instructions then, and no
 * crossing check.
 */
bool sgxemu__abort_page_emulate(ucontext_t *uc, const uint8_t *insn,
				size_t len, const struct sgxemu_abort_mem *mem);

#pragma GCC visibility pop
#endif
