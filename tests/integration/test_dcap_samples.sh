#!/usr/bin/env bash
# Intel's two DCAP samples (../shared/clients/dcap, DCAP 1.23), unmodified,
# built with their own Makefiles against the SDK of ../shared/clients/
# intel-sdk and the DCAP libraries of this build ($B/dcap: found by -l at
# link time through LIBRARY_PATH, and by the loader under `sgxemu run`):
#  - QuoteGenerationSample quotes its enclave in-process through
#    libsgx_dcap_ql.so.1 under `sgxemu run` and writes quote.dat;
#  - QuoteVerificationSample verifies it through libsgx_dcap_quoteverify.so.1
#    with the collateral its quote provider (libdcap_quoteprov.so.1) fetches
#    from `sgxemu pccs` as the QCNL configuration says: both passes print
#    "Verification completed successfully", the QvE-checked one after the
#    sample's enclave checked the QvE's REPORT with Intel's TVL
#    (sgx_tvl_verify_qve_report_and_identity); the same REPORT made for
#    another enclave, or the nonce, verdict or expiration status changed
#    on their way to the enclave (tests/dcap/qve_tamper.c, preloaded), is
#    refused there (0xe013); the QVL_ONLY build verifies without `sgxemu
#    run` (a verifier with no SGX); collateral with an out-of-date TCB
#    gives the non-terminal a002, a revoked PCK the terminal 0xe031; no
#    PCCS listening, a failure.
# Built once into $B/dcap-samples and reused. Skipped, with the reason,
# only where ../shared/clients is absent.
# Last line: "N passed, N failed, N skipped".
set -u
. "$(dirname "$0")/../lib/test_lib.sh"
root=$(cd "$(dirname "$0")/../.." && pwd)
clients=$(cd "$root/.." && pwd)/shared/clients
tarball=$clients/dcap/dcap-1.23-sources.tar.xz

if [ ! -f "$tarball" ]; then
	skp dcap_samples "no DCAP client at $clients/dcap (../shared/clients is absent)"
	finish
fi
if [ ! -x "$clients/intel-sdk/setup.sh" ]; then
	skp dcap_samples "no Intel SDK client at $clients/intel-sdk (the samples need its SDK)"
	finish
fi
B=$(cd "$B" 2>/dev/null && pwd) || { bad dcap_samples "no build directory"; finish; }
CLI=$B/sgxemu
for f in "$CLI" "$B/dcap/libsgx_dcap_ql.so" "$B/dcap/libsgx_dcap_quoteverify.so" \
	 "$B/dcap/libdcap_quoteprov.so"; do
	[ -e "$f" ] || { bad dcap_samples "$f is not built"; finish; }
done
command -v g++ >/dev/null || { skp dcap_samples "g++ is not installed (the samples are C++)"; finish; }

T=$(mktemp -d)
PCCS_PID=
cleanup() {
	[ -n "$PCCS_PID" ] && kill "$PCCS_PID" 2>/dev/null && wait "$PCCS_PID" 2>/dev/null
	rm -rf "$T"
}
trap cleanup EXIT
export SGXEMU_SECRETS_FILE=$T/secrets

# --- the SDK and the samples, built once ------------------------------------
sdkdest=$B/intel-sdk
if [ ! -x "$sdkdest/sgxsdk/bin/x64/sgx_sign" ] || [ ! -d "$sdkdest/psw/lib" ]; then
	if ! out=$("$clients/intel-sdk/setup.sh" "$sdkdest" SampleEnclave 2>&1); then
		bad sdk_setup "setup.sh failed: $(echo "$out" | tail -n 3 | tr '\n' '|')"
		finish
	fi
fi
SGX_SDK=$sdkdest/sgxsdk
work=$B/dcap-samples
src=$work/dcap-1.23
if [ ! -f "$work/.unpacked" ]; then
	rm -rf "$work" && mkdir -p "$work" &&
		tar -xJf "$tarball" -C "$work" && touch "$work/.unpacked" ||
		{ bad dcap_unpack "cannot unpack $tarball"; finish; }
	# The QVL-only variant is the same sources in a second directory,
	# so that both builds can stand side by side.
	cp -a "$src/SampleCode/QuoteVerificationSample" \
		"$src/SampleCode/QuoteVerificationSampleQVL"
fi
# The libraries' headers are Intel's, from the client; the SDK's own
# include directory comes first on the samples' command lines, and last
# here for the QVL-only build, which names none (on a real machine the
# DCAP and SGX headers are both in /usr/include).
inc=
for d in QuoteGeneration/quote_wrapper/common/inc QuoteGeneration/quote_wrapper/ql/inc \
	 QuoteGeneration/pce_wrapper/inc QuoteGeneration/qpl/inc \
	 QuoteVerification/dcap_quoteverify/inc QuoteVerification/QvE/Include; do
	inc=$inc${inc:+:}$src/$d
done
inc=$inc:$SGX_SDK/include
build() {	# DIR MAKE-ARGS...
	local dir=$1; shift
	(cd "$dir" && CPATH=$inc LIBRARY_PATH=$B/dcap:$SGX_SDK/lib64 \
		make SGX_DEBUG=1 SGX_SDK="$SGX_SDK" "$@") >"$T/build.log" 2>&1 ||
		{ echo "$(tail -n 5 "$T/build.log" | tr '\n' '|')"; return 1; }
}
qgs=$src/SampleCode/QuoteGenerationSample
qvs=$src/SampleCode/QuoteVerificationSample
qvl=$src/SampleCode/QuoteVerificationSampleQVL
if why=$(build "$qgs"); then ok build_quote_generation_sample
else bad build_quote_generation_sample "$why"; finish; fi
if why=$(build "$qvs"); then ok build_quote_verification_sample
else bad build_quote_verification_sample "$why"; finish; fi
if why=$(build "$qvl" QVL_ONLY=1); then ok build_quote_verification_sample_qvl_only
else bad build_quote_verification_sample_qvl_only "$why"; fi

# The programs take Intel's libraries by soname, as built against.
if ldd "$qgs/app" 2>/dev/null | grep -q 'libsgx_dcap_ql.so.1' &&
   ldd "$qvs/app" 2>/dev/null | grep -q 'libsgx_dcap_quoteverify.so.1'; then
	ok samples_link_by_soname
else
	bad samples_link_by_soname "$(ldd "$qgs/app" "$qvs/app" 2>&1 | grep -i dcap | tr '\n' '|')"
fi

# --- QuoteGenerationSample under sgxemu run -----------------------------------
rm -f "$qgs/quote.dat"
(cd "$qgs" && LD_LIBRARY_PATH=$sdkdest/psw/lib timeout 120 "$CLI" run ./app) \
	>"$T/qgs.out" 2>&1
rc=$?
if [ $rc -eq 0 ] && [ -s "$qgs/quote.dat" ] && grep -q 'cert_key_type = 0x5' "$T/qgs.out"; then
	ok quote_generation_writes_quote
else
	bad quote_generation_writes_quote "rc=$rc: $(tail -n 4 "$T/qgs.out" | tr '\n' '|')"
	finish
fi
cp "$qgs/quote.dat" "$T/quote.dat"
# The quote is one of this platform's: sgxemu's own verifier accepts it.
if "$CLI" quote verify "$T/quote.dat" >"$T/v.out" 2>&1; then
	ok generated_quote_verifies_with_sgxemu
else
	bad generated_quote_verifies_with_sgxemu "$(tail -n 2 "$T/v.out" | tr '\n' '|')"
fi

# --- a PCCS of our own ----------------------------------------------------------
# start_pccs [OPTION]: sgxemu pccs on a free port, waiting until it answers.
start_pccs() {
	local port
	stop_pccs
	for attempt in 1 2 3 4 5 6 7 8; do
		port=$((20000 + ($$ * 7 + attempt * 997 + RANDOM) % 40000))
		"$CLI" pccs --port "$port" "$@" >"$T/pccs.log" 2>&1 &
		PCCS_PID=$!
		for _ in $(seq 50); do
			kill -0 "$PCCS_PID" 2>/dev/null || break
			if curl -s -o /dev/null -k "https://127.0.0.1:$port/sgx/certification/v4/rootcacrl"; then
				PORT=$port
				return 0
			fi
			sleep 0.1
		done
		stop_pccs
	done
	return 1
}
stop_pccs() {
	[ -n "$PCCS_PID" ] && { kill "$PCCS_PID" 2>/dev/null; wait "$PCCS_PID" 2>/dev/null; }
	PCCS_PID=
}
command -v curl >/dev/null || { skp verification_samples "curl is not installed (waiting for the PCCS)"; finish; }
qcnl_json() {	# PORT SECURE
	printf '{\n  "pccs_url": "https://localhost:%s/sgx/certification/v4/",\n  "use_secure_cert": %s,\n  "collateral_service": "https://localhost:%s/sgx/certification/v4/",\n  "retry_times": 0\n}\n' "$1" "$2" "$1" >"$T/qcnl.conf"
}
# verify NAME EXPECTED-RC PATTERN... : the sample (trusted pass, then the
# library's) under sgxemu run; each PATTERN in its output.
run_qvs() {	# APP-DIR [sgxemu [TAMPER]]
	local dir=$1 how=${2:-} tamper=${3:-}
	if [ -n "$tamper" ]; then
		(cd "$dir" && QCNL_CONF_PATH=$T/qcnl.conf LD_LIBRARY_PATH=$sdkdest/psw/lib \
			SGXEMU_QVE_TAMPER=$tamper LD_PRELOAD=$B/tests/dcap/qve_tamper.so \
			timeout 120 "$CLI" run ./app -quote "$T/quote.dat") >"$T/qvs.out" 2>&1
	elif [ "$how" = sgxemu ]; then
		(cd "$dir" && QCNL_CONF_PATH=$T/qcnl.conf LD_LIBRARY_PATH=$sdkdest/psw/lib \
			timeout 120 "$CLI" run ./app -quote "$T/quote.dat") >"$T/qvs.out" 2>&1
	else
		(cd "$dir" && QCNL_CONF_PATH=$T/qcnl.conf LD_LIBRARY_PATH=$B/dcap \
			timeout 120 ./app -quote "$T/quote.dat") >"$T/qvs.out" 2>&1
	fi
}
expect() {	# NAME RC WANT-RC PATTERN...
	local name=$1 rc=$2 want=$3 miss=; shift 3
	for p in "$@"; do grep -q -- "$p" "$T/qvs.out" || miss="$miss [$p]"; done
	if [ "$rc" -eq "$want" ] && [ -z "$miss" ]; then ok "$name"
	else bad "$name" "rc=$rc (want $want), missing:$miss: $(tail -n 6 "$T/qvs.out" | tr '\n' '|')"; fi
}

if ! start_pccs; then
	bad pccs_start "sgxemu pccs did not answer: $(tail -n 2 "$T/pccs.log" | tr '\n' '|')"
	finish
fi
# use_secure_cert true: the provider checks the PCCS's certificate against
# this installation's root.
qcnl_json "$PORT" true
run_qvs "$qvs" sgxemu; rc=$?
# The QvE-checked pass: sgxemu's QvE REPORT, checked in the sample's
# enclave by Intel's TVL; then the library's own pass. Both succeed.
expect verification_sample_trusted_pass $rc 0 \
	'Info: App: tee_verify_quote successfully returned' \
	'Info: Ecall: Verify QvE report and identity successfully returned'
expect verification_sample_qvl_pass_succeeds $rc 0 \
	'Untrusted quote verification' 'Supplemental data Major Version: 3'
n=$(grep -c 'Verification completed successfully' "$T/qvs.out")
if [ "$n" -eq 2 ]; then ok verification_sample_both_passes_verify
else bad verification_sample_both_passes_verify "$n of 2 passes completed: $(tail -n 6 "$T/qvs.out" | tr '\n' '|')"; fi
# What reaches the enclave changed on the way: Intel's TVL refuses the
# REPORT, so the trusted pass fails (-1) and the library's own pass
# still verifies. A REPORT for another enclave fails its MAC check
# (sgx_verify_report), which this TVL reports as 0xe001; a changed nonce,
# verdict or status fails the REPORTDATA check, SGX_QL_ERROR_REPORT.
if [ -e "$B/tests/dcap/qve_tamper.so" ]; then
	for how in target nonce verdict status; do
		code=0xe013
		[ "$how" = target ] && code=0xe001
		run_qvs "$qvs" sgxemu "$how"; rc=$?
		expect "tvl_refuses_changed_$how" $rc 255 "qve_tamper: $how changed" \
			"Verify QvE report and identity failed. $code"
		if grep -q 'Verify QvE report and identity successfully' "$T/qvs.out"; then
			bad "tvl_refuses_changed_${how}_only" "the TVL accepted a changed $how"
		fi
	done
else
	bad tvl_refuses_changes "$B/tests/dcap/qve_tamper.so is not built (make test-build)"
fi
run_qvs "$qvl"; rc=$?
expect qvl_only_sample_without_sgx $rc 0 'Verification completed successfully'

# The older key=value form of the configuration, and an unchecked PCCS
# certificate (USE_SECURE_CERT=FALSE).
printf 'PCCS_URL=https://localhost:%s/sgx/certification/v4/\nUSE_SECURE_CERT=FALSE\n' \
	"$PORT" >"$T/qcnl.conf"
run_qvs "$qvl"; rc=$?
expect qvl_only_sample_key_value_config $rc 0 'Verification completed successfully'

# Collateral saying this TCB is out of date: non-terminal, the call
# succeeds. (The sample's exit status: -1 for any result but OK, and 0
# when the call itself fails, since it leaves its status untouched then.)
start_pccs --tcb-out-of-date || { bad pccs_start "--tcb-out-of-date"; finish; }
qcnl_json "$PORT" true
run_qvs "$qvl"; rc=$?
expect tcb_out_of_date_non_terminal $rc 255 'Non-terminal result: a002'
# The PCK certificate revoked: terminal, SGX_QL_PCK_REVOKED.
start_pccs --revoke-pck || { bad pccs_start "--revoke-pck"; finish; }
qcnl_json "$PORT" true
run_qvs "$qvl"; rc=$?
expect revoked_pck_terminal $rc 0 'tee_verify_quote failed: 0xe031'

# No PCCS listening: the collateral cannot be fetched, the call fails.
stop_pccs
qcnl_json "$PORT" true
run_qvs "$qvl"; rc=$?
expect pccs_down_fails $rc 0 'tee_verify_quote failed: 0xe019'
if grep -q 'Verification completed' "$T/qvs.out"; then
	bad pccs_down_not_verified "a verification completed with no collateral"
else
	ok pccs_down_not_verified
fi

# --- a fleet: platform A's quote verified on platform B --------------------------
# A exports its hierarchy, B imports it (sgxemu pki); the sample quotes on
# A, and the QVL-only sample verifies on B with B's PCCS and B's root. A
# platform outside the fleet (its own hierarchy) is refused there, and a
# verifier with only the fleet's root ($SGXEMU_TRUSTED_ROOT) accepts A's.
F=$T/fleet
mkdir -p "$F/a" "$F/b" "$F/c" "$F/v"
qgs_on() {	# SECRETS OUT
	rm -f "$qgs/quote.dat"
	(cd "$qgs" && SGXEMU_SECRETS_FILE=$1 LD_LIBRARY_PATH=$sdkdest/psw/lib \
		timeout 120 "$CLI" run ./app) >"$T/qgs.out" 2>&1 &&
		[ -s "$qgs/quote.dat" ] && cp "$qgs/quote.dat" "$2"
}
if SGXEMU_SECRETS_FILE=$F/a/secrets "$CLI" pki export "$F/h" >"$T/pki.out" 2>&1 &&
   SGXEMU_SECRETS_FILE=$F/b/secrets "$CLI" pki import "$F/h" >>"$T/pki.out" 2>&1 &&
   SGXEMU_SECRETS_FILE=$F/a/secrets "$CLI" pki root >"$F/root.pem" 2>>"$T/pki.out"; then
	ok fleet_export_import
else
	bad fleet_export_import "$(tail -n 3 "$T/pki.out" | tr '\n' '|')"
	finish
fi
if qgs_on "$F/a/secrets" "$F/qa" && qgs_on "$F/c/secrets" "$F/qc"; then
	ok fleet_quotes_on_a_and_c
else
	bad fleet_quotes_on_a_and_c "$(tail -n 3 "$T/qgs.out" | tr '\n' '|')"
	finish
fi
export SGXEMU_SECRETS_FILE=$F/b/secrets
start_pccs || { bad pccs_start "platform B"; finish; }
qcnl_json "$PORT" true
cp "$F/qa" "$T/quote.dat"
run_qvs "$qvl"; rc=$?
expect fleet_quote_of_a_verifies_on_b $rc 0 'Verification completed successfully'
cp "$F/qc" "$T/quote.dat"
run_qvs "$qvl"; rc=$?
expect fleet_outsider_refused_on_b $rc 0 'tee_verify_quote failed: 0xe0'
if grep -q 'Verification completed' "$T/qvs.out"; then
	bad fleet_outsider_not_verified "platform C's quote was accepted on B"
else
	ok fleet_outsider_not_verified
fi
# A verifier of its own (another hierarchy) trusting the fleet's root only.
cp "$F/qa" "$T/quote.dat"
SGXEMU_SECRETS_FILE=$F/v/secrets SGXEMU_TRUSTED_ROOT=$F/root.pem run_qvs "$qvl"; rc=$?
expect fleet_trusted_root_verifier $rc 0 'Verification completed successfully'
SGXEMU_SECRETS_FILE=$F/v/secrets run_qvs "$qvl"; rc=$?
expect fleet_other_root_refuses $rc 0 'tee_verify_quote failed: 0xe0'
stop_pccs
finish
