// SPDX-License-Identifier: MIT
/*
 * Which ELF file an enclave was loaded from, and where its coverage
 * sections are.
 *
 * The driver sees an enclave's pages as they are added, not its ELF: the
 * section headers that say where .gcov_info or __sancov_cntrs are never
 * reach EPC. Of the ways to find them, the one that works for unmodified
 * SDK programs is the file itself: the Intel SDK's urts maps
 * enclave.signed.so while it builds the enclave, so at EINIT the file is
 * in /proc/self/maps with its section headers intact. Scanning the
 * measured pages for gcov_info's shape would guess; the file does not.
 * A program that builds its enclave from a flat image (no ELF in sight)
 * names the ELF in $SGXEMU_COVERAGE_ELF. Either way a candidate is taken
 * only if its .text bytes are the enclave's at the address its layout
 * puts them, so a stray ELF in the process is never mistaken for it.
 */
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cov/cov.h"
#include "engine/engine.h"

#define MAX_SHDRS	4096
#define MATCH_BYTES	256

static bool pread_all(int fd, void *buf, size_t n, off_t off)
{
	return pread(fd, buf, n, off) == (ssize_t)n;
}

static void take(struct cov_sect *s, const Elf64_Shdr *sh)
{
	s->addr = sh->sh_addr;
	s->size = sh->sh_size;
}

int cov_image_open(const char *path, struct cov_image *im)
{
	Elf64_Ehdr eh;
	Elf64_Shdr *sh = NULL;
	char *names = NULL;
	struct stat st;
	int fd, ret = -ENOEXEC;

	memset(im, 0, sizeof(*im));
	if (strlen(path) >= sizeof(im->path))
		return -ENAMETOOLONG;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) || !S_ISREG(st.st_mode) ||
	    !pread_all(fd, &eh, sizeof(eh), 0) ||
	    memcmp(eh.e_ident, ELFMAG, SELFMAG) ||
	    eh.e_ident[EI_CLASS] != ELFCLASS64 || eh.e_machine != EM_X86_64 ||
	    (eh.e_type != ET_EXEC && eh.e_type != ET_DYN) ||
	    eh.e_shentsize != sizeof(Elf64_Shdr) || !eh.e_shnum ||
	    eh.e_shnum > MAX_SHDRS || eh.e_shstrndx >= eh.e_shnum)
		goto out;
	sh = calloc(eh.e_shnum, sizeof(*sh));
	if (!sh || !pread_all(fd, sh, eh.e_shnum * sizeof(*sh), (off_t)eh.e_shoff))
		goto out;
	if (sh[eh.e_shstrndx].sh_size > (1 << 20) ||
	    !(names = calloc(1, sh[eh.e_shstrndx].sh_size + 1)) ||
	    !pread_all(fd, names, sh[eh.e_shstrndx].sh_size,
		       (off_t)sh[eh.e_shstrndx].sh_offset))
		goto out;
	im->lo = UINT64_MAX;
	for (unsigned i = 0; i < eh.e_shnum; i++) {
		const char *n;

		if (!(sh[i].sh_flags & SHF_ALLOC) ||
		    sh[i].sh_name >= sh[eh.e_shstrndx].sh_size)
			continue;
		n = names + sh[i].sh_name;
		if (sh[i].sh_addr < im->lo)
			im->lo = sh[i].sh_addr;
		if (sh[i].sh_addr + sh[i].sh_size > im->hi)
			im->hi = sh[i].sh_addr + sh[i].sh_size;
		if (!strcmp(n, ".text") && sh[i].sh_type == SHT_PROGBITS) {
			take(&im->text, &sh[i]);
			im->text_off = sh[i].sh_offset;
		} else if (!strcmp(n, ".gcov_info")) {
			take(&im->gcov_info, &sh[i]);
		} else if (!strcmp(n, "__sancov_cntrs")) {
			take(&im->sancov_cntrs, &sh[i]);
		} else if (!strcmp(n, "__sancov_pcs") &&
			   sh[i].sh_type == SHT_PROGBITS) {
			take(&im->sancov_pcs, &sh[i]);
			im->pcs_off = sh[i].sh_offset;
		}
	}
	if (!im->text.size || im->lo > im->hi)
		goto out;
	if (eh.e_phentsize == sizeof(Elf64_Phdr) && eh.e_phnum <= MAX_SHDRS) {
		for (unsigned i = 0; i < eh.e_phnum &&
		     im->nr_load < sizeof(im->load) / sizeof(im->load[0]); i++) {
			Elf64_Phdr ph;

			if (!pread_all(fd, &ph, sizeof(ph),
				       (off_t)(eh.e_phoff + i * sizeof(ph))))
				goto out;
			if (ph.p_type == PT_LOAD)
				im->load[im->nr_load++] = ph;
		}
	}
	snprintf(im->path, sizeof(im->path), "%s", path);
	im->relocated = eh.e_type == ET_DYN;
	ret = 0;
out:
	free(names);
	free(sh);
	close(fd);
	return ret;
}

/*
 * Is @path enclave @e's file? Its image goes at ELRANGE's base unless it
 * was linked inside ELRANGE (then where it was linked); its .text must be
 * there, byte for byte.
 */
static bool image_matches(struct sgxemu_enclave *e, const char *path,
			  struct cov_image *im)
{
	uint8_t want[MATCH_BYTES], have[MATCH_BYTES];
	size_t n;
	int fd;
	bool ok;

	if (cov_image_open(path, im))
		return false;
	if (!im->gcov_info.size && !im->sancov_cntrs.size)
		return false;
	im->delta = im->lo >= e->base && im->lo - e->base < e->size ? 0 : e->base;
	if (im->hi - im->lo > e->size || im->lo + im->delta < e->base ||
	    im->hi + im->delta - e->base > e->size)
		return false;
	n = im->text.size < MATCH_BYTES ? im->text.size : MATCH_BYTES;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return false;
	ok = pread_all(fd, want, n, (off_t)im->text_off) &&
	     !cov_read(e, im->text.addr + im->delta, have, n) &&
	     !memcmp(want, have, n);
	close(fd);
	return ok;
}

/* The first ELF file mapped in this process that is @e's, into @im. */
static bool each_mapped_file(struct sgxemu_enclave *e, struct cov_image *im)
{
	char line[PATH_MAX + 128], last[PATH_MAX] = "";
	FILE *f = fopen("/proc/self/maps", "re");
	bool found = false;

	if (!f)
		return false;
	while (!found && fgets(line, sizeof(line), f)) {
		char *p = strchr(line, '/');
		size_t l;

		if (!p)
			continue;
		l = strlen(p);
		if (l && p[l - 1] == '\n')
			p[--l] = 0;
		if (!strcmp(p, last) || l >= sizeof(last))
			continue;
		memcpy(last, p, l + 1);
		found = image_matches(e, p, im);
	}
	fclose(f);
	return found;
}

int cov_image_find(struct sgxemu_enclave *e, struct cov_image *im)
{
	const char *list = getenv("SGXEMU_COVERAGE_ELF");

	if (list && *list) {
		char *copy = strdup(list), *save = NULL;

		for (char *p = copy ? strtok_r(copy, ":", &save) : NULL; p;
		     p = strtok_r(NULL, ":", &save)) {
			if (image_matches(e, p, im)) {
				free(copy);
				return 0;
			}
		}
		free(copy);
	}
	return each_mapped_file(e, im) ? 0 : -ENOENT;
}
