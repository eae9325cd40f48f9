/* SPDX-License-Identifier: MIT */
/*
 * Decoded x86 operands and a signal frame's registers: what the engine
 * (an enclave's XSAVE-family operand, xsave_replay.c) and the driver (a
 * host access to an abort page, abort_page.c) both look up.
 */
#ifndef SGXEMU_BASE_X86_REGS_H
#define SGXEMU_BASE_X86_REGS_H

#include <Zydis/Zydis.h>

/* The ucontext gregs slot (REG_RAX...) of a 64-bit general-purpose
 * register, or -1 for any other register. */
int sgx_greg_slot(ZydisRegister r);

#endif /* SGXEMU_BASE_X86_REGS_H */
