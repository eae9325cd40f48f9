// SPDX-License-Identifier: MIT
/*
 * The installation's CA hierarchy (see pki.h). Every certificate carries
 * the five extensions verifiers require of each SGX certificate (AKI, CDP,
 * SKI, key usage, basic constraints: attestation-facts.md §3.2), P-256
 * keys, ecdsa-with-SHA256 and 20-byte serials.
 */
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

#include "base/why.h"
#include "attest/pki.h"

#define CDP_ROOT "https://localhost:8081/sgx/certification/v4/rootcacrl"
#define CDP_PCK	 "https://localhost:8081/sgx/certification/v4/pckcrl?ca=processor&encoding=der"
#define CA_NOT_AFTER	"20491231235959Z"

/* CERT_TLS: the HTTPS server certificate of `sgxemu pccs`. */
enum cert_kind { CERT_ROOT, CERT_CA, CERT_LEAF, CERT_TLS };

int sgx_pki_dir(const char *secrets, char *buf, size_t len)
{
	int n = snprintf(buf, len, "%s.pki", secrets);

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

static int create_hierarchy(struct sgx_pki *p)
{
	EVP_PKEY **keys[3] = { &p->root_key, &p->ca_key, &p->tcb_key };
	X509 **certs[3] = { &p->root, &p->ca, &p->tcb };
	char path[4200];
	int ret;

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
	/* Keys first, the root certificate last: its presence marks a
	 * complete hierarchy. */
	for (int i = 2; i >= 0; i--) {
		snprintf(path, sizeof(path), "%s/%s", p->dir, key_files[i]);
		ret = write_pem(path, 0600, *keys[i], NULL);
		if (ret)
			return ret;
		snprintf(path, sizeof(path), "%s/%s", p->dir, cert_files[i]);
		ret = write_pem(path, 0644, NULL, *certs[i]);
		if (ret)
			return ret;
	}
	return 0;
}

static int load_hierarchy(struct sgx_pki *p, char *why, size_t whylen)
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
		if (fstat(fileno(f), &st) || st.st_uid != geteuid() ||
		    (st.st_mode & 077)) {
			fclose(f);
			return sgx_fail(why, whylen, -EPERM, "%s must be owned by you "
				    "and mode 0600: refusing a key others can read",
				    path);
		}
		*keys[i] = PEM_read_PrivateKey(f, NULL, NULL, NULL);
		fclose(f);
		snprintf(path, sizeof(path), "%s/%s", p->dir, cert_files[i]);
		f = fopen(path, "re");
		if (f) {
			*certs[i] = PEM_read_X509(f, NULL, NULL, NULL);
			fclose(f);
		}
		if (!*keys[i] || !*certs[i] ||
		    X509_check_private_key(*certs[i], *keys[i]) != 1)
			return sgx_fail(why, whylen, -EINVAL, "%s: damaged key or "
				    "certificate %s (move the directory away to "
				    "start a new hierarchy)", p->dir, cert_files[i]);
	}
	return 0;
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
	snprintf(path, sizeof(path), "%s/.lock", dir);
	lock = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
	if (lock < 0)
		return sgx_fail(why, whylen, -errno, "cannot open %s: %s", path,
			    strerror(errno));
	while (flock(lock, LOCK_EX) && errno == EINTR)
		;
	snprintf(path, sizeof(path), "%s/%s", dir, cert_files[0]);
	if (access(path, F_OK) == 0) {
		ret = load_hierarchy(p, why, whylen);
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

int sgx_pki_pck_cert(struct sgx_pki *p, EVP_PKEY *pck,
		     const struct sgx_pck_ext *ext, X509 **out,
		     char *why, size_t whylen)
{
	char path[4200], lockpath[4200];
	X509 *x = NULL;
	FILE *f;
	int lock, ret = 0;

	snprintf(path, sizeof(path), "%s/pck-", p->dir);
	for (int i = 0; i < 16; i++)
		snprintf(path + strlen(path), 3, "%02x", ext->cpusvn[i]);
	snprintf(path + strlen(path), sizeof(path) - strlen(path), "-%04x.pem",
		 ext->pcesvn);
	snprintf(lockpath, sizeof(lockpath), "%s/.lock", p->dir);
	lock = open(lockpath, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
	if (lock < 0)
		return sgx_fail(why, whylen, -errno, "cannot open %s: %s", lockpath,
			    strerror(errno));
	while (flock(lock, LOCK_EX) && errno == EINTR)
		;
	f = fopen(path, "re");
	if (f) {
		x = PEM_read_X509(f, NULL, NULL, NULL);
		fclose(f);
		/* Kept only while it still certifies this key under this CA. */
		if (x && (EVP_PKEY_eq(X509_get0_pubkey(x), pck) != 1 ||
			  X509_verify(x, p->ca_key) != 1)) {
			X509_free(x);
			x = NULL;
		}
	}
	if (!x) {
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
