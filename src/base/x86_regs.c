/* SPDX-License-Identifier: MIT */
/* Zydis registers to signal-frame slots (x86_regs.h). */
#include <stddef.h>
#include <ucontext.h>

#include "base/x86_regs.h"

int sgx_greg_slot(ZydisRegister r)
{
	static const struct { ZydisRegister r; int slot; } map[] = {
		{ ZYDIS_REGISTER_RAX, REG_RAX }, { ZYDIS_REGISTER_RCX, REG_RCX },
		{ ZYDIS_REGISTER_RDX, REG_RDX }, { ZYDIS_REGISTER_RBX, REG_RBX },
		{ ZYDIS_REGISTER_RSP, REG_RSP }, { ZYDIS_REGISTER_RBP, REG_RBP },
		{ ZYDIS_REGISTER_RSI, REG_RSI }, { ZYDIS_REGISTER_RDI, REG_RDI },
		{ ZYDIS_REGISTER_R8, REG_R8 },   { ZYDIS_REGISTER_R9, REG_R9 },
		{ ZYDIS_REGISTER_R10, REG_R10 }, { ZYDIS_REGISTER_R11, REG_R11 },
		{ ZYDIS_REGISTER_R12, REG_R12 }, { ZYDIS_REGISTER_R13, REG_R13 },
		{ ZYDIS_REGISTER_R14, REG_R14 }, { ZYDIS_REGISTER_R15, REG_R15 },
	};

	for (size_t i = 0; i < sizeof(map) / sizeof(map[0]); i++)
		if (map[i].r == r)
			return map[i].slot;
	return -1;
}
