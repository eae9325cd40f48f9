// SPDX-License-Identifier: MIT
/*
 * The kernel's SGX usage count and its SVN update at open (Linux 6.19,
 * arch/x86/kernel/cpu/sgx/main.c: sgx_inc_usage_count, sgx_dec_usage_count,
 * sgx_update_svn; linux-driver-facts.md §1.2, §11.6).
 *
 * The count is of enclave objects: it goes up at each open of an enclave
 * device and down when the enclave is finally freed. When it goes from 0
 * to 1 the processor is asked to take a pending microcode update
 * (ENCLS[EUPDATESVN]) while the EPC is guaranteed empty: SGX_NO_UPDATE is
 * the usual answer and changes nothing the program can see;
 * SGX_INSUFFICIENT_ENTROPY is retried RDRAND_RETRY_LOOPS (10) times and
 * then open() fails with EAGAIN; any other code is logged and open()
 * fails with EIO; success logs "SVN updated successfully".
 *
 * What sgxemu adds around the instruction: the late microcode load the OS
 * does first, here from the pending CPUSVN of the secrets file, where
 * `sgxemu platform update-svn` put it; and, after a success, the new
 * CPUSVN written back there, so the next process starts at it (as the
 * next boot of a machine whose BIOS carries the new microcode).
 *
 * One difference: the platform is per process, so "no enclave" means none
 * in this process. Where a forked child still holds enclaves of ours, the
 * EPC this process sees is not empty either (epc_fork.c); the processor
 * answers SGX_EPC_NOT_READY, which here means what a usage count above 0
 * means to the kernel: no update now (the next open with none takes it).
 */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "base/hex.h"
#include "base/secrets.h"
#include "driver/drv.h"
#include "driver/svn.h"
#include "engine/engine.h"

#define RDRAND_RETRY_LOOPS	10

static pthread_mutex_t sgx_svn_lock = PTHREAD_MUTEX_INITIALIZER;
static unsigned long sgx_usage_count;
int (*sgx_eupdatesvn_leaf)(struct sgx_cpu *cpu) = sgx_eupdatesvn;

static void svn_log(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void svn_log(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	sgx_drv_vlog(fmt, ap);
	va_end(ap);
}

/*
 * SGXEMU_EUPDATESVN_ENTROPY: how many of the next RDSEEDs fail, or "fail"
 * for all, read once. A test injection of a starved entropy source.
 */
static void entropy_injection(struct sgx_cpu *cpu)
{
	static bool done;
	const char *v = getenv("SGXEMU_EUPDATESVN_ENTROPY");
	char *end;
	unsigned long n;

	if (done)
		return;
	done = true;
	if (!v || !*v)
		return;
	if (!strcmp(v, "fail")) {
		atomic_store(&cpu->rdseed_failures, UINT_MAX);
		return;
	}
	n = strtoul(v, &end, 10);
	if (*end || n >= UINT_MAX) {
		svn_log("SGXEMU_EUPDATESVN_ENTROPY='%s' is neither a count nor "
			"'fail': ignored", v);
		return;
	}
	atomic_store(&cpu->rdseed_failures, (unsigned)n);
}

/*
 * The OS's late microcode load: the pending CPUSVN of the secrets file
 * becomes the processor's microcode SVN. A file that cannot be read now
 * (damaged since the platform came up) loads nothing: the platform keeps
 * its CPUSVN and identity, and the line says why.
 */
static void load_microcode(struct sgx_cpu *cpu)
{
	struct sgx_svn_state st;
	char path[4096], why[512];

	if (sgx_secrets_path(path, sizeof(path)))
		return;
	if (sgx_secrets_svn(path, &st, why, sizeof(why))) {
		svn_log("EUPDATESVN: no microcode update read: %s", why);
		return;
	}
	sgx_cpu_load_microcode(cpu, st.pending);
}

/* The new CPUSVN into the secrets file; the platform has it either way. */
static void record_cpusvn(const uint8_t cpusvn[16])
{
	char path[4096], why[512], h[33];

	if (sgx_secrets_path(path, sizeof(path)))
		return;
	if (sgx_secrets_commit_svn(path, cpusvn, why, sizeof(why))) {
		sgx_hex(h, cpusvn, 16);
		svn_log("EUPDATESVN: CPUSVN %s taken but not recorded: %s", h, why);
	}
}

/* sgx_update_svn: 0, -EAGAIN or -EIO (under sgx_svn_lock). */
static int sgx_update_svn(void)
{
	struct sgx_cpu *cpu = sgxemu__cpu();
	char h[33];
	int ret = SGX_INSUFFICIENT_ENTROPY;

	if (!cpu->config.eupdatesvn)
		return 0;
	entropy_injection(cpu);
	load_microcode(cpu);
	for (int i = 0; i < RDRAND_RETRY_LOOPS; i++) {
		ret = sgx_eupdatesvn_leaf(cpu);
		if (ret != SGX_INSUFFICIENT_ENTROPY)
			break;
	}
	switch (ret) {
	case 0:
		sgx_hex(h, cpu->keys.cpusvn, 16);
		svn_log("sgx: SVN updated successfully (CPUSVN %s)", h);
		record_cpusvn(cpu->keys.cpusvn);
		return 0;
	case SGX_NO_UPDATE:
		return 0;
	case SGX_EPC_NOT_READY:
		sgx_drv_log("EUPDATESVN: a forked child still holds enclaves of "
			    "this process: no SVN update now");
		return 0;
	case SGX_INSUFFICIENT_ENTROPY:
		svn_log("EUPDATESVN returned %d (SGX_INSUFFICIENT_ENTROPY) %d "
			"times: open fails with EAGAIN", ret, RDRAND_RETRY_LOOPS);
		return -EAGAIN;
	default:
		svn_log("EUPDATESVN returned %d (0x%x, %s): open fails with EIO",
			ret, (unsigned)ret, sgx_error_name(ret));
		return -EIO;
	}
}

int sgx_inc_usage_count(void)
{
	int ret = 0;

	pthread_mutex_lock(&sgx_svn_lock);
	if (!sgx_usage_count)
		ret = sgx_update_svn();
	if (!ret)
		sgx_usage_count++;
	pthread_mutex_unlock(&sgx_svn_lock);
	return ret;
}

void sgx_dec_usage_count(void)
{
	pthread_mutex_lock(&sgx_svn_lock);
	if (sgx_usage_count)
		sgx_usage_count--;
	pthread_mutex_unlock(&sgx_svn_lock);
}

void sgx_svn_fork_child(void)
{
	pthread_mutex_init(&sgx_svn_lock, NULL);
}
