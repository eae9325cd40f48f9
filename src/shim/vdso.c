/* SPDX-License-Identifier: MIT */
/*
 * The published vDSO: a small ELF image that looks like the kernel's vDSO
 * plus __vdso_sgx_enter_enclave, placed where programs look for the vDSO
 * (the AT_SYSINFO_EHDR entry of the auxiliary vector).
 *
 * Why a new image rather than editing the real one: the real vDSO is
 * mapped read-only and has no room for another symbol, and its code
 * addresses its data page (vvar) relative to itself, so it cannot be
 * copied. The new image therefore carries, for every function the real
 * vDSO exports, a 14-byte trampoline (jmp *abs) to the real code, and the
 * new symbol's trampoline leads to the shim's entry code. Symbol values
 * stay offsets from the image base as ELF requires, so any parser (the
 * seed selftest, the kernel's parse_vdso.c, glibc's rtld) resolves them.
 *
 * The image keeps the real vDSO's symbol names, version definitions
 * (LINUX_2.6) and its note (the kernel version), and gets a SysV DT_HASH
 * table, which is what the seed selftest walks.
 */
#include <elf.h>
#include <errno.h>
#include <stdint.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/mman.h>

#include "shim/shim.h"

#define TRAMP_SIZE	16	/* ff 25 00000000 <abs64>, padded to 16 */
#define SGX_SYM_NAME	"__vdso_sgx_enter_enclave"

struct src_vdso {
	const uint8_t *base;
	const Elf64_Sym *sym;
	const char *str;
	size_t strsz;
	size_t nsyms;
	const Elf64_Half *versym;
	const uint8_t *verdef;
	size_t verdefnum;
	size_t verdef_size;
	const uint8_t *note;
	size_t note_size;
	uintptr_t load_vaddr;	/* link-time address of the image's start */
};

/* Number of symbols from a SysV hash table (nchain) or a GNU one. */
static size_t count_syms(const uint8_t *base, const Elf64_Dyn *dyn)
{
	const uint32_t *h = NULL, *gh = NULL;

	for (; dyn->d_tag != DT_NULL; dyn++) {
		if (dyn->d_tag == DT_HASH)
			h = (const uint32_t *)(base + dyn->d_un.d_ptr);
		else if (dyn->d_tag == DT_GNU_HASH)
			gh = (const uint32_t *)(base + dyn->d_un.d_ptr);
	}
	if (h)
		return h[1];
	if (gh) {
		/* The highest symbol index in any chain, plus one. */
		uint32_t nbuckets = gh[0], symoffset = gh[1], bloom = gh[2];
		const uint32_t *buckets = gh + 4 + bloom * 2;
		const uint32_t *chain = buckets + nbuckets;
		uint32_t last = 0;

		for (uint32_t i = 0; i < nbuckets; i++)
			if (buckets[i] > last)
				last = buckets[i];
		if (last < symoffset)
			return symoffset;
		while (!(chain[last - symoffset] & 1))
			last++;
		return last + 1;
	}
	return 0;
}

static int parse_real_vdso(const uint8_t *base, struct src_vdso *v)
{
	const Elf64_Ehdr *eh = (const void *)base;
	const Elf64_Phdr *ph;
	const Elf64_Dyn *dyn = NULL;
	uintptr_t load_vaddr = 0;
	bool have_load = false;

	memset(v, 0, sizeof(*v));
	if (memcmp(eh->e_ident, ELFMAG, SELFMAG) || eh->e_ident[EI_CLASS] != ELFCLASS64)
		return -EINVAL;
	ph = (const void *)(base + eh->e_phoff);
	for (int i = 0; i < eh->e_phnum; i++) {
		if (ph[i].p_type == PT_LOAD && !have_load) {
			load_vaddr = ph[i].p_vaddr - ph[i].p_offset;
			have_load = true;
		} else if (ph[i].p_type == PT_DYNAMIC) {
			dyn = (const void *)(base + ph[i].p_offset);
		} else if (ph[i].p_type == PT_NOTE) {
			v->note = base + ph[i].p_offset;
			v->note_size = ph[i].p_filesz;
		}
	}
	if (!dyn || !have_load)
		return -EINVAL;
	v->load_vaddr = load_vaddr;
	/* Dynamic entries hold link-time addresses: rebase them. */
#define AT(p) (base + ((p) - load_vaddr))
	for (const Elf64_Dyn *d = dyn; d->d_tag != DT_NULL; d++) {
		switch (d->d_tag) {
		case DT_SYMTAB: v->sym = (const void *)AT(d->d_un.d_ptr); break;
		case DT_STRTAB: v->str = (const void *)AT(d->d_un.d_ptr); break;
		case DT_STRSZ: v->strsz = d->d_un.d_val; break;
		case DT_VERSYM: v->versym = (const void *)AT(d->d_un.d_ptr); break;
		case DT_VERDEF: v->verdef = AT(d->d_un.d_ptr); break;
		case DT_VERDEFNUM: v->verdefnum = d->d_un.d_val; break;
		}
	}
	if (!v->sym || !v->str)
		return -EINVAL;
	{
		/* count_syms wants rebased pointers too: use a copy. */
		Elf64_Dyn tmp[64];
		size_t n = 0;

		for (const Elf64_Dyn *d = dyn; d->d_tag != DT_NULL && n < 63; d++, n++) {
			tmp[n] = *d;
			if (d->d_tag == DT_HASH || d->d_tag == DT_GNU_HASH)
				tmp[n].d_un.d_ptr = d->d_un.d_ptr - load_vaddr;
		}
		tmp[n].d_tag = DT_NULL;
		v->nsyms = count_syms(base, tmp);
	}
#undef AT
	if (!v->nsyms)
		return -EINVAL;
	/* The verdef chain's byte size, to copy it as one blob. */
	if (v->verdef && v->verdefnum) {
		const uint8_t *p = v->verdef, *end = p;

		for (size_t i = 0; i < v->verdefnum; i++) {
			const Elf64_Verdef *vd = (const void *)p;
			const uint8_t *aux = p + vd->vd_aux;

			for (int a = 0; a < vd->vd_cnt; a++) {
				const Elf64_Verdaux *va = (const void *)aux;

				if (aux + sizeof(*va) > end)
					end = aux + sizeof(*va);
				aux += va->vda_next;
				if (!va->vda_next)
					break;
			}
			if (p + sizeof(*vd) > end)
				end = p + sizeof(*vd);
			if (!vd->vd_next)
				break;
			p += vd->vd_next;
		}
		v->verdef_size = (size_t)(end - v->verdef);
	} else {
		v->verdef = NULL;
		v->verdefnum = 0;
	}
	return 0;
}

/* Version index of LINUX_2.6 in the real vDSO (2 on every x86-64 kernel). */
static Elf64_Half linux26_index(const struct src_vdso *v)
{
	const uint8_t *p = v->verdef;

	for (size_t i = 0; p && i < v->verdefnum; i++) {
		const Elf64_Verdef *vd = (const void *)p;
		const Elf64_Verdaux *va = (const void *)(p + vd->vd_aux);

		if (va->vda_name < v->strsz &&
		    !strcmp(v->str + va->vda_name, "LINUX_2.6"))
			return vd->vd_ndx;
		if (!vd->vd_next)
			break;
		p += vd->vd_next;
	}
	return v->versym ? 2 : 0;
}

static unsigned long sysv_hash(const char *name)
{
	unsigned long h = 0, g;

	while (*name) {
		h = (h << 4) + (unsigned char)*name++;
		g = h & 0xf0000000UL;
		if (g)
			h ^= g >> 24;
		h &= ~g;
	}
	return h;
}

static size_t align_up(size_t x, size_t a)
{
	return (x + a - 1) & ~(a - 1);
}

static void put_tramp(uint8_t *p, uint64_t target)
{
	/* jmp *0(%rip), followed by the absolute target, then int3 padding. */
	p[0] = 0xff;
	p[1] = 0x25;
	memset(p + 2, 0, 4);
	memcpy(p + 6, &target, 8);
	p[14] = 0xcc;
	p[15] = 0xcc;
}

/* The image we published (for tests and `sgxemu info`). */
static void *published;
static size_t published_size;

void *shim_vdso_image(void)
{
	return published;
}

int shim_vdso_build(void *entry, void **out)
{
	const uint8_t *real = (const void *)getauxval(AT_SYSINFO_EHDR);
	struct src_vdso v;
	size_t nsyms, nfuncs = 0, nbucket;
	size_t off_ph, off_dyn, off_sym, off_str, off_hash, off_versym,
	       off_verdef, off_note, off_text, size;
	size_t strsz;
	Elf64_Half sgx_ver;
	uint8_t *img;
	int ret;

	if (!real)
		return -ENOENT;
	ret = parse_real_vdso(real, &v);
	if (ret)
		return ret;

	nsyms = v.nsyms + 1;
	for (size_t i = 0; i < v.nsyms; i++)
		if (ELF64_ST_TYPE(v.sym[i].st_info) == STT_FUNC &&
		    v.sym[i].st_shndx != SHN_UNDEF)
			nfuncs++;
	nfuncs++;	/* __vdso_sgx_enter_enclave */
	strsz = v.strsz + sizeof(SGX_SYM_NAME);
	nbucket = nsyms < 8 ? 3 : nsyms / 2 + 1;

	/* Layout: headers, tables, note, then the trampolines (text). */
	off_ph = sizeof(Elf64_Ehdr);
	off_dyn = align_up(off_ph + 4 * sizeof(Elf64_Phdr), 16);
	off_sym = align_up(off_dyn + 16 * sizeof(Elf64_Dyn), 16);
	off_str = off_sym + nsyms * sizeof(Elf64_Sym);
	off_hash = align_up(off_str + strsz, 8);
	off_versym = align_up(off_hash + (2 + nbucket + nsyms) * 4, 8);
	off_verdef = align_up(off_versym + nsyms * 2, 8);
	off_note = align_up(off_verdef + v.verdef_size, 8);
	off_text = align_up(off_note + v.note_size, 64);
	size = align_up(off_text + nfuncs * TRAMP_SIZE, 4096);

	img = shim_real_mmap(NULL, size, PROT_READ | PROT_WRITE,
			     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (img == MAP_FAILED)
		return -errno;

	/* ELF header: an ET_DYN object linked at address 0, like the vDSO. */
	Elf64_Ehdr *eh = (void *)img;
	memcpy(eh, real, EI_NIDENT);
	eh->e_type = ET_DYN;
	eh->e_machine = EM_X86_64;
	eh->e_version = EV_CURRENT;
	eh->e_entry = 0;
	eh->e_phoff = off_ph;
	eh->e_shoff = 0;
	eh->e_flags = 0;
	eh->e_ehsize = sizeof(Elf64_Ehdr);
	eh->e_phentsize = sizeof(Elf64_Phdr);
	eh->e_shentsize = sizeof(Elf64_Shdr);
	eh->e_shnum = 0;
	eh->e_shstrndx = SHN_UNDEF;

	Elf64_Phdr *ph = (void *)(img + off_ph);
	int nph = 0;
	ph[nph++] = (Elf64_Phdr){ .p_type = PT_LOAD, .p_flags = PF_R | PF_X,
		.p_offset = 0, .p_vaddr = 0, .p_paddr = 0,
		.p_filesz = size, .p_memsz = size, .p_align = 4096 };
	ph[nph++] = (Elf64_Phdr){ .p_type = PT_DYNAMIC, .p_flags = PF_R,
		.p_offset = off_dyn, .p_vaddr = off_dyn, .p_paddr = off_dyn,
		.p_filesz = 16 * sizeof(Elf64_Dyn),
		.p_memsz = 16 * sizeof(Elf64_Dyn), .p_align = 8 };
	if (v.note_size)
		ph[nph++] = (Elf64_Phdr){ .p_type = PT_NOTE, .p_flags = PF_R,
			.p_offset = off_note, .p_vaddr = off_note,
			.p_paddr = off_note, .p_filesz = v.note_size,
			.p_memsz = v.note_size, .p_align = 4 };
	eh->e_phnum = (Elf64_Half)nph;

	/* Strings: the real table unchanged (so verdef names stay valid). */
	char *str = (char *)(img + off_str);
	memcpy(str, v.str, v.strsz);
	memcpy(str + v.strsz, SGX_SYM_NAME, sizeof(SGX_SYM_NAME));

	/* Symbols, with each function pointed at its trampoline. */
	Elf64_Sym *sym = (void *)(img + off_sym);
	Elf64_Half *versym = (void *)(img + off_versym);
	size_t t = 0;
	sgx_ver = linux26_index(&v);
	for (size_t i = 0; i < v.nsyms; i++) {
		sym[i] = v.sym[i];
		versym[i] = v.versym ? v.versym[i] : 0;
		if (ELF64_ST_TYPE(sym[i].st_info) == STT_FUNC &&
		    sym[i].st_shndx != SHN_UNDEF) {
			size_t o = off_text + t++ * TRAMP_SIZE;

			put_tramp(img + o, (uint64_t)(uintptr_t)(real + (v.sym[i].st_value -
								   v.load_vaddr)));
			sym[i].st_value = o;
			sym[i].st_size = TRAMP_SIZE;
		}
	}
	{
		size_t i = v.nsyms, o = off_text + t++ * TRAMP_SIZE;

		put_tramp(img + o, (uint64_t)(uintptr_t)entry);
		sym[i] = (Elf64_Sym){ .st_name = (Elf64_Word)v.strsz,
			.st_info = ELF64_ST_INFO(STB_GLOBAL, STT_FUNC),
			.st_other = STV_DEFAULT, .st_shndx = 1,
			.st_value = o, .st_size = TRAMP_SIZE };
		versym[i] = sgx_ver;
	}

	/* SysV hash: [nbucket, nchain, buckets..., chains...]. */
	uint32_t *hash = (void *)(img + off_hash);
	uint32_t *bucket = hash + 2, *chain = hash + 2 + nbucket;
	hash[0] = (uint32_t)nbucket;
	hash[1] = (uint32_t)nsyms;
	for (size_t i = 1; i < nsyms; i++) {
		size_t b = sysv_hash(str + sym[i].st_name) % nbucket;

		/* Append at the chain's end so lookups keep symbol order. */
		if (!bucket[b]) {
			bucket[b] = (uint32_t)i;
		} else {
			uint32_t j = bucket[b];

			while (chain[j])
				j = chain[j];
			chain[j] = (uint32_t)i;
		}
	}

	if (v.verdef_size)
		memcpy(img + off_verdef, v.verdef, v.verdef_size);
	if (v.note_size)
		memcpy(img + off_note, v.note, v.note_size);

	Elf64_Dyn *dyn = (void *)(img + off_dyn);
	int nd = 0;
	dyn[nd++] = (Elf64_Dyn){ .d_tag = DT_HASH, .d_un.d_ptr = off_hash };
	dyn[nd++] = (Elf64_Dyn){ .d_tag = DT_STRTAB, .d_un.d_ptr = off_str };
	dyn[nd++] = (Elf64_Dyn){ .d_tag = DT_SYMTAB, .d_un.d_ptr = off_sym };
	dyn[nd++] = (Elf64_Dyn){ .d_tag = DT_STRSZ, .d_un.d_val = strsz };
	dyn[nd++] = (Elf64_Dyn){ .d_tag = DT_SYMENT, .d_un.d_val = sizeof(Elf64_Sym) };
	if (v.versym)
		dyn[nd++] = (Elf64_Dyn){ .d_tag = DT_VERSYM, .d_un.d_ptr = off_versym };
	if (v.verdef_size) {
		dyn[nd++] = (Elf64_Dyn){ .d_tag = DT_VERDEF, .d_un.d_ptr = off_verdef };
		dyn[nd++] = (Elf64_Dyn){ .d_tag = DT_VERDEFNUM, .d_un.d_val = v.verdefnum };
	}
	dyn[nd++] = (Elf64_Dyn){ .d_tag = DT_NULL };

	if (shim_real_mprotect(img, size, PROT_READ | PROT_EXEC)) {
		ret = -errno;
		shim_real_munmap(img, size);
		return ret;
	}
	published = img;
	published_size = size;
	*out = img;
	return 0;
}

/*
 * Rewrite AT_SYSINFO_EHDR in the auxiliary vector, which the kernel put
 * right after the environment's terminating NULL. @envp must be the
 * original environment array (the one on the initial stack).
 */
int shim_vdso_publish(char **envp, void *image)
{
	Elf64_auxv_t *auxv;
	uintptr_t real = getauxval(AT_SYSINFO_EHDR);
	size_t i;

	if (!envp)
		return -EINVAL;
	for (i = 0; envp[i]; i++)
		;
	auxv = (Elf64_auxv_t *)&envp[i + 1];
	for (i = 0; auxv[i].a_type != AT_NULL; i++) {
		if (auxv[i].a_type == AT_SYSINFO_EHDR) {
			if (auxv[i].a_un.a_val != real)
				return -ESRCH;	/* not the vector glibc uses */
			auxv[i].a_un.a_val = (uint64_t)(uintptr_t)image;
			return 0;
		}
	}
	return -ENOENT;
}
