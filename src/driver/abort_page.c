/* SPDX-License-Identifier: MIT */
/*
 * Abort-page semantics for host code's access to an EPC page (see
 * abort_page.h). The instruction is decoded with Zydis and carried out
 * exactly, with the abort page reading as all ones and taking no writes:
 * moves to and from general-purpose and vector registers (legacy SSE, VEX
 * and unmasked EVEX, with each encoding's rule for the bits above the
 * load), the ALU instructions that read or read-modify-write memory (their
 * flags computed on the all-ones value), and the string moves MOVS, STOS
 * and LODS element by element. Anything else is left to fault. Runs in a
 * signal handler: no allocation, no locks (Zydis' decoder needs neither).
 */
#include <string.h>

#include <Zydis/Zydis.h>

#include "base/x86_regs.h"
#include "cpu/enclu.h"
#include "driver/abort_page.h"

#define EFL_CF	0x001
#define EFL_PF	0x004
#define EFL_AF	0x010
#define EFL_ZF	0x040
#define EFL_SF	0x080
#define EFL_DF	0x400
#define EFL_OF	0x800
#define EFL_STATUS (EFL_CF | EFL_PF | EFL_AF | EFL_ZF | EFL_SF | EFL_OF)

/* --- general-purpose registers ------------------------------------------------- */

static int gpr_slot(ZydisRegister reg)
{
	return sgx_greg_slot(ZydisRegisterGetLargestEnclosing(
				ZYDIS_MACHINE_MODE_LONG_64, reg));
}

static bool is_high8(ZydisRegister reg)
{
	return reg == ZYDIS_REGISTER_AH || reg == ZYDIS_REGISTER_CH ||
	       reg == ZYDIS_REGISTER_DH || reg == ZYDIS_REGISTER_BH;
}

static bool is_gpr(ZydisRegister reg)
{
	switch (ZydisRegisterGetClass(reg)) {
	case ZYDIS_REGCLASS_GPR64:
	case ZYDIS_REGCLASS_GPR32:
	case ZYDIS_REGCLASS_GPR16:
	case ZYDIS_REGCLASS_GPR8:
		return gpr_slot(reg) >= 0;
	default:
		return false;
	}
}

/* The value of a general-purpose register (is_gpr()), zero-extended. */
static uint64_t get_gpr(const ucontext_t *uc, ZydisRegister reg)
{
	uint64_t v = (uint64_t)uc->uc_mcontext.gregs[gpr_slot(reg)];

	switch (ZydisRegisterGetClass(reg)) {
	case ZYDIS_REGCLASS_GPR32:
		return (uint32_t)v;
	case ZYDIS_REGCLASS_GPR16:
		return (uint16_t)v;
	case ZYDIS_REGCLASS_GPR8:
		return is_high8(reg) ? (v >> 8) & 0xff : v & 0xff;
	default:
		return v;
	}
}

/*
 * Write @v to the general-purpose register @reg as a load of its width
 * does: 64 bits whole, 32 bits zero-extended, 16 and 8 bits merged (AH,
 * CH, DH, BH are bits 15:8).
 */
static bool set_gpr(ucontext_t *uc, ZydisRegister reg, uint64_t v)
{
	greg_t *g = uc->uc_mcontext.gregs;
	int slot = gpr_slot(reg);
	uint64_t old;

	if (slot < 0)
		return false;
	old = (uint64_t)g[slot];
	switch (ZydisRegisterGetClass(reg)) {
	case ZYDIS_REGCLASS_GPR64:
		break;
	case ZYDIS_REGCLASS_GPR32:
		v = (uint32_t)v;
		break;
	case ZYDIS_REGCLASS_GPR16:
		v = (old & ~0xffffULL) | (v & 0xffff);
		break;
	case ZYDIS_REGCLASS_GPR8:
		if (is_high8(reg))
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

static uint64_t ones(unsigned bits)
{
	return bits >= 64 ? ~0ULL : (1ULL << bits) - 1;
}

/* --- vector registers ---------------------------------------------------------- */

/*
 * The signal frame keeps vector register n's 128-bit lanes in its XSAVE
 * area (standard format, CPUID leaf 0xD offsets): lane 0 of XMM0-15 in the
 * legacy region, lane 1 in YMM_Hi128 (component 2), lanes 2-3 in
 * ZMM_Hi256 (6); all four of ZMM16-31 in Hi16_ZMM (7). A component whose
 * XSTATE_BV bit is clear is in its initial state, zero.
 */
struct vec_frame {
	uint8_t *x;			/* the XSAVE area */
	uint64_t xfeatures;		/* components the frame has room for */
	uint32_t size;
};

#define FP_XSTATE_MAGIC1	0x46505853U

static bool vec_frame(ucontext_t *uc, struct vec_frame *f)
{
	uint32_t magic, size;

	f->x = (uint8_t *)uc->uc_mcontext.fpregs;
	f->xfeatures = 3;		/* x87 and SSE: the legacy region */
	f->size = 512;
	if (!f->x)
		return false;
	/* The kernel's software bytes at 464 of the legacy region. */
	memcpy(&magic, f->x + 464, 4);
	memcpy(&size, f->x + 464 + 16, 4);
	if (magic == FP_XSTATE_MAGIC1 && size >= 576) {
		memcpy(&f->xfeatures, f->x + 464 + 8, 8);
		f->size = size;
	}
	return true;
}

/* Where lane @lane of vector register @n is: component *@c, offset. */
static uint32_t lane_at(unsigned n, unsigned lane, unsigned *c)
{
	if (n >= 16) {
		*c = 7;
		return sgx_xsave_layout.offset[7] + (n - 16) * 64 + lane * 16;
	}
	if (lane == 0) {
		*c = 1;
		return 160 + n * 16;
	}
	if (lane == 1) {
		*c = 2;
		return sgx_xsave_layout.offset[2] + n * 16;
	}
	*c = 6;
	return sgx_xsave_layout.offset[6] + n * 32 + (lane - 2) * 16;
}

/* The frame holds component @c whole (the legacy region always). */
static bool lane_present(const struct vec_frame *f, unsigned c)
{
	uint32_t off = sgx_xsave_layout.offset[c], size = sgx_xsave_layout.size[c];

	return c == 1 || (((f->xfeatures >> c) & 1) && off >= 576 && size &&
			  off + size <= f->size);
}

static void lane_write(struct vec_frame *f, unsigned c, uint32_t off,
		       const uint8_t v[16])
{
	uint64_t bv;

	if (c != 1) {
		memcpy(&bv, f->x + 512, 8);
		if (!((bv >> c) & 1)) {
			static const uint8_t zero[16];

			if (!memcmp(v, zero, 16))
				return;		/* already zero */
			memset(f->x + sgx_xsave_layout.offset[c], 0,
			       sgx_xsave_layout.size[c]);
			bv |= 1ULL << c;
			memcpy(f->x + 512, &bv, 8);
		}
	}
	memcpy(f->x + off, v, 16);
}

/*
 * Vector register @reg after a load of @bits ones: a legacy SSE load
 * keeps the bits above 127, VEX and EVEX ones clear everything above
 * @bits. False, with nothing written, when the frame lacks a lane that
 * must take ones.
 */
static bool set_vec(ucontext_t *uc, ZydisRegister reg, unsigned bits,
		    bool legacy)
{
	ZydisRegisterClass cls = ZydisRegisterGetClass(reg);
	unsigned n, lanes = legacy ? 1 : 4;
	struct vec_frame f;

	if (cls == ZYDIS_REGCLASS_XMM)
		n = (unsigned)(reg - ZYDIS_REGISTER_XMM0);
	else if (cls == ZYDIS_REGCLASS_YMM)
		n = (unsigned)(reg - ZYDIS_REGISTER_YMM0);
	else if (cls == ZYDIS_REGCLASS_ZMM)
		n = (unsigned)(reg - ZYDIS_REGISTER_ZMM0);
	else
		return false;
	if (n >= 32 || (legacy && n >= 16) || !vec_frame(uc, &f) ||
	    (bits != 32 && bits != 64 && bits % 128) || bits > 512)
		return false;
	for (unsigned l = 0; l < lanes; l++) {
		unsigned c;

		lane_at(n, l, &c);
		if (l * 128 < bits && !lane_present(&f, c))
			return false;
	}
	for (unsigned l = 0; l < lanes; l++) {
		uint8_t v[16];
		unsigned c;
		uint32_t off = lane_at(n, l, &c);

		memset(v, 0, sizeof(v));
		if (l * 128 < bits)
			memset(v, 0xff, bits - l * 128 >= 128 ? 16
							    : (bits - l * 128) / 8);
		if (lane_present(&f, c))
			lane_write(&f, c, off, v);
	}
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
	case ZYDIS_MNEMONIC_MOVSS:
	case ZYDIS_MNEMONIC_MOVSD:		/* the SSE one: not a string */
	case ZYDIS_MNEMONIC_LDDQU:
	case ZYDIS_MNEMONIC_MOVNTDQ:
	case ZYDIS_MNEMONIC_MOVNTDQA:
	case ZYDIS_MNEMONIC_MOVNTPS:
	case ZYDIS_MNEMONIC_MOVNTPD:
	case ZYDIS_MNEMONIC_VMOVD:
	case ZYDIS_MNEMONIC_VMOVQ:
	case ZYDIS_MNEMONIC_VMOVDQU:
	case ZYDIS_MNEMONIC_VMOVDQA:
	case ZYDIS_MNEMONIC_VMOVDQU8:
	case ZYDIS_MNEMONIC_VMOVDQU16:
	case ZYDIS_MNEMONIC_VMOVDQU32:
	case ZYDIS_MNEMONIC_VMOVDQU64:
	case ZYDIS_MNEMONIC_VMOVDQA32:
	case ZYDIS_MNEMONIC_VMOVDQA64:
	case ZYDIS_MNEMONIC_VMOVUPS:
	case ZYDIS_MNEMONIC_VMOVAPS:
	case ZYDIS_MNEMONIC_VMOVUPD:
	case ZYDIS_MNEMONIC_VMOVAPD:
	case ZYDIS_MNEMONIC_VMOVSS:
	case ZYDIS_MNEMONIC_VMOVSD:
	case ZYDIS_MNEMONIC_VLDDQU:
	case ZYDIS_MNEMONIC_VMOVNTDQ:
	case ZYDIS_MNEMONIC_VMOVNTDQA:
	case ZYDIS_MNEMONIC_VMOVNTPS:
	case ZYDIS_MNEMONIC_VMOVNTPD:
		return true;
	default:
		return false;
	}
}

/* EVEX with an opmask, broadcast or embedded rounding: not a plain move. */
static bool plain_avx(const ZydisDecodedInstruction *in)
{
	if (in->encoding != ZYDIS_INSTRUCTION_ENCODING_EVEX)
		return true;
	return (in->avx.mask.reg == ZYDIS_REGISTER_NONE ||
		in->avx.mask.reg == ZYDIS_REGISTER_K0) &&
	       in->avx.broadcast.mode == ZYDIS_BROADCAST_MODE_INVALID &&
	       !in->avx.has_sae;
}

/* --- moves --------------------------------------------------------------------- */

/* A store: dropped, whatever is stored (GPR, immediate or vector). */
static bool store(const ZydisDecodedInstruction *in,
		  const ZydisDecodedOperand *op)
{
	if (op[0].type != ZYDIS_OPERAND_TYPE_MEMORY ||
	    op[1].type == ZYDIS_OPERAND_TYPE_MEMORY)
		return false;
	return in->mnemonic == ZYDIS_MNEMONIC_MOV ||
	       in->mnemonic == ZYDIS_MNEMONIC_MOVNTI ||
	       (is_vector_move(in->mnemonic) && plain_avx(in));
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
		return set_gpr(uc, reg, ones(op[1].size));
	default:
		break;
	}
	if (!is_vector_move(in->mnemonic) || !plain_avx(in))
		return false;
	return set_vec(uc, reg, op[1].size,
		       in->encoding == ZYDIS_INSTRUCTION_ENCODING_LEGACY);
}

/* --- arithmetic ---------------------------------------------------------------- */

static uint64_t parity_flag(uint64_t r)
{
	return __builtin_parity((unsigned)(r & 0xff)) ? 0 : EFL_PF;
}

/* SF, ZF, PF of result @r at width @bits. */
static uint64_t szp(uint64_t r, unsigned bits)
{
	uint64_t f = parity_flag(r);

	if (!(r & ones(bits)))
		f |= EFL_ZF;
	if ((r >> (bits - 1)) & 1)
		f |= EFL_SF;
	return f;
}

/*
 * @a OP @b at width @bits, x86's way: *@flags gets the status flags the
 * instruction defines (CF kept for INC/DEC, AF 0 where undefined). False
 * for a mnemonic this does not compute.
 */
static bool alu(ZydisMnemonic m, uint64_t a, uint64_t b, uint64_t cf,
		unsigned bits, uint64_t *res, uint64_t *flags)
{
	uint64_t mask = ones(bits), sign = 1ULL << (bits - 1), r, f = 0;

	a &= mask;
	b &= mask;
	switch (m) {
	case ZYDIS_MNEMONIC_ADD:
	case ZYDIS_MNEMONIC_ADC:
	case ZYDIS_MNEMONIC_XADD:
	case ZYDIS_MNEMONIC_INC:
		if (m == ZYDIS_MNEMONIC_INC)
			b = 1;
		if (m != ZYDIS_MNEMONIC_ADC)
			cf = 0;
		r = (a + b + cf) & mask;
		if (m == ZYDIS_MNEMONIC_INC)
			f |= *flags & EFL_CF;
		else if (r < a || (cf && r == a))
			f |= EFL_CF;
		if ((a ^ r) & (b ^ r) & sign)
			f |= EFL_OF;
		break;
	case ZYDIS_MNEMONIC_SUB:
	case ZYDIS_MNEMONIC_SBB:
	case ZYDIS_MNEMONIC_CMP:
	case ZYDIS_MNEMONIC_CMPXCHG:
	case ZYDIS_MNEMONIC_DEC:
	case ZYDIS_MNEMONIC_NEG:
		if (m == ZYDIS_MNEMONIC_DEC)
			b = 1;
		if (m == ZYDIS_MNEMONIC_NEG) {
			b = a;
			a = 0;
		}
		if (m != ZYDIS_MNEMONIC_SBB)
			cf = 0;
		r = (a - b - cf) & mask;
		if (m == ZYDIS_MNEMONIC_DEC)
			f |= *flags & EFL_CF;
		else if (a < b || (cf && a == b))
			f |= EFL_CF;
		if ((a ^ b) & (a ^ r) & sign)
			f |= EFL_OF;
		break;
	case ZYDIS_MNEMONIC_AND:
	case ZYDIS_MNEMONIC_TEST:
		r = a & b;
		break;
	case ZYDIS_MNEMONIC_OR:
		r = a | b;
		break;
	case ZYDIS_MNEMONIC_XOR:
		r = a ^ b;
		break;
	default:
		return false;
	}
	switch (m) {
	case ZYDIS_MNEMONIC_AND:
	case ZYDIS_MNEMONIC_TEST:
	case ZYDIS_MNEMONIC_OR:
	case ZYDIS_MNEMONIC_XOR:
		break;
	default:
		f |= (a ^ b ^ r) & EFL_AF;
	}
	*res = r;
	*flags = f | szp(r, bits);
	return true;
}

static bool alu_mnemonic(ZydisMnemonic m)
{
	uint64_t r, f = 0;

	return m == ZYDIS_MNEMONIC_NOT || m == ZYDIS_MNEMONIC_XCHG ||
	       alu(m, 0, 0, 0, 8, &r, &f);
}

/*
 * An ALU instruction with one operand on the abort page, which reads as
 * all ones: the register destination and the flags get what the
 * instruction computes, the memory destination keeps its value (the
 * write is dropped). XCHG and XADD give the register the old memory
 * value; CMPXCHG compares the accumulator with it.
 */
static bool arith(ucontext_t *uc, const ZydisDecodedInstruction *in,
		  const ZydisDecodedOperand *op)
{
	greg_t *g = uc->uc_mcontext.gregs;
	ZydisMnemonic m = in->mnemonic;
	unsigned nvis = in->operand_count_visible, bits, mem;
	uint64_t a, b, res = 0, flags = (uint64_t)g[REG_EFL], cf;
	ZydisRegister acc = ZYDIS_REGISTER_NONE;

	if (!alu_mnemonic(m) || nvis < 1 || nvis > 2)
		return false;
	for (mem = 0; mem < nvis; mem++)
		if (op[mem].type == ZYDIS_OPERAND_TYPE_MEMORY)
			break;
	if (mem == nvis || op[mem].mem.type != ZYDIS_MEMOP_TYPE_MEM)
		return false;
	bits = op[mem].size;
	if (bits != 8 && bits != 16 && bits != 32 && bits != 64)
		return false;
	/* The other explicit operand: a GPR or an immediate. */
	if (nvis == 2) {
		const ZydisDecodedOperand *o = &op[1 - mem];

		if (o->type == ZYDIS_OPERAND_TYPE_REGISTER) {
			if (!is_gpr(o->reg.value))
				return false;
			b = get_gpr(uc, o->reg.value);
		} else if (o->type == ZYDIS_OPERAND_TYPE_IMMEDIATE) {
			b = o->imm.value.u;
		} else {
			return false;
		}
	} else {
		if (m != ZYDIS_MNEMONIC_INC && m != ZYDIS_MNEMONIC_DEC &&
		    m != ZYDIS_MNEMONIC_NEG && m != ZYDIS_MNEMONIC_NOT)
			return false;
		b = 0;
	}
	cf = flags & EFL_CF;
	switch (m) {
	case ZYDIS_MNEMONIC_NOT:
		/* Memory destination only, no flags: the write is dropped. */
		return mem == 0;
	case ZYDIS_MNEMONIC_XCHG:
		return set_gpr(uc, op[1 - mem].reg.value, ones(bits));
	case ZYDIS_MNEMONIC_CMPXCHG:
		/* cmpxchg reg, mem: accumulator against all ones. */
		if (mem != 0)
			return false;
		acc = bits == 8 ? ZYDIS_REGISTER_AL : bits == 16 ?
		      ZYDIS_REGISTER_AX : bits == 32 ? ZYDIS_REGISTER_EAX :
		      ZYDIS_REGISTER_RAX;
		alu(m, get_gpr(uc, acc), ones(bits), 0, bits, &res, &flags);
		/* Equal: the store is dropped; else the accumulator loads. */
		if (!(flags & EFL_ZF))
			set_gpr(uc, acc, ones(bits));
		break;
	case ZYDIS_MNEMONIC_XADD:
		if (mem != 0)
			return false;
		alu(m, ones(bits), b, 0, bits, &res, &flags);
		set_gpr(uc, op[1].reg.value, ones(bits));
		break;
	default:
		/* mem OP other, or reg OP mem with the register written. */
		a = mem == 0 ? ones(bits) : b;
		if (mem != 0)
			b = ones(bits);
		if (!alu(m, a, b, cf, bits, &res, &flags))
			return false;
		if (mem != 0 && m != ZYDIS_MNEMONIC_CMP &&
		    m != ZYDIS_MNEMONIC_TEST &&
		    !set_gpr(uc, op[0].reg.value, res))
			return false;
		break;
	}
	g[REG_EFL] = (greg_t)(((uint64_t)g[REG_EFL] & ~(uint64_t)EFL_STATUS) |
			      (flags & EFL_STATUS));
	return true;
}

/* --- strings ------------------------------------------------------------------- */

/*
 * MOVS, STOS and LODS, with or without REP, one element at a time while
 * an element touches an abort page; the others are copied for real
 * through @mem. When the elements leave the abort pages, RIP stays at the
 * instruction with RSI, RDI and RCX advanced, so that the CPU runs the
 * rest (a REP string instruction may be restarted so). False if not one
 * element was done (nothing is changed then).
 */
/*
 * One element of @n bytes at @a, split where it crosses a page: the bytes
 * on an abort page read as ones (*@v) or take no write, the others go
 * through @mem. False when @mem could not do its part.
 */
static bool element(const struct sgxemu_abort_mem *mem, uint64_t a,
		    unsigned n, bool write, uint64_t *v)
{
	uint8_t b[8];

	memcpy(b, v, sizeof(b));
	for (unsigned k = 0; k < n;) {
		uint64_t p = a + k;
		unsigned run = n - k;

		if (run > SGX_PAGE_SIZE - (p & (SGX_PAGE_SIZE - 1)))
			run = (unsigned)(SGX_PAGE_SIZE -
					 (p & (SGX_PAGE_SIZE - 1)));
		if (mem->is_abort(mem->ctx, p, run, write)) {
			if (!write)
				memset(b + k, 0xff, run);
		} else if (write ? !mem->write(mem->ctx, p, b + k, run) :
				   !mem->read(mem->ctx, p, b + k, run)) {
			return false;
		}
		k += run;
	}
	memcpy(v, b, sizeof(b));
	return true;
}

/* Whether some byte of [@a, @a+@n) is on an abort page. */
static bool touches_abort(const struct sgxemu_abort_mem *mem, uint64_t a,
			  unsigned n, bool write)
{
	uint64_t last = a + n - 1;

	return mem->is_abort(mem->ctx, a, n, write) ||
	       ((last ^ a) >= SGX_PAGE_SIZE &&
		mem->is_abort(mem->ctx, last & ~(uint64_t)(SGX_PAGE_SIZE - 1),
			      1, write));
}

/*
 * Forward MOVS or STOS (@src: MOVS): up to @max whole elements of @bytes
 * at once, as many as stay inside the current page of each operand, by
 * one copy instead of one per element (a REP MOVSB out of a pending page
 * would otherwise be a system call per byte). @fill is STOS's element.
 * The number done, 0 if this took nothing (the element path decides).
 */
static uint64_t chunk(const struct sgxemu_abort_mem *mem, uint64_t rsi,
		      uint64_t rdi, bool src, unsigned bytes, uint64_t fill,
		      uint64_t max)
{
	uint8_t buf[SGX_PAGE_SIZE];
	uint64_t room = SGX_PAGE_SIZE - (rdi & (SGX_PAGE_SIZE - 1)), k;
	bool src_abort, dst_abort;
	size_t len;

	if (src && SGX_PAGE_SIZE - (rsi & (SGX_PAGE_SIZE - 1)) < room)
		room = SGX_PAGE_SIZE - (rsi & (SGX_PAGE_SIZE - 1));
	k = room / bytes < max ? room / bytes : max;
	if (k < 2)
		return 0;
	len = (size_t)(k * bytes);
	src_abort = src && mem->is_abort(mem->ctx, rsi, len, false);
	dst_abort = mem->is_abort(mem->ctx, rdi, len, true);
	if (!src_abort && !dst_abort)
		return 0;
	if (!src) {
		for (size_t i = 0; i < len; i += bytes)
			memcpy(buf + i, &fill, bytes);
	} else if (src_abort) {
		memset(buf, 0xff, len);
	} else if (!mem->read(mem->ctx, rsi, buf, len)) {
		return 0;
	}
	if (!dst_abort && !mem->write(mem->ctx, rdi, buf, len))
		return 0;
	return k;
}

static bool string(ucontext_t *uc, const ZydisDecodedInstruction *in,
		   const struct sgxemu_abort_mem *mem, bool *done)
{
	greg_t *g = uc->uc_mcontext.gregs;
	bool rep = in->attributes & (ZYDIS_ATTRIB_HAS_REP |
				     ZYDIS_ATTRIB_HAS_REPE |
				     ZYDIS_ATTRIB_HAS_REPNE);
	bool down = (uint64_t)g[REG_EFL] & EFL_DF, src = true, dst = true;
	unsigned bytes;
	uint64_t count, i, k;

	switch (in->mnemonic) {
	case ZYDIS_MNEMONIC_MOVSB:
	case ZYDIS_MNEMONIC_MOVSW:
	case ZYDIS_MNEMONIC_MOVSD:
	case ZYDIS_MNEMONIC_MOVSQ:
		break;
	case ZYDIS_MNEMONIC_STOSB:
	case ZYDIS_MNEMONIC_STOSW:
	case ZYDIS_MNEMONIC_STOSD:
	case ZYDIS_MNEMONIC_STOSQ:
		src = false;
		break;
	case ZYDIS_MNEMONIC_LODSB:
	case ZYDIS_MNEMONIC_LODSW:
	case ZYDIS_MNEMONIC_LODSD:
	case ZYDIS_MNEMONIC_LODSQ:
		dst = false;
		break;
	default:
		return false;
	}
	/* 64-bit addresses, no FS/GS base to add. */
	if (!mem || in->address_width != 64 ||
	    (in->attributes & (ZYDIS_ATTRIB_HAS_SEGMENT_FS |
			       ZYDIS_ATTRIB_HAS_SEGMENT_GS)))
		return false;
	bytes = in->operand_width / 8;
	if (bytes != 1 && bytes != 2 && bytes != 4 && bytes != 8)
		return false;
	count = rep ? (uint64_t)g[REG_RCX] : 1;
	for (i = 0; i < count; i += k) {
		uint64_t rsi = (uint64_t)g[REG_RSI], rdi = (uint64_t)g[REG_RDI];
		uint64_t v = ~0ULL;

		k = !down && dst ? chunk(mem, rsi, rdi, src, bytes,
					 (uint64_t)g[REG_RAX], count - i) : 0;
		if (!k) {
			/* One element, split at a page edge if need be. */
			if (!(src && touches_abort(mem, rsi, bytes, false)) &&
			    !(dst && touches_abort(mem, rdi, bytes, true)))
				break;
			if (!src)
				v = (uint64_t)g[REG_RAX];
			else if (!element(mem, rsi, bytes, false, &v))
				break;
			if (dst && !element(mem, rdi, bytes, true, &v))
				break;
			if (!dst)
				set_gpr(uc, bytes == 1 ? ZYDIS_REGISTER_AL :
					    bytes == 2 ? ZYDIS_REGISTER_AX :
					    bytes == 4 ? ZYDIS_REGISTER_EAX :
					    ZYDIS_REGISTER_RAX, v);
			k = 1;
		}
		if (src)
			g[REG_RSI] = (greg_t)(down ? rsi - k * bytes :
						     rsi + k * bytes);
		if (dst)
			g[REG_RDI] = (greg_t)(down ? rdi - k * bytes :
						     rdi + k * bytes);
		if (rep)
			g[REG_RCX] = (greg_t)((uint64_t)g[REG_RCX] - k);
	}
	if (i == 0 && count)
		return false;
	*done = i == count;
	return true;
}

/* --- the entry point ----------------------------------------------------------- */

/* The linear address of memory operand @op (no segment base), or false
 * where it is not computable here (a vector index: VSIB). */
static bool operand_address(const ucontext_t *uc,
			    const ZydisDecodedInstruction *in,
			    const ZydisDecodedOperand *op, uint64_t *out)
{
	uint64_t a = (uint64_t)op->mem.disp.value;
	ZydisRegister base = op->mem.base, index = op->mem.index;

	if (base == ZYDIS_REGISTER_RIP)
		a += (uint64_t)uc->uc_mcontext.gregs[REG_RIP] + in->length;
	else if (base != ZYDIS_REGISTER_NONE) {
		if (!is_gpr(base))
			return false;
		a += get_gpr(uc, base);
	}
	if (index != ZYDIS_REGISTER_NONE) {
		if (!is_gpr(index))
			return false;
		a += get_gpr(uc, index) * op->mem.scale;
	}
	*out = in->address_width == 32 ? (uint32_t)a : a;
	return true;
}

/*
 * Whether the memory operand of @in lies on abort pages only. One that
 * crosses into ordinary memory would need those bytes read or written
 * for real; that is left to fault rather than done wrongly.
 */
static bool operand_on_abort_pages(const ucontext_t *uc,
				   const ZydisDecodedInstruction *in,
				   const ZydisDecodedOperand *op,
				   const struct sgxemu_abort_mem *mem)
{
	for (unsigned i = 0; i < in->operand_count; i++) {
		uint64_t a, last, n = op[i].size / 8;

		if (op[i].type != ZYDIS_OPERAND_TYPE_MEMORY ||
		    op[i].mem.type != ZYDIS_MEMOP_TYPE_MEM)
			continue;
		if (!operand_address(uc, in, &op[i], &a))
			return false;
		if (!n)
			continue;
		last = a + n - 1;
		if ((a ^ last) >= SGX_PAGE_SIZE &&
		    (!mem->is_abort(mem->ctx, a, 1, false) ||
		     !mem->is_abort(mem->ctx, last, 1, false)))
			return false;
	}
	return true;
}

bool sgxemu__abort_page_emulate(ucontext_t *uc, const uint8_t *insn,
				size_t len, const struct sgxemu_abort_mem *mem)
{
	ZydisDecodedOperand op[ZYDIS_MAX_OPERAND_COUNT];
	ZydisDecodedInstruction in;
	ZydisDecoder dec;
	bool done = true;

	if (!ZYAN_SUCCESS(ZydisDecoderInit(&dec, ZYDIS_MACHINE_MODE_LONG_64,
					   ZYDIS_STACK_WIDTH_64)) ||
	    !ZYAN_SUCCESS(ZydisDecoderDecodeFull(&dec, insn, len, &in, op)))
		return false;
	/* EVEX lists its opmask as an operand; k0 (no masking) is none. */
	for (unsigned i = 0; i < in.operand_count; i++)
		if (op[i].type == ZYDIS_OPERAND_TYPE_REGISTER &&
		    op[i].reg.value == ZYDIS_REGISTER_K0 &&
		    in.encoding == ZYDIS_INSTRUCTION_ENCODING_EVEX) {
			memmove(&op[i], &op[i + 1],
				(in.operand_count - i - 1) * sizeof(op[0]));
			in.operand_count--;
			in.operand_count_visible--;
			break;
		}
	/* Segment bases (FS, GS) are not added here: leave those. */
	if (in.attributes & (ZYDIS_ATTRIB_HAS_SEGMENT_FS |
			     ZYDIS_ATTRIB_HAS_SEGMENT_GS))
		return false;
	if (in.meta.category == ZYDIS_CATEGORY_STRINGOP) {
		if (!string(uc, &in, mem, &done))
			return false;
	} else if (mem && !operand_on_abort_pages(uc, &in, op, mem)) {
		return false;
	} else if (in.operand_count_visible == 2 && in.operand_count == 2 &&
		   !(in.attributes & ZYDIS_ATTRIB_HAS_LOCK) &&
		   (store(&in, op) || load(uc, &in, op))) {
		/* A plain move: two operands and nothing else touched. */
	} else if (!arith(uc, &in, op)) {
		return false;
	}
	if (done)
		uc->uc_mcontext.gregs[REG_RIP] += in.length;
	return true;
}
