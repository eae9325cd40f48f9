/* SPDX-License-Identifier: MIT */
/*
 * CPUID as host code sees it on the emulated platform (issue 13): the
 * answers (cpuid.c), and the two ways host CPUID instructions reach them,
 * chosen once per process:
 *
 *   fault    Linux CPUID faulting (arch_prctl ARCH_SET_CPUID 0; the CPU's
 *            cpuid_fault feature, Intel): every CPUID raises #GP, SIGSEGV
 *            with trapno 13 at the 0f a2 bytes.
 *   rewrite  no faulting (AMD), or SGXEMU_CPUID=rewrite: the shim rewrites
 *            each CPUID found by an instruction decoder in the program's
 *            executable mappings to UD2 (0f 0b: one byte changes), and
 *            records the address; the #UD (SIGILL, trapno 6) at a recorded
 *            address is a CPUID.
 *
 * The handler side (sgxemu__cpuid_trap) is async-signal-safe: no locks, no
 * allocation, raw system calls, errno untouched.
 */
#ifndef SGXEMU_ENGINE_CPUID_H
#define SGXEMU_ENGINE_CPUID_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <ucontext.h>

#include "cpu/cpu.h"

#pragma GCC visibility push(hidden)

/* Sub-leaves 0, 1, one per EPC section, then the invalid one. */
#define SGXEMU_CPUID_SUBLEAVES	(2 + SGX_MAX_EPC_SECTIONS + 1)

/* What the emulated part enumerates beyond the host CPU. */
struct sgxemu_cpuid_model {
	bool lc_flexible;			/* CPUID.(7,0):ECX[30] */
	uint32_t leaf12[SGXEMU_CPUID_SUBLEAVES][4];
	/* The host's highest basic leaf: the part's is at least
	 * SGXEMU_CPUID_MAX_LEAF, and leaves past the host's read as 0. */
	uint32_t host_max_leaf;
	/* TSC Hz for leaves 0x15/0x16 where the host has none; 0: this
	 * host's (sgxemu__tsc_hz, found on the first ask). */
	uint64_t tsc_hz;
};

/* The highest basic leaf the part answers itself (0x16, frequencies). */
#define SGXEMU_CPUID_MAX_LEAF	0x16

/* Where this host's TSC frequency came from (tsc_freq.c). */
enum sgxemu_tsc_source {
	SGXEMU_TSC_MEASURED = 0,
	SGXEMU_TSC_LEAF15,
	SGXEMU_TSC_LEAF16,
	SGXEMU_TSC_HYPERVISOR,
};

/* This host's TSC frequency in Hz (0 if it cannot be found), cached after
 * the first call; @source (may be NULL) says where it came from.
 * Async-signal-safe. */
uint64_t sgxemu__tsc_hz(enum sgxemu_tsc_source *source);
const char *sgxemu__tsc_source_name(enum sgxemu_tsc_source source);
/* Leaves 0x15 and 0x16 as an SGX part with a TSC of @hz enumerates them
 * (25 MHz crystal, ratio in lowest terms; base = maximum frequency). */
void sgxemu__cpuid_tsc_leaves(uint64_t hz, uint32_t l15[4], uint32_t l16[4]);

enum sgxemu_cpuid_mech {
	SGXEMU_CPUID_OFF = 0,		/* host CPUID runs natively */
	SGXEMU_CPUID_FAULT,
	SGXEMU_CPUID_REWRITE,
};

/* The model of a configuration (defaults filled in) with its sections. */
void sgxemu__cpuid_model_config(struct sgxemu_cpuid_model *m,
				const struct sgx_cpu_config *cfg,
				const struct sgx_epc_section *sections,
				unsigned nr, bool lc_flexible);
/* The model of the running platform's processor. */
void sgxemu__cpuid_model_cpu(struct sgxemu_cpuid_model *m,
			     const struct sgx_cpu *cpu);
/*
 * The model the platform will have, from the environment alone
 * (SGXEMU_EPC_SIZE, SGXEMU_EPC_SECTIONS, SGXEMU_SGX2,
 * SGXEMU_LAUNCH_CONTROL), without creating it: the shim answers CPUID
 * before the program opens a device. -EINVAL for a value the platform
 * would refuse.
 */
int sgxemu__cpuid_model_env(struct sgxemu_cpuid_model *m);

/* @regs holds the host CPU's answer for @leaf/@subleaf; make it the
 * emulated part's. Pure. */
void sgxemu__cpuid_answer(const struct sgxemu_cpuid_model *m, uint32_t leaf,
			  uint32_t subleaf, uint32_t regs[4]);

/* The host CPU's own answer, also on a thread with CPUID faulting on. */
void sgxemu__cpuid_native(uint32_t leaf, uint32_t subleaf, uint32_t regs[4]);

/* The model traps answer from (copied; may be replaced at any time). */
void sgxemu__cpuid_publish(const struct sgxemu_cpuid_model *m);

/* CPUID faulting: can this CPU do it; switch it on for the calling
 * thread (0 or -errno; threads created later and fork children inherit
 * it, execve clears it). */
bool sgxemu__cpuid_fault_available(void);
int sgxemu__cpuid_fault_enable(void);
bool sgxemu__cpuid_fault_enabled(void);

/*
 * The mechanism SGXEMU_CPUID asks for (auto, the default: fault where
 * available, else rewrite; fault; rewrite; off) on this CPU. @note gets a
 * reason when the request cannot be met (fault without cpuid_fault), or
 * NULL.
 */
enum sgxemu_cpuid_mech sgxemu__cpuid_choose(const char **note);
void sgxemu__cpuid_set_mech(enum sgxemu_cpuid_mech mech);
enum sgxemu_cpuid_mech sgxemu__cpuid_mech(void);
const char *sgxemu__cpuid_mech_name(enum sgxemu_cpuid_mech mech);

/* Rewritten CPUID sites (their UD2 addresses). add: 0, or -ENOSPC when
 * the table is full (the site must then stay native). */
int sgxemu__cpuid_site_add(uintptr_t addr);
void sgxemu__cpuid_site_del(uintptr_t addr);
bool sgxemu__cpuid_site_known(uintptr_t addr);
size_t sgxemu__cpuid_nr_sites(void);

#pragma GCC visibility pop

/*
 * A host-context SIGSEGV (fault: trapno 13 at 0f a2) or SIGILL (rewrite:
 * trapno 6 at a recorded UD2) that is a CPUID: emulate it in @uc (EAX, EBX,
 * ECX, EDX zero-extended, RIP += 2) and return true; false for any other
 * fault. Async-signal-safe.
 */
bool sgxemu__cpuid_trap(ucontext_t *uc);
/*
 * A CPUID in enclave mode that CPUID faulting stopped (the caller read the
 * 0f a2 bytes from the enclave): answer it in place as the part, so that it
 * behaves as on a host without faulting, where it runs natively, except
 * that leaf 0xD sub-leaf 0's EBX is the XSAVE size of the enclave's
 * @xfrm, which hardware has in XCR0 in enclave mode (false:
 * leave it to be the #UD hardware raises, under SGXEMU_CPUID_ENCLAVE=ud or
 * when no model is published).
 */
bool sgxemu__cpuid_enclave(ucontext_t *uc, uint64_t xfrm);
/* SGXEMU_CPUID_ENCLAVE=ud asks for hardware's #UD (from the environment;
 * sgxemu__cpuid_set_mech takes it in for the handler). */
bool sgxemu__cpuid_enclave_ud(void);

/*
 * For the engine's enclave-mode dispatch (issue 13 part 4, not wired yet):
 * true when the SIGSEGV described by @uc is a CPUID that faulted because
 * CPUID faulting is on (trapno 13 at 0f a2): hardware raises #UD there,
 * so the AEX should report vector 6 (EXITINFO.VECTOR 6, TYPE hardware
 * exception) and the host see SIGILL. Async-signal-safe.
 */
bool sgxemu__cpuid_faulted(const ucontext_t *uc);

#endif /* SGXEMU_ENGINE_CPUID_H */
