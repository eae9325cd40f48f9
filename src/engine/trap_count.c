/* SPDX-License-Identifier: MIT */
/*
 * Counts of the engine's traps and of the signals its handler takes, for
 * benchmarks (bench/gramine_ocall.sh) and tests: host ENCLU traps, enclave
 * ENCLU traps (EEXIT and the other leaves), AEXs, host EENTERs that took
 * no trap (the fast path), SIGILL, SIGSEGV, SIGSYS and other signals, and
 * the timer ticks that found a thread in host mode and those that made an
 * AEX.
 *
 * Each thread counts in its own 128-byte line (by TCB slot; line 0 for
 * threads never set up), so that an OCALL loop on several threads does
 * not bounce one line between cores. SGXEMU_TRAP_COUNTS=FILE keeps the
 * lines in FILE, a shared mapping of SGXEMU_COUNT_LINES lines of sixteen
 * little-endian 64-bit counters (ten used, in the order of enum
 * sgxemu_count), so that they survive a program that ends with a raw
 * exit_group and add up across its fork children (whose threads count in
 * the lines of the same slots: hence the atomic adds, relaxed, no locks,
 * usable in handlers); the reader adds the lines up. Without it they are
 * this process's own.
 */
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#include "engine/engine.h"

static struct sgxemu_count_line own[SGXEMU_COUNT_LINES];
struct sgxemu_count_line *sgxemu__counts = own;

uint64_t sgxemu__count_total(enum sgxemu_count idx)
{
	uint64_t n = 0;

	for (unsigned int i = 0; i < SGXEMU_COUNT_LINES; i++)
		n += atomic_load_explicit(&sgxemu__counts[i].c[idx],
					  memory_order_relaxed);
	return n;
}

enum sgxemu_count sgxemu__count_of_signal(int signo)
{
	switch (signo) {
	case SIGILL:
		return SGXEMU_C_SIGILL;
	case SIGSEGV:
		return SGXEMU_C_SIGSEGV;
	case SIGSYS:
		return SGXEMU_C_SIGSYS;
	default:
		return SGXEMU_C_SIG_OTHER;
	}
}

void sgxemu__traps_init(void)
{
	const char *path = getenv("SGXEMU_TRAP_COUNTS");
	size_t len = sizeof(own);
	void *p;
	int fd;

	if (!path || !*path)
		return;
	fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
	if (fd < 0 || ftruncate(fd, (off_t)len)) {
		sgxemu__write_str("sgxemu: SGXEMU_TRAP_COUNTS: cannot open or "
				  "size the file; counts stay in memory\n");
		if (fd >= 0)
			close(fd);
		return;
	}
	p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	close(fd);
	if (p != MAP_FAILED)
		sgxemu__counts = p;
}
