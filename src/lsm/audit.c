// SPDX-License-Identifier: MIT
/*
 * Audit record writer (format in audit.h). Each record is built in one
 * buffer and written with a single write() to a file opened O_APPEND, so
 * records of concurrent processes never interleave within a line.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <stdatomic.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

#include "lsm/audit.h"

#define AUDIT_LINE_MAX	2048

static atomic_ulong serial;

struct line {
	char buf[AUDIT_LINE_MAX];
	size_t len;
};

static void add(struct line *l, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void add(struct line *l, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (l->len >= sizeof(l->buf) - 1)
		return;
	va_start(ap, fmt);
	n = vsnprintf(l->buf + l->len, sizeof(l->buf) - l->len, fmt, ap);
	va_end(ap);
	if (n > 0)
		l->len += (size_t)n < sizeof(l->buf) - l->len ?
			  (size_t)n : sizeof(l->buf) - l->len - 1;
}

static void add_hash(struct line *l, const char *key, const uint8_t *h)
{
	if (!h)
		return;
	add(l, " %s=", key);
	for (int i = 0; i < 32; i++)
		add(l, "%02x", h[i]);
}

static void add_perms(struct line *l, const char *key, int p)
{
	if (p < 0)
		return;
	add(l, " %s=%c%c%c", key, p & LSM_R ? 'r' : '-', p & LSM_W ? 'w' : '-',
	    p & LSM_X ? 'x' : '-');
}

/* A quoted value with quotes, backslashes and control bytes escaped. */
static void add_quoted(struct line *l, const char *key, const char *s)
{
	add(l, " %s=\"", key);
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;

		if (c == '"' || c == '\\')
			add(l, "\\%c", c);
		else if (c < 0x20 || c == 0x7f)
			add(l, "\\x%02x", c);
		else
			add(l, "%c", c);
	}
	add(l, "\"");
}

static void add_process(struct line *l)
{
	char comm[64] = "", exe[512];
	ssize_t n;
	int fd;

	add(l, " pid=%ld", (long)getpid());
	fd = open("/proc/self/comm", O_RDONLY | O_CLOEXEC);
	if (fd >= 0) {
		n = read(fd, comm, sizeof(comm) - 1);
		close(fd);
		comm[n > 0 ? n : 0] = '\0';
		comm[strcspn(comm, "\n")] = '\0';
		add_quoted(l, "comm", comm);
	}
	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (n > 0) {
		exe[n] = '\0';
		add_quoted(l, "exe", exe);
	}
}

static const char *errno_name(int err)
{
	switch (err) {
	case EACCES: return "EACCES";
	case EPERM: return "EPERM";
	case EINVAL: return "EINVAL";
	default: return "E?";
	}
}

/* mkdir -p of the log's directory, mode 0700 (the default lives in ~). */
static void make_log_dir(const char *path)
{
	char dir[256];

	snprintf(dir, sizeof(dir), "%s", path);
	for (char *c = dir + 1; *c; c++) {
		if (*c != '/')
			continue;
		*c = '\0';
		mkdir(dir, 0700);
		*c = '/';
	}
}

/* The log's descriptor; stderr when asked, or when the file cannot be opened. */
static int open_log(const struct lsm_policy *p)
{
	char path[256];
	int fd;

	if (!strcmp(p->audit_log, "-"))
		return STDERR_FILENO;
	if (p->audit_log[0])
		snprintf(path, sizeof(path), "%s", p->audit_log);
	else if (lsm_audit_default_path(path, sizeof(path)))
		return STDERR_FILENO;
	fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0600);
	if (fd < 0 && errno == ENOENT) {
		make_log_dir(path);
		fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0600);
	}
	/* Never lose a record silently: fall back to stderr. */
	return fd < 0 ? STDERR_FILENO : fd;
}

void lsm_audit(const struct lsm_policy *p, const struct lsm_audit_event *ev)
{
	struct timespec ts;
	struct line l;
	int fd;

	if (p->audit == LSM_AUDIT_NONE ||
	    (p->audit == LSM_AUDIT_DENIALS && !ev->denied))
		return;
	l.len = 0;
	clock_gettime(CLOCK_REALTIME, &ts);
	add(&l, "type=SGX_AVC msg=audit(%lld.%03ld:%lu): op=%s result=%s",
	    (long long)ts.tv_sec, ts.tv_nsec / 1000000,
	    (unsigned long)atomic_fetch_add(&serial, 1) + 1, ev->op,
	    ev->reduced ? "reduced" : ev->denied ? "denied" : "allowed");
	if (ev->denied)
		add(&l, " permissive=%d", p->permissive && !ev->driver ? 1 : 0);
	add_process(&l);
	if (ev->encl)
		add(&l, " encl=0x%llx", (unsigned long long)ev->encl->base);
	add_hash(&l, "mrenclave", ev->mrenclave ? ev->mrenclave :
		 ev->encl ? ev->encl->mrenclave : NULL);
	add_hash(&l, "mrsigner", ev->mrsigner ? ev->mrsigner :
		 ev->encl ? ev->encl->mrsigner : NULL);
	if (ev->addr)
		add(&l, " addr=0x%llx", (unsigned long long)ev->addr);
	if (ev->len)
		add(&l, " len=0x%llx", (unsigned long long)ev->len);
	add_perms(&l, "requested", ev->requested);
	add_perms(&l, "allowed", ev->allowed);
	if (ev->src) {
		if (ev->src->anonymous)
			add(&l, " src=anon");
		else {
			add_quoted(&l, "src", ev->src->path ? ev->src->path : "?");
			add(&l, " dev=%u:%u ino=%llu mode=%04o uid=%u",
			    major(ev->src->dev), minor(ev->src->dev),
			    (unsigned long long)ev->src->ino,
			    (unsigned)(ev->src->mode & 07777),
			    (unsigned)ev->src->uid);
			if (ev->src->noexec_mount)
				add(&l, " noexec_mount=1");
		}
	}
	if (ev->path)
		add_quoted(&l, "path", ev->path);
	if (ev->rule)
		add(&l, " rule=%s line=%d", ev->rule, ev->line);
	if (ev->denied)
		add(&l, " errno=%s", errno_name(ev->err));
	add_quoted(&l, "policy", p->source);
	add(&l, "\n");

	fd = open_log(p);
	if (write(fd, l.buf, l.len) < 0)
		l.len = 0;
	if (fd != STDERR_FILENO)
		close(fd);
	/*
	 * A policy denial also gets its one-line reason where the user looks
	 * first; the driver's own refusals (the kernel's errno rules) are in
	 * the log and, with --debug, in the driver's messages.
	 */
	if (ev->denied && !ev->driver && fd != STDERR_FILENO) {
		char where[32];

		if (ev->line)
			snprintf(where, sizeof(where), "line %d", ev->line);
		else
			snprintf(where, sizeof(where), "built-in default");
		dprintf(STDERR_FILENO, "sgxemu: %s%s %s by policy rule %s "
			"(%s)%s%s\n", ev->op, p->permissive ? " would be" : "",
			ev->reduced ? "restricted (no execute)" : "denied",
			ev->rule ? ev->rule : "?", where,
			ev->reduced ? "" : ": ", ev->reduced ? "" : errno_name(ev->err));
	}
}
