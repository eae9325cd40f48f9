#!/usr/bin/env bash
# sgxemu's libsgx_dcap_ql.so.1 through a program linked against it by
# soname (tests/dcap/ql_probe.c): the quote3_error_t codes Intel's library
# gives without a platform, with one, and in AESM mode; and that under
# `sgxemu run` the loader takes sgxemu's library even where the program's
# RUNPATH finds another one first (a decoy standing in for Intel's).
# The full quote of a real enclave's REPORT through the library is in
# test_attestation.c (dcap_ql_*); Intel's QuoteGenerationSample in
# test_dcap_samples.sh.
set -u
. tests/lib/test_lib.sh

SGXEMU=$B/sgxemu
PROBE=$B/tests/dcap/ql_probe
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
export SGXEMU_SECRETS_FILE=$T/secrets

if [ ! -x "$PROBE" ] || [ ! -x "$SGXEMU" ]; then
	bad dcap_built "$PROBE or $SGXEMU not built"
	finish
fi

# expect NAME FILE KEY=VALUE...: each line KEY=VALUE is in FILE.
expect() {
	local name=$1 file=$2 miss=""; shift 2
	for kv in "$@"; do
		grep -qx "$kv" "$file" || miss="$miss $kv"
	done
	if [ -z "$miss" ]; then ok "$name"
	else bad "$name" "missing:$miss (got: $(tr '\n' ' ' <"$file"))"; fi
}

# --- without a platform: the codes of Intel's library on a machine whose
# enclaves cannot load --------------------------------------------------
LD_LIBRARY_PATH=$B/dcap "$PROBE" >"$T/noplat" 2>"$T/noplat.err"
expect no_platform_codes "$T/noplat" \
	size_before_target_info=0xe00d quote_before_target_info=0xe016 \
	target_info=0xe00d size=0xe00d target_info_null=0xe002 \
	size_null=0xe002 quote_null_report=0xe002 quote_null_buffer=0xe002 \
	policy_persistent=0x0000 policy_ephemeral=0x0000 policy_bad=0xe00c \
	path_qe3=0x0000 path_null=0xe002 path_bad_type=0xe002 \
	path_too_long=0xe002 cleanup=0x0000
# Every failure says why, one line each, on stderr.
fails=$(grep '=0x' "$T/noplat" | grep -vc '=0x0000$')
lines=$(grep -c '^libsgx_dcap_ql (sgxemu): ' "$T/noplat.err")
[ "$fails" -eq "$lines" ] && ok no_platform_one_line_per_failure ||
	bad no_platform_one_line_per_failure "$fails failures, $lines lines"

# --- which library the loader takes ----------------------------------------
"$PROBE" decoy >"$T/d1" 2>&1
expect decoy_found_first_without_sgxemu "$T/d1" decoy=yes
"$SGXEMU" run "$PROBE" decoy >"$T/d2" 2>&1
expect sgxemu_library_first_under_run "$T/d2" decoy=no
SGXEMU_DCAP=0 "$SGXEMU" run "$PROBE" decoy >"$T/d3" 2>&1
expect sgxemu_dcap_0_leaves_the_names_alone "$T/d3" decoy=yes

# --- with the platform (sgxemu run) ----------------------------------------
"$SGXEMU" run "$PROBE" >"$T/plat" 2>"$T/plat.err"
expect platform_codes "$T/plat" \
	size_before_target_info=0xe00f quote_before_target_info=0xe00f \
	target_info=0x0000 size=0x0000 quote_short_buffer=0xe002 \
	quote_bad_report=0xe015 quote_null_report=0xe002 cleanup=0x0000 \
	policy_bad=0xe00c
size=$(sed -n 's/^size_value=//p' "$T/plat")
# The quote's size as the platform's QE reports it to AESM clients: the
# fixed part (48 + 384 + 4 + 64 + 64 + 384 + 64 + 2 + 32 + 2 + 4) and
# the PCK chain as certification data, which is kilobytes of PEM.
if [ -n "$size" ] && [ "$size" -gt 1052 ] && [ "$size" -lt 16384 ]; then
	ok quote_size_is_a_quote_with_a_pck_chain
else
	bad quote_size_is_a_quote_with_a_pck_chain "size '$size'"
fi

# AESM mode (SGX_AESM_ADDR): in-process controls refused, quoting works.
SGX_AESM_ADDR=1 "$SGXEMU" run "$PROBE" >"$T/aesm" 2>/dev/null
expect aesm_mode_codes "$T/aesm" \
	policy_persistent=0xe03e policy_bad=0xe03e path_qe3=0xe03e \
	path_null=0xe03e cleanup=0xe03e target_info=0x0000 size=0x0000

finish
