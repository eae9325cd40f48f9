// SPDX-License-Identifier: MIT
/*
 * Policy file parser. One directive per line, '#' starts a comment:
 *
 *   mode enforcing|permissive
 *   audit none|denials|all
 *   audit-log default|stderr|PATH
 *   page.noexec-source   deny|strip-exec|allow
 *   page.nonexec-file    deny|strip-exec|allow
 *   page.anon-exec       deny|strip-exec|allow
 *   page.write-exec      deny|strip-exec|allow
 *   map.write-exec       deny|allow
 *   init.debug           deny|allow
 *   init.provision-key   deny|allow
 *   provision-device     deny|allow
 *   signer allow|deny HEX64      signer.default allow|deny
 *   enclave allow|deny HEX64     enclave.default allow|deny
 *
 * A later line overrides an earlier one for the switches; hash rules are
 * matched first to last. Every error names its line.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/hex.h"
#include "base/secrets.h"
#include "lsm/policy.h"

#define MAX_POLICY_SIZE	(1 << 20)

static int fail(char *why, size_t whylen, const char *name, int line,
		const char *fmt, ...) __attribute__((format(printf, 5, 6)));

static int fail(char *why, size_t whylen, const char *name, int line,
		const char *fmt, ...)
{
	va_list ap;
	int n;

	if (!why || !whylen)
		return -EINVAL;
	n = snprintf(why, whylen, "%s:%d: ", name, line);
	if (n >= 0 && (size_t)n < whylen) {
		va_start(ap, fmt);
		vsnprintf(why + n, whylen - n, fmt, ap);
		va_end(ap);
	}
	return -EINVAL;
}

int lsm_audit_default_path(char *buf, size_t len)
{
	return sgx_state_path("SGXEMU_AUDIT_LOG", "audit.log", buf, len);
}

const char *lsm_action_name(enum lsm_action a)
{
	switch (a) {
	case LSM_ALLOW:
		return "allow";
	case LSM_DENY:
		return "deny";
	case LSM_STRIP_EXEC:
		return "strip-exec";
	}
	return "?";
}

void lsm_policy_default(struct lsm_policy *p)
{
	memset(p, 0, sizeof(*p));
	snprintf(p->source, sizeof(p->source), "built-in default");
	p->audit = LSM_AUDIT_DENIALS;
	/* Mainline: a source VMA without VM_MAYEXEC (noexec mount) → EACCES. */
	p->noexec_source.action = LSM_DENY;
	/* Everything else mainline allows. */
	p->nonexec_file.action = LSM_ALLOW;
	p->anon_exec.action = LSM_ALLOW;
	p->page_wx.action = LSM_ALLOW;
	p->map_wx.action = LSM_ALLOW;
	p->debug.action = LSM_ALLOW;
	p->provision_key.action = LSM_ALLOW;
	p->provision_device.action = LSM_ALLOW;
	p->signer_default.action = LSM_ALLOW;
	p->enclave_default.action = LSM_ALLOW;
}

void lsm_policy_free(struct lsm_policy *p)
{
	free(p->signers);
	free(p->enclaves);
	p->signers = p->enclaves = NULL;
	p->nr_signers = p->nr_enclaves = 0;
}

struct switch_def {
	const char *name;
	size_t offset;
	bool strip_ok;		/* may take strip-exec */
};

static const struct switch_def switches[] = {
	{ "page.noexec-source", offsetof(struct lsm_policy, noexec_source), true },
	{ "page.nonexec-file", offsetof(struct lsm_policy, nonexec_file), true },
	{ "page.anon-exec", offsetof(struct lsm_policy, anon_exec), true },
	{ "page.write-exec", offsetof(struct lsm_policy, page_wx), true },
	{ "map.write-exec", offsetof(struct lsm_policy, map_wx), false },
	{ "init.debug", offsetof(struct lsm_policy, debug), false },
	{ "init.provision-key", offsetof(struct lsm_policy, provision_key), false },
	{ "provision-device", offsetof(struct lsm_policy, provision_device), false },
	{ "signer.default", offsetof(struct lsm_policy, signer_default), false },
	{ "enclave.default", offsetof(struct lsm_policy, enclave_default), false },
};

static int parse_action(const char *word, bool strip_ok, enum lsm_action *a)
{
	if (!strcmp(word, "allow"))
		*a = LSM_ALLOW;
	else if (!strcmp(word, "deny"))
		*a = LSM_DENY;
	else if (strip_ok && !strcmp(word, "strip-exec"))
		*a = LSM_STRIP_EXEC;
	else
		return -1;
	return 0;
}

/* 64 hex digits and nothing else ("-1", "+f" and "0x" are no digits). */
static int parse_hash(const char *hex, uint8_t out[32])
{
	return sgx_unhex(hex, out, 32) ? -1 : 0;
}

static int add_hash_rule(struct lsm_hash_rule **rules, size_t *nr,
			 const uint8_t hash[32], bool allow, int line)
{
	struct lsm_hash_rule *r = realloc(*rules, (*nr + 1) * sizeof(**rules));

	if (!r)
		return -ENOMEM;
	*rules = r;
	memcpy(r[*nr].hash, hash, 32);
	r[*nr].allow = allow;
	r[*nr].line = line;
	(*nr)++;
	return 0;
}

/* Split @line into at most 4 words; returns the count, or 5 if more. */
static int split(char *line, char *words[4])
{
	int n = 0;

	for (char *tok = strtok(line, " \t\r"); tok; tok = strtok(NULL, " \t\r")) {
		if (n == 4)
			return 5;
		words[n++] = tok;
	}
	return n;
}

static int parse_line(const char *name, int lineno, char *line,
		      struct lsm_policy *p, char *why, size_t whylen)
{
	char *hash = strchr(line, '#');
	char *w[4];
	int n;

	if (hash)
		*hash = '\0';
	n = split(line, w);
	if (n == 0)
		return 0;

	if (!strcmp(w[0], "mode")) {
		if (n != 2 || (strcmp(w[1], "enforcing") && strcmp(w[1], "permissive")))
			return fail(why, whylen, name, lineno,
				    "'mode' takes enforcing or permissive");
		p->permissive = !strcmp(w[1], "permissive");
		return 0;
	}
	if (!strcmp(w[0], "audit")) {
		if (n == 2 && !strcmp(w[1], "none"))
			p->audit = LSM_AUDIT_NONE;
		else if (n == 2 && !strcmp(w[1], "denials"))
			p->audit = LSM_AUDIT_DENIALS;
		else if (n == 2 && !strcmp(w[1], "all"))
			p->audit = LSM_AUDIT_ALL;
		else
			return fail(why, whylen, name, lineno,
				    "'audit' takes none, denials or all");
		return 0;
	}
	if (!strcmp(w[0], "audit-log")) {
		if (n != 2 || strlen(w[1]) >= sizeof(p->audit_log))
			return fail(why, whylen, name, lineno,
				    "'audit-log' takes default, stderr or one path "
				    "(< 256 bytes)");
		if (!strcmp(w[1], "default"))
			p->audit_log[0] = '\0';
		else
			snprintf(p->audit_log, sizeof(p->audit_log), "%s",
				 strcmp(w[1], "stderr") ? w[1] : "-");
		return 0;
	}
	if (!strcmp(w[0], "signer") || !strcmp(w[0], "enclave")) {
		bool signer = w[0][0] == 's';
		uint8_t h[32];

		if (n != 3 || (strcmp(w[1], "allow") && strcmp(w[1], "deny")))
			return fail(why, whylen, name, lineno,
				    "'%s' takes allow|deny and a 64-digit hex %s",
				    w[0], signer ? "MRSIGNER" : "MRENCLAVE");
		if (parse_hash(w[2], h))
			return fail(why, whylen, name, lineno,
				    "'%s' is not 64 hex digits", w[2]);
		if (add_hash_rule(signer ? &p->signers : &p->enclaves,
				  signer ? &p->nr_signers : &p->nr_enclaves, h,
				  w[1][0] == 'a', lineno))
			return fail(why, whylen, name, lineno, "out of memory");
		return 0;
	}
	for (size_t i = 0; i < sizeof(switches) / sizeof(switches[0]); i++) {
		struct lsm_setting *s;

		if (strcmp(w[0], switches[i].name))
			continue;
		s = (struct lsm_setting *)((char *)p + switches[i].offset);
		if (n != 2 || parse_action(w[1], switches[i].strip_ok, &s->action))
			return fail(why, whylen, name, lineno, "'%s' takes %s",
				    w[0], switches[i].strip_ok ?
				    "allow, deny or strip-exec" : "allow or deny");
		s->line = lineno;
		return 0;
	}
	return fail(why, whylen, name, lineno, "unknown directive '%s'", w[0]);
}

int lsm_policy_parse(const char *name, const char *text,
		     struct lsm_policy *p, char *why, size_t whylen)
{
	char *copy = strdup(text), *line, *next;
	int lineno = 0, ret = 0;

	if (!copy)
		return -ENOMEM;
	lsm_policy_default(p);
	snprintf(p->source, sizeof(p->source), "%s", name);
	for (line = copy; line && !ret; line = next) {
		next = strchr(line, '\n');
		if (next)
			*next++ = '\0';
		lineno++;
		ret = parse_line(name, lineno, line, p, why, whylen);
	}
	free(copy);
	if (ret)
		lsm_policy_free(p);
	return ret;
}

int lsm_policy_load(const char *path, struct lsm_policy *p, char *why,
		    size_t whylen)
{
	FILE *f = fopen(path, "r");
	char *text;
	size_t len;
	int ret;

	if (!f) {
		int err = errno;

		snprintf(why, whylen, "%s: cannot open policy: %s", path,
			 strerror(err));
		return -err;
	}
	text = malloc(MAX_POLICY_SIZE + 1);
	if (!text) {
		fclose(f);
		return -ENOMEM;
	}
	len = fread(text, 1, MAX_POLICY_SIZE + 1, f);
	if (ferror(f) || len > MAX_POLICY_SIZE) {
		snprintf(why, whylen, "%s: %s", path, ferror(f) ?
			 "read error" : "policy larger than 1 MiB");
		fclose(f);
		free(text);
		return -EINVAL;
	}
	fclose(f);
	text[len] = '\0';
	if (memchr(text, '\0', len)) {
		snprintf(why, whylen, "%s: not a text file (NUL byte)", path);
		free(text);
		return -EINVAL;
	}
	ret = lsm_policy_parse(path, text, p, why, whylen);
	free(text);
	return ret;
}
