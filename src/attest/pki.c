// SPDX-License-Identifier: MIT
/*
 * The installation's CA hierarchy (see pki.h). Every certificate carries
 * the five extensions verifiers require of each SGX certificate (AKI, CDP,
 * SKI, key usage, basic constraints: attestation-facts.md §3.2), P-256
 * keys, ecdsa-with-SHA256 and 20-byte serials.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <openssl/bn.h>
#include <openssl/pem.h>
#include <openssl/x509v3.h>

#include "base/hex.h"
#include "base/secrets.h"
#include "base/why.h"
#include "attest/pki.h"

#define CDP_ROOT "https://localhost:8081/sgx/certification/v4/rootcacrl"
#define CDP_PCK	 "https://localhost:8081/sgx/certification/v4/pckcrl?ca=processor&encoding=der"
#define CA_NOT_AFTER	"20491231235959Z"

/* CERT_TLS: the HTTPS server certificate of `sgxemu pccs`. */
enum cert_kind { CERT_ROOT, CERT_CA, CERT_LEAF, CERT_TLS };

int sgx_pki_dir(const char *secrets, char *buf, size_t len)
{
	const char *env = getenv("SGXEMU_PKI_DIR");
	int n = env && *env ? snprintf(buf, len, "%s", env) :
		snprintf(buf, len, "%s.pki", secrets);

	return n < 0 || (size_t)n >= len ? -ENAMETOOLONG : 0;
}

static EVP_PKEY *new_p256(void)
{
	return EVP_PKEY_Q_keygen(NULL, NULL, "EC", "P-256");
}

static X509_NAME *make_name(const char *cn)
{
	X509_NAME *n = X509_NAME_new();

	if (n && X509_NAME_add_entry_by_txt(n, "CN", MBSTRING_UTF8,
					    (const unsigned char *)cn, -1, -1, 0) &&
	    X509_NAME_add_entry_by_txt(n, "O", MBSTRING_UTF8,
				       (const unsigned char *)SGX_PKI_ORG, -1, -1, 0))
		return n;
	X509_NAME_free(n);
	return NULL;
}

/* A positive 20-byte serial number. */
static int random_serial(ASN1_INTEGER *serial)
{
	BIGNUM *bn = BN_new();
	int ok = bn && BN_rand(bn, 159, BN_RAND_TOP_ONE, BN_RAND_BOTTOM_ANY) &&
		 BN_to_ASN1_INTEGER(bn, serial);

	BN_free(bn);
	return ok ? 0 : -1;
}

static int add_ext(X509V3_CTX *ctx, X509 *x, int nid, const char *value)
{
	X509_EXTENSION *ext = X509V3_EXT_conf_nid(NULL, ctx, nid, value);
	int ok = ext && X509_add_ext(x, ext, -1);

	X509_EXTENSION_free(ext);
	return ok ? 0 : -1;
}

/*
 * A certificate for @key named @cn, issued by @issuer/@issuer_key (itself
 * when @issuer is NULL), valid from now for @days (CAs: to 2049, like
 * Intel's). @pck adds the SGX extension.
 */
static X509 *make_cert(const char *cn, EVP_PKEY *key, X509 *issuer,
		       EVP_PKEY *issuer_key, enum cert_kind kind, int days,
		       const struct sgx_pck_ext *pck)
{
	X509 *x = X509_new();
	X509_NAME *name = make_name(cn);
	X509V3_CTX ctx;
	bool ok;

	ok = x && name && X509_set_version(x, 2) &&
	     !random_serial(X509_get_serialNumber(x)) &&
	     X509_set_subject_name(x, name) &&
	     X509_set_issuer_name(x, issuer ? X509_get_subject_name(issuer) : name) &&
	     X509_gmtime_adj(X509_getm_notBefore(x), 0) &&
	     (kind == CERT_LEAF || kind == CERT_TLS ?
	      X509_time_adj_ex(X509_getm_notAfter(x), days, 0, NULL) != NULL :
	      ASN1_TIME_set_string(X509_getm_notAfter(x), CA_NOT_AFTER)) &&
	     X509_set_pubkey(x, key);
	X509_NAME_free(name);
	if (!ok)
		goto err;
	X509V3_set_ctx(&ctx, issuer ? issuer : x, x, NULL, NULL, 0);
	if (add_ext(&ctx, x, NID_subject_key_identifier, "hash") ||
	    add_ext(&ctx, x, NID_authority_key_identifier, "keyid:always") ||
	    add_ext(&ctx, x, NID_crl_distribution_points,
		    kind == CERT_LEAF && pck ? "URI:" CDP_PCK : "URI:" CDP_ROOT) ||
	    add_ext(&ctx, x, NID_key_usage, kind == CERT_TLS ?
		    "critical,digitalSignature" : kind == CERT_LEAF ?
		    "critical,digitalSignature,nonRepudiation" :
		    "critical,keyCertSign,cRLSign") ||
	    add_ext(&ctx, x, NID_basic_constraints,
		    kind == CERT_ROOT ? "critical,CA:TRUE,pathlen:1" :
		    kind == CERT_CA ? "critical,CA:TRUE,pathlen:0" :
		    "critical,CA:FALSE"))
		goto err;
	/* A TLS client checks the name it dialled: the loopback names. */
	if (kind == CERT_TLS &&
	    (add_ext(&ctx, x, NID_subject_alt_name,
		     "DNS:localhost,IP:127.0.0.1,IP:::1") ||
	     add_ext(&ctx, x, NID_ext_key_usage, "serverAuth")))
		goto err;
	if (pck && sgx_pck_ext_add(x, pck))
		goto err;
	if (!X509_sign(x, issuer_key, EVP_sha256()))
		goto err;
	return x;
err:
	X509_free(x);
	return NULL;
}

/* Write @len bytes from a PEM writer to @path (mode @mode), atomically. */
static int write_pem(const char *path, mode_t mode, EVP_PKEY *key, X509 *x)
{
	char tmp[4200];
	FILE *f;
	int fd, ok;

	snprintf(tmp, sizeof(tmp), "%s.%ld.tmp", path, (long)getpid());
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, mode);
	if (fd < 0)
		return -errno;
	f = fdopen(fd, "w");
	if (!f) {
		close(fd);
		unlink(tmp);
		return -ENOMEM;
	}
	ok = key ? PEM_write_PrivateKey(f, key, NULL, NULL, 0, NULL, NULL)
		 : PEM_write_X509(f, x);
	ok = ok && fflush(f) == 0 && fsync(fileno(f)) == 0;
	if (fclose(f))
		ok = 0;
	if (!ok || rename(tmp, path)) {
		unlink(tmp);
		return -EIO;
	}
	return 0;
}

static const char *const key_files[] = { "root-ca.key", "pck-ca.key", "tcb-signing.key" };
static const char *const cert_files[] = { "root-ca.pem", "pck-ca.pem", "tcb-signing.pem" };

static int write_hierarchy(const struct sgx_pki *p, const char *dir,
			   char *why, size_t whylen);

static int create_hierarchy(struct sgx_pki *p)
{
	EVP_PKEY **keys[3] = { &p->root_key, &p->ca_key, &p->tcb_key };

	for (int i = 0; i < 3; i++)
		if (!(*keys[i] = new_p256()))
			return -EIO;
	p->root = make_cert(SGX_CN_ROOT, p->root_key, NULL, p->root_key,
			    CERT_ROOT, 0, NULL);
	if (p->root) {
		p->ca = make_cert(SGX_CN_PCK_CA, p->ca_key, p->root, p->root_key,
				  CERT_CA, 0, NULL);
		p->tcb = make_cert(SGX_CN_TCB, p->tcb_key, p->root, p->root_key,
				   CERT_LEAF, 7 * 365, NULL);
	}
	if (!p->root || !p->ca || !p->tcb)
		return -EIO;
	return write_hierarchy(p, p->dir, NULL, 0);
}

/*
 * Read the three keys and certificates in @p->dir, each key checked
 * against its certificate; @own: the directory is the hierarchy in use,
 * whose keys must be the user's and 0600 (an export being imported may
 * have lost its modes on the way; it is written back 0600).
 */
static int load_files(struct sgx_pki *p, bool own, char *why, size_t whylen)
{
	EVP_PKEY **keys[3] = { &p->root_key, &p->ca_key, &p->tcb_key };
	X509 **certs[3] = { &p->root, &p->ca, &p->tcb };
	char path[4200];
	struct stat st;
	FILE *f;

	for (int i = 0; i < 3; i++) {
		snprintf(path, sizeof(path), "%s/%s", p->dir, key_files[i]);
		f = fopen(path, "re");
		if (!f)
			return sgx_fail(why, whylen, -errno, "cannot open %s: %s", path,
				    strerror(errno));
		if (own && (fstat(fileno(f), &st) || st.st_uid != geteuid() ||
			    (st.st_mode & 077))) {
			fclose(f);
			return sgx_fail(why, whylen, -EPERM, "%s must be owned by you "
				    "and mode 0600: refusing a key others can read",
				    path);
		}
		*keys[i] = PEM_read_PrivateKey(f, NULL, NULL, NULL);
		fclose(f);
		if (!*keys[i])
			return sgx_fail(why, whylen, -EINVAL, "%s is not a PEM "
					"private key%s", path, own ? " (move the "
					"directory away to start a new hierarchy)" : "");
		snprintf(path, sizeof(path), "%s/%s", p->dir, cert_files[i]);
		f = fopen(path, "re");
		if (!f)
			return sgx_fail(why, whylen, -errno, "cannot open %s: %s", path,
				    strerror(errno));
		*certs[i] = PEM_read_X509(f, NULL, NULL, NULL);
		fclose(f);
		if (!*certs[i])
			return sgx_fail(why, whylen, -EINVAL, "%s is not a PEM "
					"certificate%s", path, own ? " (move the "
					"directory away to start a new hierarchy)" : "");
		if (X509_check_private_key(*certs[i], *keys[i]) != 1)
			return sgx_fail(why, whylen, -EINVAL, "%s/%s does not match "
					"%s%s", p->dir, key_files[i], cert_files[i],
					own ? " (move the directory away to start a "
					"new hierarchy)" : "");
	}
	return 0;
}

static bool is_p256(EVP_PKEY *k)
{
	char group[64];

	return EVP_PKEY_is_a(k, "EC") &&
	       EVP_PKEY_get_group_name(k, group, sizeof(group), NULL) &&
	       !strcmp(group, "prime256v1");
}

/* @x is issued by @by: names and signature. */
static bool signed_by(X509 *x, X509 *by)
{
	return X509_check_issued(by, x) == X509_V_OK &&
	       X509_verify(x, X509_get0_pubkey(by)) == 1;
}

/*
 * What a verifier will ask of a hierarchy someone hands us: P-256 keys
 * (the quote format has no room for others), a self-signed root CA, and
 * the PCK CA and TCB signing certificates under it.
 */
static int check_chain(const struct sgx_pki *p, char *why, size_t whylen)
{
	EVP_PKEY *keys[3] = { p->root_key, p->ca_key, p->tcb_key };

	for (int i = 0; i < 3; i++)
		if (!is_p256(keys[i]))
			return sgx_fail(why, whylen, -EINVAL, "%s/%s is not a P-256 "
					"key", p->dir, key_files[i]);
	if (!signed_by(p->root, p->root) || X509_check_ca(p->root) < 1)
		return sgx_fail(why, whylen, -EINVAL, "%s/%s is not a self-signed "
				"CA certificate", p->dir, cert_files[0]);
	if (!signed_by(p->ca, p->root) || X509_check_ca(p->ca) < 1)
		return sgx_fail(why, whylen, -EINVAL, "%s/%s is not a CA issued by "
				"%s: the certificates do not chain", p->dir,
				cert_files[1], cert_files[0]);
	if (!signed_by(p->tcb, p->root))
		return sgx_fail(why, whylen, -EINVAL, "%s/%s is not issued by %s: "
				"the certificates do not chain", p->dir,
				cert_files[2], cert_files[0]);
	return 0;
}

/* The directory's creation lock (also held while a hierarchy is written
 * into it): an fd, or -errno. */
static int lock_dir(const char *dir, char *why, size_t whylen)
{
	char path[4200];
	int fd;

	snprintf(path, sizeof(path), "%s/.lock", dir);
	fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
	if (fd < 0)
		return sgx_fail(why, whylen, -errno, "cannot open %s: %s", path,
			    strerror(errno));
	while (flock(fd, LOCK_EX) && errno == EINTR)
		;
	return fd;
}

int sgx_pki_open(const char *dir, struct sgx_pki *p, char *why, size_t whylen)
{
	char path[4200];
	int lock, ret = 0;

	memset(p, 0, sizeof(*p));
	if (strlen(dir) >= sizeof(p->dir))
		return sgx_fail(why, whylen, -ENAMETOOLONG, "%s: name too long", dir);
	strcpy(p->dir, dir);
	if (mkdir(dir, 0700) && errno != EEXIST)
		return sgx_fail(why, whylen, -errno, "cannot create %s: %s", dir,
			    strerror(errno));
	/* One creator at a time; the others wait and load its files. */
	lock = lock_dir(dir, why, whylen);
	if (lock < 0)
		return lock;
	snprintf(path, sizeof(path), "%s/%s", dir, cert_files[0]);
	if (access(path, F_OK) == 0) {
		ret = load_files(p, true, why, whylen);
	} else {
		ret = create_hierarchy(p);
		if (ret)
			sgx_fail(why, whylen, ret, "cannot create the CA hierarchy in %s: %s",
			     dir, strerror(-ret));
	}
	close(lock);
	if (ret)
		sgx_pki_close(p);
	return ret;
}

void sgx_pki_close(struct sgx_pki *p)
{
	EVP_PKEY_free(p->root_key);
	EVP_PKEY_free(p->ca_key);
	EVP_PKEY_free(p->tcb_key);
	X509_free(p->root);
	X509_free(p->ca);
	X509_free(p->tcb);
	p->root_key = p->ca_key = p->tcb_key = NULL;
	p->root = p->ca = p->tcb = NULL;
}

#define PCK_DIR		"pck"
/* QEID-PCEID-CPUSVN-PCESVN.pem: 32, 4, 32 and 4 hex digits. */
#define REG_NAME_LEN	(32 + 1 + 4 + 1 + 32 + 1 + 4 + 4)

static void put_hex(char *out, const uint8_t *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		snprintf(out + 2 * i, 3, "%02x", p[i]);
}

/* The registry's file name of @qe_id's certificate at @e's TCB. */
static void reg_name(char out[REG_NAME_LEN + 1], const uint8_t qe_id[16],
		     const struct sgx_pck_ext *e)
{
	put_hex(out, qe_id, 16);
	out[32] = '-';
	put_hex(out + 33, e->pceid, 2);
	out[37] = '-';
	put_hex(out + 38, e->cpusvn, 16);
	snprintf(out + 70, REG_NAME_LEN + 1 - 70, "-%04x.pem", e->pcesvn);
}

/* A registry file name back into its parts; false for other files. */
static bool parse_reg_name(const char *name, uint8_t qe_id[16], uint8_t pceid[2],
			   uint8_t cpusvn[16], uint16_t *pcesvn)
{
	char part[33];
	uint8_t svn[2];

	if (strlen(name) != REG_NAME_LEN || name[32] != '-' || name[37] != '-' ||
	    name[70] != '-' || strcmp(name + 75, ".pem"))
		return false;
	memcpy(part, name, 32);
	part[32] = '\0';
	if (sgx_unhex(part, qe_id, 16))
		return false;
	memcpy(part, name + 33, 4);
	part[4] = '\0';
	if (sgx_unhex(part, pceid, 2))
		return false;
	memcpy(part, name + 38, 32);
	part[32] = '\0';
	if (sgx_unhex(part, cpusvn, 16))
		return false;
	memcpy(part, name + 71, 4);
	part[4] = '\0';
	if (sgx_unhex(part, svn, 2))
		return false;
	*pcesvn = (uint16_t)(svn[0] << 8 | svn[1]);
	return true;
}

static X509 *read_cert(const char *path)
{
	FILE *f = fopen(path, "re");
	X509 *x;

	if (!f)
		return NULL;
	x = PEM_read_X509(f, NULL, NULL, NULL);
	fclose(f);
	return x;
}

/* @x still certifies @key under @ca_key: else a stale file to replace. */
static X509 *certifying(X509 *x, EVP_PKEY *key, EVP_PKEY *ca_key)
{
	if (x && (EVP_PKEY_eq(X509_get0_pubkey(x), key) != 1 ||
		  X509_verify(x, ca_key) != 1)) {
		X509_free(x);
		x = NULL;
	}
	return x;
}

int sgx_pki_pck_cert(struct sgx_pki *p, EVP_PKEY *pck, const uint8_t qe_id[16],
		     const struct sgx_pck_ext *ext, X509 **out,
		     char *why, size_t whylen)
{
	char path[4200], legacy[4200], name[REG_NAME_LEN + 1];
	X509 *x;
	int lock, ret = 0;

	snprintf(path, sizeof(path), "%s/" PCK_DIR, p->dir);
	if (mkdir(path, 0700) && errno != EEXIST)
		return sgx_fail(why, whylen, -errno, "cannot create %s: %s", path,
				strerror(errno));
	reg_name(name, qe_id, ext);
	snprintf(path, sizeof(path), "%s/" PCK_DIR "/%s", p->dir, name);
	/* Before the registry one certificate per TCB lay beside the keys. */
	snprintf(legacy, sizeof(legacy), "%s/pck-", p->dir);
	put_hex(legacy + strlen(legacy), ext->cpusvn, 16);
	snprintf(legacy + strlen(legacy), sizeof(legacy) - strlen(legacy),
		 "-%04x.pem", ext->pcesvn);
	lock = lock_dir(p->dir, why, whylen);
	if (lock < 0)
		return lock;
	x = certifying(read_cert(path), pck, p->ca_key);
	if (!x) {
		/* Adopted, so that an installation keeps the serial number
		 * verifiers and CRLs already know. */
		x = certifying(read_cert(legacy), pck, p->ca_key);
		if (!x)
			x = make_cert(SGX_CN_PCK, pck, p->ca, p->ca_key, CERT_LEAF,
				      7 * 365, ext);
		if (!x)
			ret = sgx_fail(why, whylen, -EIO, "cannot issue a PCK certificate");
		else if ((ret = write_pem(path, 0644, NULL, x)) != 0)
			sgx_fail(why, whylen, ret, "cannot write %s", path);
	}
	close(lock);
	if (ret) {
		X509_free(x);
		return ret;
	}
	*out = x;
	return 0;
}

/* Each registered certificate of the registry in @dir, checked under
 * @ca as sgx_pki_each_pck says. */
static int each_in(const char *dir, X509 *ca, sgx_pck_fn fn, void *ctx)
{
	char path[4200];
	struct dirent *d;
	DIR *dh;
	int ret = 0;

	snprintf(path, sizeof(path), "%s/" PCK_DIR, dir);
	dh = opendir(path);
	if (!dh)
		return errno == ENOENT ? 0 : -errno;
	while (!ret && (d = readdir(dh))) {
		struct sgx_pck_entry e = { .name = d->d_name };
		uint8_t pceid[2], cpusvn[16];
		uint16_t pcesvn;

		if (!parse_reg_name(d->d_name, e.qe_id, pceid, cpusvn, &pcesvn))
			continue;
		snprintf(path, sizeof(path), "%s/" PCK_DIR "/%s", dir, d->d_name);
		e.cert = read_cert(path);
		/* A file that lies about its platform or TCB is not served. */
		if (e.cert && X509_verify(e.cert, X509_get0_pubkey(ca)) == 1 &&
		    !sgx_pck_ext_from_cert(e.cert, &e.ext) &&
		    !memcmp(e.ext.pceid, pceid, 2) &&
		    !memcmp(e.ext.cpusvn, cpusvn, 16) && e.ext.pcesvn == pcesvn)
			ret = fn(&e, ctx);
		X509_free(e.cert);
	}
	closedir(dh);
	return ret;
}

int sgx_pki_each_pck(const struct sgx_pki *p, sgx_pck_fn fn, void *ctx)
{
	return each_in(p->dir, p->ca, fn, ctx);
}

struct copy_ctx {
	const char *dir;		/* the registry's hierarchy directory */
	EVP_PKEY *ca_pub;
	bool keep_valid;		/* leave a valid certificate there alone */
	int n, err;
};

static int copy_one(const struct sgx_pck_entry *e, void *ctx)
{
	struct copy_ctx *c = ctx;
	char path[4200];
	X509 *there;

	snprintf(path, sizeof(path), "%s/" PCK_DIR "/%s", c->dir, e->name);
	if (c->keep_valid && (there = read_cert(path))) {
		bool valid = X509_verify(there, c->ca_pub) == 1;

		X509_free(there);
		/* The platform's own copy keeps its serial number. */
		if (valid)
			return 0;
	}
	c->err = write_pem(path, 0644, NULL, e->cert);
	if (c->err)
		return 1;
	c->n++;
	return 0;
}

/* Write @key (NULL: none) and @x under @dir's names for slot @i. */
static int write_slot(const char *dir, int i, EVP_PKEY *key, X509 *x,
		      char *why, size_t whylen)
{
	char path[4200];
	int ret;

	snprintf(path, sizeof(path), "%s/%s", dir, key_files[i]);
	ret = write_pem(path, 0600, key, NULL);
	if (!ret) {
		snprintf(path, sizeof(path), "%s/%s", dir, cert_files[i]);
		ret = write_pem(path, 0644, NULL, x);
	}
	return ret ? sgx_fail(why, whylen, ret, "cannot write %s: %s", path,
			      strerror(-ret)) : 0;
}

/* Write @p's keys and certificates into @dir: the root certificate last,
 * as its presence marks a complete hierarchy. */
static int write_hierarchy(const struct sgx_pki *p, const char *dir,
			   char *why, size_t whylen)
{
	EVP_PKEY *keys[3] = { p->root_key, p->ca_key, p->tcb_key };
	X509 *certs[3] = { p->root, p->ca, p->tcb };
	int ret = 0;

	for (int i = 2; i >= 0 && !ret; i--)
		ret = write_slot(dir, i, keys[i], certs[i], why, whylen);
	return ret;
}

/* A directory of ours for a hierarchy, made 0700 (and its parents, as
 * the platform secrets' are: a new platform's directory may not exist
 * yet): 0 or -errno. */
static int own_dir(const char *dir, char *why, size_t whylen)
{
	struct stat st;
	int ret = sgx_make_parent_dirs(dir);

	if (ret)
		return sgx_fail(why, whylen, ret, "cannot create the directory of "
				"%s: %s", dir, strerror(-ret));
	if (mkdir(dir, 0700) && errno != EEXIST)
		return sgx_fail(why, whylen, -errno, "cannot create %s: %s", dir,
				strerror(errno));
	if (stat(dir, &st))
		return sgx_fail(why, whylen, -errno, "%s: %s", dir, strerror(errno));
	if (!S_ISDIR(st.st_mode))
		return sgx_fail(why, whylen, -ENOTDIR, "%s is not a directory", dir);
	if (st.st_uid != geteuid())
		return sgx_fail(why, whylen, -EPERM, "%s is not yours: the keys "
				"would be readable by its owner", dir);
	if ((st.st_mode & 0777) != 0700 && chmod(dir, 0700))
		return sgx_fail(why, whylen, -errno, "cannot make %s mode 0700: %s",
				dir, strerror(errno));
	return 0;
}

static bool same_file(const char *a, const char *b)
{
	struct stat sa, sb;

	return !stat(a, &sa) && !stat(b, &sb) && sa.st_dev == sb.st_dev &&
	       sa.st_ino == sb.st_ino;
}

int sgx_pki_export(const struct sgx_pki *p, const char *dir, bool force,
		   int *nr_pck, char *why, size_t whylen)
{
	struct copy_ctx c = { .dir = dir, .ca_pub = X509_get0_pubkey(p->ca) };
	char path[4200];
	X509 *there;
	int lock, ret;

	*nr_pck = 0;
	if (same_file(dir, p->dir))
		return sgx_fail(why, whylen, -EINVAL, "%s is this installation's "
				"hierarchy directory itself", dir);
	ret = own_dir(dir, why, whylen);
	if (ret)
		return ret;
	lock = lock_dir(dir, why, whylen);
	if (lock < 0)
		return lock;
	snprintf(path, sizeof(path), "%s/%s", dir, cert_files[0]);
	there = read_cert(path);
	if (!force && (there || access(path, F_OK) == 0) &&
	    (!there || X509_cmp(there, p->root))) {
		ret = sgx_fail(why, whylen, -EEXIST, "%s already holds another "
			       "hierarchy (another root CA); --force replaces it",
			       dir);
		goto out;
	}
	snprintf(path, sizeof(path), "%s/" PCK_DIR, dir);
	ret = write_hierarchy(p, dir, why, whylen);
	if (!ret && mkdir(path, 0700) && errno != EEXIST)
		ret = sgx_fail(why, whylen, -errno, "cannot create %s: %s", path,
			       strerror(errno));
	if (!ret) {
		ret = sgx_pki_each_pck(p, copy_one, &c);
		if (ret > 0)
			ret = sgx_fail(why, whylen, c.err, "cannot write a PCK "
				       "certificate into %s: %s", path,
				       strerror(-c.err));
		else if (ret < 0)
			sgx_fail(why, whylen, ret, "cannot read %s/" PCK_DIR ": %s",
				 p->dir, strerror(-ret));
	}
	*nr_pck = c.n;
out:
	X509_free(there);
	close(lock);
	return ret;
}

/* PCK certificates @p's CA issued: registered and beside the keys. */
static int count_one(const struct sgx_pck_entry *e, void *ctx)
{
	(void)e;
	++*(int *)ctx;
	return 0;
}

static int issued_pcks(const struct sgx_pki *p)
{
	char path[4200];
	struct dirent *d;
	DIR *dh;
	int n = 0;

	sgx_pki_each_pck(p, count_one, &n);
	dh = opendir(p->dir);
	while (dh && (d = readdir(dh))) {
		X509 *x;

		if (strncmp(d->d_name, "pck-", 4) || !strstr(d->d_name, ".pem") ||
		    !strcmp(d->d_name, cert_files[1]))
			continue;
		/* A name that does not fit names no file of ours. */
		if (snprintf(path, sizeof(path), "%s/%s", p->dir,
			     d->d_name) >= (int)sizeof(path))
			continue;
		x = read_cert(path);
		if (x && X509_verify(x, X509_get0_pubkey(p->ca)) == 1)
			n++;
		X509_free(x);
	}
	if (dh)
		closedir(dh);
	return n;
}

static bool same_hierarchy(const struct sgx_pki *a, const struct sgx_pki *b)
{
	return !X509_cmp(a->root, b->root) && !X509_cmp(a->ca, b->ca) &&
	       !X509_cmp(a->tcb, b->tcb);
}

int sgx_pki_import(const char *dst, const char *src, bool force,
		   struct sgx_pki_import *info, char *why, size_t whylen)
{
	struct sgx_pki in = { 0 }, cur = { 0 };
	struct copy_ctx c = { .dir = dst, .keep_valid = true };
	char path[4200], reason[300];
	int lock = -1, ret;

	memset(info, 0, sizeof(*info));
	if (strlen(src) >= sizeof(in.dir) || strlen(dst) >= sizeof(cur.dir))
		return sgx_fail(why, whylen, -ENAMETOOLONG, "directory name too long");
	if (same_file(src, dst))
		return sgx_fail(why, whylen, -EINVAL, "%s is this platform's "
				"hierarchy directory itself", src);
	strcpy(in.dir, src);
	ret = load_files(&in, false, why, whylen);
	if (!ret)
		ret = check_chain(&in, why, whylen);
	if (ret)
		goto out;
	ret = own_dir(dst, why, whylen);
	if (ret)
		goto out;
	lock = lock_dir(dst, why, whylen);
	if (lock < 0) {
		ret = lock;
		goto out;
	}
	strcpy(cur.dir, dst);
	snprintf(path, sizeof(path), "%s/%s", dst, cert_files[0]);
	if (access(path, F_OK) == 0) {
		if (load_files(&cur, true, reason, sizeof(reason))) {
			if (!force) {
				ret = sgx_fail(why, whylen, -EEXIST, "this platform's "
					       "hierarchy does not load (%s); --force "
					       "replaces it", reason);
				goto out;
			}
			info->replaced = true;
		} else if (same_hierarchy(&in, &cur)) {
			info->same = true;
		} else {
			int n = issued_pcks(&cur);

			if (n && !force) {
				ret = sgx_fail(why, whylen, -EEXIST, "%s already has "
					       "another hierarchy, which issued %d PCK "
					       "certificate%s (quotes under it would no "
					       "longer verify); --force replaces it",
					       dst, n, n == 1 ? "" : "s");
				goto out;
			}
			info->replaced = true;
		}
	}
	if (!info->same) {
		ret = write_hierarchy(&in, dst, why, whylen);
		if (ret)
			goto out;
	}
	snprintf(path, sizeof(path), "%s/" PCK_DIR, dst);
	if (mkdir(path, 0700) && errno != EEXIST) {
		ret = sgx_fail(why, whylen, -errno, "cannot create %s: %s", path,
			       strerror(errno));
		goto out;
	}
	c.ca_pub = X509_get0_pubkey(in.ca);
	ret = each_in(src, in.ca, copy_one, &c);
	if (ret > 0)
		ret = sgx_fail(why, whylen, c.err, "cannot write a PCK certificate "
			       "into %s: %s", path, strerror(-c.err));
	else if (ret < 0)
		sgx_fail(why, whylen, ret, "cannot read %s/" PCK_DIR ": %s", src,
			 strerror(-ret));
	info->merged = c.n;
out:
	if (lock >= 0)
		close(lock);
	sgx_pki_close(&in);
	sgx_pki_close(&cur);
	return ret;
}

X509_CRL *sgx_pki_crl(const struct sgx_pki *p, bool by_root,
		      X509 *const *revoked, int n, time_t now, int days)
{
	X509 *issuer = by_root ? p->root : p->ca;
	EVP_PKEY *key = by_root ? p->root_key : p->ca_key;
	X509_CRL *crl = X509_CRL_new();
	ASN1_TIME *t = ASN1_TIME_new();
	ASN1_INTEGER *number = ASN1_INTEGER_new();
	X509V3_CTX ctx;
	bool ok;

	ok = crl && t && number && X509_CRL_set_version(crl, 1) &&
	     X509_CRL_set_issuer_name(crl, X509_get_subject_name(issuer)) &&
	     X509_time_adj_ex(t, 0, 0, &now) && X509_CRL_set1_lastUpdate(crl, t) &&
	     X509_time_adj_ex(t, days, 0, &now) && X509_CRL_set1_nextUpdate(crl, t);
	for (int i = 0; ok && i < n; i++) {
		X509_REVOKED *r = X509_REVOKED_new();

		ok = r && X509_REVOKED_set_serialNumber(r, X509_get_serialNumber(revoked[i])) &&
		     X509_time_adj_ex(t, 0, 0, &now) &&
		     X509_REVOKED_set_revocationDate(r, t) &&
		     X509_CRL_add0_revoked(crl, r);
		if (!ok)
			X509_REVOKED_free(r);
	}
	if (ok) {
		X509V3_set_ctx(&ctx, issuer, NULL, NULL, crl, 0);
		ok = ASN1_INTEGER_set(number, (long)now) &&
		     X509_CRL_add1_ext_i2d(crl, NID_crl_number, number, 0, 0);
	}
	if (ok) {
		X509_EXTENSION *aki = X509V3_EXT_conf_nid(NULL, &ctx,
					NID_authority_key_identifier, "keyid:always");

		ok = aki && X509_CRL_add_ext(crl, aki, -1);
		X509_EXTENSION_free(aki);
	}
	ok = ok && X509_CRL_sort(crl) && X509_CRL_sign(crl, key, EVP_sha256());
	ASN1_TIME_free(t);
	ASN1_INTEGER_free(number);
	if (!ok) {
		X509_CRL_free(crl);
		return NULL;
	}
	return crl;
}

int sgx_pem_append(char **s, size_t *len, X509 *x)
{
	BIO *b = BIO_new(BIO_s_mem());
	char *data, *grown;
	long n;

	if (!b || !PEM_write_bio_X509(b, x)) {
		BIO_free(b);
		return -1;
	}
	n = BIO_get_mem_data(b, &data);
	grown = realloc(*s, *len + (size_t)n + 1);
	if (!grown) {
		BIO_free(b);
		return -1;
	}
	memcpy(grown + *len, data, (size_t)n);
	*len += (size_t)n;
	grown[*len] = '\0';
	*s = grown;
	BIO_free(b);
	return 0;
}

/* Whole PEM text of a private key, malloc'd, or NULL. */
static char *key_pem(EVP_PKEY *key)
{
	BIO *b = BIO_new(BIO_s_mem());
	char *data, *out = NULL;
	long n;

	if (b && PEM_write_bio_PrivateKey(b, key, NULL, NULL, 0, NULL, NULL) &&
	    (n = BIO_get_mem_data(b, &data)) > 0 && (out = malloc(n + 1))) {
		memcpy(out, data, n);
		out[n] = '\0';
	}
	BIO_free(b);
	return out;
}

/* The stored TLS pair when the root issued it and it has a day left. */
static bool tls_usable(const struct sgx_pki *p, X509 *x, EVP_PKEY *key)
{
	time_t soon = time(NULL) + 24 * 3600;

	return x && key && X509_check_private_key(x, key) == 1 &&
	       X509_verify(x, X509_get0_pubkey(p->root)) == 1 &&
	       X509_cmp_time(X509_get0_notAfter(x), &soon) > 0;
}

int sgx_pki_tls(const struct sgx_pki *p, char **cert, char **key,
		char *why, size_t whylen)
{
	char cpath[4200], kpath[4200];
	EVP_PKEY *k = NULL;
	X509 *x = NULL;
	size_t len = 0;
	FILE *f;
	int ret;

	*cert = *key = NULL;
	snprintf(cpath, sizeof(cpath), "%s/tls-server.pem", p->dir);
	snprintf(kpath, sizeof(kpath), "%s/tls-server.key", p->dir);
	if ((f = fopen(kpath, "re"))) {
		k = PEM_read_PrivateKey(f, NULL, NULL, NULL);
		fclose(f);
	}
	if ((f = fopen(cpath, "re"))) {
		x = PEM_read_X509(f, NULL, NULL, NULL);
		fclose(f);
	}
	if (!tls_usable(p, x, k)) {
		EVP_PKEY_free(k);
		X509_free(x);
		k = new_p256();
		x = k ? make_cert("localhost", k, p->root, p->root_key,
				  CERT_TLS, 397, NULL) : NULL;
		if (!x) {
			ret = sgx_fail(why, whylen, -EIO, "cannot issue the TLS "
				       "certificate");
			goto out;
		}
		ret = write_pem(kpath, 0600, k, NULL);
		if (!ret)
			ret = write_pem(cpath, 0644, NULL, x);
		if (ret) {
			sgx_fail(why, whylen, ret, "cannot store the TLS "
				 "certificate in %s: %s", p->dir, strerror(-ret));
			goto out;
		}
	}
	ret = sgx_pem_append(cert, &len, x);
	*key = ret ? NULL : key_pem(k);
	if (ret || !*key) {
		free(*cert);
		*cert = NULL;
		ret = sgx_fail(why, whylen, -ENOMEM, "out of memory");
	}
out:
	EVP_PKEY_free(k);
	X509_free(x);
	return ret;
}
