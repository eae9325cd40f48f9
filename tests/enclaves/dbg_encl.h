/* SPDX-License-Identifier: MIT */
/* The debugger test enclave's commands (dbg_encl.c, tests/debug/). */
#ifndef SGXEMU_TEST_DBG_ENCL_H
#define SGXEMU_TEST_DBG_ENCL_H

#define DBG_CMD_COMPUTE	1	/* out = in * in + 1; encl_counter++ */
#define DBG_CMD_SPIN	2	/* until *stop; out = loops so far */
#define DBG_CMD_FAULT	3	/* a write through a null pointer (#PF) */

struct dbg_args {
	unsigned long in, out;
	volatile unsigned long *stop;	/* host memory */
};

#endif
