// SPDX-License-Identifier: MIT
/*
 * Coverage of enclave code: which enclaves, when their .gcda files are
 * written (docs/guide.md "Testing enclaves: coverage and fuzzing").
 *
 * With $SGXEMU_COVERAGE=DIR the driver's enclaves are watched: at EINIT
 * the enclave's ELF file is looked for (image.c) while its loader still
 * has it mapped, and the files are written when the enclave is released
 * or, for those still alive, when the program exits. Only DEBUG enclaves
 * can be read (EDBGRD's rule, as for a debugger); any other gets one
 * line saying so. Nothing here changes what the program sees: its exit
 * status, its output streams and its enclaves are left as they were.
 */
#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cov/cov.h"
#include "driver/driver.h"
#include "engine/engine.h"
#include "sgxemu/sgxemu.h"

#define MAX_WATCHED 64

struct watched {
	struct sgxemu_enclave *e;
	pid_t pid;		/* the process that loaded it (not a fork child) */
	bool have_image;
	struct cov_image im;
};

static struct watched watched[MAX_WATCHED];
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static const char *out_dir;
static unsigned strip;

void cov_log(const char *fmt, ...)
{
	char line[1024];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(line, sizeof(line) - 1, fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	if ((size_t)n > sizeof(line) - 2)
		n = sizeof(line) - 2;
	line[n++] = '\n';
	/* One write, so lines of two threads do not mix. */
	dprintf(STDERR_FILENO, "sgxemu: coverage: %.*s", n, line);
}

static bool debug_enclave(struct sgxemu_enclave *e)
{
	struct sgxemu_enclave_info info;

	return !sgxemu_enclave_get_info(e, &info) &&
	       (info.attributes.flags & SGX_ATTR_DEBUG);
}

static void enclave_initialized(struct sgxemu_enclave *e)
{
	struct watched *w = NULL;
	struct cov_image im;
	bool fuzz = cov_fuzzer_present(), have_image;

	if (!out_dir && !fuzz)
		return;
	if (!debug_enclave(e)) {
		cov_log("the enclave at 0x%llx is not a DEBUG enclave: no "
			"coverage%s (its memory is readable only by EDBGRD's rule)",
			(unsigned long long)e->base,
			fuzz ? " and no edges for libFuzzer" : "");
		return;
	}
	have_image = !cov_image_find(e, &im);
	if (have_image && sgx_drv_debug)
		sgx_drv_log("coverage: the enclave at 0x%llx is %s: .gcov_info "
			    "%llu objects, __sancov_cntrs %llu edges",
			    (unsigned long long)e->base, im.path,
			    (unsigned long long)(im.gcov_info.size / 8),
			    (unsigned long long)im.sancov_cntrs.size);
	if (have_image && fuzz && im.sancov_cntrs.size)
		cov_fuzz_register(e, &im);
	if (!out_dir)
		return;
	pthread_mutex_lock(&lock);
	for (unsigned i = 0; i < MAX_WATCHED && !w; i++)
		if (!watched[i].e)
			w = &watched[i];
	if (w) {
		w->e = e;
		w->pid = getpid();
		w->have_image = have_image;
		if (have_image)
			w->im = im;
	}
	pthread_mutex_unlock(&lock);
	if (!w)
		cov_log("more than %d enclaves: the one at 0x%llx is not "
			"watched", MAX_WATCHED, (unsigned long long)e->base);
}

/* @w's files; called with the lock held. */
static void write_out(struct watched *w, const char *when)
{
	struct sgxemu_enclave *e = w->e;
	int n;

	w->e = NULL;
	if (w->pid != getpid())
		return;
	if (!w->have_image) {
		cov_log("the enclave at 0x%llx: no ELF file with coverage "
			"sections found for it (name it in SGXEMU_COVERAGE_ELF)",
			(unsigned long long)e->base);
		return;
	}
	if (!w->im.gcov_info.size)
		return;
	/* Counts are read as they are now; with a thread inside they may
	 * move on while being read (-fprofile-update=atomic keeps each
	 * one whole). */
	for (unsigned i = 0; i < NR_SLOTS / 64; i++)
		if (atomic_load(&e->inside[i])) {
			cov_log("%s: a thread is still inside the enclave at %s: "
				"its counts are as of now", w->im.path, when);
			break;
		}
	n = cov_gcov_write(e, &w->im, out_dir, strip);
	if (n >= 0 && getenv("SGXEMU_COVERAGE_VERBOSE"))
		cov_log("%s: %d .gcda file%s written at %s", w->im.path, n,
			n == 1 ? "" : "s", when);
}

static void enclave_releasing(struct sgxemu_enclave *e)
{
	/* libFuzzer cannot forget a module: its next scan of the counters
	 * reads memory that is no longer the enclave's. */
	if (cov_fuzz_registered(e))
		cov_log("the enclave at 0x%llx is released while libFuzzer "
			"still counts its edges: keep it for the whole fuzzing run",
			(unsigned long long)e->base);
	if (!out_dir)
		return;
	pthread_mutex_lock(&lock);
	for (unsigned i = 0; i < MAX_WATCHED; i++)
		if (watched[i].e == e)
			write_out(&watched[i], "release");
	pthread_mutex_unlock(&lock);
}

static void at_exit(void)
{
	pthread_mutex_lock(&lock);
	for (unsigned i = 0; i < MAX_WATCHED; i++)
		if (watched[i].e)
			write_out(&watched[i], "exit");
	pthread_mutex_unlock(&lock);
}

static const struct sgx_drv_observer observer = {
	.initialized = enclave_initialized,
	.releasing = enclave_releasing,
};

void sgxemu_cov_setup(void)
{
	static bool done;
	const char *dir = getenv("SGXEMU_COVERAGE");
	const char *s = getenv("GCOV_PREFIX_STRIP");

	if (done)
		return;
	done = true;
	/* Always watching: whether the program is a libFuzzer harness is
	 * known only once its symbols can be looked up (at EINIT). */
	sgx_drv_set_observer(&observer);
	if (!dir || !*dir)
		return;
	out_dir = strdup(dir);
	if (!out_dir)
		return;
	if (s && *s) {
		char *end;
		unsigned long v = strtoul(s, &end, 10);

		if (*end || v > 4096)
			cov_log("GCOV_PREFIX_STRIP='%s' is not a number: ignored", s);
		else
			strip = (unsigned)v;
	}
	atexit(at_exit);
}
