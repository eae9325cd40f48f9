/* SPDX-License-Identifier: MIT */
/*
 * Enclave ELF files as the coverage support reads them (src/cov/image.c):
 * the input is the file, read from a memfd as SGXEMU_COVERAGE_ELF or
 * /proc/self/maps would name it. Any ELF mapped in a process under
 * `sgxemu run --coverage` is read so, and so is anything a user names. A
 * read either fails with an errno or gives an image whose extent holds
 * its .text and whose PT_LOAD list fits; nothing else may happen.
 */
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#include "fuzz.h"
#include "cov/cov.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct cov_image im;
	char path[64];
	int fd = memfd_create("fuzz-elf", 0), ret;

	if (fd < 0)
		return 0;
	if (write(fd, data, size) != (ssize_t)size) {
		close(fd);
		return 0;
	}
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	ret = cov_image_open(path, &im);
	close(fd);
	if (ret > 0)
		abort();
	if (ret == 0 && (!im.text.size || im.lo > im.hi ||
			 im.text.addr < im.lo ||
			 im.nr_load > sizeof(im.load) / sizeof(im.load[0]))) {
		fprintf(stderr, "image accepted with a bad extent\n");
		abort();
	}
	return 0;
}
