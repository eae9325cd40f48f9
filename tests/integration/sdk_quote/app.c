// SPDX-License-Identifier: MIT
/*
 * The SDK quote test's host program (test_sdk_quote.sh), written as an SDK
 * application asks for a DCAP quote through the PSW's quote_ex library:
 * sgx_select_att_key_id, sgx_init_quote_ex (the QE's TARGETINFO),
 * an ECALL for the enclave's REPORT, sgx_get_quote_size_ex and
 * sgx_get_quote_ex. The library talks to /var/run/aesmd/aesm.socket.
 *
 * usage: app ENCLAVE.signed.so QUOTE_OUT   (prints "report_data HEX")
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "quote_u.h"
#include "sgx_uae_quote_ex.h"
#include "sgx_urts.h"

static int failed(const char *what, sgx_status_t s)
{
	fprintf(stderr, "app: %s: 0x%04x\n", what, (unsigned)s);
	return 1;
}

int main(int argc, char **argv)
{
	sgx_enclave_id_t eid;
	sgx_att_key_id_t key;
	sgx_target_info_t qe;
	sgx_report_t report;
	sgx_status_t s, rs;
	uint8_t data[64], *pub, *quote;
	size_t pub_size = 0;
	uint32_t size = 0;
	FILE *f;

	if (argc != 3) {
		fprintf(stderr, "usage: app ENCLAVE QUOTE_OUT\n");
		return 2;
	}
	s = sgx_create_enclave(argv[1], 1, NULL, NULL, &eid, NULL);
	if (s)
		return failed("sgx_create_enclave", s);
	s = sgx_select_att_key_id(NULL, 0, &key);
	if (s)
		return failed("sgx_select_att_key_id", s);
	s = sgx_init_quote_ex(&key, &qe, &pub_size, NULL);
	if (s)
		return failed("sgx_init_quote_ex (size)", s);
	pub = malloc(pub_size);
	s = sgx_init_quote_ex(&key, &qe, &pub_size, pub);
	if (s)
		return failed("sgx_init_quote_ex", s);
	for (int i = 0; i < 64; i++)
		data[i] = (uint8_t)(0x40 + i);
	s = ecall_report(eid, &rs, &qe, data, &report);
	if (s || rs)
		return failed("ecall_report", s ? s : rs);
	s = sgx_get_quote_size_ex(&key, &size);
	if (s)
		return failed("sgx_get_quote_size_ex", s);
	quote = malloc(size);
	s = sgx_get_quote_ex(&report, &key, NULL, quote, size);
	if (s)
		return failed("sgx_get_quote_ex", s);
	f = fopen(argv[2], "wb");
	if (!f || fwrite(quote, 1, size, f) != size || fclose(f))
		return failed("writing the quote", SGX_ERROR_UNEXPECTED);
	printf("report_data ");
	for (int i = 0; i < 64; i++)
		printf("%02x", data[i]);
	printf("\n");
	sgx_destroy_enclave(eid);
	free(pub);
	free(quote);
	return 0;
}
