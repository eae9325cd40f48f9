// SPDX-License-Identifier: MIT
/*
 * ENCLU[EREPORT] (sgx-facts.md §4.21): RBX = TARGETINFO (512-aligned),
 * RCX = REPORTDATA (128-aligned), RDX = output REPORT (512-aligned); all in
 * the calling enclave. EREPORT has no error codes: operand problems fault.
 */
#include <string.h>

#include "cpu/encl_mem.h"

int sgx_ereport(struct sgx_cpu *cpu, struct sgx_encl_ctl *ctl,
		uint64_t targetinfo, uint64_t reportdata, uint64_t outputdata)
{
	struct sgx_targetinfo ti;
	struct sgx_key_identity id;
	struct sgx_report report;
	uint8_t data[SGX_REPORT_DATA_SIZE];
	void *ti_src, *data_src, *dst;
	int ret;

	pthread_mutex_lock(&ctl->lock);
	ret = sgx_encl_operand(cpu, ctl, targetinfo, sizeof(ti), 512, false,
			       &ti_src);
	if (!ret)
		ret = sgx_encl_operand(cpu, ctl, reportdata, sizeof(data), 128,
				       false, &data_src);
	if (!ret)
		ret = sgx_encl_operand(cpu, ctl, outputdata, sizeof(report), 512,
				       true, &dst);
	if (ret)
		goto out;
	memcpy(&ti, ti_src, sizeof(ti));
	memcpy(data, data_src, sizeof(data));
	sgx_encl_key_identity(cpu, ctl, &id);
	if (sgx_build_report(&cpu->keys, &id, &ti, data, &report))
		ret = SGX_GP;
	else
		memcpy(dst, &report, sizeof(report));
out:
	pthread_mutex_unlock(&ctl->lock);
	return ret;
}
