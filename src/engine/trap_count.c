/* SPDX-License-Identifier: MIT */
/*
 * Counts of the engine's traps, for benchmarks (bench/gramine_ocall.sh):
 * host ENCLU traps, enclave ENCLU traps (EEXIT and the other leaves),
 * AEXs, host EENTERs that took no trap (the fast path), and the timer
 * ticks that found a thread in host mode and those that made an AEX.
 *
 * SGXEMU_TRAP_COUNTS=FILE keeps them in FILE, a shared mapping (six
 * little-endian 64-bit counters), so that they survive a program that
 * ends with a raw exit_group and add up across its fork children; without
 * it they are this process's own. Relaxed atomic adds: no locks, usable
 * in handlers.
 */
#include <fcntl.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#include "engine/engine.h"

static struct sgxemu_trap_counts own;
struct sgxemu_trap_counts *sgxemu__traps = &own;

void sgxemu__traps_init(void)
{
	const char *path = getenv("SGXEMU_TRAP_COUNTS");
	void *p;
	int fd;

	if (!path || !*path)
		return;
	fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
	if (fd < 0 || ftruncate(fd, 4096)) {
		sgxemu__write_str("sgxemu: SGXEMU_TRAP_COUNTS: cannot open or "
				  "size the file; counts stay in memory\n");
		if (fd >= 0)
			close(fd);
		return;
	}
	p = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	close(fd);
	if (p != MAP_FAILED)
		sgxemu__traps = p;
}
