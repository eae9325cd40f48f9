/* SPDX-License-Identifier: MIT */
/*
 * Memory operands of the ENCLU leaves executed inside an enclave (EGETKEY,
 * EREPORT, and the SGX2 leaves): the SDM's checks on an operand's linear
 * address, then the EPC bytes behind it.
 */
#ifndef SGXEMU_CPU_ENCL_MEM_H
#define SGXEMU_CPU_ENCL_MEM_H

#include <stdbool.h>
#include <stdint.h>

#include "cpu/cpu.h"
#include "cpu/keys.h"

/*
 * Resolve the operand [@linaddr, @linaddr + @size) of the enclave @ctl:
 * #GP unless it is @align-aligned and inside ELRANGE; #PF unless its page
 * is a valid, unblocked, non-pending, unmodified PT_REG page of this
 * enclave mapped at that address, readable, and writable if @write.
 * On success *@ptr points at the bytes in the EPC. The operand must not
 * cross a page (every architectural operand is aligned to its size).
 */
int sgx_encl_operand(struct sgx_cpu *cpu, struct sgx_encl_ctl *ctl,
		     uint64_t linaddr, uint64_t size, uint64_t align,
		     bool write, void **ptr);

/* The identity key derivation reads, from the SECS and its hidden state. */
void sgx_encl_key_identity(struct sgx_cpu *cpu, struct sgx_encl_ctl *ctl,
			   struct sgx_key_identity *id);

#endif /* SGXEMU_CPU_ENCL_MEM_H */
