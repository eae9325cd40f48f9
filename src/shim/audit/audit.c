/* SPDX-License-Identifier: MIT */
/*
 * libsgxemu-audit.so: the rtld-audit(7) module that `sgxemu run` names in
 * LD_AUDIT next to libsgxemu.so in LD_PRELOAD, so the emulated platform is
 * in force before any constructor runs.
 *
 * Why: glibc runs the constructors of the program's own libraries before
 * those of an LD_PRELOAD library (dependencies first, preloads just before
 * the program), so a library that looks for __vdso_sgx_enter_enclave,
 * runs CPUID or makes a raw system call in its constructor (the Intel
 * SDK's urts does the first) would see a machine without SGX. The audit
 * interface's la_activity(LA_ACT_CONSISTENT) for the program's namespace
 * comes after every object is loaded and relocated (and after libc's early
 * initialisation) but before the first constructor: there this module
 * calls libsgxemu.so's start-up (in the program's namespace, where it was
 * preloaded), found by name in the program's global scope.
 *
 * The module lives in a namespace of its own (with its own libc, as every
 * audit module): it keeps no state of the emulator, only starts it.
 */
#include <dlfcn.h>
#include <link.h>
#include <stddef.h>

/* The start-up entry libsgxemu.so exports (src/shim/init.c). */
#define START_SYM	"sgxemu_shim_audit_start"

extern char **environ;

static struct link_map *program;	/* the first object of LM_ID_BASE */

unsigned int la_version(unsigned int version)
{
	/* Any version this glibc speaks: we use nothing newer than 1. */
	return version;
}

unsigned int la_objopen(struct link_map *map, Lmid_t lmid, uintptr_t *cookie)
{
	(void)cookie;
	if (lmid == LM_ID_BASE && !program)
		program = map;
	return 0;	/* no symbol binding callbacks: PLT calls stay direct */
}

void la_activity(uintptr_t *cookie, unsigned int flag)
{
	static int started;
	void (*start)(char **, const char *);
	Dl_info self;

	(void)cookie;
	if (flag != LA_ACT_CONSISTENT || started || !program)
		return;
	started = 1;
	/* The program's own handle searches its global scope, which holds
	 * the preloaded libsgxemu.so. (A non-main object's handle has no
	 * search list yet at this point.) */
	start = (void (*)(char **, const char *))dlsym(program, START_SYM);
	if (!start)
		return;		/* not preloaded: nothing to start */
	/* environ here is this namespace's copy of the initial one, which
	 * the program's libc has not set yet (its constructor will). */
	start(environ, dladdr((void *)la_activity, &self) ? self.dli_fname :
							   NULL);
}
