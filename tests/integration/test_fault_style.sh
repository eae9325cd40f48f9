#!/usr/bin/env bash
# The engine on the other vendor's faults. This host raises one kind for
# ENCLU (#UD on AMD, #GP/#PF on Intel; `sgxemu info --json` says which);
# SGXEMU_FAULT_STYLE makes the engine receive the other kind, converted at
# the top of its handlers, so that the whole path (enclave-mode EEXIT and
# leaves, host ENCLU, the vDSO entry, paging faults at an entry) runs with
# both kinds on every machine. The engine, shim and attack tests, the
# paging tests that enter through a paged-out TCS, and the seed selftest
# run under the style this host does not have; the C API tests run under
# both forced styles.
# Last line: "N passed, N failed, N skipped".
set -u
. "$(dirname "$0")/../lib/test_lib.sh"

CLI=$(cd "$B" 2>/dev/null && pwd)/sgxemu
T=$B/tests/integration

vector=$("$CLI" info --json 2>/dev/null |
	sed -n 's/.*"enclu_trap":{"signal":"[A-Z]*","vector":\([0-9]*\).*/\1/p')
case "$vector" in
6)  native=ud other=gp ;;
13) native=gp other=ud ;;
*)  bad probe "sgxemu info --json gives no ENCLU trap vector ('$vector')"
    echo "$pass passed, $fail failed, $skip skipped"; exit 1 ;;
esac
echo "    this host raises $native for ENCLU; forcing $other"

# A test binary (optionally one test of it) under a style: its own summary
# line must say 0 failed.
run_bin() {
	local style=$1 bin=$2 name=${3:-}
	local label="${style}_$(basename "$bin")${name:+_$name}" out rc
	if [ ! -x "$bin" ]; then
		bad "$label" "$bin not built"
		return
	fi
	out=$(SGXEMU_FAULT_STYLE=$style timeout 300 "$bin" $name 2>&1)
	rc=$?
	if [ -n "$name" ]; then
		if [ $rc -eq 0 ] && echo "$out" | grep -q "^ok $name\$"; then
			ok "$label"
		else
			echo "$out" | tail -n 5 | sed 's/^/    /'
			bad "$label" "exit $rc"
		fi
		return
	fi
	if [ $rc -eq 0 ] && echo "$out" | grep -Eq '^[0-9]+ passed, 0 failed'; then
		ok "$label"
	else
		echo "$out" | grep -E '^FAIL|^ +tests/' | head -n 10 | sed 's/^/    /'
		bad "$label" "exit $rc: $(echo "$out" | grep -E 'passed, ' | tail -n 1)"
	fi
}

for style in ud gp; do
	run_bin $style "$T/test_engine"
done
for bin in test_engine_signals test_shim_mainline test_shim_seed test_attacks \
	   test_attestation test_aexnotify; do
	run_bin $other "$T/$bin"
done
for name in paging_enclu_operand_on_an_evicted_page \
	    paging_idle_enclave_loses_its_secs paging_enclave_4x_the_epc; do
	run_bin $other "$T/test_paging" $name
done

# The seed selftest, unmodified, under the other style.
if [ ! -x "$B/seed/test_sgx" ]; then
	skp "${other}_seed_selftest" "$B/seed/test_sgx not built (make seed-build; needs ../shared)"
else
	out=$(cd "$B/seed" && SGXEMU_FAULT_STYLE=$other timeout 60 "$CLI" run ./test_sgx 2>&1)
	rc=$?
	in=$(echo "$out" | sed -n 's/^Input: //p')
	res=$(echo "$out" | sed -n 's/^Output: //p')
	if [ $rc -eq 0 ] && [ -n "$in" ] && [ "$in" = "$res" ]; then
		ok "${other}_seed_selftest"
	else
		echo "$out" | tail -n 5 | sed 's/^/    /'
		bad "${other}_seed_selftest" "exit $rc, Input '$in', Output '$res'"
	fi
fi

# sgxemu info reports the forced style.
if SGXEMU_FAULT_STYLE=$other "$CLI" info | grep -q "SGXEMU_FAULT_STYLE=$other"; then
	ok info_reports_forced_style
else
	bad info_reports_forced_style "no 'SGXEMU_FAULT_STYLE=$other' in sgxemu info"
fi

echo "$pass passed, $fail failed, $skip skipped"
[ "$fail" -eq 0 ]
