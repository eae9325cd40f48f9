/* SPDX-License-Identifier: MIT */
/*
 * The process-wide platform: the emulated processor plus the engine's
 * process state (signal handlers, the TCB region), created on first use
 * from the configuration and the environment.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "engine/engine.h"
#include "base/hex.h"
#include "base/secrets.h"

struct sgxemu_platform sgxemu__platform;

static pthread_mutex_t platform_lock = PTHREAD_MUTEX_INITIALIZER;
static struct sgxemu_platform_config pending = {
	.sgx2 = -1, .guard = -1, .host_enclu = -1, .aexnotify = -1,
};
static int init_error;

const char *sgxemu_version(void)
{
	return "sgxemu 0.1";
}

/* "64M", "93.5M", "1G", "4096": bytes, or 0 for a malformed value
 * (SGXEMU_EPC_SIZE; cpuid.c reads it too, before the platform exists). */
size_t sgxemu__parse_size(const char *s)
{
	char *end;
	double v = strtod(s, &end);

	if (end == s || v <= 0)
		return 0;
	switch (*end) {
	case 'k': case 'K': v *= 1024; end++; break;
	case 'm': case 'M': v *= 1024 * 1024; end++; break;
	case 'g': case 'G': v *= 1024.0 * 1024 * 1024; end++; break;
	default: break;
	}
	if (*end)
		return 0;
	return ((size_t)v) & ~(SGX_PAGE_SIZE - 1);
}

int sgxemu__env_flag(const char *name, int dflt)
{
	const char *v = getenv(name);

	if (!v || !*v)
		return dflt;
	return strcmp(v, "0") != 0;
}

int sgxemu_platform_configure(const struct sgxemu_platform_config *cfg)
{
	int ret = 0;

	if (!cfg)
		return -EINVAL;
	pthread_mutex_lock(&platform_lock);
	if (__atomic_load_n(&sgxemu__platform.ready, __ATOMIC_ACQUIRE))
		ret = -EBUSY;
	else
		pending = *cfg;
	pthread_mutex_unlock(&platform_lock);
	return ret;
}

/*
 * The platform's identity: root secrets from the secrets file (created on
 * first use), so keys derived by EGETKEY survive the process; a damaged
 * file stops the platform with its reason rather than silently becoming
 * another platform.
 */
static int platform_load_secrets(struct sgx_cpu *cpu)
{
	char path[4096], why[512];
	int ret;

	ret = sgx_secrets_path(path, sizeof(path));
	if (ret) {
		fprintf(stderr, "sgxemu: platform secrets: no location: no HOME, "
			"no writable home in the password database, and %s-%u: %s "
			"(set SGXEMU_SECRETS_FILE)\n", SGX_STATE_FALLBACK,
			(unsigned)geteuid(), strerror(-ret));
		return ret;
	}
	ret = sgx_secrets_load(path, &cpu->keys, why, sizeof(why));
	if (ret)
		fprintf(stderr, "sgxemu: platform secrets: %s\n", why);
	return ret;
}

/*
 * Launch control: "flexible" (default; the MSRs are writable and the driver
 * writes each enclave's signer before EINIT, as Linux does on FLC parts) or
 * "locked" (the MSRs hold SGXEMU_LE_HASH, Intel's launch enclave by default,
 * and every other signer needs an EINITTOKEN, as on parts without FLC).
 */
static int platform_launch_control(struct sgx_cpu *cpu)
{
	const char *mode = getenv("SGXEMU_LAUNCH_CONTROL");
	const char *hash = getenv("SGXEMU_LE_HASH");

	if (!mode || !*mode || !strcmp(mode, "flexible")) {
		if (hash && *hash) {
			fprintf(stderr, "sgxemu: SGXEMU_LE_HASH needs "
				    "SGXEMU_LAUNCH_CONTROL=locked\n");
			return -EINVAL;
		}
		return 0;
	}
	if (strcmp(mode, "locked")) {
		fprintf(stderr, "sgxemu: SGXEMU_LAUNCH_CONTROL must be flexible or "
			    "locked, not '%s'\n", mode);
		return -EINVAL;
	}
	if (hash && *hash) {
		uint8_t h[32];

		if (sgx_unhex(hash, h, sizeof(h)))
			goto bad_hash;
		for (int i = 0; i < 4; i++) {
			uint64_t v;

			memcpy(&v, h + 8 * i, 8);
			sgx_wrmsr(cpu, MSR_IA32_SGXLEPUBKEYHASH0 + i, v);
		}
	}
	cpu->lc_locked = true;
	return 0;
bad_hash:
	fprintf(stderr, "sgxemu: SGXEMU_LE_HASH must be 64 hex digits (an MRSIGNER)\n");
	return -EINVAL;
}

static int platform_create(void)
{
	struct sgx_cpu_config cc = {0};
	const char *v;
	int ret;

	/* The timer interrupt hardware takes while enclave code runs: on
	 * unless asked otherwise (kick.c). */
	v = getenv("SGXEMU_AEX_TICK");
	sgxemu__platform.aex_tick_ns = SGXEMU_AEX_TICK_DEFAULT_NS;
	if (v && *v && sgxemu__parse_tick(v, &sgxemu__platform.aex_tick_ns)) {
		fprintf(stderr, "sgxemu: SGXEMU_AEX_TICK='%s' is not a tick: "
			"a time from 100us to 60s (e.g. 4ms, 250us) or 0 for "
			"none\n", v);
		return -EINVAL;
	}
	cc.epc_size = pending.epc_size;
	if (!cc.epc_size && (v = getenv("SGXEMU_EPC_SIZE")) != NULL) {
		cc.epc_size = sgxemu__parse_size(v);
		if (!cc.epc_size)
			return -EINVAL;
	}
	cc.nr_sections = pending.nr_sections;
	if (!cc.nr_sections && (v = getenv("SGXEMU_EPC_SECTIONS")) != NULL)
		cc.nr_sections = (unsigned)atoi(v);
	cc.sgx2 = pending.sgx2 >= 0 ? pending.sgx2 : sgxemu__env_flag("SGXEMU_SGX2", 1);
	cc.aexnotify = pending.aexnotify >= 0 ?
		pending.aexnotify : sgxemu__env_flag("SGXEMU_AEXNOTIFY", 1);
	cc.eupdatesvn = sgxemu__env_flag("SGXEMU_EUPDATESVN", 1);
	ret = sgx_cpu_init(&sgxemu__platform.cpu, &cc);
	if (ret)
		return ret;
	ret = platform_load_secrets(&sgxemu__platform.cpu);
	if (!ret)
		ret = platform_launch_control(&sgxemu__platform.cpu);
	if (ret)
		goto fail;
	sgxemu__platform.guard = pending.guard >= 0 ?
		pending.guard : sgxemu__env_flag("SGXEMU_GUARD", 0);
	sgxemu__platform.host_enclu = pending.host_enclu >= 0 ?
		pending.host_enclu : sgxemu__env_flag("SGXEMU_HOST_ENCLU", 1);
	sgxemu__platform.debug = sgxemu__env_flag("SGXEMU_DEBUG", 0);
	sgxemu__traps_init();
	sgxemu__enclu_patch_init();
	sgxemu__guard_init(sgxemu__platform.guard);
	sgx_xsave_layout_init();
	sgxemu__xstate_init();
	sgxemu__fault_style_init();
	sgxemu__tsc_init(cc.sgx2);
	ret = sgxemu__thread_init_global();
	if (ret)
		goto fail;
	ret = sgxemu_register_fixup((uintptr_t)sgxemu__api_aep,
				    (uintptr_t)sgxemu__api_fixup,
				    SGXEMU_FIXUP_ALL);
	if (ret)
		goto fail;
	ret = sgxemu__signals_init();
	if (ret)
		goto fail;
	sgxemu__debug_publish(&sgxemu__platform.cpu);
	return 0;
fail:
	sgx_cpu_destroy(&sgxemu__platform.cpu);
	return ret;
}

int sgxemu_platform_init(void)
{
	if (__atomic_load_n(&sgxemu__platform.ready, __ATOMIC_ACQUIRE))
		return 0;
	pthread_mutex_lock(&platform_lock);
	if (!sgxemu__platform.ready && !init_error) {
		int ret = platform_create();

		if (ret)
			init_error = ret;
		else
			__atomic_store_n(&sgxemu__platform.ready, true,
					 __ATOMIC_RELEASE);
	}
	pthread_mutex_unlock(&platform_lock);
	return sgxemu__platform.ready ? 0 : init_error;
}

struct sgx_cpu *sgxemu_platform_cpu(void)
{
	return sgxemu_platform_init() ? NULL : &sgxemu__platform.cpu;
}

void sgxemu_platform_cpuid(uint32_t subleaf, uint32_t regs[4])
{
	if (sgxemu_platform_init()) {
		regs[0] = regs[1] = regs[2] = regs[3] = 0;
		return;
	}
	sgx_cpu_cpuid(&sgxemu__platform.cpu, subleaf, regs);
}

void sgxemu_set_host_enclu(bool on)
{
	sgxemu_platform_init();
	__atomic_store_n(&sgxemu__platform.host_enclu, on, __ATOMIC_RELEASE);
}

bool sgxemu_host_enclu(void)
{
	sgxemu_platform_init();
	return __atomic_load_n(&sgxemu__platform.host_enclu, __ATOMIC_ACQUIRE);
}
