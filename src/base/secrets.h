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

#include <stdint.h>

/* Version 1 (what first use creates) and version 2 (with the security
 * versions, written once an update is asked for; secrets.c). */
#define SGX_SECRETS_FILE_SIZE	144
#define SGX_SECRETS_FILE_SIZE_V2	192
/* A fixed CPUSVN until an update: every component at SVN 2. */
#define SGX_DEFAULT_CPUSVN_BYTE	0x02

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

/*
 * The platform's security versions (a TCB recovery, issue 44): CPUSVN as
 * the last EUPDATESVN left it, the pending one (the SVN of the microcode a
 * `sgxemu platform update-svn` loaded, which the next EUPDATESVN takes),
 * and the CPUSVN before the last update taken (the TCB level the
 * collateral can mark out of date). A version-1 file has all three at the
 * default CPUSVN: no update pending.
 */
struct sgx_svn_state {
	uint8_t cpusvn[16];
	uint8_t pending[16];
	uint8_t previous[16];
};

/* The file's image (version 1 or 2) into @image, its size in *len: 0,
 * -ENOENT (no file), or -errno with the reason in @why. */
int sgx_secrets_read(const char *path, uint8_t image[SGX_SECRETS_FILE_SIZE_V2],
		     size_t *len, char *why, size_t whylen);
/* The security versions an image of @len bytes holds. */
void sgx_secrets_svn_of(const uint8_t *image, size_t len,
			struct sgx_svn_state *st);
/* Stamp an image as version 2 and checksum it (secrets_svn.c). */
int sgx_secrets_seal_image(uint8_t image[SGX_SECRETS_FILE_SIZE_V2]);

/* The security versions in the secrets file at @path (which must exist). */
int sgx_secrets_svn(const char *path, struct sgx_svn_state *st,
		    char *why, size_t whylen);
/*
 * A microcode update: the pending CPUSVN becomes @pending, which must be
 * newer than both the pending and the current one (no component lower,
 * one higher): -EINVAL otherwise. Read, checked and rewritten under a
 * lock (@path.lock), the new file written beside it and renamed over it,
 * so that a failure leaves the old file whole. 0 or -errno with @why.
 */
int sgx_secrets_set_pending(const char *path, const uint8_t pending[16],
			    char *why, size_t whylen);
/*
 * EUPDATESVN took @cpusvn: record it as the CPUSVN (the old one becomes
 * the previous) when it is newer than the file's; otherwise nothing is
 * written. Same locking and atomicity; 0 or -errno with @why.
 */
int sgx_secrets_commit_svn(const char *path, const uint8_t cpusvn[16],
			   char *why, size_t whylen);

/* A public fingerprint of the platform's identity (never the secret). */
int sgx_secrets_fingerprint(const struct sgx_platform_keys *keys,
			    char out[33]);

#endif /* SGXEMU_BASE_SECRETS_H */
