/* SPDX-License-Identifier: MIT */
/*
 * EPC paging statistics: the C API, the JSON form, and SGXEMU_STATS=FILE
 * ('-' = stderr), which writes the JSON when the process exits.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "driver/paging.h"

_Atomic uint64_t sgxemu__st_evicted, sgxemu__st_reloaded,
	sgxemu__st_ksgxd_runs, sgxemu__st_direct_runs, sgxemu__st_reload_failed,
	sgxemu__st_aging_faults, sgxemu__st_kicks;

int sgxemu_platform_stats(struct sgxemu_platform_stats *s)
{
	struct sgx_cpu *cpu;
	int ret;

	if (!s)
		return -EINVAL;
	ret = sgxemu_platform_init();
	if (ret)
		return ret;
	cpu = sgxemu__cpu();
	/* EPC held for forked children that are gone counts as free. */
	sgxemu__epc_fork_reap();
	memset(s, 0, sizeof(*s));
	s->epc_total_pages = cpu->nr_pages;
	s->epc_free_pages = sgxemu__epc_nr_free();
	s->nr_sections = cpu->nr_sections;
	for (unsigned i = 0; i < cpu->nr_sections && i < SGXEMU_MAX_EPC_SECTIONS;
	     i++) {
		s->sections[i].phys_base = cpu->sections[i].phys_base;
		s->sections[i].total_pages = cpu->sections[i].nr_pages;
		s->sections[i].free_pages = sgxemu__epc_section_free(i);
	}
	s->pages_evicted = atomic_load(&sgxemu__st_evicted);
	s->pages_reloaded = atomic_load(&sgxemu__st_reloaded);
	s->reload_failures = atomic_load(&sgxemu__st_reload_failed);
	s->reclaimer_runs = atomic_load(&sgxemu__st_ksgxd_runs);
	s->direct_reclaims = atomic_load(&sgxemu__st_direct_runs);
	s->aging_faults = atomic_load(&sgxemu__st_aging_faults);
	s->kicks = atomic_load(&sgxemu__st_kicks);
	for (int i = 0; i < MAX_ENCLAVES; i++)
		if (atomic_load(&sgxemu__enclaves[i]))
			s->nr_enclaves++;
	return 0;
}

int sgxemu_enclave_stats(const struct sgxemu_enclave *e,
			 struct sgxemu_enclave_stats *s)
{
	if (!e || !s)
		return -EINVAL;
	memset(s, 0, sizeof(*s));
	if (!e->pg)
		return 0;
	sgxemu__paging_lock();
	s->resident_pages = e->pg->resident;
	s->evicted_pages = e->pg->evicted;
	s->va_pages = e->pg->nr_va;
	s->evictions = e->pg->evictions;
	s->reloads = e->pg->reloads;
	sgxemu__paging_unlock();
	return 0;
}

int sgxemu_stats_write_json(int fd)
{
	struct sgxemu_platform_stats s;
	char *buf = NULL;
	size_t len = 0;
	FILE *f;
	int ret;

	ret = sgxemu_platform_stats(&s);
	if (ret)
		return ret;
	f = open_memstream(&buf, &len);
	if (!f)
		return -ENOMEM;
	fprintf(f, "{\"epc\":{\"total_pages\":%llu,\"free_pages\":%llu,"
		"\"sections\":[",
		(unsigned long long)s.epc_total_pages,
		(unsigned long long)s.epc_free_pages);
	for (unsigned i = 0; i < s.nr_sections; i++)
		fprintf(f, "%s{\"phys_base\":%llu,\"total_pages\":%llu,"
			"\"free_pages\":%llu}", i ? "," : "",
			(unsigned long long)s.sections[i].phys_base,
			(unsigned long long)s.sections[i].total_pages,
			(unsigned long long)s.sections[i].free_pages);
	fprintf(f, "]},\"paging\":{\"pages_evicted\":%llu,"
		"\"pages_reloaded\":%llu,\"reload_failures\":%llu,"
		"\"reclaimer_runs\":%llu,\"direct_reclaims\":%llu,"
		"\"aging_faults\":%llu,\"kicks\":%llu},\"enclaves\":[",
		(unsigned long long)s.pages_evicted,
		(unsigned long long)s.pages_reloaded,
		(unsigned long long)s.reload_failures,
		(unsigned long long)s.reclaimer_runs,
		(unsigned long long)s.direct_reclaims,
		(unsigned long long)s.aging_faults,
		(unsigned long long)s.kicks);
	sgxemu__paging_lock();
	for (int i = 0, first = 1; i < MAX_ENCLAVES; i++) {
		struct sgxemu_enclave *e = atomic_load(&sgxemu__enclaves[i]);
		struct sgxemu_enclave_stats es;

		if (!e || sgxemu_enclave_stats(e, &es))
			continue;
		fprintf(f, "%s{\"base\":%llu,\"size\":%llu,"
			"\"resident_pages\":%llu,\"evicted_pages\":%llu,"
			"\"va_pages\":%llu,\"evictions\":%llu,\"reloads\":%llu}",
			first ? "" : ",", (unsigned long long)e->base,
			(unsigned long long)e->size,
			(unsigned long long)es.resident_pages,
			(unsigned long long)es.evicted_pages,
			(unsigned long long)es.va_pages,
			(unsigned long long)es.evictions,
			(unsigned long long)es.reloads);
		first = 0;
	}
	sgxemu__paging_unlock();
	fprintf(f, "]}\n");
	if (fclose(f)) {
		free(buf);
		return -ENOMEM;
	}
	for (size_t off = 0; off < len;) {
		ssize_t w = write(fd, buf + off, len - off);

		if (w <= 0) {
			ret = -EIO;
			break;
		}
		off += (size_t)w;
	}
	free(buf);
	return ret;
}

static void stats_at_exit(void)
{
	const char *path = getenv("SGXEMU_STATS");
	int fd;

	if (!path || !*path)
		return;
	if (!strcmp(path, "-")) {
		sgxemu_stats_write_json(2);
		return;
	}
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0) {
		fprintf(stderr, "sgxemu: SGXEMU_STATS: cannot open %s\n", path);
		return;
	}
	sgxemu_stats_write_json(fd);
	close(fd);
}

static void stats_setup(void)
{
	const char *path = getenv("SGXEMU_STATS");

	if (path && *path)
		atexit(stats_at_exit);
}

/* Once, when the first enclave is created (encl.c). */
void sgxemu__stats_init(void)
{
	static pthread_once_t once = PTHREAD_ONCE_INIT;

	pthread_once(&once, stats_setup);
}
