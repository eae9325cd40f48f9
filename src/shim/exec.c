/* SPDX-License-Identifier: MIT */
/*
 * The program's environment, and how libsgxemu.so reaches the programs it
 * executes.
 *
 * `sgxemu run` names this library in LD_PRELOAD and the audit module in
 * LD_AUDIT, ahead of whatever the user had there. The program did not put
 * them there, and on hardware nothing would be: once libc has set environ
 * (its constructor), this library's constructor gives the program an
 * environ without them (shim_env_hide), so getenv(), environ and main()'s
 * envp show the program's own environment. (The kernel's copy on the
 * initial stack, /proc/self/environ, still holds them.)
 *
 * Children get them back at exec: every way a program executes another
 * (the exec family, posix_spawn, system(), and raw execve/execveat served
 * by rawsys.c) passes an environment where LD_PRELOAD and LD_AUDIT lead
 * with the shim's own entries again, and where the SGXEMU_* variables of
 * the initial environment, the platform's configuration, are present
 * unless the program set them otherwise: a child started with an empty
 * environment still runs on the same emulated platform, as every process
 * of a real machine does. popen() is not covered (glibc spawns its shell
 * internally with environ).
 *
 * The child's environment is built in one anonymous mapping, never with
 * malloc: execve is called in vfork children and from the SIGSYS handler.
 */
#include <dlfcn.h>
#include <elf.h>
#include <errno.h>
#include <signal.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "shim/shim.h"

SHIM_REAL(int, execve, const char *, char *const[], char *const[])
SHIM_REAL(int, execveat, int, const char *, char *const[], char *const[], int)
SHIM_REAL(int, fexecve, int, char *const[], char *const[])
SHIM_REAL(int, execvpe, const char *, char *const[], char *const[])
SHIM_REAL(int, posix_spawn, pid_t *, const char *,
	  const posix_spawn_file_actions_t *, const posix_spawnattr_t *,
	  char *const[], char *const[])
SHIM_REAL(int, posix_spawnp, pid_t *, const char *,
	  const posix_spawn_file_actions_t *, const posix_spawnattr_t *,
	  char *const[], char *const[])

static const char *self_path;	/* this library, as LD_PRELOAD named it */
static const char *audit_path;	/* the audit module, as LD_AUDIT named it */
static char **carried;		/* SGXEMU_* of the initial environment */
static size_t ncarried;

void shim_exec_init(const char *audit)
{
	static bool done;
	Dl_info self;
	size_t n = 0;

	if (audit && !audit_path)
		audit_path = audit;	/* lives as long as the process */
	if (done)
		return;
	done = true;
	if (dladdr((void *)shim_exec_init, &self) && self.dli_fname &&
	    strchr(self.dli_fname, '/'))
		self_path = self.dli_fname;
	for (char **e = environ; e && *e; e++)
		n += !strncmp(*e, "SGXEMU_", 7);
	carried = calloc(n + 1, sizeof(*carried));
	if (!carried)
		return;
	for (char **e = environ; e && *e; e++)
		if (!strncmp(*e, "SGXEMU_", 7))
			carried[ncarried++] = *e;
}

/* Length of the list element at @p (LD_PRELOAD separates with ':' or
 * blanks, LD_AUDIT with ':'). */
static size_t elem_len(const char *p)
{
	return strcspn(p, ": \t");
}

static bool leads_with(const char *list, const char *item)
{
	size_t n = strlen(item);

	return !strncmp(list, item, n) && elem_len(list) == n;
}

/* --- what the program sees ------------------------------------------------ */

/*
 * "NAME=" + @list less its first element when that is @item, in a new
 * string; NULL when nothing is left (the variable goes), @entry itself
 * when @item does not lead.
 */
static char *without_lead(char *entry, size_t namelen, const char *item)
{
	const char *list = entry + namelen, *rest;
	char *out;

	if (!item || !leads_with(list, item))
		return entry;
	rest = list + strlen(item);
	rest += strspn(rest, ": \t");
	if (!*rest)
		return NULL;
	out = malloc(namelen + strlen(rest) + 1);
	if (!out)
		return entry;
	memcpy(out, entry, namelen);
	strcpy(out + namelen, rest);
	return out;
}

/*
 * @stack_envp: the initial environment on the stack, which the auxiliary
 * vector follows. The new array is followed by a copy of that vector, as
 * the initial one is: programs find the vector by walking past the end of
 * main()'s envp (glibc passes environ), and must find the same there.
 */
void shim_env_hide(char **stack_envp)
{
	const Elf64_auxv_t *auxv = NULL;
	size_t n = 0, k = 0, nav = 0;
	char **env;
	bool changed = false;

	if (!environ)
		return;
	if (stack_envp) {
		while (stack_envp[nav])
			nav++;
		auxv = (const Elf64_auxv_t *)&stack_envp[nav + 1];
		for (nav = 0; auxv[nav].a_type != AT_NULL; nav++)
			;
		nav++;
	}
	while (environ[n])
		n++;
	env = malloc((n + 1) * sizeof(*env) + nav * sizeof(*auxv));
	if (!env)
		return;
	for (size_t i = 0; i < n; i++) {
		char *e = environ[i], *v = e;

		if (!strncmp(e, "LD_PRELOAD=", 11))
			v = without_lead(e, 11, self_path);
		else if (!strncmp(e, "LD_AUDIT=", 9))
			v = without_lead(e, 9, audit_path);
		changed |= v != e;
		if (v)
			env[k++] = v;
	}
	env[k] = NULL;
	if (!changed) {
		free(env);
		return;
	}
	if (nav)
		memcpy(&env[k + 1], auxv, nav * sizeof(*auxv));
	/* The old array is the initial one on the stack, or libc's. */
	environ = env;
}

/* --- what children get ---------------------------------------------------- */

struct child_env {
	char **env;
	size_t size;		/* of the mapping; 0: @env is the caller's */
};

/* The entry "NAME=" of @envp, or NULL. */
static char *find_var(char *const envp[], const char *name, size_t len)
{
	for (size_t i = 0; envp && envp[i]; i++)
		if (!strncmp(envp[i], name, len))
			return envp[i];
	return NULL;
}

/* "NAME=" @lead [":" old list] into @p; returns the end of the string. */
static char *put_list(char *p, const char *name, const char *lead,
		      const char *old)
{
	p = stpcpy(p, name);
	p = stpcpy(p, lead);
	if (old && *old) {
		*p++ = ':';
		p = stpcpy(p, old);
	}
	return p + 1;
}

/*
 * @envp with the shim's variables put back (see the comment at the top).
 * On failure (no memory) the child gets @envp as it is.
 */
static struct child_env child_env(char *const envp[])
{
	struct child_env c = { .env = (char **)envp };
	const char *pre = find_var(envp, "LD_PRELOAD=", 11);
	const char *aud = find_var(envp, "LD_AUDIT=", 9);
	bool add_pre = self_path && !(pre && leads_with(pre + 11, self_path));
	bool add_aud = audit_path && !(aud && leads_with(aud + 9, audit_path));
	size_t n = 0, bytes, k = 0;
	char **env, *p;

	if (!add_pre && !add_aud && !ncarried)
		return c;
	while (envp && envp[n])
		n++;
	bytes = (n + ncarried + 3) * sizeof(char *) + 32;
	if (add_pre)
		bytes += strlen(self_path) + (pre ? strlen(pre) : 0) + 16;
	if (add_aud)
		bytes += strlen(audit_path) + (aud ? strlen(aud) : 0) + 16;
	env = mmap(NULL, bytes, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (env == MAP_FAILED)
		return c;
	p = (char *)(env + n + ncarried + 3);
	for (size_t i = 0; i < n; i++)
		if (!(add_pre && envp[i] == pre) && !(add_aud && envp[i] == aud))
			env[k++] = envp[i];
	if (add_pre) {
		env[k++] = p;
		p = put_list(p, "LD_PRELOAD=", self_path, pre ? pre + 11 : NULL);
	}
	if (add_aud) {
		env[k++] = p;
		p = put_list(p, "LD_AUDIT=", audit_path, aud ? aud + 9 : NULL);
	}
	for (size_t i = 0; i < ncarried; i++) {
		size_t len = strchr(carried[i], '=') + 1 - carried[i];

		if (!find_var(envp, carried[i], len))
			env[k++] = carried[i];
	}
	env[k] = NULL;
	c.env = env;
	c.size = bytes;
	return c;
}

static void child_env_drop(struct child_env c)
{
	int saved = errno;

	if (c.size)
		munmap(c.env, c.size);
	errno = saved;
}

int execve(const char *path, char *const argv[], char *const envp[])
{
	struct child_env c = child_env(envp);
	int ret = get_execve()(path, argv, c.env);

	child_env_drop(c);
	return ret;
}

int execveat(int dirfd, const char *path, char *const argv[],
	     char *const envp[], int flags)
{
	struct child_env c = child_env(envp);
	int ret = get_execveat()(dirfd, path, argv, c.env, flags);

	child_env_drop(c);
	return ret;
}

int fexecve(int fd, char *const argv[], char *const envp[])
{
	struct child_env c = child_env(envp);
	int ret = get_fexecve()(fd, argv, c.env);

	child_env_drop(c);
	return ret;
}

int execvpe(const char *file, char *const argv[], char *const envp[])
{
	struct child_env c = child_env(envp);
	int ret = get_execvpe()(file, argv, c.env);

	child_env_drop(c);
	return ret;
}

int execv(const char *path, char *const argv[])
{
	return execve(path, argv, environ);
}

int execvp(const char *file, char *const argv[])
{
	return execvpe(file, argv, environ);
}

/* The execl family's arguments as an argv (on the stack, as glibc does):
 * @envp_out gets execle's environment, after the terminating NULL. */
#define VA_ARGV(argv, arg0, last, envp_out) do { \
	va_list _ap; \
	size_t _n = 1; \
	va_start(_ap, last); \
	while (va_arg(_ap, char *)) \
		_n++; \
	va_end(_ap); \
	argv = alloca((_n + 1) * sizeof(char *)); \
	argv[0] = (char *)(arg0); \
	va_start(_ap, last); \
	for (size_t _i = 1; _i <= _n; _i++) \
		argv[_i] = va_arg(_ap, char *); \
	envp_out = va_arg(_ap, char **); \
	va_end(_ap); \
} while (0)

int execl(const char *path, const char *arg, ...)
{
	char **argv, **unused;

	VA_ARGV(argv, arg, arg, unused);
	(void)unused;
	return execve(path, argv, environ);
}

int execlp(const char *file, const char *arg, ...)
{
	char **argv, **unused;

	VA_ARGV(argv, arg, arg, unused);
	(void)unused;
	return execvpe(file, argv, environ);
}

int execle(const char *path, const char *arg, ...)
{
	char **argv, **envp;

	VA_ARGV(argv, arg, arg, envp);
	return execve(path, argv, envp);
}

/* posix_spawn and posix_spawnp: the same but for how @file is found. */
#define SPAWN_WITH_CHILD_ENV(name) \
int name(pid_t *pid, const char *file, const posix_spawn_file_actions_t *fa, \
	 const posix_spawnattr_t *attr, char *const argv[], char *const envp[]) \
{ \
	struct child_env c = child_env(envp); \
	int ret = get_##name()(pid, file, fa, attr, argv, c.env); \
 \
	child_env_drop(c); \
	return ret; \
}

SPAWN_WITH_CHILD_ENV(posix_spawn)
SPAWN_WITH_CHILD_ENV(posix_spawnp)

/*
 * system() as POSIX describes it (glibc's spawns its shell internally,
 * with environ as it is): SIGINT and SIGQUIT ignored and SIGCHLD blocked
 * in the caller while the shell runs, their defaults in the shell.
 */
int system(const char *cmd)
{
	struct sigaction ign = { .sa_handler = SIG_IGN }, intr, quit;
	char *argv[] = { (char *)"sh", (char *)"-c", (char *)cmd, NULL };
	posix_spawnattr_t attr;
	sigset_t chld, omask, def;
	int status = -1, ret;
	pid_t pid;

	if (!cmd)	/* is there a shell? */
		return !access("/bin/sh", X_OK);
	sigemptyset(&chld);
	sigaddset(&chld, SIGCHLD);
	sigprocmask(SIG_BLOCK, &chld, &omask);
	sigemptyset(&ign.sa_mask);
	shim_app_sigaction(SIGINT, &ign, &intr);
	shim_app_sigaction(SIGQUIT, &ign, &quit);
	sigemptyset(&def);
	if (intr.sa_handler != SIG_IGN)
		sigaddset(&def, SIGINT);
	if (quit.sa_handler != SIG_IGN)
		sigaddset(&def, SIGQUIT);
	posix_spawnattr_init(&attr);
	posix_spawnattr_setsigmask(&attr, &omask);
	posix_spawnattr_setsigdefault(&attr, &def);
	posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGDEF |
				 POSIX_SPAWN_SETSIGMASK);
	ret = posix_spawn(&pid, "/bin/sh", NULL, &attr, argv, environ);
	posix_spawnattr_destroy(&attr);
	if (!ret) {
		while (waitpid(pid, &status, 0) < 0)
			if (errno != EINTR) {
				status = -1;
				break;
			}
	} else {
		status = W_EXITCODE(127, 0);
	}
	shim_app_sigaction(SIGINT, &intr, NULL);
	shim_app_sigaction(SIGQUIT, &quit, NULL);
	sigprocmask(SIG_SETMASK, &omask, NULL);
	return status;
}
