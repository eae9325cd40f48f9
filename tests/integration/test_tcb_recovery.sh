#!/usr/bin/env bash
# A TCB recovery rehearsed end to end (issue 44): a real enclave's quote
# made before `sgxemu platform update-svn`, the update taken by an
# unmodified program's open of /dev/sgx_enclave under `sgxemu run`
# (ENCLS[EUPDATESVN]), a quote made after it. The quotes carry the old and
# the new CPUSVN and a PCK certificate for each TCB; with collateral that
# requires the new level (`sgxemu attest collateral --tcb-recovery`, `sgxemu
# pccs --tcb-recovery`) the old quote verifies as OutOfDate and the new one
# as UpToDate; without it both are UpToDate. Data an Intel SDK enclave
# (tests/sdk, as test_intel_sdk.sh builds it) seals in a run before an
# update unseals in the run that takes it. Then Intel's DCAP samples
# (../shared/clients/dcap, as built by test_dcap_samples.sh): the
# QuoteGenerationSample quotes before and after an update it takes itself
# at its own open of the device, and the QVL-only QuoteVerificationSample
# says a002 (OutOfDate) for the first and "Verification completed
# successfully" for the second.
# Last line: "N passed, N failed, N skipped".
set -u
. "$(dirname "$0")/../lib/test_lib.sh"
B=$(cd "$B" 2>/dev/null && pwd) || { bad tcb_recovery "no build directory"; finish; }
CLI=$B/sgxemu
QUOTE=$B/tests/enclave_quote
PY=/usr/bin/python3
[ -x "$QUOTE" ] || { bad tcb_recovery "$QUOTE is not built (make test-build)"; finish; }
[ -x "$PY" ] || { skp tcb_recovery "no $PY to open the device under sgxemu run"; finish; }
T=$(mktemp -d)
PCCS_PID=
cleanup() {
	[ -n "$PCCS_PID" ] && kill "$PCCS_PID" 2>/dev/null && wait "$PCCS_PID" 2>/dev/null
	rm -rf "$T"
}
trap cleanup EXIT
export SGXEMU_SECRETS_FILE=$T/secrets
unset SGXEMU_CPUSVN SGXEMU_EUPDATESVN SGXEMU_EUPDATESVN_ENTROPY
OLD=02020202020202020202020202020202
NEW=02030202020202020202020202020202

# The report body's CPUSVN: bytes 48..63 of a version-3 quote.
quote_cpusvn() { od -An -tx1 -j48 -N16 "$1" | tr -d ' \n'; }
take_update() {
	"$CLI" run "$PY" -c 'import os; os.close(os.open("/dev/sgx_enclave", os.O_RDWR))' 2>&1
}
verdict() {	# QUOTE COLLATERAL-DIR: the TCB status line's first word
	"$CLI" quote verify "$1" --collateral "$2" 2>/dev/null |
		sed -n 's/^TCB status: *\([A-Za-z]*\).*/\1/p'
}

"$QUOTE" "$T/q-before" >/dev/null 2>"$T/err" || { bad quote_before "$(cat "$T/err")"; finish; }
[ "$(quote_cpusvn "$T/q-before")" = $OLD ] && ok quote_before_carries_old_cpusvn \
	|| bad quote_before_carries_old_cpusvn "$(quote_cpusvn "$T/q-before")"
"$CLI" platform update-svn >/dev/null 2>"$T/err" || { bad update_svn "$(cat "$T/err")"; finish; }
# Asked for, not taken: a quote now still has the old CPUSVN.
"$QUOTE" "$T/q-pending" >/dev/null 2>&1
[ "$(quote_cpusvn "$T/q-pending")" = $OLD ] && ok pending_update_changes_no_quote \
	|| bad pending_update_changes_no_quote "$(quote_cpusvn "$T/q-pending")"
out=$(take_update)
echo "$out" | grep -q "SVN updated successfully (CPUSVN $NEW)" && ok update_taken_at_open \
	|| bad update_taken_at_open "$out"
"$QUOTE" "$T/q-after" >/dev/null 2>"$T/err" || { bad quote_after "$(cat "$T/err")"; finish; }
[ "$(quote_cpusvn "$T/q-after")" = $NEW ] && ok quote_after_carries_new_cpusvn \
	|| bad quote_after_carries_new_cpusvn "$(quote_cpusvn "$T/q-after")"

"$CLI" attest collateral --out "$T/col" >/dev/null 2>&1 &&
"$CLI" attest collateral --tcb-recovery --out "$T/rec" >/dev/null 2>&1 ||
	{ bad collateral "sgxemu attest collateral failed"; finish; }
v1=$(verdict "$T/q-before" "$T/col"); v2=$(verdict "$T/q-after" "$T/col")
[ "$v1" = UpToDate ] && [ "$v2" = UpToDate ] && ok no_recovery_required_both_up_to_date \
	|| bad no_recovery_required_both_up_to_date "before $v1, after $v2"
v1=$(verdict "$T/q-before" "$T/rec"); v2=$(verdict "$T/q-after" "$T/rec")
[ "$v1" = OutOfDate ] && [ "$v2" = UpToDate ] && ok recovery_required_before_out_of_date_after_up_to_date \
	|| bad recovery_required_before_out_of_date_after_up_to_date "before $v1, after $v2"
"$CLI" quote verify "$T/q-after" --collateral "$T/rec" >/dev/null 2>&1 && ok after_is_accepted \
	|| bad after_is_accepted "exit status $?"
out=$("$CLI" quote verify "$T/q-before" --collateral "$T/rec" 2>&1)
echo "$out" | grep -q "STATUS_TCB_OUT_OF_DATE" && ok before_named_out_of_date \
	|| bad before_named_out_of_date "$out"

# --- the PCCS: a PCK certificate per TCB, collateral with the recovery -----------
command -v curl >/dev/null || { skp pccs "curl is not installed"; finish; }
start_pccs() {
	local port
	for attempt in 1 2 3 4 5 6 7 8; do
		port=$((20000 + ($$ * 7 + attempt * 997 + RANDOM) % 40000))
		"$CLI" pccs --http --port "$port" "$@" >"$T/pccs.log" 2>&1 &
		PCCS_PID=$!
		for _ in $(seq 50); do
			kill -0 "$PCCS_PID" 2>/dev/null || break
			if curl -s -o /dev/null "http://127.0.0.1:$port/sgx/certification/v4/rootcacrl"; then
				PORT=$port
				return 0
			fi
			sleep 0.1
		done
		kill "$PCCS_PID" 2>/dev/null; wait "$PCCS_PID" 2>/dev/null; PCCS_PID=
	done
	return 1
}
start_pccs --tcb-recovery || { bad pccs_start "$(tail -n 2 "$T/pccs.log")"; finish; }
url=http://127.0.0.1:$PORT/sgx/certification/v4
qeid=$(od -An -tx1 -j28 -N16 "$T/q-after" | tr -d ' \n')	# header user_data
tcbm() {	# CPUSVN: the SGX-TCBm of the certificate the PCCS picks for it
	curl -s -D - -o /dev/null "$url/pckcert?qeid=$qeid&cpusvn=$1&pcesvn=0200&pceid=0000" |
		tr -d '\r' | sed -n 's/^[Ss][Gg][Xx]-[Tt][Cc][Bb][Mm]: *//p'
}
t_old=$(tcbm $OLD); t_new=$(tcbm $NEW)
[ "$t_old" = "${OLD}0200" ] && [ "$t_new" = "${NEW}0200" ] && ok pccs_pck_certificate_per_tcb \
	|| bad pccs_pck_certificate_per_tcb "old $t_old, new $t_new"
curl -s "$url/tcb?fmspc=534758454d55" >"$T/tcb.json"
levels=$(python3 -c 'import json,sys
d=json.load(open(sys.argv[1]))["tcbInfo"]["tcbLevels"]
print(" ".join("%d:%s" % (l["tcb"]["sgxtcbcomponents"][1]["svn"], l["tcbStatus"]) for l in d))' "$T/tcb.json" 2>&1)
[ "$levels" = "3:UpToDate 2:OutOfDate" ] && ok pccs_tcb_info_requires_new_level \
	|| bad pccs_tcb_info_requires_new_level "$levels"
kill "$PCCS_PID" 2>/dev/null; wait "$PCCS_PID" 2>/dev/null; PCCS_PID=

# --- an Intel SDK enclave's sealed data across the update -----------------------------
# tests/sdk's enclave, built with the SDK's own tools (test_intel_sdk.sh
# builds it): sgx_seal_data records the CPUSVN of its key request in the
# blob, and sgx_unseal_data asks EGETKEY for that CPUSVN.
own=$B/intel-sdk/own
if [ -x "$own/app" ] && [ -f "$own/encl.signed.so" ] && [ -d "$B/intel-sdk/psw/lib" ]; then
	export SGXEMU_SECRETS_FILE=$T/sdk/secrets
	mkdir -p "$T/sdk"
	sdk_run() { (cd "$own" && LD_LIBRARY_PATH=$B/intel-sdk/psw/lib \
		timeout -s KILL 120 "$CLI" run ./app encl.signed.so "$@" 2>&1); }
	out=$(sdk_run seal "$T/sdk/sealed.bin")
	echo "$out" | grep -q "^ok seal" && ok sdk_sealed_before_update \
		|| bad sdk_sealed_before_update "$(echo "$out" | tail -n 3 | tr '\n' '|')"
	"$CLI" platform update-svn >/dev/null
	out=$(sdk_run unseal "$T/sdk/sealed.bin")
	echo "$out" | grep -q "SVN updated successfully (CPUSVN $NEW)" &&
		echo "$out" | grep -q "^ok unseal" && ok sdk_unsealed_after_update \
		|| bad sdk_unsealed_after_update "$(echo "$out" | tail -n 3 | tr '\n' '|')"
	cpusvn=$("$CLI" info | sed -n 's/^CPUSVN: *\([0-9a-f]*\).*/\1/p')
	[ "$cpusvn" = $NEW ] && ok sdk_platform_at_new_cpusvn || bad sdk_platform_at_new_cpusvn "$cpusvn"
else
	skp sdk_sealing "the SDK-built test enclave is not in $own (tests/integration/test_intel_sdk.sh builds it from ../shared/clients)"
fi

# --- Intel's DCAP samples --------------------------------------------------------------
src=$B/dcap-samples/dcap-1.23/SampleCode
qgs=$src/QuoteGenerationSample
qvl=$src/QuoteVerificationSampleQVL
sdkdest=$B/intel-sdk
if [ ! -x "$qgs/app" ] || [ ! -x "$qvl/app" ] || [ ! -d "$sdkdest/psw/lib" ]; then
	skp dcap_samples "Intel's DCAP samples are not built in $B (tests/integration/test_dcap_samples.sh builds them from ../shared/clients)"
	finish
fi
export SGXEMU_SECRETS_FILE=$T/dcap/secrets
mkdir -p "$T/dcap"
qgs_quote() {	# OUT: QuoteGenerationSample under sgxemu run
	rm -f "$qgs/quote.dat"
	(cd "$qgs" && LD_LIBRARY_PATH=$sdkdest/psw/lib timeout 120 "$CLI" run ./app) \
		>"$T/qgs.out" 2>&1 && [ -s "$qgs/quote.dat" ] && cp "$qgs/quote.dat" "$1"
}
qvl_verify() {	# QUOTE: the QVL-only sample with collateral from the PCCS
	printf '{\n  "pccs_url": "http://127.0.0.1:%s/sgx/certification/v4/",\n  "use_secure_cert": false,\n  "collateral_service": "http://127.0.0.1:%s/sgx/certification/v4/",\n  "retry_times": 0\n}\n' \
		"$PORT" "$PORT" >"$T/qcnl.conf"
	(cd "$qvl" && QCNL_CONF_PATH=$T/qcnl.conf LD_LIBRARY_PATH=$B/dcap \
		timeout 120 ./app -quote "$1") >"$T/qvs.out" 2>&1
}
qgs_quote "$T/d-before" && [ "$(quote_cpusvn "$T/d-before")" = $OLD ] && ok dcap_quote_before \
	|| { bad dcap_quote_before "$(tail -n 3 "$T/qgs.out" | tr '\n' '|')"; finish; }
"$CLI" platform update-svn >/dev/null
# The sample's own open of /dev/sgx/enclave (the SDK's urts) takes it.
qgs_quote "$T/d-after"
grep -q "SVN updated successfully (CPUSVN $NEW)" "$T/qgs.out" &&
	[ "$(quote_cpusvn "$T/d-after")" = $NEW ] && ok dcap_quote_after_update_taken_by_the_sample \
	|| bad dcap_quote_after_update_taken_by_the_sample "$(quote_cpusvn "$T/d-after"): $(tail -n 3 "$T/qgs.out" | tr '\n' '|')"
start_pccs --tcb-recovery || { bad pccs_start "$(tail -n 2 "$T/pccs.log")"; finish; }
qvl_verify "$T/d-before"
grep -q "Non-terminal result: a002" "$T/qvs.out" && ok dcap_sample_before_out_of_date \
	|| bad dcap_sample_before_out_of_date "$(tail -n 4 "$T/qvs.out" | tr '\n' '|')"
qvl_verify "$T/d-after"; rc=$?
[ $rc -eq 0 ] && grep -q "Verification completed successfully" "$T/qvs.out" &&
	! grep -q "Non-terminal" "$T/qvs.out" && ok dcap_sample_after_up_to_date \
	|| bad dcap_sample_after_up_to_date "rc=$rc $(tail -n 4 "$T/qvs.out" | tr '\n' '|')"
finish
