/* SPDX-License-Identifier: MIT */
/*
 * The debugger test enclave's entry (tests/enclaves/dbg_encl.c,
 * tests/integration/test_gdb.sh): the layout of test_encl.S (layout.h);
 * RDI = command, RSI = a struct dbg_args in host memory, handed to C.
 */
#include "layout.h"
#include "c_encl.inc"

	.section .text.entry, "ax"
	.globl encl_entry
encl_entry:
	ENCL_SWITCH_STACK
	xor	%ebp, %ebp		/* the end of the enclave's frames */
	call	encl_dispatch
	ENCL_EEXIT
