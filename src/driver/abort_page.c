/* SPDX-License-Identifier: MIT */
/*
 * Abort-page semantics for host code's access to an EPC page (see
 * abort_page.h). The instruction is decoded with Zydis, so that only the
 * plain moves below are carried out, each exactly: an instruction that
 * also computes with the value (ADD, CMP, string instructions, ...) or
 * that this file does not know is left to fault. Runs in a signal
 * handler: no allocation, no locks (Zydis' decoder needs neither).
 */
#include <string.h>

#include <Zydis/Zydis.h>

#include "driver/abort_page.h"

/* The gregs slot of a 64-bit general-purpose register, or -1. */
static int greg_slot(ZydisRegister r)
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

/*
 * Write @v to the general-purpose register @reg as a load of its width
 * does: 64 bits whole, 32 bits zero-extended, 16 and 8 bits merged (AH,
 * CH, DH, BH are bits 15:8).
 */
static bool set_gpr(ucontext_t *uc, ZydisRegister reg, uint64_t v)
{
	greg_t *g = uc->uc_mcontext.gregs;
	ZydisRegisterClass cls = ZydisRegisterGetClass(reg);
	int slot = greg_slot(ZydisRegisterGetLargestEnclosing(
				ZYDIS_MACHINE_MODE_LONG_64, reg));
	uint64_t old;

	if (slot < 0)
		return false;
	old = (uint64_t)g[slot];
	switch (cls) {
	case ZYDIS_REGCLASS_GPR64:
		break;
	case ZYDIS_REGCLASS_GPR32:
		v = (uint32_t)v;
		break;
	case ZYDIS_REGCLASS_GPR16:
		v = (old & ~0xffffULL) | (v & 0xffff);
		break;
	case ZYDIS_REGCLASS_GPR8:
		if (reg == ZYDIS_REGISTER_AH || reg == ZYDIS_REGISTER_CH ||
		    reg == ZYDIS_REGISTER_DH || reg == ZYDIS_REGISTER_BH)
			v = (old & ~0xff00ULL) | ((v & 0xff) << 8);
		else
			v = (old & ~0xffULL) | (v & 0xff);
		break;
	default:
		return false;
	}
	g[slot] = (greg_t)v;
	return true;
}

/*
 * A legacy-encoded (SSE) load of @bits ones into the low bits of an XMM
 * register: MOVD and MOVQ zero the rest, the 128-bit moves fill it. VEX
 * and EVEX loads would also clear bits above 127, which live outside the
 * signal frame's legacy area: not handled.
 */
static bool set_xmm(ucontext_t *uc, ZydisRegister reg, unsigned bits)
{
	unsigned n = (unsigned)(reg - ZYDIS_REGISTER_XMM0);

	if (!uc->uc_mcontext.fpregs || reg < ZYDIS_REGISTER_XMM0 ||
	    reg > ZYDIS_REGISTER_XMM15 || (bits != 32 && bits != 64 &&
					   bits != 128))
		return false;
	for (unsigned i = 0; i < 4; i++)
		uc->uc_mcontext.fpregs->_xmm[n].element[i] =
			i * 32 < bits ? 0xffffffffU : 0;
	return true;
}

static bool is_vector_move(ZydisMnemonic m)
{
	switch (m) {
	case ZYDIS_MNEMONIC_MOVD:
	case ZYDIS_MNEMONIC_MOVQ:
	case ZYDIS_MNEMONIC_MOVDQU:
	case ZYDIS_MNEMONIC_MOVDQA:
	case ZYDIS_MNEMONIC_MOVUPS:
	case ZYDIS_MNEMONIC_MOVAPS:
	case ZYDIS_MNEMONIC_MOVUPD:
	case ZYDIS_MNEMONIC_MOVAPD:
	case ZYDIS_MNEMONIC_LDDQU:
	case ZYDIS_MNEMONIC_MOVNTDQ:
	case ZYDIS_MNEMONIC_MOVNTPS:
	case ZYDIS_MNEMONIC_MOVNTPD:
	case ZYDIS_MNEMONIC_VMOVD:
	case ZYDIS_MNEMONIC_VMOVQ:
	case ZYDIS_MNEMONIC_VMOVDQU:
	case ZYDIS_MNEMONIC_VMOVDQA:
	case ZYDIS_MNEMONIC_VMOVUPS:
	case ZYDIS_MNEMONIC_VMOVAPS:
	case ZYDIS_MNEMONIC_VMOVUPD:
	case ZYDIS_MNEMONIC_VMOVAPD:
	case ZYDIS_MNEMONIC_VMOVNTDQ:
	case ZYDIS_MNEMONIC_VMOVNTPS:
	case ZYDIS_MNEMONIC_VMOVNTPD:
		return true;
	default:
		return false;
	}
}

/* A store: dropped, whatever is stored (GPR, immediate or vector). */
static bool store(const ZydisDecodedInstruction *in,
		  const ZydisDecodedOperand *op)
{
	if (op[0].type != ZYDIS_OPERAND_TYPE_MEMORY ||
	    op[1].type == ZYDIS_OPERAND_TYPE_MEMORY)
		return false;
	return in->mnemonic == ZYDIS_MNEMONIC_MOV ||
	       in->mnemonic == ZYDIS_MNEMONIC_MOVNTI ||
	       is_vector_move(in->mnemonic);
}

/* A load into a register: all ones, as the instruction extends them. */
static bool load(ucontext_t *uc, const ZydisDecodedInstruction *in,
		 const ZydisDecodedOperand *op)
{
	ZydisRegister reg = op[0].reg.value;

	if (op[0].type != ZYDIS_OPERAND_TYPE_REGISTER ||
	    op[1].type != ZYDIS_OPERAND_TYPE_MEMORY ||
	    op[1].mem.type != ZYDIS_MEMOP_TYPE_MEM)
		return false;
	switch (in->mnemonic) {
	case ZYDIS_MNEMONIC_MOV:
	case ZYDIS_MNEMONIC_MOVSX:
	case ZYDIS_MNEMONIC_MOVSXD:
		return set_gpr(uc, reg, ~0ULL);
	case ZYDIS_MNEMONIC_MOVZX:
		return set_gpr(uc, reg, (1ULL << op[1].size) - 1);
	default:
		break;
	}
	if (in->encoding != ZYDIS_INSTRUCTION_ENCODING_LEGACY ||
	    !is_vector_move(in->mnemonic) ||
	    ZydisRegisterGetClass(reg) != ZYDIS_REGCLASS_XMM)
		return false;
	return set_xmm(uc, reg, op[1].size);
}

bool sgxemu__abort_page_emulate(ucontext_t *uc, const uint8_t *insn,
				size_t len)
{
	ZydisDecodedOperand op[ZYDIS_MAX_OPERAND_COUNT];
	ZydisDecodedInstruction in;
	ZydisDecoder dec;

	if (!ZYAN_SUCCESS(ZydisDecoderInit(&dec, ZYDIS_MACHINE_MODE_LONG_64,
					   ZYDIS_STACK_WIDTH_64)) ||
	    !ZYAN_SUCCESS(ZydisDecoderDecodeFull(&dec, insn, len, &in, op)))
		return false;
	/* Two explicit operands and nothing else touched (no LOCK, no
	 * implicit memory operand). */
	if (in.operand_count_visible != 2 || in.operand_count != 2 ||
	    (in.attributes & ZYDIS_ATTRIB_HAS_LOCK))
		return false;
	if (!store(&in, op) && !load(uc, &in, op))
		return false;
	uc->uc_mcontext.gregs[REG_RIP] += in.length;
	return true;
}
