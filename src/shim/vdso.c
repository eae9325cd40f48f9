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

#include "sgxemu/sgxemu.h"
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
	size_t soname;		/* DT_SONAME (offset in str) */
	bool have_soname;
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
		case DT_SONAME:
			v->soname = d->d_un.d_val;
			v->have_soname = true;
			break;
		}
	}
	if (!v->sym || !v->str || (v->have_soname && v->soname >= v->strsz))
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

/* The image we published (for tests and `sgxemu info`), the kernel's
 * image it stands for, and the vector that now names it (auxv.c). */
static void *published;
static size_t published_size;
static const uint8_t *real_image;
static size_t real_size;
static Elf64_auxv_t *published_auxv;

void *shim_vdso_image(void)
{
	return published;
}

const void *shim_vdso_real(size_t *size)
{
	*size = real_size;
	return published ? real_image : NULL;
}

const Elf64_auxv_t *shim_auxv_vector(void)
{
	return published_auxv;
}

/* The extent of the kernel's image: its program headers' loads. */
static size_t image_extent(const uint8_t *base)
{
	const Elf64_Ehdr *eh = (const void *)base;
	const Elf64_Phdr *ph = (const void *)(base + eh->e_phoff);
	uint64_t lo = UINT64_MAX, hi = 0;

	for (int i = 0; i < eh->e_phnum; i++) {
		if (ph[i].p_type != PT_LOAD)
			continue;
		if (ph[i].p_vaddr < lo)
			lo = ph[i].p_vaddr;
		if (ph[i].p_vaddr + ph[i].p_memsz > hi)
			hi = ph[i].p_vaddr + ph[i].p_memsz;
	}
	return hi > lo ? align_up(hi - lo, 4096) : 4096;
}

/* GNU hash of a symbol name (DT_GNU_HASH, h = h * 33 + c from 5381). */
static uint32_t gnu_hash(const char *name)
{
	uint32_t h = 5381;

	while (*name)
		h = h * 33 + (unsigned char)*name++;
	return h;
}

static size_t pow2_at_least(size_t x)
{
	size_t p = 1;

	while (p < x)
		p <<= 1;
	return p;
}

/* Section-name string table of the image, in section order. */
static const char shstrtab[] =
	"\0.hash\0.gnu.hash\0.dynsym\0.dynstr\0.gnu.version\0.gnu.version_d\0"
	".dynamic\0.note\0.text\0.shstrtab";

static Elf64_Word shstr_off(const char *name)
{
	for (size_t i = 1; i < sizeof(shstrtab); i += strlen(shstrtab + i) + 1)
		if (!strcmp(shstrtab + i, name))
			return (Elf64_Word)i;
	return 0;
}

#define MAX_DYN		16
#define MAX_SHDR	11
#define GNU_BLOOM_SHIFT	6

/* The image's layout: offsets (= addresses: linked at 0) of every part. */
struct vdso_layout {
	size_t nsyms, nlocal, nfuncs, nbucket, gnu_nbucket, gnu_bloom;
	size_t strsz;
	size_t ph, hash, gnuhash, sym, str, versym, verdef, dyn, note, text;
	size_t load_end, shstr, shdr, size;
};

/* The first defined function of the real image at symbol @i's address
 * (the kernel exports each function twice: time and __vdso_time). */
static size_t alias_of(const struct src_vdso *v, size_t i)
{
	for (size_t j = 0; j < i; j++)
		if (ELF64_ST_TYPE(v->sym[j].st_info) == STT_FUNC &&
		    v->sym[j].st_shndx != SHN_UNDEF &&
		    v->sym[j].st_value == v->sym[i].st_value)
			return j;
	return i;
}

static void vdso_plan(const struct src_vdso *v, struct vdso_layout *l)
{
	size_t nglobal;

	memset(l, 0, sizeof(*l));
	l->nsyms = v->nsyms + 1;
	for (size_t i = 0; i < v->nsyms; i++) {
		if (i && ELF64_ST_BIND(v->sym[i].st_info) == STB_LOCAL)
			l->nlocal++;
		if (ELF64_ST_TYPE(v->sym[i].st_info) == STT_FUNC &&
		    v->sym[i].st_shndx != SHN_UNDEF &&
		    alias_of(v, i) == i)
			l->nfuncs++;
	}
	l->nfuncs++;	/* __vdso_sgx_enter_enclave */
	nglobal = l->nsyms - 1 - l->nlocal;
	l->strsz = v->strsz + sizeof(SGX_SYM_NAME);
	l->nbucket = l->nsyms < 8 ? 3 : l->nsyms / 2 + 1;
	l->gnu_nbucket = nglobal / 4 + 1;
	l->gnu_bloom = pow2_at_least((nglobal + 31) / 32);

	/* Headers, the dynamic-linking tables in the kernel's order, the
	 * note, the trampolines (text); then, outside PT_LOAD as in the
	 * kernel's image, the section names and the section headers. */
	l->ph = sizeof(Elf64_Ehdr);
	l->hash = align_up(l->ph + 4 * sizeof(Elf64_Phdr), 8);
	l->gnuhash = align_up(l->hash + (2 + l->nbucket + l->nsyms) * 4, 8);
	l->sym = align_up(l->gnuhash + 16 + l->gnu_bloom * 8 +
			  (l->gnu_nbucket + nglobal) * 4, 8);
	l->str = l->sym + l->nsyms * sizeof(Elf64_Sym);
	l->versym = align_up(l->str + l->strsz, 2);
	l->verdef = align_up(l->versym + l->nsyms * 2, 8);
	l->dyn = align_up(l->verdef + v->verdef_size, 8);
	l->note = align_up(l->dyn + MAX_DYN * sizeof(Elf64_Dyn), 4);
	l->text = align_up(l->note + v->note_size, 64);
	l->load_end = l->text + l->nfuncs * TRAMP_SIZE;
	l->shstr = l->load_end;
	l->shdr = align_up(l->shstr + sizeof(shstrtab), 8);
	l->size = align_up(l->shdr + MAX_SHDR * sizeof(Elf64_Shdr), 4096);
}

/*
 * The symbol order of the image: the null symbol, the local symbols, then
 * the others sorted by GNU hash bucket, which DT_GNU_HASH requires (each
 * bucket's symbols consecutive). @order[new] = old index, where old index
 * v->nsyms stands for __vdso_sgx_enter_enclave.
 */
static void vdso_order(const struct src_vdso *v, const struct vdso_layout *l,
		       uint32_t *order, uint32_t *ghash)
{
	size_t n = 0;

	order[n++] = 0;
	for (size_t i = 1; i < v->nsyms; i++)
		if (ELF64_ST_BIND(v->sym[i].st_info) == STB_LOCAL)
			order[n++] = (uint32_t)i;
	for (size_t i = 1; i <= v->nsyms; i++) {
		const char *name = i < v->nsyms ? v->str + v->sym[i].st_name :
						  SGX_SYM_NAME;

		ghash[i] = gnu_hash(name);
		if (i < v->nsyms &&
		    ELF64_ST_BIND(v->sym[i].st_info) == STB_LOCAL)
			continue;
		/* Insertion sort by bucket, stable. */
		size_t j = n++;

		while (j > 1 + l->nlocal &&
		       ghash[order[j - 1]] % l->gnu_nbucket >
		       ghash[i] % l->gnu_nbucket) {
			order[j] = order[j - 1];
			j--;
		}
		order[j] = (uint32_t)i;
	}
}

static void vdso_sysv_hash(uint8_t *img, const struct vdso_layout *l,
			   const Elf64_Sym *sym, const char *str)
{
	uint32_t *hash = (void *)(img + l->hash);
	uint32_t *bucket = hash + 2, *chain = hash + 2 + l->nbucket;

	hash[0] = (uint32_t)l->nbucket;
	hash[1] = (uint32_t)l->nsyms;
	for (size_t i = 1; i < l->nsyms; i++) {
		size_t b = sysv_hash(str + sym[i].st_name) % l->nbucket;

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
}

/* DT_GNU_HASH: [nbuckets, symoffset, bloom words, shift], the Bloom
 * filter, buckets, then one hash value per hashed symbol (bit 0 = last of
 * its bucket). */
static void vdso_gnu_hash(uint8_t *img, const struct vdso_layout *l,
			  const uint32_t *h)
{
	uint32_t *hdr = (void *)(img + l->gnuhash);
	uint64_t *bloom = (void *)(hdr + 4);
	uint32_t *bucket = (void *)(bloom + l->gnu_bloom);
	uint32_t symoffset = (uint32_t)(1 + l->nlocal);
	uint32_t *chain = bucket + l->gnu_nbucket;

	hdr[0] = (uint32_t)l->gnu_nbucket;
	hdr[1] = symoffset;
	hdr[2] = (uint32_t)l->gnu_bloom;
	hdr[3] = GNU_BLOOM_SHIFT;
	for (size_t i = symoffset; i < l->nsyms; i++) {
		size_t b = h[i] % l->gnu_nbucket;

		bloom[(h[i] / 64) % l->gnu_bloom] |=
			(1ULL << (h[i] % 64)) |
			(1ULL << ((h[i] >> GNU_BLOOM_SHIFT) % 64));
		if (!bucket[b])
			bucket[b] = (uint32_t)i;
		chain[i - symoffset] = h[i] & ~1U;
		if (i + 1 == l->nsyms || h[i + 1] % l->gnu_nbucket != b)
			chain[i - symoffset] |= 1;
	}
}

static Elf64_Shdr *add_shdr(Elf64_Shdr *sh, int *n, const char *name,
			    Elf64_Word type, Elf64_Xword flags, size_t off,
			    size_t size, Elf64_Xword align, Elf64_Xword entsize)
{
	Elf64_Shdr *s = &sh[(*n)++];

	*s = (Elf64_Shdr){ .sh_name = shstr_off(name), .sh_type = type,
		.sh_flags = flags, .sh_addr = (flags & SHF_ALLOC) ? off : 0,
		.sh_offset = off, .sh_size = size, .sh_addralign = align,
		.sh_entsize = entsize };
	return s;
}

int shim_vdso_build(void *entry, void **out)
{
	const uint8_t *real = (const void *)getauxval(AT_SYSINFO_EHDR);
	struct src_vdso v;
	struct vdso_layout l;
	uint32_t order[512], newh[512], oldh[513];
	uint32_t tramp[512];	/* old index -> trampoline offset */
	Elf64_Half sgx_ver;
	uint8_t *img;
	int ret;

	if (!real)
		return -ENOENT;
	ret = parse_real_vdso(real, &v);
	if (ret)
		return ret;
	if (v.nsyms + 1 > sizeof(order) / sizeof(order[0]))
		return -E2BIG;
	vdso_plan(&v, &l);
	vdso_order(&v, &l, order, oldh);
	memset(tramp, 0, sizeof(tramp));

	img = shim_real_mmap(NULL, l.size, PROT_READ | PROT_WRITE,
			     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (img == MAP_FAILED)
		return -errno;

	/* Section headers first: the symbols need the indices. */
	Elf64_Shdr *sh = (void *)(img + l.shdr);
	int nsh = 1, i_dynsym, i_dynstr, i_text;

	i_dynsym = 3;
	i_dynstr = 4;
	add_shdr(sh, &nsh, ".hash", SHT_HASH, SHF_ALLOC, l.hash,
		 (2 + l.nbucket + l.nsyms) * 4, 8, 4)->sh_link = i_dynsym;
	add_shdr(sh, &nsh, ".gnu.hash", SHT_GNU_HASH, SHF_ALLOC, l.gnuhash,
		 l.sym - l.gnuhash, 8, 0)->sh_link = i_dynsym;
	Elf64_Shdr *s_dynsym = add_shdr(sh, &nsh, ".dynsym", SHT_DYNSYM,
		SHF_ALLOC, l.sym, l.nsyms * sizeof(Elf64_Sym), 8,
		sizeof(Elf64_Sym));
	s_dynsym->sh_link = i_dynstr;
	s_dynsym->sh_info = (Elf64_Word)(1 + l.nlocal);	/* first non-local */
	add_shdr(sh, &nsh, ".dynstr", SHT_STRTAB, SHF_ALLOC, l.str, l.strsz,
		 1, 0);
	if (v.versym)
		add_shdr(sh, &nsh, ".gnu.version", SHT_GNU_versym, SHF_ALLOC,
			 l.versym, l.nsyms * 2, 2, 2)->sh_link = i_dynsym;
	if (v.verdef_size) {
		Elf64_Shdr *s = add_shdr(sh, &nsh, ".gnu.version_d",
			SHT_GNU_verdef, SHF_ALLOC, l.verdef, v.verdef_size, 8, 0);

		s->sh_link = i_dynstr;
		s->sh_info = (Elf64_Word)v.verdefnum;
	}
	Elf64_Shdr *s_dyn = add_shdr(sh, &nsh, ".dynamic", SHT_DYNAMIC,
		SHF_ALLOC | SHF_WRITE, l.dyn, 0, 8, sizeof(Elf64_Dyn));
	s_dyn->sh_link = i_dynstr;
	if (v.note_size)
		add_shdr(sh, &nsh, ".note", SHT_NOTE, SHF_ALLOC, l.note,
			 v.note_size, 4, 0);
	i_text = nsh;
	add_shdr(sh, &nsh, ".text", SHT_PROGBITS, SHF_ALLOC | SHF_EXECINSTR,
		 l.text, l.nfuncs * TRAMP_SIZE, 64, 0);
	int i_shstr = nsh;
	add_shdr(sh, &nsh, ".shstrtab", SHT_STRTAB, 0, l.shstr,
		 sizeof(shstrtab), 1, 0);
	memcpy(img + l.shstr, shstrtab, sizeof(shstrtab));

	/* ELF header: an ET_DYN object linked at address 0, like the vDSO. */
	Elf64_Ehdr *eh = (void *)img;
	memcpy(eh, real, EI_NIDENT);
	eh->e_type = ET_DYN;
	eh->e_machine = EM_X86_64;
	eh->e_version = EV_CURRENT;
	eh->e_entry = 0;
	eh->e_phoff = l.ph;
	eh->e_shoff = l.shdr;
	eh->e_flags = 0;
	eh->e_ehsize = sizeof(Elf64_Ehdr);
	eh->e_phentsize = sizeof(Elf64_Phdr);
	eh->e_shentsize = sizeof(Elf64_Shdr);
	eh->e_shnum = (Elf64_Half)nsh;
	eh->e_shstrndx = (Elf64_Half)i_shstr;

	/* Strings: the real table unchanged (so verdef names stay valid). */
	char *str = (char *)(img + l.str);
	memcpy(str, v.str, v.strsz);
	memcpy(str + v.strsz, SGX_SYM_NAME, sizeof(SGX_SYM_NAME));

	/* Symbols in GNU-hash order, each function pointed at its
	 * trampoline in .text. */
	Elf64_Sym *sym = (void *)(img + l.sym);
	Elf64_Half *versym = (void *)(img + l.versym);
	size_t t = 0;

	sgx_ver = linux26_index(&v);
	for (size_t n = 0; n < l.nsyms; n++) {
		size_t i = order[n];

		newh[n] = oldh[i];
		if (i == v.nsyms) {
			sym[n] = (Elf64_Sym){ .st_name = (Elf64_Word)v.strsz,
				.st_info = ELF64_ST_INFO(STB_GLOBAL, STT_FUNC),
				.st_other = STV_DEFAULT };
			versym[n] = sgx_ver;
		} else {
			sym[n] = v.sym[i];
			versym[n] = v.versym ? v.versym[i] : 0;
		}
		if (ELF64_ST_TYPE(sym[n].st_info) == STT_FUNC &&
		    (i == v.nsyms || sym[n].st_shndx != SHN_UNDEF)) {
			size_t a = i == v.nsyms ? i : alias_of(&v, i), o;

			if (!tramp[a]) {
				tramp[a] = (uint32_t)(l.text + t++ * TRAMP_SIZE);
				put_tramp(img + tramp[a], i == v.nsyms ?
					  (uint64_t)(uintptr_t)entry :
					  (uint64_t)(uintptr_t)(real +
						(v.sym[i].st_value - v.load_vaddr)));
			}
			o = tramp[a];
			sym[n].st_value = o;
			sym[n].st_size = TRAMP_SIZE;
			sym[n].st_shndx = (Elf64_Half)i_text;
		} else if (sym[n].st_shndx != SHN_UNDEF &&
			   sym[n].st_shndx < SHN_LORESERVE) {
			/* Data of the real image is not in this one. */
			sym[n].st_shndx = SHN_ABS;
		}
	}
	vdso_sysv_hash(img, &l, sym, str);
	vdso_gnu_hash(img, &l, newh);

	if (v.verdef_size)
		memcpy(img + l.verdef, v.verdef, v.verdef_size);
	if (v.note_size)
		memcpy(img + l.note, v.note, v.note_size);

	Elf64_Dyn *dyn = (void *)(img + l.dyn);
	int nd = 0;
	if (v.have_soname)
		dyn[nd++] = (Elf64_Dyn){ .d_tag = DT_SONAME, .d_un.d_val = v.soname };
	dyn[nd++] = (Elf64_Dyn){ .d_tag = DT_HASH, .d_un.d_ptr = l.hash };
	dyn[nd++] = (Elf64_Dyn){ .d_tag = DT_GNU_HASH, .d_un.d_ptr = l.gnuhash };
	dyn[nd++] = (Elf64_Dyn){ .d_tag = DT_STRTAB, .d_un.d_ptr = l.str };
	dyn[nd++] = (Elf64_Dyn){ .d_tag = DT_SYMTAB, .d_un.d_ptr = l.sym };
	dyn[nd++] = (Elf64_Dyn){ .d_tag = DT_STRSZ, .d_un.d_val = l.strsz };
	dyn[nd++] = (Elf64_Dyn){ .d_tag = DT_SYMENT, .d_un.d_val = sizeof(Elf64_Sym) };
	if (v.versym)
		dyn[nd++] = (Elf64_Dyn){ .d_tag = DT_VERSYM, .d_un.d_ptr = l.versym };
	if (v.verdef_size) {
		dyn[nd++] = (Elf64_Dyn){ .d_tag = DT_VERDEF, .d_un.d_ptr = l.verdef };
		dyn[nd++] = (Elf64_Dyn){ .d_tag = DT_VERDEFNUM, .d_un.d_val = v.verdefnum };
	}
	dyn[nd++] = (Elf64_Dyn){ .d_tag = DT_NULL };
	s_dyn->sh_size = nd * sizeof(Elf64_Dyn);

	/* Program headers: one R+X load of everything allocated, and the
	 * dynamic and note segments, equal to their sections. */
	Elf64_Phdr *ph = (void *)(img + l.ph);
	int nph = 0;
	ph[nph++] = (Elf64_Phdr){ .p_type = PT_LOAD, .p_flags = PF_R | PF_X,
		.p_offset = 0, .p_vaddr = 0, .p_paddr = 0,
		.p_filesz = l.load_end, .p_memsz = l.load_end, .p_align = 4096 };
	ph[nph++] = (Elf64_Phdr){ .p_type = PT_DYNAMIC, .p_flags = PF_R,
		.p_offset = l.dyn, .p_vaddr = l.dyn, .p_paddr = l.dyn,
		.p_filesz = s_dyn->sh_size, .p_memsz = s_dyn->sh_size,
		.p_align = 8 };
	if (v.note_size)
		ph[nph++] = (Elf64_Phdr){ .p_type = PT_NOTE, .p_flags = PF_R,
			.p_offset = l.note, .p_vaddr = l.note,
			.p_paddr = l.note, .p_filesz = v.note_size,
			.p_memsz = v.note_size, .p_align = 4 };
	eh->e_phnum = (Elf64_Half)nph;

	if (shim_real_mprotect(img, l.size, PROT_READ | PROT_EXEC)) {
		ret = -errno;
		shim_real_munmap(img, l.size);
		return ret;
	}
	published = img;
	published_size = l.size;
	*out = img;
	return 0;
}

/* The auxiliary vector the kernel put after @envp's terminating NULL. */
static Elf64_auxv_t *initial_auxv(char **envp)
{
	size_t i;

	for (i = 0; envp[i]; i++)
		;
	return (Elf64_auxv_t *)&envp[i + 1];
}

/*
 * Set @bits in the program's entry @type (AT_HWCAP2: what the emulated
 * platform offers beyond the host kernel). Programs that walk the vector
 * see it; glibc's getauxval() keeps the host's values, which is what
 * the engine reads.
 */
int shim_auxv_or(char **envp, unsigned long type, uint64_t bits)
{
	Elf64_auxv_t *auxv;

	if (!envp)
		return -EINVAL;
	for (auxv = initial_auxv(envp); auxv->a_type != AT_NULL; auxv++) {
		if (auxv->a_type == type) {
			auxv->a_un.a_val |= bits;
			return 0;
		}
	}
	return -ENOENT;
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
	auxv = initial_auxv(envp);
	for (i = 0; auxv[i].a_type != AT_NULL; i++) {
		if (auxv[i].a_type == AT_SYSINFO_EHDR) {
			if (auxv[i].a_un.a_val != real)
				return -ESRCH;	/* not the vector glibc uses */
			real_image = (const uint8_t *)real;
			real_size = image_extent(real_image);
			published_auxv = auxv;
			auxv[i].a_un.a_val = (uint64_t)(uintptr_t)image;
			return 0;
		}
	}
	return -ENOENT;
}

/*
 * The per-call ABI test of the vDSO entry (vdso_entry.S): v22 passes the
 * TCS as the first stack argument, mainline a struct sgx_enclave_run,
 * which the program keeps in its own memory and so never inside an
 * ELRANGE. Only the value is looked at, never what it points to.
 */
__attribute__((visibility("hidden"))) bool sgxemu_vdso_seed_call(uint64_t arg)
{
	return !(arg & 0xfff) && sgxemu_enclave_find(arg) != NULL;
}
