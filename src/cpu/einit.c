/* SPDX-License-Identifier: MIT */
/*
 * EINIT (ENCLS[0x02]): check an enclave against its SIGSTRUCT and launch
 * policy, and make it runnable (sgx-facts.md §3.2, §3.3; SDM EINIT).
 * RBX = SIGSTRUCT, RCX = SECS, RDX = EINITTOKEN. Steps are numbered as in
 * the facts sheet, which follows the SDM pseudo-code.
 */
#include <string.h>

#include <openssl/crypto.h>

#include "cpu/internal.h"

static bool attributes_match_masked(const struct sgx_attributes *a,
				    const struct sgx_attributes *b,
				    const struct sgx_attributes *mask)
{
	return (a->flags & mask->flags) == (b->flags & mask->flags) &&
	       (a->xfrm & mask->xfrm) == (b->xfrm & mask->xfrm);
}

/*
 * Steps 15-20: an EINITTOKEN with VALID=1, issued by a launch enclave.
 * The token is trusted only through its MAC, keyed with the launch key
 * that EGETKEY gives an enclave with ATTRIBUTES.EINITTOKEN_KEY (whose
 * signer must be the LE hash, step 11) — derived here from the token's LE
 * fields and the current IA32_SGXLEPUBKEYHASH (keys.c, sgx-facts §5.4).
 * Caller holds cpu->lock.
 */
static int einit_check_token(struct sgx_cpu *cpu,
			     const struct sgx_einittoken *tok,
			     const struct sgx_secs *secs,
			     const uint8_t mrenclave[32],
			     const uint8_t mrsigner[32])
{
	uint8_t le_hash[32], key[SGX_KEY_SIZE], mac[SGX_MAC_SIZE];
	int ret = SGX_INVALID_EINITTOKEN;

	/* 15: a debug launch enclave cannot launch a production enclave */
	if ((tok->maskedattributesle.flags & SGX_ATTR_DEBUG) &&
	    !(secs->attributes.flags & SGX_ATTR_DEBUG))
		return SGX_INVALID_EINITTOKEN;
	/* 16: reserved bits and bytes */
	if ((tok->valid & ~1U) ||
	    !sgx_all_zero(tok->reserved1, sizeof(tok->reserved1)) ||
	    !sgx_all_zero(tok->reserved2, sizeof(tok->reserved2)) ||
	    !sgx_all_zero(tok->reserved3, sizeof(tok->reserved3)) ||
	    !sgx_all_zero(tok->reserved4, sizeof(tok->reserved4)))
		return SGX_INVALID_EINITTOKEN;
	/* 17: the LE's CPUSVN may not be newer than this platform's */
	if (!sgx_cpusvn_supported(cpu->keys.cpusvn, tok->cpusvnle))
		return SGX_INVALID_CPUSVN;
	/* 18: the MAC over bytes [0,192) under the launch key */
	sgx_lehash_bytes(cpu, le_hash);
	if (sgx_launch_key(&cpu->keys, tok, le_hash, key) ||
	    sgx_cmac(key, tok, SGX_EINITTOKEN_MACED_SIZE, mac) ||
	    CRYPTO_memcmp(mac, tok->mac, sizeof(mac)))
		goto out;
	/* 19: the token names this enclave */
	if (memcmp(tok->mrenclave, mrenclave, 32) ||
	    memcmp(tok->mrsigner, mrsigner, 32)) {
		ret = SGX_INVALID_MEASUREMENT;
		goto out;
	}
	/*
	 * 20: and its attributes (INIT still 0). The SDM names the error
	 * "SGX_INVALID_EINIT_ATTRIBUTE", which has no code; the SDK's
	 * simulator uses SGX_INVALID_ATTRIBUTE, and so do we.
	 */
	if (tok->attributes.flags != secs->attributes.flags ||
	    tok->attributes.xfrm != secs->attributes.xfrm) {
		ret = SGX_INVALID_ATTRIBUTE;
		goto out;
	}
	ret = 0;
out:
	OPENSSL_cleanse(key, sizeof(key));
	return ret;
}

/* Step 9's finalisation on a copy, so that a failed EINIT can be retried. */
static bool einit_final_mrenclave(struct sgx_encl_ctl *ctl, uint8_t out[32])
{
	EVP_MD_CTX *c = EVP_MD_CTX_new();
	unsigned int len = 32;
	bool ok = c && EVP_MD_CTX_copy_ex(c, ctl->mrenclave) &&
		  EVP_DigestFinal_ex(c, out, &len);

	EVP_MD_CTX_free(c);
	return ok;
}

int sgx_einit(struct sgx_cpu *cpu, const struct sgx_sigstruct *sigstruct,
	      void *secs_page, const struct sgx_einittoken *token)
{
	uint8_t padding[SGX_PKCS1_PADDING_SIZE], mrenclave[32], mrsigner[32];
	struct sgx_sigstruct sig;
	struct sgx_einittoken tok;
	struct sgx_epcm_entry *epcm;
	struct sgx_encl_ctl *ctl;
	struct sgx_secs *secs;
	long index;
	int ret;

	/* 1, 2: operand alignment and the SECS in the EPC */
	if (!sgx_aligned(sigstruct, SGX_PAGE_SIZE) ||
	    !sgx_aligned(secs_page, SGX_PAGE_SIZE) || !sgx_aligned(token, 512))
		return SGX_GP;
	index = sgx_epc_index(cpu, secs_page);
	if (index < 0 || !sigstruct || !token)
		return SGX_PF;

	/* 3: private copies, so the host cannot change them under us */
	memcpy(&sig, sigstruct, sizeof(sig));
	memcpy(&tok, token, sizeof(tok));

	/* 4: fixed SIGSTRUCT fields */
	ret = sgx_sigstruct_check_fields(&sig);
	if (ret)
		return ret;
	/* 5: no interrupt window in software: SGX_UNMASKED_EVENT never occurs */
	/* 6: the signature */
	ret = sgx_sigstruct_verify_signature(&sig, padding);
	if (ret)
		return ret;

	pthread_mutex_lock(&cpu->lock);
	/* 7: a valid, uninitialised SECS */
	epcm = &cpu->epcm[index];
	if (!epcm->valid || epcm->page_type != SGX_PT_SECS) {
		ret = SGX_PF;
		goto out;
	}
	ctl = cpu->ctl[index];
	secs = secs_page;
	if (ctl->initialized) {
		ret = SGX_GP;
		goto out;
	}
	/* 8: ISVFAMILYID is a KSS field */
	if (!(secs->attributes.flags & SGX_ATTR_KSS) &&
	    !sgx_all_zero(sig.body.isvfamilyid, sizeof(sig.body.isvfamilyid))) {
		ret = SGX_INVALID_SIG_STRUCT;
		goto out;
	}
	/* 9: the measurement */
	if (!einit_final_mrenclave(ctl, mrenclave) ||
	    memcmp(mrenclave, sig.body.enclavehash, 32)) {
		ret = SGX_INVALID_MEASUREMENT;
		goto out;
	}
	/* 10 */
	sgx_sigstruct_mrsigner(&sig, mrsigner);
	/* 11: controlled attributes only for the launch-enclave signer */
	if ((secs->attributes.flags & SGX_ATTR_CONTROLLED) &&
	    !sgx_lehash_matches(cpu, mrsigner)) {
		ret = SGX_INVALID_ATTRIBUTE;
		goto out;
	}
	/* 12, 13: what the signer fixed must be what the enclave has */
	if (!attributes_match_masked(&secs->attributes, &sig.body.attributes,
				     &sig.body.attributemask) ||
	    (secs->miscselect & sig.body.miscmask) !=
	    (sig.body.miscselect & sig.body.miscmask)) {
		ret = SGX_INVALID_ATTRIBUTE;
		goto out;
	}
	/* 14: no token: the signer must be the one the MSRs name */
	if (!(tok.valid & 1)) {
		if (!sgx_lehash_matches(cpu, mrsigner)) {
			ret = SGX_INVALID_EINITTOKEN;
			goto out;
		}
	} else {
		ret = einit_check_token(cpu, &tok, secs, mrenclave, mrsigner);
		if (ret)
			goto out;
	}

	/* 21: commit */
	pthread_mutex_lock(&ctl->lock);
	memcpy(secs->mrenclave, mrenclave, 32);
	memcpy(secs->mrsigner, mrsigner, 32);
	secs->isvprodid = sig.body.isvprodid;
	secs->isvsvn = sig.body.isvsvn;
	memcpy(ctl->isvfamilyid, sig.body.isvfamilyid, sizeof(ctl->isvfamilyid));
	memcpy(ctl->isvextprodid, sig.body.isvextprodid, sizeof(ctl->isvextprodid));
	memcpy(ctl->padding, padding, sizeof(ctl->padding));
	secs->attributes.flags |= SGX_ATTR_INIT;
	ctl->initialized = true;
	/* The running hash is final now; nothing may extend it again. */
	EVP_MD_CTX_free(ctl->mrenclave);
	ctl->mrenclave = NULL;
	pthread_mutex_unlock(&ctl->lock);
	ret = 0;
out:
	pthread_mutex_unlock(&cpu->lock);
	return ret;
}
