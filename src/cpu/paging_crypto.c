// SPDX-License-Identifier: MIT
/* AES-128-GCM for evicted pages (see paging.h for the construction). */
#include <string.h>

#include <openssl/evp.h>

#include "cpu/paging.h"

static void make_iv(uint64_t version, uint8_t iv[12])
{
	memset(iv, 0, 12);
	memcpy(iv, &version, sizeof(version));
}

int sgx_page_seal(const uint8_t key[16], uint64_t version,
		  const struct sgx_paging_header *hdr, const void *plain,
		  void *cipher, uint8_t mac[16])
{
	EVP_CIPHER_CTX *ctx = EVP_CIPHER_CTX_new();
	uint8_t iv[12];
	int len, ok;

	if (!ctx)
		return -1;
	make_iv(version, iv);
	ok = EVP_EncryptInit_ex(ctx, EVP_aes_128_gcm(), NULL, key, iv) &&
	     EVP_EncryptUpdate(ctx, NULL, &len, (const uint8_t *)hdr,
			       SGX_PAGING_HEADER_SIZE) &&
	     EVP_EncryptUpdate(ctx, cipher, &len, plain, SGX_PAGE_SIZE) &&
	     EVP_EncryptFinal_ex(ctx, (uint8_t *)cipher + len, &len) &&
	     EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_GCM_GET_TAG, 16, mac);
	EVP_CIPHER_CTX_free(ctx);
	return ok ? 0 : -1;
}

int sgx_page_open(const uint8_t key[16], uint64_t version,
		  const struct sgx_paging_header *hdr, const void *cipher,
		  void *plain, const uint8_t mac[16])
{
	EVP_CIPHER_CTX *ctx = EVP_CIPHER_CTX_new();
	uint8_t iv[12], tag[16];
	int len, ok;

	if (!ctx)
		return -1;
	memcpy(tag, mac, sizeof(tag));
	make_iv(version, iv);
	ok = EVP_DecryptInit_ex(ctx, EVP_aes_128_gcm(), NULL, key, iv) &&
	     EVP_DecryptUpdate(ctx, NULL, &len, (const uint8_t *)hdr,
			       SGX_PAGING_HEADER_SIZE) &&
	     EVP_DecryptUpdate(ctx, plain, &len, cipher, SGX_PAGE_SIZE) &&
	     EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_GCM_SET_TAG, 16, tag) &&
	     EVP_DecryptFinal_ex(ctx, (uint8_t *)plain + len, &len) > 0;
	EVP_CIPHER_CTX_free(ctx);
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
