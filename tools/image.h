/* SPDX-License-Identifier: MIT */
/*
 * Enclave images as the tools see them, and their MRENCLAVE.
 *
 * A flat image is the layout the seed selftest loads (its main.c and
 * sgxsign.c): the file is the enclave from offset 0, the first page is the
 * TCS, every other page is a regular RWX page, every page is measured in
 * full (16 EEXTENDs), SSAFRAMESIZE is 1 and the enclave size is the smallest
 * power of two, at least one page, that holds the file.
 *
 * A .sgxs stream is the measurement itself, written out: 64-byte records
 * (ECREATE, EADD, EEXTEND followed by its 256 data bytes, UNMEASRD with 256
 * data bytes that are loaded but not measured).
 */
#ifndef SGXEMU_TOOLS_IMAGE_H
#define SGXEMU_TOOLS_IMAGE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sgxemu/arch.h"

#define IMAGE_SSAFRAMESIZE	1
#define IMAGE_TCS_FLAGS		SGX_SECINFO_TCS
#define IMAGE_REG_FLAGS \
	(SGX_SECINFO_REG | SGX_SECINFO_R | SGX_SECINFO_W | SGX_SECINFO_X)

/* Enclave size (SECS.SIZE) for a flat image of @image_size bytes. */
uint64_t image_enclave_size(size_t image_size);

/* SECINFO flags of page @index of a flat image. */
uint64_t image_page_flags(size_t index);

/*
 * MRENCLAVE of a flat image. The image must be a multiple of 4096 bytes
 * and at least two pages; returns 0, or -1 with a message in @err.
 */
int image_measure_flat(const uint8_t *image, size_t size,
		       uint8_t mrenclave[SGX_HASH_SIZE],
		       char *err, size_t errlen);

/* Does @data start with an ECREATE record, i.e. is it a .sgxs stream? */
bool image_is_sgxs(const uint8_t *data, size_t size);

/*
 * MRENCLAVE of a .sgxs stream, checking that the stream is well formed
 * (one leading ECREATE, known tags, whole records, offsets inside the
 * enclave, EEXTENDs only on added pages). Returns 0, or -1 with a message.
 */
int image_measure_sgxs(const uint8_t *data, size_t size,
		       uint8_t mrenclave[SGX_HASH_SIZE],
		       char *err, size_t errlen);

#endif /* SGXEMU_TOOLS_IMAGE_H */
