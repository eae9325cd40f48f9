/*
 * A host of our own for the Open Enclave data-sealing sample's enclaves
 * (unmodified, with the sample's generated datasealing_u.c), so that data
 * sealed in one process is unsealed in another: the sample's own host seals
 * and unseals in one process only. tests/integration/test_openenclave.sh
 * builds it against the OE client and runs it under `sgxemu run`.
 *
 *   seal_host seal ENCLAVE unique|product FILE   seal a known text into FILE
 *   seal_host unseal ENCLAVE FILE                unseal FILE, print the text
 *
 * Prints "sealed N bytes", "unsealed: TEXT" or "unseal refused: N" (the
 * enclave's error code); exits 0, 1 (refused) or 2 (usage, I/O, OE error).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openenclave/host.h>

#include "datasealing_u.h"

#define PLAIN_TEXT "sealed by one process, unsealed by another"
/* Additional data, kept in the clear beside the blob (the sample's format). */
#define OPT_MSG "seal_host"

static int usage(void)
{
	fprintf(stderr, "usage: seal_host seal ENCLAVE unique|product FILE\n"
			"       seal_host unseal ENCLAVE FILE\n");
	return 2;
}

static oe_enclave_t *create(const char *path)
{
	oe_enclave_t *enclave = NULL;
	oe_result_t r;

	r = oe_create_datasealing_enclave(path, OE_ENCLAVE_TYPE_SGX,
					  OE_ENCLAVE_FLAG_DEBUG, NULL, 0,
					  &enclave);
	if (r != OE_OK) {
		fprintf(stderr, "seal_host: %s: oe_create_enclave: %s\n", path,
			oe_result_str(r));
		return NULL;
	}
	return enclave;
}

/* The sealed blob as the enclave returned it, size first. */
static int do_seal(oe_enclave_t *enclave, int policy, const char *file)
{
	data_t sealed = { 0 };
	oe_result_t r;
	FILE *f;
	int ret = -1;

	r = seal_data(enclave, &ret, policy, (unsigned char *)OPT_MSG,
		      strlen(OPT_MSG), (unsigned char *)PLAIN_TEXT, sizeof(PLAIN_TEXT), &sealed);
	if (r != OE_OK || ret != 0) {
		fprintf(stderr, "seal_host: seal_data: %s, ret %d\n",
			oe_result_str(r), ret);
		return 2;
	}
	f = fopen(file, "wb");
	if (!f || fwrite(&sealed.size, sizeof(sealed.size), 1, f) != 1 ||
	    fwrite(sealed.data, 1, sealed.size, f) != sealed.size) {
		fprintf(stderr, "seal_host: %s: %s\n", file, strerror(errno));
		if (f)
			fclose(f);
		free(sealed.data);
		return 2;
	}
	fclose(f);
	printf("sealed %zu bytes\n", sealed.size);
	free(sealed.data);
	return 0;
}

static int do_unseal(oe_enclave_t *enclave, const char *file)
{
	data_t sealed = { 0 }, out = { 0 };
	oe_result_t r;
	FILE *f;
	int ret = -1, rc = 2;

	f = fopen(file, "rb");
	if (!f || fread(&sealed.size, sizeof(sealed.size), 1, f) != 1 ||
	    sealed.size > (1u << 20) || !(sealed.data = malloc(sealed.size)) ||
	    fread(sealed.data, 1, sealed.size, f) != sealed.size) {
		fprintf(stderr, "seal_host: %s: cannot read a sealed blob\n",
			file);
		goto out;
	}
	r = unseal_data(enclave, &ret, &sealed, 1, &out);
	if (r != OE_OK) {
		fprintf(stderr, "seal_host: unseal_data: %s\n",
			oe_result_str(r));
		goto out;
	}
	if (ret != 0) {
		printf("unseal refused: %d\n", ret);
		rc = 1;
		goto out;
	}
	printf("unsealed: %.*s\n", (int)strnlen((char *)out.data, out.size),
	       (char *)out.data);
	rc = 0;
out:
	if (f)
		fclose(f);
	free(sealed.data);
	free(out.data);
	return rc;
}

int main(int argc, char **argv)
{
	oe_enclave_t *enclave;
	int rc, policy;

	if (argc == 5 && !strcmp(argv[1], "seal")) {
		if (!strcmp(argv[3], "unique"))
			policy = POLICY_UNIQUE;
		else if (!strcmp(argv[3], "product"))
			policy = POLICY_PRODUCT;
		else
			return usage();
	} else if (!(argc == 4 && !strcmp(argv[1], "unseal"))) {
		return usage();
	}
	enclave = create(argv[2]);
	if (!enclave)
		return 2;
	if (argc == 5)
		rc = do_seal(enclave, policy, argv[4]);
	else
		rc = do_unseal(enclave, argv[3]);
	oe_terminate_enclave(enclave);
	return rc;
}
