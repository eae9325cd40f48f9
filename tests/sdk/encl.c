/* SPDX-License-Identifier: MIT */
/*
 * The SDK test enclave: built with the Intel SDK's own tools and trusted
 * libraries (tests/integration/test_intel_sdk.sh), run under sgxemu by
 * app.c. Each ECALL exercises one thing the SDK does on SGX hardware.
 */
#include <stdlib.h>
#include <string.h>

#include <sgx_mm.h>
#include <sgx_trts_aex.h>
#include <sgx_trts_exception.h>
#include <sgx_tseal.h>
#include <sgx_utils.h>

#include "encl_t.h"

int ecall_sum(const int *v, size_t n, long *sum)
{
	long s = 0;

	for (size_t i = 0; i < n; i++)
		s += v[i];
	*sum = s;
	return (int)n;
}

void ecall_reverse(char *buf, size_t len)
{
	for (size_t i = 0; i < len / 2; i++) {
		char c = buf[i];

		buf[i] = buf[len - 1 - i];
		buf[len - 1 - i] = c;
	}
}

size_t ecall_strlen(const char *s)
{
	return strlen(s);
}

/* x -> ocall_add returns x + 1 and writes 2x into y: x + 1 + 2x. */
int ecall_ocall_chain(int x)
{
	int ret = 0, y = 0;

	if (ocall_add(&ret, x, &y) != SGX_SUCCESS)
		return -1;
	return ret + y;
}

/* --- exceptions ------------------------------------------------------------ */

static volatile int ud_seen, de_seen;

/* #UD (ud2, 2 bytes) and #DE (div %rcx, 3 bytes) are skipped. */
static int handler(sgx_exception_info_t *info)
{
	if (info->exception_vector == SGX_EXCEPTION_VECTOR_UD &&
	    info->exception_type == SGX_EXCEPTION_HARDWARE) {
		ud_seen++;
		info->cpu_context.rip += 2;
		return EXCEPTION_CONTINUE_EXECUTION;
	}
	if (info->exception_vector == SGX_EXCEPTION_VECTOR_DE) {
		de_seen++;
		info->cpu_context.rip += 3;
		return EXCEPTION_CONTINUE_EXECUTION;
	}
	return EXCEPTION_CONTINUE_SEARCH;
}

/* Two #UD and one #DE, each handled and resumed: 21 when all came back. */
int ecall_exceptions(void)
{
	unsigned long a = 7, d = 0;
	void *h = sgx_register_exception_handler(1, handler);

	if (!h)
		return -1;
	ud_seen = de_seen = 0;
	__asm__ volatile("ud2");
	__asm__ volatile("ud2");
	__asm__ volatile("xor %%ecx, %%ecx\n\t"
			 ".byte 0x48, 0xf7, 0xf1"	/* div %rcx */
			 : "+a"(a), "+d"(d) : : "rcx", "cc");
	if (!sgx_unregister_exception_handler(h))
		return -2;
	return ud_seen * 10 + de_seen;
}

/* --- sealing ------------------------------------------------------------------ */

int ecall_seal(const uint8_t *data, size_t len, uint8_t *blob, size_t cap,
	       size_t *blob_len)
{
	uint32_t need = sgx_calc_sealed_data_size(0, (uint32_t)len);

	if (need == UINT32_MAX || need > cap)
		return -1;
	*blob_len = need;
	return (int)sgx_seal_data(0, NULL, (uint32_t)len, data, need,
				  (sgx_sealed_data_t *)blob);
}

int ecall_unseal(const uint8_t *blob, size_t blob_len, uint8_t *out,
		 size_t cap, size_t *out_len)
{
	const sgx_sealed_data_t *s = (const sgx_sealed_data_t *)blob;
	uint32_t len;
	sgx_status_t st;

	if (blob_len < sizeof(*s))
		return -1;
	len = sgx_get_encrypt_txt_len(s);
	if (len == UINT32_MAX || len > cap)
		return -1;
	st = sgx_unseal_data(s, NULL, NULL, out, &len);
	*out_len = len;
	return (int)st;
}

/* --- local attestation ------------------------------------------------------- */

static const char report_tag[] = "sgxemu local attestation";

int ecall_target_info(sgx_target_info_t *ti)
{
	return (int)sgx_self_target(ti);
}

int ecall_make_report(const sgx_target_info_t *ti, sgx_report_t *r)
{
	sgx_report_data_t data;

	memset(&data, 0, sizeof(data));
	memcpy(data.d, report_tag, sizeof(report_tag));
	return (int)sgx_create_report(ti, &data, r);
}

/* The MAC checks out (EGETKEY's report key), the data is ours and the
 * reporting enclave has our measurement. */
int ecall_verify_report(const sgx_report_t *r)
{
	const sgx_report_t *self = sgx_self_report();
	sgx_status_t st = sgx_verify_report(r);

	if (st != SGX_SUCCESS)
		return (int)st;
	if (memcmp(r->body.report_data.d, report_tag, sizeof(report_tag)))
		return -1;
	if (memcmp(&r->body.mr_enclave, &self->body.mr_enclave,
		   sizeof(self->body.mr_enclave)))
		return -2;
	return 0;
}

/* --- switchless and empty calls ------------------------------------------------ */

void ecall_empty(void)
{
}

void ecall_empty_switchless(void)
{
}

void ecall_ocalls(unsigned long n, int switchless)
{
	for (unsigned long i = 0; i < n; i++)
		if (switchless)
			ocall_empty_switchless();
		else
			ocall_empty();
}

/* --- EDMM ------------------------------------------------------------------------ */

/* About @bytes of stack, 1 KiB per frame. */
static int deep(size_t bytes)
{
	volatile char frame[1024];

	frame[0] = (char)bytes;
	frame[sizeof(frame) - 1] = 1;
	if (bytes <= sizeof(frame))
		return frame[0] + frame[sizeof(frame) - 1];
	return deep(bytes - sizeof(frame)) + frame[sizeof(frame) - 1];
}

/*
 * Heap past HeapMinSize, stack past StackMinSize (both grow by EAUG on
 * fault + EACCEPT in the EMM's #PF handler), and a region of the user
 * range committed at once, made read-only (EMODPR through
 * RESTRICT_PERMISSIONS), then freed (EMODT to TRIM, REMOVE_PAGES).
 * 0 on success, a negative step number otherwise.
 */
int ecall_edmm(size_t heap_bytes, size_t stack_bytes)
{
	const size_t len = 16 * 4096;
	uint8_t *heap, *p;
	void *addr = NULL;

	heap = malloc(heap_bytes);
	if (!heap)
		return -1;
	memset(heap, 0x5a, heap_bytes);
	for (size_t i = 0; i < heap_bytes; i += 4096)
		if (heap[i] != 0x5a)
			return -2;
	free(heap);
	if (deep(stack_bytes) <= 0)
		return -3;
	if (sgx_mm_alloc(NULL, len, SGX_EMA_COMMIT_NOW, NULL, NULL, &addr))
		return -4;
	p = addr;
	for (size_t i = 0; i < len; i += 4096) {
		if (p[i])
			return -5;		/* EAUG gives zeroed pages */
		p[i] = 1;
	}
	if (sgx_mm_modify_permissions(addr, len, SGX_EMA_PROT_READ))
		return -6;
	if (p[4096] != 1)
		return -7;
	if (sgx_mm_dealloc(addr, len))
		return -8;
	return 0;
}

static volatile unsigned long aex_handled;

static void on_aex(const sgx_exception_info_t *info, const void *arg)
{
	(void)info;
	(void)arg;
	aex_handled++;
}

/*
 * The trusted runtime calls the registered handlers after each AEX of
 * this thread when the enclave has AEX-Notify (the notification ERESUME
 * delivers); without it they never run. The flag is the host's memory.
 */
unsigned long ecall_aex_count(int *stop)
{
	sgx_aex_mitigation_node_t node;
	unsigned long n;

	aex_handled = 0;
	if (sgx_register_aex_handler(&node, on_aex, NULL) != SGX_SUCCESS)
		return (unsigned long)-1;
	while (!*(volatile int *)stop)
		;
	sgx_unregister_aex_handler(on_aex);
	n = aex_handled;
	return n;
}
