// SPDX-License-Identifier: MIT
/*
 * An enclave's gcov_info records to .gcda files.
 *
 * gcc's -fprofile-info-section puts a pointer to each object's gcov_info
 * record in the section .gcov_info instead of a constructor that would
 * call libgcov (the manual's "Profiling and Test Coverage in Freestanding
 * Environments"). The records, the functions' records and the counters
 * are read out of the enclave by EDBGRD's rule (read.c) into host memory,
 * every pointer checked to stay in the enclave's image, and the copies
 * handed to the host's libgcov, whose __gcov_info_to_gcda encodes them.
 *
 * The records' layout is gcc's (libgcov.h of gcc >= 12), which changes
 * only with the gcov version: a record whose version is not the one the
 * host's libgcov writes is refused, so the layout below is always the
 * one the writer expects. The version libgcov writes is found by asking
 * it to encode an empty record (its second word).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cov/cov.h"
#include "engine/engine.h"

/* The host's libgcov (libgcov.a, linked in; gcc's <gcov.h> declares it). */
void __gcov_info_to_gcda(const void *info,
			 void (*filename_fn)(const char *, void *),
			 void (*dump_fn)(const void *, unsigned, void *),
			 void *(*allocate_fn)(unsigned, void *), void *arg);

/* Counter kinds (gcov-counter.def): 8 from gcc 10, 9 from gcc 14. */
#ifndef SGXEMU_GCOV_COUNTERS
#define SGXEMU_GCOV_COUNTERS 8
#endif
#define MAX_FUNCTIONS	(1U << 20)
#define MAX_COUNTERS	(1U << 24)
#define MAX_RECORDS	(1U << 16)

struct gcov_ctr_info {
	uint32_t num;
	uint64_t values;		/* gcov_type * */
};

struct gcov_fn_info {
	uint64_t key;			/* const struct gcov_info * */
	uint32_t ident, lineno_checksum, cfg_checksum;
	struct gcov_ctr_info ctrs[];	/* one per merge[] that is set */
};

struct gcov_info {
	uint32_t version;
	uint64_t next;
	uint32_t stamp, checksum;
	uint64_t filename;		/* const char * */
	uint64_t merge[SGXEMU_GCOV_COUNTERS];
	uint32_t n_functions;
	uint64_t functions;		/* const struct gcov_fn_info *const * */
};

/* Host copies are built with host pointers in the same fields. */
#define HOSTPTR(p)	((uint64_t)(uintptr_t)(p))

struct range {
	uint64_t lo, hi;
};

struct sink {
	FILE *f;
	bool failed;
	uint32_t words[2];		/* the first two words, for version_of */
	unsigned nwords;
};

static void no_filename(const char *name, void *arg)
{
	(void)name;
	(void)arg;
}

static void dump(const void *data, unsigned len, void *arg)
{
	struct sink *s = arg;

	for (unsigned i = 0; s->nwords < 2 && i + 4 <= len; i += 4)
		memcpy(&s->words[s->nwords++], (const uint8_t *)data + i, 4);
	if (s->f && !s->failed && fwrite(data, 1, len, s->f) != len)
		s->failed = true;
}

static void *allocate(unsigned len, void *arg)
{
	(void)arg;
	return malloc(len);
}

/* The version the host's libgcov writes: it encodes an empty record. */
static uint32_t host_version(void)
{
	static uint32_t v;
	struct gcov_info empty;
	struct sink s = { 0 };

	if (v)
		return v;
	memset(&empty, 0, sizeof(empty));
	__gcov_info_to_gcda(&empty, no_filename, dump, allocate, &s);
	v = s.nwords == 2 ? s.words[1] : 0;
	return v;
}

/*
 * @p, a pointer read from the enclave, at its load address in *@out if
 * [p, p + len) stays in the enclave's image. An ET_DYN image's pointers
 * were relocated by the enclave's runtime (the SDK's trts does it at its
 * first ECALL); an ET_EXEC image's stay as linked, wherever it was loaded.
 * @link: @p is a link-time address (a section's), moved in either case.
 */
static bool in_image(const struct sgxemu_enclave *e,
		     const struct cov_image *im, uint64_t p, uint64_t len,
		     bool link, uint64_t *out)
{
	uint64_t a = im->relocated && !link ? p : p + im->delta;
	uint64_t lo = im->lo + im->delta, hi = im->hi + im->delta;

	if (a < e->base || a - e->base >= e->size || a < lo || a >= hi ||
	    len > hi - a)
		return false;
	*out = a;
	return true;
}

static int cmp_range(const void *a, const void *b)
{
	const struct range *x = a, *y = b;

	return x->lo < y->lo ? -1 : x->lo > y->lo;
}

/* One record's host copy: freed by free_record. */
struct record {
	struct gcov_info info;
	char filename[PATH_MAX];
	struct gcov_fn_info **fns;
	uint64_t **values;
	size_t nvalues;
};

static void free_record(struct record *r)
{
	for (size_t i = 0; i < r->nvalues; i++)
		free(r->values[i]);
	if (r->fns)
		for (uint32_t i = 0; i < r->info.n_functions; i++)
			free(r->fns[i]);
	free(r->values);
	free(r->fns);
}

/*
 * The record at enclave address @at into @r, its counters' ranges added
 * to @ranges (*nranges of them). 0, or -errno after one line saying why.
 */
static int read_record(struct sgxemu_enclave *e, const struct cov_image *im,
		       uint64_t at, struct record *r, struct range **ranges,
		       size_t *nranges)
{
	unsigned nctr = 0;
	uint64_t a;
	int ret;

	memset(r, 0, sizeof(*r));
	if (!in_image(e, im, at, sizeof(r->info), false, &a) ||
	    cov_read(e, a, &r->info, sizeof(r->info))) {
		cov_log("%s: a .gcov_info pointer (0x%llx) leaves the enclave's "
			"image", im->path, (unsigned long long)at);
		return -EFAULT;
	}
	if (r->info.version != host_version()) {
		cov_log("%s: gcov version %08x, but the host's libgcov writes "
			"%08x (build the enclave with the host's gcc)", im->path,
			r->info.version, host_version());
		return -EPROTO;
	}
	if (!in_image(e, im, r->info.filename, 1, false, &a) ||
	    cov_read_str(e, a, r->filename, sizeof(r->filename))) {
		cov_log("%s: a gcov_info's file name leaves the enclave's image",
			im->path);
		return -EFAULT;
	}
	for (unsigned t = 0; t < SGXEMU_GCOV_COUNTERS; t++)
		nctr += r->info.merge[t] != 0;
	if (r->info.n_functions > MAX_FUNCTIONS) {
		cov_log("%s: %s: %u functions", im->path, r->filename,
			r->info.n_functions);
		return -E2BIG;
	}
	r->fns = calloc(r->info.n_functions + 1, sizeof(*r->fns));
	r->values = calloc((size_t)r->info.n_functions * nctr + 1,
			   sizeof(*r->values));
	if (!r->fns || !r->values)
		return -ENOMEM;
	for (uint32_t i = 0; i < r->info.n_functions; i++) {
		size_t fsize = sizeof(struct gcov_fn_info) +
			       nctr * sizeof(struct gcov_ctr_info);
		uint64_t fp;
		struct gcov_fn_info *fn;

		if (!in_image(e, im, r->info.functions + i * 8ULL, 8, false, &a) ||
		    cov_read(e, a, &fp, 8))
			goto bad;
		if (!fp)
			continue;	/* a function that was not emitted */
		fn = r->fns[i] = calloc(1, fsize);
		if (!fn)
			return -ENOMEM;
		if (!in_image(e, im, fp, fsize, false, &a) || cov_read(e, a, fn, fsize))
			goto bad;
		/* Another object's copy of a COMDAT function: libgcov skips
		 * a function whose key is not the record being written. */
		fn->key = fn->key == at ? HOSTPTR(&r->info) : 0;
		for (unsigned c = 0; c < nctr; c++) {
			uint64_t n = fn->ctrs[c].num, *v;
			struct range *grown;

			if (n > MAX_COUNTERS || (n && !in_image(e, im,
					fn->ctrs[c].values, n * 8, false, &a)))
				goto bad;
			v = r->values[r->nvalues++] = calloc(n + 1, 8);
			if (!v)
				return -ENOMEM;
			if (n && (ret = cov_read(e, a, v, n * 8)))
				goto bad;
			grown = realloc(*ranges, (*nranges + 1) * sizeof(**ranges));
			if (!grown)
				return -ENOMEM;
			*ranges = grown;
			if (n)
				(*ranges)[(*nranges)++] = (struct range){ a, a + n * 8 };
			fn->ctrs[c].values = HOSTPTR(v);
		}
	}
	r->info.next = 0;
	r->info.filename = HOSTPTR(r->filename);
	/* libgcov only asks whether a kind's merge function is there. */
	for (unsigned t = 0; t < SGXEMU_GCOV_COUNTERS; t++)
		r->info.merge[t] = r->info.merge[t] ? HOSTPTR(&allocate) : 0;
	r->info.functions = HOSTPTR(r->fns);
	return 0;
bad:
	cov_log("%s: %s: a function record or its counters leave the "
		"enclave's image", im->path, r->filename);
	return -EFAULT;
}

/* mkdir -p of @path's directories. */
static void make_dirs(char *path)
{
	for (char *p = path + 1; (p = strchr(p, '/')); p++) {
		*p = 0;
		mkdir(path, 0777);
		*p = '/';
	}
}

/* GCOV_PREFIX's rule: @dir, then @name without its first @strip parts. */
static int out_path(char *out, size_t len, const char *dir,
		    const char *name, unsigned strip)
{
	const char *p = name;

	while (strip && *p) {
		const char *s = strchr(p + 1, '/');

		if (!s)
			break;
		p = s;
		strip--;
	}
	while (*p == '/')
		p++;
	if ((size_t)snprintf(out, len, "%s/%s", dir, p) >= len)
		return -ENAMETOOLONG;
	return 0;
}

/* One record to its file, through a temporary name. 0 or -errno. */
static int write_record(const struct cov_image *im, const struct record *r,
			const char *dir, unsigned strip)
{
	char path[PATH_MAX], tmp[PATH_MAX + 16];
	struct sink s = { 0 };
	int fd, ret;

	ret = out_path(path, sizeof(path), dir, r->filename, strip);
	if (ret) {
		cov_log("%s: %s: output path too long", im->path, r->filename);
		return ret;
	}
	make_dirs(path);
	snprintf(tmp, sizeof(tmp), "%s.XXXXXX", path);
	fd = mkstemp(tmp);
	if (fd < 0 || !(s.f = fdopen(fd, "w"))) {
		ret = -errno;
		cov_log("%s: %s", path, strerror(errno));
		if (fd >= 0) {
			close(fd);
			unlink(tmp);
		}
		return ret;
	}
	fchmod(fd, 0644);
	__gcov_info_to_gcda(&r->info, no_filename, dump, allocate, &s);
	if (fclose(s.f) || s.failed) {
		ret = -EIO;
		cov_log("%s: write failed", path);
		unlink(tmp);
		return ret;
	}
	if (rename(tmp, path)) {
		ret = -errno;
		cov_log("%s: %s", path, strerror(errno));
		unlink(tmp);
		return ret;
	}
	return 0;
}

int cov_gcov_write(struct sgxemu_enclave *e, const struct cov_image *im,
		   const char *dir, unsigned strip)
{
	struct record *recs = NULL;
	struct range *ranges = NULL;
	size_t nrec, nranges = 0, got = 0;
	int ret = 0, written = 0;

	nrec = im->gcov_info.size / 8;
	if (!nrec)
		return 0;
	if (nrec > MAX_RECORDS) {
		cov_log("%s: %zu gcov_info records", im->path, nrec);
		return -E2BIG;
	}
	recs = calloc(nrec, sizeof(*recs));
	if (!recs)
		return -ENOMEM;
	for (size_t i = 0; i < nrec; i++) {
		uint64_t p, a;
		int r = -EFAULT;

		if (!in_image(e, im, im->gcov_info.addr + i * 8, 8, true, &a) ||
		    (r = cov_read(e, a, &p, 8))) {
			cov_log("%s: its .gcov_info section at 0x%llx cannot be "
				"read (%s)", im->path, (unsigned long long)
				(im->gcov_info.addr + im->delta + i * 8),
				strerror(-r));
			ret = r;
			break;
		}
		if (!p)
			continue;
		ret = read_record(e, im, p, &recs[got], &ranges, &nranges);
		got++;
		if (ret)
			break;
	}
	/* Counters of two functions in one place: the records are not
	 * what the compiler made, and no count in them can be trusted. */
	if (!ret && nranges > 1) {
		qsort(ranges, nranges, sizeof(*ranges), cmp_range);
		for (size_t i = 1; i < nranges; i++)
			if (ranges[i].lo < ranges[i - 1].hi) {
				cov_log("%s: counters overlap at 0x%llx: no .gcda "
					"written", im->path,
					(unsigned long long)ranges[i].lo);
				ret = -EINVAL;
				break;
			}
	}
	for (size_t i = 0; !ret && i < got; i++)
		if (!write_record(im, &recs[i], dir, strip))
			written++;
	for (size_t i = 0; i < got; i++)
		free_record(&recs[i]);
	free(recs);
	free(ranges);
	return ret ? ret : written;
}
