/* SPDX-License-Identifier: MIT */
/*
 * A library of the program's own whose constructor looks for SGX the way
 * runtimes do at load time (tests/integration/test_early.sh): CPUID, a raw
 * system call on the device, and __vdso_sgx_enter_enclave found in the
 * vDSO at getauxval(AT_SYSINFO_EHDR) by its section headers and by its
 * dynamic symbols, in dl_iterate_phdr's view and in /proc/self/auxv.
 * glibc runs this constructor before those of LD_PRELOAD libraries.
 */
#include <elf.h>
#include <fcntl.h>
#include <link.h>
#include <stdio.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "early_probe.h"

struct early_result early_ctor;

static bool cpuid_sgx(void)
{
	uint32_t a, b, c, d;

	__asm__ volatile("cpuid" : "=a"(a), "=b"(b), "=c"(c), "=d"(d)
			 : "0"(7), "2"(0));
	if (!(b & (1u << 2)))
		return false;
	__asm__ volatile("cpuid" : "=a"(a), "=b"(b), "=c"(c), "=d"(d)
			 : "0"(0x12), "2"(0));
	return a & 1;		/* SGX1 */
}

/* newfstatat by a SYSCALL instruction of this library's own. */
static bool raw_stat_is_chr(const char *path)
{
	struct stat st;
	long ret;
	register long r10 __asm__("r10") = 0;

	memset(&st, 0, sizeof(st));
	__asm__ volatile("syscall" : "=a"(ret)
			 : "0"((long)SYS_newfstatat), "D"((long)AT_FDCWD),
			   "S"(path), "d"(&st), "r"(r10)
			 : "rcx", "r11", "memory");
	return ret == 0 && S_ISCHR(st.st_mode);
}

static bool has_sgx_sym(const Elf64_Sym *sym, size_t n, const char *str)
{
	for (size_t i = 0; i < n; i++)
		if (sym[i].st_name && !strcmp(str + sym[i].st_name,
					      "__vdso_sgx_enter_enclave") &&
		    ELF64_ST_TYPE(sym[i].st_info) == STT_FUNC && sym[i].st_value)
			return true;
	return false;
}

/* As the Intel SDK's urts does: .dynsym found by the section headers. */
static bool vdso_by_sections(const uint8_t *base)
{
	const Elf64_Ehdr *eh = (const void *)base;
	const Elf64_Shdr *sh;

	if (!base || !eh->e_shoff || eh->e_shentsize != sizeof(*sh))
		return false;
	sh = (const void *)(base + eh->e_shoff);
	for (int i = 0; i < eh->e_shnum; i++)
		if (sh[i].sh_type == SHT_DYNSYM && sh[i].sh_link < eh->e_shnum &&
		    has_sgx_sym((const void *)(base + sh[i].sh_offset),
				sh[i].sh_size / sizeof(Elf64_Sym),
				(const char *)base + sh[sh[i].sh_link].sh_offset))
			return true;
	return false;
}

/* As the kernel's parse_vdso.c does: PT_DYNAMIC, DT_HASH's nchain. */
static bool vdso_by_dynamic(const uint8_t *base, const Elf64_Phdr *ph,
			    int phnum, uintptr_t bias)
{
	const Elf64_Dyn *dyn = NULL;
	const Elf64_Sym *sym = NULL;
	const char *str = NULL;
	const uint32_t *hash = NULL;

	(void)base;
	for (int i = 0; i < phnum; i++)
		if (ph[i].p_type == PT_DYNAMIC)
			dyn = (const void *)(bias + ph[i].p_vaddr);
	for (; dyn && dyn->d_tag != DT_NULL; dyn++) {
		if (dyn->d_tag == DT_SYMTAB)
			sym = (const void *)(bias + dyn->d_un.d_ptr);
		else if (dyn->d_tag == DT_STRTAB)
			str = (const void *)(bias + dyn->d_un.d_ptr);
		else if (dyn->d_tag == DT_HASH)
			hash = (const void *)(bias + dyn->d_un.d_ptr);
	}
	return sym && str && hash && has_sgx_sym(sym, hash[1], str);
}

static bool vdso_by_auxv(const uint8_t *base)
{
	const Elf64_Ehdr *eh = (const void *)base;

	return base && vdso_by_dynamic(base, (const void *)(base + eh->e_phoff),
				       eh->e_phnum, (uintptr_t)base);
}

struct phdr_find {
	uintptr_t base;
	bool found;
};

static int phdr_cb(struct dl_phdr_info *info, size_t size, void *data)
{
	struct phdr_find *f = data;

	(void)size;
	if (info->dlpi_addr == f->base &&
	    vdso_by_dynamic(NULL, info->dlpi_phdr, info->dlpi_phnum,
			    info->dlpi_addr))
		f->found = true;
	return 0;
}

static bool proc_auxv_agrees(uintptr_t base)
{
	Elf64_auxv_t a;
	bool ok = false;
	int fd = open("/proc/self/auxv", O_RDONLY | O_CLOEXEC);

	while (fd >= 0 && read(fd, &a, sizeof(a)) == (ssize_t)sizeof(a) &&
	       a.a_type != AT_NULL)
		if (a.a_type == AT_SYSINFO_EHDR)
			ok = a.a_un.a_val == base;
	if (fd >= 0)
		close(fd);
	return ok;
}

void early_probe(struct early_result *r)
{
	const uint8_t *base = (const void *)getauxval(AT_SYSINFO_EHDR);
	struct phdr_find f = { .base = (uintptr_t)base };

	r->cpuid_sgx = cpuid_sgx();
	r->raw_stat = raw_stat_is_chr("/dev/sgx_enclave");
	r->vdso_sections = vdso_by_sections(base);
	r->vdso_dynamic = vdso_by_auxv(base);
	dl_iterate_phdr(phdr_cb, &f);
	r->dl_iterate = f.found;
	r->proc_auxv = proc_auxv_agrees((uintptr_t)base);
}

void early_print(const char *who, const struct early_result *r)
{
	printf("%s: cpuid_sgx=%d raw_stat=%d vdso_sections=%d vdso_dynamic=%d "
	       "dl_iterate=%d proc_auxv=%d\n", who, r->cpuid_sgx, r->raw_stat,
	       r->vdso_sections, r->vdso_dynamic, r->dl_iterate, r->proc_auxv);
}

__attribute__((constructor))
static void early_lib_init(void)
{
	early_probe(&early_ctor);
}
