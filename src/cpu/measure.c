/* SPDX-License-Identifier: MIT */
/*
 * The 64-byte measurement records of ECREATE, EADD and EEXTEND
 * (sgx-facts.md §2). Fields are little-endian; unused bytes are zero.
 */
#include <string.h>

#include "cpu/measure.h"

static void put_le64(uint8_t *p, uint64_t v)
{
	for (int i = 0; i < 8; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

static void put_le32(uint8_t *p, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

void sgx_meas_ecreate(uint8_t block[SGX_MEAS_BLOCK], uint32_t ssaframesize,
		      uint64_t size)
{
	memset(block, 0, SGX_MEAS_BLOCK);
	memcpy(block, "ECREATE", 8);
	put_le32(block + 8, ssaframesize);
	put_le64(block + 12, size);
}

void sgx_meas_eadd(uint8_t block[SGX_MEAS_BLOCK], uint64_t offset,
		   uint64_t secinfo_flags)
{
	/* Bytes 16..63 are SECINFO's first 48 bytes: FLAGS then reserved 0. */
	memset(block, 0, SGX_MEAS_BLOCK);
	memcpy(block, "EADD", 4);
	put_le64(block + 8, offset);
	put_le64(block + 16, secinfo_flags);
}

void sgx_meas_eextend(uint8_t block[SGX_MEAS_BLOCK], uint64_t offset)
{
	memset(block, 0, SGX_MEAS_BLOCK);
	memcpy(block, "EEXTEND", 8);
	put_le64(block + 8, offset);
}
