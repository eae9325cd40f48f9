// SPDX-License-Identifier: MIT
/*
 * The debugger test enclave: plain C with debug information, so that gdb
 * (tests/integration/test_gdb.sh) can break on its functions, step its
 * lines and watch its data, at the address the host loaded it at.
 * Built at -O0 so each line is its own instructions.
 */
#include "dbg_encl.h"

unsigned long encl_counter;		/* calls of encl_compute */

__attribute__((noinline)) static unsigned long encl_square(unsigned long x)
{
	return x * x;
}

__attribute__((noinline)) unsigned long encl_compute(unsigned long x)
{
	unsigned long y = encl_square(x);

	y = y + 1;
	encl_counter = encl_counter + 1;
	return y;
}

/* Host memory: the host sees the loops go by in a->out. */
__attribute__((noinline)) static void encl_spin(struct dbg_args *a)
{
	unsigned long loops = 0;

	while (!*a->stop) {
		loops = loops + encl_compute(loops & 7) - (loops & 7) * (loops & 7);
		*(volatile unsigned long *)&a->out = loops;
	}
}

/* An enclave exception: the debugger should stop at this store. */
__attribute__((noinline)) static void encl_fault(volatile unsigned long *p)
{
	*p = encl_counter;
}

void encl_dispatch(unsigned long cmd, struct dbg_args *a)
{
	if (cmd == DBG_CMD_COMPUTE)
		a->out = encl_compute(a->in);
	else if (cmd == DBG_CMD_SPIN)
		encl_spin(a);
	else if (cmd == DBG_CMD_FAULT)
		encl_fault((volatile unsigned long *)a->stop);
}
