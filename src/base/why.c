// SPDX-License-Identifier: MIT
/* One-line failure reasons (see why.h). */
#include <stdarg.h>
#include <stdio.h>

#include "base/why.h"

int sgx_fail(char *why, size_t whylen, int ret, const char *fmt, ...)
{
	va_list ap;

	if (why && whylen) {
		va_start(ap, fmt);
		vsnprintf(why, whylen, fmt, ap);
		va_end(ap);
	}
	return ret;
}
