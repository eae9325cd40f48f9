/* SPDX-License-Identifier: MIT */
/*
 * The process-wide platform: the emulated processor plus the engine's
 * process state (signal handlers, the TCB region), created on first use
 * from the configuration and the environment.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "engine/engine.h"

struct sgxemu_platform sgxemu__platform;

static pthread_mutex_t platform_lock = PTHREAD_MUTEX_INITIALIZER;
static struct sgxemu_platform_config pending = {
	.sgx2 = -1, .guard = -1, .host_enclu = -1,
};
static int init_error;

const char *sgxemu_version(void)
{
	return "sgxemu 0.1";
}

/* "64M", "93.5M", "1G", "4096": bytes, or 0 for a malformed value. */
static size_t parse_size(const char *s)
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

static int env_flag(const char *name, int dflt)
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

static int platform_create(void)
{
	struct sgx_cpu_config cc = {0};
	const char *v;
	int ret;

	cc.epc_size = pending.epc_size;
	if (!cc.epc_size && (v = getenv("SGXEMU_EPC_SIZE")) != NULL) {
		cc.epc_size = parse_size(v);
		if (!cc.epc_size)
			return -EINVAL;
	}
	cc.nr_sections = pending.nr_sections;
	if (!cc.nr_sections && (v = getenv("SGXEMU_EPC_SECTIONS")) != NULL)
		cc.nr_sections = (unsigned)atoi(v);
	cc.sgx2 = pending.sgx2 >= 0 ? pending.sgx2 : env_flag("SGXEMU_SGX2", 1);
	ret = sgx_cpu_init(&sgxemu__platform.cpu, &cc);
	if (ret)
		return ret;
	sgxemu__platform.guard = pending.guard >= 0 ?
		pending.guard : env_flag("SGXEMU_GUARD", 0);
	sgxemu__platform.host_enclu = pending.host_enclu >= 0 ?
		pending.host_enclu : env_flag("SGXEMU_HOST_ENCLU", 1);
	sgxemu__guard_init(sgxemu__platform.guard);
	sgx_xsave_layout_init();
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
