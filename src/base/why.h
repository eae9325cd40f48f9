/* SPDX-License-Identifier: MIT */
/*
 * One-line reasons: functions that fail with a reason for the user take a
 * (why, whylen) buffer; sgx_fail formats into it (when there is one) and
 * hands back the caller's return value, so a failure is one statement.
 * Shared by the platform secrets (src/base) and src/attest.
 */
#ifndef SGXEMU_BASE_WHY_H
#define SGXEMU_BASE_WHY_H

#include <stddef.h>

int sgx_fail(char *why, size_t whylen, int ret, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

#endif /* SGXEMU_BASE_WHY_H */
