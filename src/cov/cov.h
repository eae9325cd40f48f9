/* SPDX-License-Identifier: MIT */
/*
 * Testing enclave code (docs/guide.md "Testing enclaves: coverage and
 * fuzzing"): a DEBUG enclave's coverage counters, which its own compiler
 * instrumentation updates, read on the host side by EDBGRD's rule and
 * handed to the toolchain's runtimes (libgcov's encoder for .gcda files).
 * The engine and the processor model never learn of it: the driver tells
 * this module when an enclave is initialised and before it is released
 * (driver.h, struct sgx_drv_observer).
 *
 * Files:
 *   cov.c    set-up ($SGXEMU_COVERAGE), the enclaves seen, release and exit
 *   image.c  the enclave's ELF file and its sections
 *   read.c   reading enclave memory by EDBGRD's rule
 *   gcov.c   gcov_info records to .gcda files
 */
#ifndef SGXEMU_COV_H
#define SGXEMU_COV_H

#include <elf.h>
#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct sgxemu_enclave;
struct dl_phdr_info;

/*
 * Reads $SGXEMU_COVERAGE (the output directory; `sgxemu run --coverage`
 * sets it): when set, watches the driver's enclaves and writes their
 * .gcda files at release and at exit. Once; the shim calls it at start.
 */
void sgxemu_cov_setup(void);

/* What is known of an enclave's ELF file (image.c). */
struct cov_sect {
	uint64_t addr, size;	/* link-time address, 0/0 if absent */
};

struct cov_image {
	char     path[PATH_MAX];
	bool     relocated;	/* ET_DYN: the enclave's runtime relocates its
				 * pointers; ET_EXEC: they stay link-time */
	uint64_t delta;		/* load address - link address */
	uint64_t lo, hi;	/* the image's extent, link-time */
	struct cov_sect text, gcov_info, sancov_cntrs, sancov_pcs;
	uint64_t text_off;	/* file offset of .text */
	uint64_t pcs_off;	/* file offset of __sancov_pcs */
	/* Its PT_LOAD headers, for the module a symbolizer sees (fuzz.c). */
	Elf64_Phdr load[16];
	unsigned nr_load;
};

/*
 * The ELF file that enclave @e was loaded from: candidates are the paths
 * in $SGXEMU_COVERAGE_ELF (colon-separated), then every ELF file mapped in
 * this process; the first whose .text is the enclave's (read by EDBGRD's
 * rule) wins. 0 with @im filled in, or -ENOENT.
 */
int cov_image_find(struct sgxemu_enclave *e, struct cov_image *im);
/* Section headers of @path into @im (delta, relocated left 0). 0 or -errno. */
int cov_image_open(const char *path, struct cov_image *im);

/*
 * @len bytes of enclave @e at @addr into @buf, each qword by EDBGRD's
 * rule (DEBUG enclaves only; an evicted page is loaded back first, as the
 * kernel's access hook does). 0, -EFAULT (outside ELRANGE, or no page
 * there), or -EPERM (EDBGRD refused: not a DEBUG enclave).
 */
int cov_read(struct sgxemu_enclave *e, uint64_t addr, void *buf, size_t len);
/* A NUL-terminated string of at most @max bytes. 0 or -errno. */
int cov_read_str(struct sgxemu_enclave *e, uint64_t addr, char *buf,
		 size_t max);

/*
 * The .gcda files of enclave @e, whose image is @im, under @dir with
 * @strip leading components of each object's path removed (GCOV_PREFIX,
 * GCOV_PREFIX_STRIP). Each file written to a temporary name and renamed.
 * Refusals are one line each on stderr. Returns the number of files
 * written, or -errno when nothing could be (the line said why).
 */
int cov_gcov_write(struct sgxemu_enclave *e, const struct cov_image *im,
		   const char *dir, unsigned strip);

/*
 * libFuzzer in this process (its __sanitizer_cov_8bit_counters_init is
 * there and SGXEMU_COVERAGE_FUZZER is not 0)?
 */
bool cov_fuzzer_present(void);
/*
 * Enclave @e's inline 8-bit counters and PC table (clang's
 * -fsanitize-coverage=inline-8bit-counters,pc-table) given to the host's
 * libFuzzer, as a loaded module's constructor gives its own; the enclave
 * then shows as a module to dl_iterate_phdr, so its PCs symbolize. 0, or
 * -errno after one line.
 */
int cov_fuzz_register(struct sgxemu_enclave *e, const struct cov_image *im);
/* Was @e given to libFuzzer? */
bool cov_fuzz_registered(const struct sgxemu_enclave *e);
/* dl_iterate_phdr's view of the registered enclaves (the shim's
 * dl_iterate_phdr calls it after the loader's objects): @cb's result. */
int sgxemu_cov_each_module(int (*cb)(struct dl_phdr_info *, size_t, void *),
			   void *data);

/* One line "sgxemu: coverage: ..." on stderr. */
void cov_log(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif /* SGXEMU_COV_H */
