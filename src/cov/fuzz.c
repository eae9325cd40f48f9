// SPDX-License-Identifier: MIT
/*
 * An enclave's edges as libFuzzer's coverage.
 *
 * clang's -fsanitize-coverage=inline-8bit-counters,pc-table gives each
 * object a counter per edge (__sancov_cntrs) and a table of the edges'
 * PCs (__sancov_pcs), and a module constructor that hands both to the
 * sanitizer runtime: __sanitizer_cov_8bit_counters_init and
 * __sanitizer_cov_pcs_init, which libFuzzer defines. In an enclave there
 * is no such runtime (the enclave links a stub, tests/enclaves/
 * sancov_stub.c), but its memory is in this address space: here the two
 * calls are made from the host side with the enclave's counters at their
 * load address and a host copy of its PC table (from the ELF file, the
 * PCs moved to where the enclave runs), and libFuzzer reads and clears
 * the counters in place around each input as it does a library's.
 * DEBUG enclaves only: the host reading and writing enclave memory is
 * what EDBGRD/EDBGWR allow a debugger there.
 *
 * So that libFuzzer's symbolizer (-print_coverage, -print_pcs, crash
 * reports) names enclave functions, each registered enclave is one more
 * module in dl_iterate_phdr's list (the shim's dl_iterate_phdr asks
 * sgxemu_cov_each_module), named by its ELF file and described by its
 * PT_LOAD headers only: nothing else (an unwinder's PT_GNU_EH_FRAME, a
 * PT_DYNAMIC) points a reader into enclave memory.
 */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cov/cov.h"
#include "engine/engine.h"
#include "sgxemu/sgxemu.h"

#define MAX_MODULES	16
#define MAX_PCS		(1U << 24)

struct module {
	const struct sgxemu_enclave *e;
	char name[PATH_MAX];
	uint64_t addr;			/* load bias */
	Elf64_Phdr load[16];
	unsigned nr_load;
};

static struct module modules[MAX_MODULES];
static _Atomic unsigned nr_modules;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

typedef void (*counters_init_fn)(uint8_t *, uint8_t *);
typedef void (*pcs_init_fn)(const uintptr_t *, const uintptr_t *);

static counters_init_fn counters_init;
static pcs_init_fn pcs_init;

/*
 * libFuzzer's two entry points, looked up once the program is relocated
 * and before its own constructors: EINIT may be served in a signal
 * handler (a runtime's raw ioctl, src/shim/rawsys.c), where dlsym, which
 * takes the loader's lock, must not be called.
 */
__attribute__((constructor)) static void find_fuzzer(void)
{
	const char *v = getenv("SGXEMU_COVERAGE_FUZZER");

	if (v && !strcmp(v, "0"))
		return;
	counters_init = (counters_init_fn)(uintptr_t)
		dlsym(RTLD_DEFAULT, "__sanitizer_cov_8bit_counters_init");
	pcs_init = (pcs_init_fn)(uintptr_t)
		dlsym(RTLD_DEFAULT, "__sanitizer_cov_pcs_init");
}

bool cov_fuzzer_present(void)
{
	return counters_init && pcs_init;
}

/* The PC table from the file, each PC moved by the load delta. */
static uintptr_t *read_pcs(const struct cov_image *im, size_t *n)
{
	uintptr_t *t;
	int fd;

	*n = im->sancov_pcs.size / sizeof(uintptr_t);
	if (*n > MAX_PCS || !*n)
		return NULL;
	t = malloc(*n * sizeof(*t));
	fd = open(im->path, O_RDONLY | O_CLOEXEC);
	if (!t || fd < 0 ||
	    pread(fd, t, *n * sizeof(*t), (off_t)im->pcs_off) !=
	    (ssize_t)(*n * sizeof(*t))) {
		free(t);
		if (fd >= 0)
			close(fd);
		return NULL;
	}
	close(fd);
	/* Pairs of (PC, flags): the PC is a link-time address in the file
	 * (ld writes RELATIVE relocations' values into it too). */
	for (size_t i = 0; i < *n; i += 2)
		t[i] += im->delta;
	return t;
}

int cov_fuzz_register(struct sgxemu_enclave *e, const struct cov_image *im)
{
	counters_init_fn cinit = counters_init;
	pcs_init_fn pinit = pcs_init;
	uint64_t lo = im->sancov_cntrs.addr + im->delta;
	uint64_t hi = lo + im->sancov_cntrs.size;
	uintptr_t *pcs = NULL;
	size_t npcs = 0;
	unsigned n;

	if (!cinit || !pinit)
		return -ENOENT;
	if (sgxemu_guard()) {
		cov_log("%s: guard mode keeps ELRANGE from host code between "
			"ECALLs: its edges are not given to libFuzzer", im->path);
		return -EPERM;
	}
	if (lo < e->base || hi > e->base + e->size || hi <= lo) {
		cov_log("%s: __sancov_cntrs leaves ELRANGE", im->path);
		return -EFAULT;
	}
	if (im->sancov_pcs.size) {
		pcs = read_pcs(im, &npcs);
		if (!pcs || npcs / 2 != im->sancov_cntrs.size) {
			cov_log("%s: its PC table (%zu entries) does not match its "
				"%llu counters: counters only", im->path, npcs / 2,
				(unsigned long long)im->sancov_cntrs.size);
			free(pcs);
			pcs = NULL;
		}
	}
	pthread_mutex_lock(&lock);
	n = atomic_load(&nr_modules);
	if (n < MAX_MODULES) {
		struct module *m = &modules[n];

		m->e = e;
		memcpy(m->name, im->path, sizeof(m->name));
		m->addr = im->delta;
		memcpy(m->load, im->load, sizeof(m->load));
		m->nr_load = im->nr_load;
		atomic_store(&nr_modules, n + 1);
	}
	pthread_mutex_unlock(&lock);
	cinit((uint8_t *)(uintptr_t)lo, (uint8_t *)(uintptr_t)hi);
	/* Kept for the life of the process, as libFuzzer keeps the range. */
	if (pcs)
		pinit(pcs, pcs + npcs);
	return 0;
}

int sgxemu_cov_each_module(int (*cb)(struct dl_phdr_info *, size_t, void *),
			   void *data)
{
	unsigned n = atomic_load(&nr_modules);

	for (unsigned i = 0; i < n; i++) {
		struct dl_phdr_info info;
		int r;

		memset(&info, 0, sizeof(info));
		info.dlpi_addr = modules[i].addr;
		info.dlpi_name = modules[i].name;
		info.dlpi_phdr = modules[i].load;
		info.dlpi_phnum = (ElfW(Half))modules[i].nr_load;
		r = cb(&info, sizeof(info), data);
		if (r)
			return r;
	}
	return 0;
}

bool cov_fuzz_registered(const struct sgxemu_enclave *e)
{
	unsigned n = atomic_load(&nr_modules);

	for (unsigned i = 0; i < n; i++)
		if (modules[i].e == e)
			return true;
	return false;
}
