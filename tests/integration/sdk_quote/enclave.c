// SPDX-License-Identifier: MIT
/*
 * The SDK quote test's enclave (test_sdk_quote.sh): EREPORT through the
 * SDK's sgx_create_report, targeted at whatever TARGETINFO the host got
 * from the quoting service, with the host's 64 bytes as REPORTDATA.
 */
#include <string.h>

#include "quote_t.h"
#include "sgx_utils.h"

sgx_status_t ecall_report(const sgx_target_info_t *ti, const uint8_t *data,
			  sgx_report_t *report)
{
	sgx_report_data_t rd;

	memcpy(rd.d, data, sizeof(rd.d));
	return sgx_create_report(ti, &rd, report);
}
