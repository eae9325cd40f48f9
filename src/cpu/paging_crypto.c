// SPDX-License-Identifier: MIT
/* AES-128-GCM for evicted pages (see paging.h for the construction). */
#include <stdatomic.h>
#include <stdbool.h>
#include <string.h>

#include <openssl/evp.h>

#include "cpu/paging.h"

static void make_iv(uint64_t version, uint8_t iv[12])
{
	memset(iv, 0, 12);
	memcpy(iv, &version, sizeof(version));
}

/*
 * Cipher contexts kept with their key schedule: a context made and keyed
 * for each page cost 0.8 us of the 2.3 us an EWB or ELDU spends in
 * AES-GCM (bench/paging's host), and an ELDU runs on the fault path.
 * A small pool taken by compare-and-swap, not thread-local storage: ELDU
 * runs in signal handlers, and in threads a runtime made with a raw
 * clone() that share their parent's TLS (Gramine's). When every slot is
 * busy (nested handlers), a context of its own.
 */
#define GCM_POOL	8

struct gcm_slot {
	atomic_bool busy;
	bool keyed, enc;
	uint8_t key[16];
	EVP_CIPHER_CTX *ctx;
};

static struct gcm_slot gcm_pool[GCM_POOL];

static bool slot_matches(const struct gcm_slot *s, bool enc,
			 const uint8_t key[16])
{
	return s->keyed && s->enc == enc && !memcmp(s->key, key, 16);
}

/* A context keyed with @key for @enc, with a new @iv; NULL on failure. */
static EVP_CIPHER_CTX *gcm_begin(bool enc, const uint8_t key[16],
				 const uint8_t iv[12], struct gcm_slot **out)
{
	struct gcm_slot *s = NULL;
	EVP_CIPHER_CTX *ctx;

	for (int pass = 0; pass < 2 && !s; pass++)
		for (int i = 0; i < GCM_POOL && !s; i++) {
			bool f = false;

			if (!atomic_compare_exchange_strong(&gcm_pool[i].busy,
							    &f, true))
				continue;
			if (pass == 0 && !slot_matches(&gcm_pool[i], enc, key)) {
				atomic_store(&gcm_pool[i].busy, false);
				continue;
			}
			s = &gcm_pool[i];
		}
	*out = s;
	if (s && !s->ctx && !(s->ctx = EVP_CIPHER_CTX_new()))
		goto fail;
	ctx = s ? s->ctx : EVP_CIPHER_CTX_new();
	if (!ctx)
		goto fail;
	if (!s || !slot_matches(s, enc, key)) {
		if (s)
			s->keyed = false;
		if (!(enc ? EVP_EncryptInit_ex(ctx, EVP_aes_128_gcm(), NULL,
					       key, NULL) :
			    EVP_DecryptInit_ex(ctx, EVP_aes_128_gcm(), NULL,
					       key, NULL)))
			goto fail_ctx;
		if (s) {
			s->keyed = true;
			s->enc = enc;
			memcpy(s->key, key, 16);
		}
	}
	if (enc ? EVP_EncryptInit_ex(ctx, NULL, NULL, NULL, iv) :
		  EVP_DecryptInit_ex(ctx, NULL, NULL, NULL, iv))
		return ctx;
	if (s)
		s->keyed = false;
fail_ctx:
	if (!s)
		EVP_CIPHER_CTX_free(ctx);
fail:
	if (s)
		atomic_store(&s->busy, false);
	*out = NULL;
	return NULL;
}

static void gcm_end(EVP_CIPHER_CTX *ctx, struct gcm_slot *s)
{
	if (s)
		atomic_store(&s->busy, false);
	else
		EVP_CIPHER_CTX_free(ctx);
}

int sgx_page_seal(const uint8_t key[16], uint64_t version,
		  const struct sgx_paging_header *hdr, const void *plain,
		  void *cipher, uint8_t mac[16])
{
	struct gcm_slot *s;
	EVP_CIPHER_CTX *ctx;
	uint8_t iv[12];
	int len, ok;

	make_iv(version, iv);
	ctx = gcm_begin(true, key, iv, &s);
	if (!ctx)
		return -1;
	ok = EVP_EncryptUpdate(ctx, NULL, &len, (const uint8_t *)hdr,
			       SGX_PAGING_HEADER_SIZE) &&
	     EVP_EncryptUpdate(ctx, cipher, &len, plain, SGX_PAGE_SIZE) &&
	     EVP_EncryptFinal_ex(ctx, (uint8_t *)cipher + len, &len) &&
	     EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_GCM_GET_TAG, 16, mac);
	gcm_end(ctx, s);
	return ok ? 0 : -1;
}

int sgx_page_open(const uint8_t key[16], uint64_t version,
		  const struct sgx_paging_header *hdr, const void *cipher,
		  void *plain, const uint8_t mac[16])
{
	struct gcm_slot *s;
	EVP_CIPHER_CTX *ctx;
	uint8_t iv[12], tag[16];
	int len, ok;

	memcpy(tag, mac, sizeof(tag));
	make_iv(version, iv);
	ctx = gcm_begin(false, key, iv, &s);
	if (!ctx)
		return -1;
	ok = EVP_DecryptUpdate(ctx, NULL, &len, (const uint8_t *)hdr,
			       SGX_PAGING_HEADER_SIZE) &&
	     EVP_DecryptUpdate(ctx, plain, &len, cipher, SGX_PAGE_SIZE) &&
	     EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_GCM_SET_TAG, 16, tag) &&
	     EVP_DecryptFinal_ex(ctx, (uint8_t *)plain + len, &len) > 0;
	gcm_end(ctx, s);
	return ok ? 0 : -1;
}

uint64_t sgx_epcm_flags(const struct sgx_epcm_entry *e)
{
	return ((uint64_t)e->page_type << SGX_SECINFO_PT_SHIFT) |
	       (e->r ? SGX_SECINFO_R : 0) | (e->w ? SGX_SECINFO_W : 0) |
	       (e->x ? SGX_SECINFO_X : 0) |
	       (e->pending ? SGX_SECINFO_PENDING : 0) |
	       (e->modified ? SGX_SECINFO_MODIFIED : 0) |
	       (e->pr ? SGX_SECINFO_PR : 0);
}
