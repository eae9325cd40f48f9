/* SPDX-License-Identifier: MIT */
/*
 * Every way a program finds the vDSO shows the published image (vdso.c):
 * getauxval(AT_SYSINFO_EHDR) and a walk of the initial auxiliary vector
 * read the patched vector itself; the other two views are served here.
 *
 * - dl_iterate_phdr(): the dynamic loader mapped the kernel's vDSO at
 *   start-up and keeps describing it; its entry is shown as the image
 *   (base, program headers), so a program that finds
 *   __vdso_sgx_enter_enclave through the loader's list finds it too.
 * - /proc/self/auxv (also thread-self and the process's own pid): the
 *   kernel's copy predates the patch, so opening it gives a memory file
 *   holding the vector the program has.
 *
 * dlopen("linux-vdso.so.1") still returns the loader's object for the
 * kernel's image, whose symbol table has no __vdso_sgx_enter_enclave.
 */
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "cov/cov.h"
#include "shim/shim.h"

SHIM_REAL(int, dl_iterate_phdr,
	  int (*)(struct dl_phdr_info *, size_t, void *), void *)
SHIM_REAL(FILE *, fopen, const char *, const char *)
SHIM_REAL(FILE *, fopen64, const char *, const char *)

struct iter_ctx {
	int (*cb)(struct dl_phdr_info *, size_t, void *);
	void *data;
	uintptr_t real_lo, real_hi;	/* the kernel's vDSO */
	const Elf64_Ehdr *image;
};

static int iter_one(struct dl_phdr_info *info, size_t size, void *data)
{
	struct iter_ctx *c = data;
	uintptr_t ph = (uintptr_t)info->dlpi_phdr;
	struct dl_phdr_info copy;

	if (ph < c->real_lo || ph >= c->real_hi || size > sizeof(copy))
		return c->cb(info, size, c->data);
	memcpy(&copy, info, size);
	/* The image is linked at 0: its base is its load bias. */
	copy.dlpi_addr = (ElfW(Addr))c->image;
	copy.dlpi_phdr = (const ElfW(Phdr) *)((const char *)c->image +
					       c->image->e_phoff);
	copy.dlpi_phnum = c->image->e_phnum;
	return c->cb(&copy, size, c->data);
}

int dl_iterate_phdr(int (*cb)(struct dl_phdr_info *, size_t, void *),
		    void *data)
{
	struct iter_ctx c = { .cb = cb, .data = data };
	size_t real_size;

	int r;

	c.image = shim_vdso_image();
	c.real_lo = (uintptr_t)shim_vdso_real(&real_size);
	c.real_hi = c.real_lo + real_size;
	if (!c.image || !c.real_lo)
		r = get_dl_iterate_phdr()(cb, data);
	else
		r = get_dl_iterate_phdr()(iter_one, &c);
	/* Then the DEBUG enclaves registered with libFuzzer (src/cov/fuzz.c),
	 * as the modules their code is. */
	return r ? r : sgxemu_cov_each_module(cb, data);
}

/* /proc/self/auxv, /proc/thread-self/auxv or /proc/<our pid>/auxv. */
static bool own_auxv_path(const char *path)
{
	char mine[32];

	if (strncmp(path, "/proc/", 6))
		return false;
	path += 6;
	if (!strcmp(path, "self/auxv") || !strcmp(path, "thread-self/auxv"))
		return true;
	snprintf(mine, sizeof(mine), "%d/auxv", (int)getpid());
	return !strcmp(path, mine);
}

int shim_auxv_open(const char *path, int flags)
{
	const Elf64_auxv_t *auxv = shim_auxv_vector();
	size_t n = 0;
	int fd;

	if (!auxv || !own_auxv_path(path))
		return -2;
	if ((flags & O_ACCMODE) != O_RDONLY || (flags & (O_CREAT | O_DIRECTORY))) {
		errno = (flags & O_DIRECTORY) ? ENOTDIR : EACCES;
		return -1;
	}
	while (auxv[n].a_type != AT_NULL)
		n++;
	fd = memfd_create("auxv", (flags & O_CLOEXEC) ? MFD_CLOEXEC : 0);
	if (fd < 0)
		return -1;
	if (pwrite(fd, auxv, (n + 1) * sizeof(*auxv), 0) !=
	    (ssize_t)((n + 1) * sizeof(*auxv))) {
		int err = errno ? errno : EIO;

		shim_real_close(fd);
		errno = err;
		return -1;
	}
	return fd;
}

/* fopen() opens inside libc, past the open() wrappers. */
static FILE *auxv_fopen(const char *path, const char *mode)
{
	int fd;
	FILE *f;

	path = shim_opaque(path);
	if (!path || !mode || mode[0] != 'r' || strchr(mode, '+') ||
	    (fd = shim_auxv_open(path, O_RDONLY |
				 (strchr(mode, 'e') ? O_CLOEXEC : 0))) == -2)
		return NULL;
	if (fd < 0)
		return (FILE *)-1;
	f = fdopen(fd, mode);
	if (!f)
		shim_real_close(fd);
	return f ? f : (FILE *)-1;
}

FILE *fopen(const char *path, const char *mode)
{
	FILE *f = auxv_fopen(path, mode);

	if (f == (FILE *)-1)
		return NULL;
	return f ? f : get_fopen()(path, mode);
}

FILE *fopen64(const char *path, const char *mode)
{
	FILE *f = auxv_fopen(path, mode);

	if (f == (FILE *)-1)
		return NULL;
	return f ? f : get_fopen64()(path, mode);
}
