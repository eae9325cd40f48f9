/* SPDX-License-Identifier: MIT */
/*
 * MRENCLAVE measurement records (sgx-facts.md §2). ECREATE, EADD and EEXTEND
 * hash these 64-byte blocks; the signing and measuring tools build the same
 * blocks so that their MRENCLAVE agrees with the processor's bit for bit.
 */
#ifndef SGXEMU_CPU_MEASURE_H
#define SGXEMU_CPU_MEASURE_H

#include <stdint.h>

#define SGX_MEAS_BLOCK		64
#define SGX_EEXTEND_CHUNK	256

/* "ECREATE\0" | SSAFRAMESIZE u32 | SIZE u64 | zeros */
void sgx_meas_ecreate(uint8_t block[SGX_MEAS_BLOCK], uint32_t ssaframesize,
		      uint64_t size);
/* "EADD\0\0\0\0" | page offset u64 | SECINFO bytes 0..47 (flags, zeros) */
void sgx_meas_eadd(uint8_t block[SGX_MEAS_BLOCK], uint64_t offset,
		   uint64_t secinfo_flags);
/* "EEXTEND\0" | chunk offset u64 | zeros; the 256 chunk bytes follow it */
void sgx_meas_eextend(uint8_t block[SGX_MEAS_BLOCK], uint64_t offset);

#endif /* SGXEMU_CPU_MEASURE_H */
