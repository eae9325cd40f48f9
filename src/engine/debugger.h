/* SPDX-License-Identifier: MIT */
/*
 * What this process publishes for a debugger (src/engine/debugger.c) and
 * what the debugger's side (src/dbg/ptrace.c, preloaded into gdb) looks
 * for: one page of a memfd named SGXEMU_DEBUG_MEMFD, mapped shared, so it
 * shows in /proc/PID/maps as "/memfd:sgxemu-debug (deleted)". It holds the
 * address of the processor (struct sgx_cpu) in this process; the debugger
 * reads the EPCM, the enclave list and the SECS through /proc/PID/mem, as
 * the kernel's access hook consults the driver's and the CPU's state.
 * Both sides are built from the same tree; the sizes catch a mismatch.
 */
#ifndef SGXEMU_ENGINE_DEBUGGER_H
#define SGXEMU_ENGINE_DEBUGGER_H

#include <stdint.h>

#define SGXEMU_DEBUG_MEMFD	"sgxemu-debug"
#define SGXEMU_DEBUG_MAGIC	"sgxemuDB"
#define SGXEMU_DEBUG_VERSION	3

struct sgxemu_debug_desc {
	char     magic[8];
	uint32_t version;
	uint32_t cpu_size;	/* sizeof(struct sgx_cpu) */
	uint32_t epcm_size;	/* sizeof(struct sgx_epcm_entry) */
	uint32_t ctl_size;	/* sizeof(struct sgx_encl_ctl) */
	uint64_t cpu;		/* address of the struct sgx_cpu */
	/*
	 * The threads' control blocks (thread.c): @nr_slots of @slot_size
	 * bytes from @tcb_base, each starting with its TCB; the offsets of
	 * its tid, in_enclave flag and the host FS base saved at entry. A
	 * thread stopped in enclave mode has the enclave's FS base, and a
	 * debugger's thread library (libthread_db) would take it for the
	 * thread pointer: the hook gives it the host's, as hardware shows
	 * the OS a thread only after an AEX restored the host's FS.
	 */
	uint64_t tcb_base;
	uint64_t slot_size;
	uint32_t nr_slots;
	uint32_t tcb_tid_off;
	uint32_t tcb_in_enclave_off;
	uint32_t tcb_host_fs_off;
	/*
	 * The engine's enclave table (sgxemu__enclaves, MAX_ENCLAVES
	 * entries): through an enclave's paging state (src/driver/paging.h)
	 * the debugger reads an evicted page's contents, as the kernel's hook
	 * reloads it first.
	 */
	uint64_t enclaves;
	uint32_t max_enclaves;
	uint32_t encl_size;	/* sizeof(struct sgxemu_enclave) */
};

#endif /* SGXEMU_ENGINE_DEBUGGER_H */
