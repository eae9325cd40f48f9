/* SPDX-License-Identifier: MIT */
/*
 * The platform's root secrets: what fuses are to a real part. They live in a
 * file under the user's state directory, created on first use (mode 0600,
 * written atomically), so keys derived from them (sealing) stay the same
 * across processes and runs. A damaged or unreadable file is an error,
 * never silently replaced: replacing it would make every sealed blob
 * unreadable without saying why.
 */
#ifndef SGXEMU_BASE_SECRETS_H
#define SGXEMU_BASE_SECRETS_H

#include <stddef.h>

#include "cpu/keys.h"

#define SGX_SECRETS_FILE_SIZE	144

/* Where state goes when neither the environment nor the password database
 * names a usable home: this, "-<uid>" (made 0700; it must stay ours). */
#define SGX_STATE_FALLBACK	"/var/tmp/sgxemu"

/*
 * A file in the user's state directory: $@env if set, else
 * $XDG_STATE_HOME/sgxemu/@name, else $HOME/.local/state/sgxemu/@name,
 * else the same under the password database's home of the effective user
 * (when it exists and is writable), else SGX_STATE_FALLBACK-<uid>/@name.
 * Shared with the audit log (src/lsm). 0, -ENAMETOOLONG, or -errno of
 * the fallback directory (-EACCES: someone else's).
 */
int sgx_state_path(const char *env, const char *name, char *buf, size_t len);

/* The secrets file's path: sgx_state_path() of $SGXEMU_SECRETS_FILE and
 * "platform-secrets". */
int sgx_secrets_path(char *buf, size_t len);

/* mkdir -p of the directory part of @path, each new level 0700: 0 or
 * -errno. */
int sgx_make_parent_dirs(const char *path);

/*
 * Fill @keys' root secrets and OWNEREPOCH from @path, creating the file
 * (and its directory) when it does not exist. Per-boot values (the report
 * key id) are drawn fresh; CPUSVN and OWNEREPOCH may be overridden by
 * $SGXEMU_CPUSVN / $SGXEMU_OWNER_EPOCH (32 hex digits). Returns 0 or
 * -errno with a one-line reason in @why.
 */
int sgx_secrets_load(const char *path, struct sgx_platform_keys *keys,
		     char *why, size_t whylen);

/* A public fingerprint of the platform's identity (never the secret). */
int sgx_secrets_fingerprint(const struct sgx_platform_keys *keys,
			    char out[33]);

#endif /* SGXEMU_BASE_SECRETS_H */
