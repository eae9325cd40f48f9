// SPDX-License-Identifier: MIT
/*
 * ENCLU[EGETKEY] (sgx-facts.md §4.20): RBX = KEYREQUEST (512-byte aligned,
 * readable enclave page), RCX = 16-byte output (16-byte aligned, writable
 * enclave page). The request is copied out of the EPC before it is checked,
 * as hardware does, so a concurrent writer inside the enclave cannot change
 * it between check and use.
 */
#include <string.h>

#include "cpu/encl_mem.h"

int sgx_egetkey(struct sgx_cpu *cpu, struct sgx_encl_ctl *ctl,
		uint64_t keyrequest, uint64_t outputdata)
{
	struct sgx_keyrequest req;
	struct sgx_key_identity id;
	uint8_t key[SGX_KEY_SIZE];
	void *src, *dst;
	int ret;

	pthread_mutex_lock(&ctl->lock);
	ret = sgx_encl_operand(cpu, ctl, keyrequest, sizeof(req), 512, false, &src);
	if (!ret)
		ret = sgx_encl_operand(cpu, ctl, outputdata, SGX_KEY_SIZE, 16,
				       true, &dst);
	if (ret)
		goto out;
	memcpy(&req, src, sizeof(req));
	sgx_encl_key_identity(cpu, ctl, &id);
	ret = sgx_derive_key(&cpu->keys, &id, &req, key);
	if (!ret)
		memcpy(dst, key, sizeof(key));
	memset(key, 0, sizeof(key));
out:
	pthread_mutex_unlock(&ctl->lock);
	return ret;
}
