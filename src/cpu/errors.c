/* SPDX-License-Identifier: MIT */
/*
 * Names of the SGX error codes (sgx-facts.md §1.2) and of the faults a leaf
 * can return, for logs, tools and test messages.
 */
#include "sgxemu/arch.h"

const char *sgx_error_name(int code)
{
	if (SGX_IS_FAULT(code)) {
		switch (SGX_FAULT_VECTOR(code)) {
		case X86_TRAP_GP: return "#GP";
		case X86_TRAP_PF: return "#PF";
		case X86_TRAP_UD: return "#UD";
		default: return "SGX_UNKNOWN";
		}
	}

	switch (code) {
	case SGX_SUCCESS:			return "SGX_SUCCESS";
	case SGX_INVALID_SIG_STRUCT:		return "SGX_INVALID_SIG_STRUCT";
	case SGX_INVALID_ATTRIBUTE:		return "SGX_INVALID_ATTRIBUTE";
	case SGX_BLKSTATE:			return "SGX_BLKSTATE";
	case SGX_INVALID_MEASUREMENT:		return "SGX_INVALID_MEASUREMENT";
	case SGX_NOTBLOCKABLE:			return "SGX_NOTBLOCKABLE";
	case SGX_PG_INVLD:			return "SGX_PG_INVLD";
	case SGX_EPC_PAGE_CONFLICT:		return "SGX_EPC_PAGE_CONFLICT";
	case SGX_INVALID_SIGNATURE:		return "SGX_INVALID_SIGNATURE";
	case SGX_MAC_COMPARE_FAIL:		return "SGX_MAC_COMPARE_FAIL";
	case SGX_PAGE_NOT_BLOCKED:		return "SGX_PAGE_NOT_BLOCKED";
	case SGX_NOT_TRACKED:			return "SGX_NOT_TRACKED";
	case SGX_VA_SLOT_OCCUPIED:		return "SGX_VA_SLOT_OCCUPIED";
	case SGX_CHILD_PRESENT:			return "SGX_CHILD_PRESENT";
	case SGX_ENCLAVE_ACT:			return "SGX_ENCLAVE_ACT";
	case SGX_ENTRYEPOCH_LOCKED:		return "SGX_ENTRYEPOCH_LOCKED";
	case SGX_INVALID_EINITTOKEN:		return "SGX_INVALID_EINITTOKEN";
	case SGX_PREV_TRK_INCMPL:		return "SGX_PREV_TRK_INCMPL";
	case SGX_PG_IS_SECS:			return "SGX_PG_IS_SECS";
	case SGX_PAGE_ATTRIBUTES_MISMATCH:	return "SGX_PAGE_ATTRIBUTES_MISMATCH";
	case SGX_PAGE_NOT_MODIFIABLE:		return "SGX_PAGE_NOT_MODIFIABLE";
	case SGX_PAGE_NOT_DEBUGGABLE:		return "SGX_PAGE_NOT_DEBUGGABLE";
	case SGX_INSUFFICIENT_ENTROPY:		return "SGX_INSUFFICIENT_ENTROPY";
	case SGX_EPC_NOT_READY:			return "SGX_EPC_NOT_READY";
	case SGX_NO_UPDATE:			return "SGX_NO_UPDATE";
	case SGX_INVALID_CPUSVN:		return "SGX_INVALID_CPUSVN";
	case SGX_INVALID_ISVSVN:		return "SGX_INVALID_ISVSVN";
	case SGX_UNMASKED_EVENT:		return "SGX_UNMASKED_EVENT";
	case SGX_INVALID_KEYNAME:		return "SGX_INVALID_KEYNAME";
	default:				return "SGX_UNKNOWN";
	}
}
