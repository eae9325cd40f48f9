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
 * Carry out the instruction @insn (@len bytes, fetched at the RIP of @uc)
 * whose memory access faulted on an abort page: a load into a
 * general-purpose or XMM register gets all ones (MOV, MOVZX, MOVSX,
 * MOVSXD, MOVD/MOVQ, MOVDQU/MOVDQA/MOVUPS/MOVAPS/LDDQU), a store (MOV,
 * MOVNTI, MOVD/MOVQ, the vector moves above) is dropped, and RIP moves
 * past it. False, with @uc untouched, for any other instruction (the
 * caller then lets the fault through).
 */
bool sgxemu__abort_page_emulate(ucontext_t *uc, const uint8_t *insn,
				size_t len);

#pragma GCC visibility pop
#endif
