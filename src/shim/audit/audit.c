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
 * It also sends the dynamic loader to sgxemu's builds of Intel's DCAP
 * quote libraries (dcap/ beside this module, mk/dcap.mk) whenever the
 * program or a library asks for one of their names, by soname or by a
 * path (Intel's samples dlopen the distribution's absolute path): on a
 * machine without SGX, Intel's own builds would look for enclaves that
 * cannot load, and a program built against them must run unchanged.
 * SGXEMU_DCAP=0 leaves the names alone.
 *
 * The module lives in a namespace of its own (with its own libc, as every
 * audit module): it keeps no state of the emulator, only starts it.
 */
#include <dlfcn.h>
#include <link.h>
#include <limits.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

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

/* The sonames sgxemu builds, and the unversioned names beside them. */
static const char *const dcap_names[] = {
	"libsgx_dcap_ql.so.1", "libsgx_dcap_ql.so",
	"libsgx_dcap_quoteverify.so.1", "libsgx_dcap_quoteverify.so",
	"libdcap_quoteprov.so.1", "libdcap_quoteprov.so",
};
#define NR_DCAP	(sizeof(dcap_names) / sizeof(dcap_names[0]))

/*
 * Our file for @name (a soname, or any path ending in one), or NULL. The
 * loader keeps the string it is given, so each has a buffer of its own.
 */
static char *dcap_path(const char *name)
{
	static char path[NR_DCAP][PATH_MAX];
	static int off = -1;
	const char *base = strrchr(name, '/');
	const char *v;
	Dl_info self;
	size_t i;

	base = base ? base + 1 : name;
	for (i = 0; i < NR_DCAP; i++)
		if (!strcmp(base, dcap_names[i]))
			break;
	if (i == NR_DCAP)
		return NULL;
	if (off < 0) {
		v = getenv("SGXEMU_DCAP");
		off = (v && !strcmp(v, "0")) ? 1 : 0;
	}
	if (off)
		return NULL;
	if (!path[i][0]) {
		const char *slash;

		if (!dladdr((void *)dcap_path, &self) || !self.dli_fname ||
		    !(slash = strrchr(self.dli_fname, '/')))
			return NULL;
		/* libsgx_dcap_ql.so is a link to the .so.1 (mk/dcap.mk). */
		snprintf(path[i], sizeof(path[i]), "%.*s/dcap/%s",
			 (int)(slash - self.dli_fname), self.dli_fname, base);
		if (access(path[i], R_OK)) {
			path[i][0] = '\0';
			return NULL;
		}
	}
	return path[i];
}

char *la_objsearch(const char *name, uintptr_t *cookie, unsigned int flag)
{
	char *ours;

	(void)cookie;
	if (flag != LA_SER_ORIG)
		return (char *)name;
	ours = dcap_path(name);
	return ours ? ours : (char *)name;
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
