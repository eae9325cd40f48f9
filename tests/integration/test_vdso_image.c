/* SPDX-License-Identifier: MIT */
/*
 * The vDSO image the shim publishes at AT_SYSINFO_EHDR, read the three
 * ways programs read a vDSO: walking the section headers for .dynsym and
 * .dynstr (some SGX loaders, debuggers), and PT_DYNAMIC with DT_HASH (the
 * kernel selftests' parse_vdso.c) or DT_GNU_HASH (glibc). Each lookup is
 * written here from the ELF specification alone, so the three must agree
 * with each other and with the real vDSO (still mapped at [vdso]).
 *
 * Re-executes itself through `sgxemu run` (tests/run.sh starts it plain).
 */
#include <time.h>

#include "../enclaves/shim_encl.h"
#include "test.h"

#include "../enclaves/shim_test.h"

static uint8_t *image(void)
{
	return (uint8_t *)getauxval(AT_SYSINFO_EHDR);
}

static const Elf64_Shdr *shdrs(const uint8_t *b, int *n)
{
	const Elf64_Ehdr *eh = (const void *)b;

	*n = eh->e_shnum;
	return eh->e_shoff ? (const void *)(b + eh->e_shoff) : NULL;
}

static const char *sec_name(const uint8_t *b, const Elf64_Shdr *s)
{
	const Elf64_Ehdr *eh = (const void *)b;
	const Elf64_Shdr *sh = (const void *)(b + eh->e_shoff);

	return (const char *)b + sh[eh->e_shstrndx].sh_offset + s->sh_name;
}

static const Elf64_Shdr *sec_by_name(const uint8_t *b, const char *name)
{
	int n;
	const Elf64_Shdr *sh = shdrs(b, &n);

	for (int i = 0; sh && i < n; i++)
		if (!strcmp(sec_name(b, &sh[i]), name))
			return &sh[i];
	return NULL;
}

/* 1. Section headers: the SHT_DYNSYM section and its linked strings. */
static void *lookup_sections(const char *name)
{
	uint8_t *b = image();
	int n;
	const Elf64_Shdr *sh = shdrs(b, &n);

	for (int i = 0; sh && i < n; i++) {
		if (sh[i].sh_type != SHT_DYNSYM)
			continue;
		const Elf64_Sym *sym = (const void *)(b + sh[i].sh_offset);
		const char *str = (const char *)b + sh[sh[i].sh_link].sh_offset;

		for (size_t k = 0; k < sh[i].sh_size / sizeof(*sym); k++)
			if (sym[k].st_shndx != SHN_UNDEF &&
			    !strcmp(str + sym[k].st_name, name))
				return b + sym[k].st_value;
	}
	return NULL;
}

static const Elf64_Dyn *dynamic(const uint8_t *b)
{
	const Elf64_Ehdr *eh = (const void *)b;
	const Elf64_Phdr *ph = (const void *)(b + eh->e_phoff);

	for (int i = 0; i < eh->e_phnum; i++)
		if (ph[i].p_type == PT_DYNAMIC)
			return (const void *)(b + ph[i].p_offset);
	return NULL;
}

static const void *dyn_ptr(const uint8_t *b, int64_t tag)
{
	for (const Elf64_Dyn *d = dynamic(b); d && d->d_tag != DT_NULL; d++)
		if (d->d_tag == tag)
			return b + d->d_un.d_ptr;
	return NULL;
}

/* 2. PT_DYNAMIC + DT_HASH (SysV ELF hash chains). */
static void *lookup_hash(const char *name)
{
	uint8_t *b = image();
	const uint32_t *h = dyn_ptr(b, DT_HASH);
	const Elf64_Sym *sym = dyn_ptr(b, DT_SYMTAB);
	const char *str = dyn_ptr(b, DT_STRTAB);

	if (!h || !sym || !str)
		return NULL;
	for (uint32_t i = h[2 + shim_elf_hash(name) % h[0]]; i;
	     i = h[2 + h[0] + i])
		if (!strcmp(str + sym[i].st_name, name))
			return b + sym[i].st_value;
	return NULL;
}

static uint32_t dl_new_hash(const char *s)
{
	uint32_t h = 5381;

	for (; *s; s++)
		h = (h << 5) + h + (unsigned char)*s;
	return h;
}

/* 3. PT_DYNAMIC + DT_GNU_HASH (Bloom filter, buckets, hash chain). */
static void *lookup_gnu_hash(const char *name)
{
	uint8_t *b = image();
	const uint32_t *g = dyn_ptr(b, DT_GNU_HASH);
	const Elf64_Sym *sym = dyn_ptr(b, DT_SYMTAB);
	const char *str = dyn_ptr(b, DT_STRTAB);
	uint32_t h = dl_new_hash(name);

	if (!g || !sym || !str)
		return NULL;
	uint32_t nb = g[0], off = g[1], nbloom = g[2], shift = g[3];
	const uint64_t *bloom = (const void *)(g + 4);
	const uint32_t *bucket = (const void *)(bloom + nbloom);
	const uint32_t *chain = bucket + nb;
	uint64_t w = bloom[(h / 64) % nbloom];

	if (!((w >> (h % 64)) & (w >> ((h >> shift) % 64)) & 1))
		return NULL;
	for (uint32_t i = bucket[h % nb]; i >= off && i; i++) {
		if ((chain[i - off] | 1) == (h | 1) &&
		    !strcmp(str + sym[i].st_name, name))
			return b + sym[i].st_value;
		if (chain[i - off] & 1)
			break;
	}
	return NULL;
}

static const char *const names[] = {
	"__vdso_sgx_enter_enclave", "__vdso_clock_gettime", "clock_gettime",
	"__vdso_gettimeofday", "__vdso_getcpu", "__vdso_time", "time",
};

TEST(vdso_three_lookups_agree)
{
	NEED_SHIM();
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		void *s = lookup_sections(names[i]);
		void *h = lookup_hash(names[i]);
		void *g = lookup_gnu_hash(names[i]);

		if (!s || s != h || h != g)
			test_fail(__FILE__, __LINE__, "%s: sections %p, DT_HASH %p, "
				  "DT_GNU_HASH %p", names[i], s, h, g);
	}
	CHECK(lookup_sections("__vdso_sgx_enter_enclavf") == NULL);
	CHECK(lookup_hash("__vdso_sgx_enter_enclavf") == NULL);
	CHECK(lookup_gnu_hash("__vdso_sgx_enter_enclavf") == NULL);
	CHECK(lookup_gnu_hash("") == NULL);
	/* Aliases keep one address, as in the kernel's image. */
	CHECK(lookup_gnu_hash("time") == lookup_gnu_hash("__vdso_time"));
}

TEST(vdso_sections_match_program_headers)
{
	NEED_SHIM();
	uint8_t *b = image();
	const Elf64_Ehdr *eh = (const void *)b;
	const Elf64_Phdr *ph = (const void *)(b + eh->e_phoff);
	const Elf64_Phdr *load = NULL, *dyn = NULL, *note = NULL;
	int n;
	const Elf64_Shdr *sh = shdrs(b, &n);

	REQUIRE(sh != NULL);
	REQUIRE(n > 1);
	CHECK_EQ(eh->e_shentsize, sizeof(Elf64_Shdr));
	CHECK(eh->e_shstrndx > 0 && eh->e_shstrndx < n);
	CHECK_EQ(sh[eh->e_shstrndx].sh_type, SHT_STRTAB);
	for (int i = 0; i < eh->e_phnum; i++) {
		if (ph[i].p_type == PT_LOAD)
			load = &ph[i];
		else if (ph[i].p_type == PT_DYNAMIC)
			dyn = &ph[i];
		else if (ph[i].p_type == PT_NOTE)
			note = &ph[i];
	}
	REQUIRE(load && dyn);
	/* Every allocated section inside the load segment, at address ==
	 * offset (linked at 0); nothing else in it. */
	for (int i = 1; i < n; i++) {
		if (!(sh[i].sh_flags & SHF_ALLOC))
			continue;
		CHECK_EQ(sh[i].sh_addr, sh[i].sh_offset);
		CHECK(sh[i].sh_offset >= load->p_offset);
		CHECK(sh[i].sh_offset + sh[i].sh_size <=
		      load->p_offset + load->p_filesz);
	}
	const Elf64_Shdr *d = sec_by_name(b, ".dynamic");
	REQUIRE(d != NULL);
	CHECK_EQ(d->sh_type, SHT_DYNAMIC);
	CHECK_EQ(d->sh_offset, dyn->p_offset);
	CHECK_EQ(d->sh_size, dyn->p_filesz);
	if (note) {
		const Elf64_Shdr *s = sec_by_name(b, ".note");

		REQUIRE(s != NULL);
		CHECK_EQ(s->sh_offset, note->p_offset);
		CHECK_EQ(s->sh_size, note->p_filesz);
	}
	/* The tables the dynamic section names are the sections'. */
	const Elf64_Shdr *ds = sec_by_name(b, ".dynsym");
	const Elf64_Shdr *st = sec_by_name(b, ".dynstr");
	const Elf64_Shdr *hs = sec_by_name(b, ".hash");
	const Elf64_Shdr *gh = sec_by_name(b, ".gnu.hash");
	REQUIRE(ds && st && hs && gh);
	CHECK(b + ds->sh_offset == (uint8_t *)dyn_ptr(b, DT_SYMTAB));
	CHECK(b + st->sh_offset == (uint8_t *)dyn_ptr(b, DT_STRTAB));
	CHECK(b + hs->sh_offset == (uint8_t *)dyn_ptr(b, DT_HASH));
	CHECK(b + gh->sh_offset == (uint8_t *)dyn_ptr(b, DT_GNU_HASH));
	CHECK(&sh[ds->sh_link] == st);
	CHECK(&sh[hs->sh_link] == ds);
	CHECK(&sh[gh->sh_link] == ds);
	/* Every function symbol lies in .text, which is executable. */
	const Elf64_Shdr *text = sec_by_name(b, ".text");
	REQUIRE(text != NULL);
	CHECK(text->sh_flags & SHF_EXECINSTR);
	const Elf64_Sym *sym = (const void *)(b + ds->sh_offset);
	for (size_t k = 1; k < ds->sh_size / sizeof(*sym); k++) {
		if (ELF64_ST_TYPE(sym[k].st_info) != STT_FUNC)
			continue;
		CHECK_EQ(&sh[sym[k].st_shndx] - sh, text - sh);
		CHECK(sym[k].st_value >= text->sh_addr &&
		      sym[k].st_value + sym[k].st_size <=
		      text->sh_addr + text->sh_size);
	}
}

/* The real vDSO's exported functions, from its own mapping. */
static int real_vdso_names(char names_out[][64], int max)
{
	FILE *f = fopen("/proc/self/maps", "r");
	char line[512];
	uint8_t *real = NULL;
	int n = 0;

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (strstr(line, "[vdso]"))
			real = (uint8_t *)(uintptr_t)strtoull(line, NULL, 16);
	fclose(f);
	if (!real)
		return -1;
	const Elf64_Ehdr *eh = (const void *)real;
	const Elf64_Shdr *sh = (const void *)(real + eh->e_shoff);

	for (int i = 0; i < eh->e_shnum; i++) {
		if (sh[i].sh_type != SHT_DYNSYM)
			continue;
		const Elf64_Sym *sym = (const void *)(real + sh[i].sh_offset);
		const char *str = (const char *)real + sh[sh[i].sh_link].sh_offset;

		for (size_t k = 1; k < sh[i].sh_size / sizeof(*sym) && n < max; k++)
			if (ELF64_ST_TYPE(sym[k].st_info) == STT_FUNC)
				snprintf(names_out[n++], 64, "%s", str + sym[k].st_name);
	}
	return n;
}

TEST(vdso_has_the_real_functions_plus_sgx)
{
	NEED_SHIM();
	char real[64][64];
	int n = real_vdso_names(real, 64);

	if (n <= 0)
		test_skip("the kernel's vDSO has no section headers to compare");
	for (int i = 0; i < n; i++) {
		if (!lookup_sections(real[i]) || !lookup_gnu_hash(real[i]))
			test_fail(__FILE__, __LINE__, "%s missing", real[i]);
	}
	CHECK(lookup_sections("__vdso_sgx_enter_enclave") != NULL);
}

TEST(vdso_functions_found_by_sections_work)
{
	NEED_SHIM();
	int (*cg)(clockid_t, struct timespec *) =
		(int (*)(clockid_t, struct timespec *))lookup_sections("__vdso_clock_gettime");
	struct timespec a, b;

	REQUIRE(cg != NULL);
	REQUIRE_EQ(clock_gettime(CLOCK_REALTIME, &a), 0);
	REQUIRE_EQ(cg(CLOCK_REALTIME, &b), 0);
	CHECK(b.tv_sec >= a.tv_sec && b.tv_sec - a.tv_sec < 5);
}
