#!/usr/bin/env bash
# Intel's SGX SDK 2.26 and its PSW run-time (../shared/clients/intel-sdk,
# see its SOURCE.md), unmodified under `sgxemu run`:
#  - enclaves of our own built with the SDK itself (tests/sdk: sgx_edger8r,
#    the trusted libraries, sgx_sign with a configuration XML): ECALL and
#    OCALL marshalling, hardware exceptions handled by a handler the
#    enclave registered with sgx_register_exception_handler (AEX, the
#    urts's exception ECALL, ERESUME), sealing in one process and
#    unsealing in another, local attestation between two enclaves,
#    switchless calls served by the SDK's worker threads, EDMM (dynamic
#    heap, stack, threads and sgx_mm_* on the user region) and its clean
#    refusal on an SGX1 platform (--no-sgx2);
#  - the SDK's own samples, built from its SampleCode with their own
#    Makefiles in hardware debug mode: SampleEnclave, SealUnseal,
#    LocalAttestation (one process, and responder + initiator as two),
#    Switchless, the C++11/14/17 demos, SampleEnclave signed with the
#    SDK's EDMM configuration (config.05.xml: dynamic threads, stack and
#    the user region), and SampleAEXNotify (its handler counts the AEXs
#    the default timer tick causes; none with --aex-tick 0).
# Everything is built once into $B/intel-sdk (setup.sh unpacks the SDK and
# builds the samples, about 45 s; tests/sdk/build.sh our enclave) and
# reused while its sources are unchanged. Skipped, with the reason, only
# when the client tree is absent.
# Last line: "N passed, N failed, N skipped".
set -u
. "$(dirname "$0")/../lib/test_lib.sh"
root=$(cd "$(dirname "$0")/../.." && pwd)
client=$(cd "$root/.." && pwd)/shared/clients/intel-sdk

if [ ! -x "$client/setup.sh" ] || [ ! -f "$client/sgxsdk-2.26-install.tar.xz" ]; then
	skp intel_sdk "no Intel SDK client at $client (../shared/clients is absent)"
	finish
fi
CLI=$(cd "$B" 2>/dev/null && pwd)/sgxemu
[ -x "$CLI" ] || { bad intel_sdk "$B/sgxemu is not built"; finish; }
dest=$(cd "$B" && pwd)/intel-sdk
mkdir -p "$dest"
export LD_LIBRARY_PATH="$dest/psw/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"

# The samples, each built once (setup.sh rebuilds what it is named).
samples="SampleEnclave SealUnseal LocalAttestation Switchless Cxx11SGXDemo Cxx14SGXDemo Cxx17SGXDemo SampleAEXNotify"
need=
for s in $samples; do
	prog=$dest/samples/$s/app
	[ "$s" = LocalAttestation ] && prog=$dest/samples/$s/bin/app
	[ -x "$prog" ] || need="$need $s"
done
if [ -n "$need" ] || [ ! -x "$dest/sgxsdk/bin/x64/sgx_sign" ]; then
	# shellcheck disable=SC2086
	if ! out=$("$client/setup.sh" "$dest" ${need:-SampleEnclave} 2>&1); then
		bad setup "setup.sh failed: $(echo "$out" | tail -n 3 | tr '\n' '|')"
		finish
	fi
fi
ok setup
if ! out=$("$root/tests/sdk/build.sh" "$dest" "$dest/own" 2>&1); then
	bad build_own_enclave "$(echo "$out" | tail -n 5 | tr '\n' '|')"
	finish
fi
ok build_own_enclave
own=$dest/own

# own NAME [sgxemu options] -- ARGS...: our app's "ok"/"FAIL" lines count
# one each; a crash or a non-zero exit counts one failure more.
own() {
	local name=$1 opts=() out rc line
	shift
	while [ "$1" != -- ]; do opts+=("$1"); shift; done
	shift
	out=$(cd "$own" && timeout -s KILL 300 "$CLI" run "${opts[@]}" ./app "$@" 2>&1)
	rc=$?
	while IFS= read -r line; do
		case "$line" in
		"ok "*) ok "$name/${line#ok }" ;;
		"FAIL "*) bad "$name/${line#FAIL }" "" ;;
		esac
	done <<<"$out"
	[ "$rc" -eq 0 ] || bad "$name" "exit $rc: $(grep -v '^ok ' <<<"$out" | tail -n 4 | tr '\n' '|')"
}

own calls -- encl.signed.so calls
own exceptions -- encl.signed.so exceptions
own attest -- encl.signed.so attest
own switchless -- encl.signed.so switchless
# Sealed by one process, unsealed by the next.
rm -f "$own/sealed.bin"
own seal -- encl.signed.so seal sealed.bin
own unseal -- encl.signed.so unseal sealed.bin
own edmm -- encl_edmm.signed.so edmm
# SGX1: the SDK refuses an enclave whose configuration needs SGX2 at
# load, as on such a part, and nothing crashes.
out=$(cd "$own" && timeout -s KILL 120 "$CLI" run --no-sgx2 ./app encl_edmm.signed.so edmm 2>&1)
rc=$?
if [ "$rc" -eq 1 ] && grep -q 'sgx_create_enclave returned 0x2009' <<<"$out"; then
	ok edmm_refused_on_sgx1		# SGX_ERROR_INVALID_METADATA
else
	bad edmm_refused_on_sgx1 "exit $rc: $(tail -n 3 <<<"$out" | tr '\n' '|')"
fi

# AEX-Notify (guide 3.5): with the timer tick (on by default) the trts's
# AEX handlers run after the notifications; with --aex-tick 0 nothing
# interrupts the enclave, so they never do; without the attribute they
# never do either; a part without AEX-Notify makes the urts refuse the
# enclave that asks for it.
own aexnotify -- encl_aexn.signed.so aexnotify some
own aexnotify_tick_off --aex-tick 0 -- encl_aexn.signed.so aexnotify none
own aexnotify_not_asked -- encl.signed.so aexnotify none
out=$(cd "$own" && timeout -s KILL 120 "$CLI" run --no-aexnotify ./app encl_aexn.signed.so aexnotify some 2>&1)
rc=$?
if [ "$rc" -eq 1 ] && grep -q 'sgx_create_enclave returned 0x3002' <<<"$out"; then
	ok aexnotify_refused_without_the_feature	# SGX_ERROR_INVALID_ATTRIBUTE
else
	bad aexnotify_refused_without_the_feature "exit $rc: $(tail -n 3 <<<"$out" | tr '\n' '|')"
fi

# The SDK's SampleAEXNotify, with no option: its AEX handler counts the
# AEXs of a long ECALL, which the tick gives (with --aex-tick 0, none).
# The sample sizes its loops by time() to take 60 s outside the enclave
# and then as long inside; a preload (tests/sdk/fast_clock.c) runs its
# time() 60 times faster, so each takes a real second.
aexn_sample() {	# NAME WANT(some|none) [sgxemu options...]
	local name=$1 want=$2 out rc n
	shift 2
	out=$(cd "$S/SampleAEXNotify" && SGXEMU_FAST_CLOCK=60 \
	      LD_PRELOAD="$dest/fast_clock.so${LD_PRELOAD:+:$LD_PRELOAD}" \
	      timeout -s KILL 300 "$CLI" run "$@" ./app </dev/null 2>&1)
	rc=$?
	n=$(sed -n 's/.*We counted \([0-9]*\) async enclave exits.*/\1/p' <<<"$out")
	if [ "$rc" -eq 0 ] && grep -q "SampleAEXNotify successfully returned" <<<"$out" &&
	   { { [ "$want" = some ] && [ "${n:-0}" -gt 0 ]; } ||
	     { [ "$want" = none ] && [ "$n" = 0 ]; }; }; then
		echo "    $name: $n AEXs counted by the sample's handler"
		ok "$name"
	else
		bad "$name" "exit $rc, ${n:-no} AEXs: $(tail -n 4 <<<"$out" | tr '\n' '|')"
	fi
}
if cc -std=gnu11 -O2 -shared -fPIC -o "$dest/fast_clock.so" "$root/tests/sdk/fast_clock.c" 2>"$dest/fast_clock.log"; then
	S=$dest/samples
	aexn_sample SampleAEXNotify some
	aexn_sample SampleAEXNotify_tick_off none --aex-tick 0
else
	bad SampleAEXNotify "cannot build fast_clock.so: $(tail -n 2 "$dest/fast_clock.log" | tr '\n' '|')"
fi

# sample NAME DIR PROG EXPECT_TEXT [sgxemu options...]
sample() {
	local name=$1 dir=$2 prog=$3 want=$4 out rc
	shift 4
	out=$(cd "$dir" && timeout -s KILL 300 "$CLI" run "$@" "$prog" </dev/null 2>&1)
	rc=$?
	if [ "$rc" -eq 0 ] && grep -q "$want" <<<"$out"; then
		ok "$name"
	else
		bad "$name" "exit $rc: $(grep -v '^sgxemu: cpuid' <<<"$out" | tail -n 4 | tr '\n' '|')"
	fi
}

S=$dest/samples
sample SampleEnclave "$S/SampleEnclave" ./app "SampleEnclave successfully returned"
rm -f "$S/SealUnseal/sealed_data_blob.txt"
sample SealUnseal "$S/SealUnseal" ./app "Unseal succeeded"
sample LocalAttestation "$S/LocalAttestation/bin" ./app "Succeed to close Session"
sample Cxx11SGXDemo "$S/Cxx11SGXDemo" ./app "Cxx11DemoEnclave successfully returned"
sample Cxx14SGXDemo "$S/Cxx14SGXDemo" ./app "Cxx14DemoEnclave successfully returned"
sample Cxx17SGXDemo "$S/Cxx17SGXDemo" ./app "Cxx17DemoEnclave successfully returned"

# LocalAttestation as two processes: the responder serves on a socket
# (its stdin held open: it also reads commands from there), the initiator
# attests to it and exchanges a message.
la=$S/LocalAttestation/bin
fifo=$(mktemp -u)
mkfifo "$fifo"
(cd "$la" && exec "$CLI" run ./appresponder <"$fifo" >"$fifo.out" 2>&1) &
resp=$!
exec 9>"$fifo"		# the responder's stdin stays open until we close it
for _ in $(seq 1 100); do
	grep -q "Server is ON" "$fifo.out" 2>/dev/null && break
	sleep 0.1
done
out=$(cd "$la" && timeout -s KILL 120 "$CLI" run ./appinitiator </dev/null 2>&1)
rc=$?
if [ "$rc" -eq 0 ] && grep -q "Succeed to close Session" <<<"$out"; then
	ok LocalAttestation_two_processes
else
	bad LocalAttestation_two_processes "exit $rc: $(tail -n 3 <<<"$out" | tr '\n' '|') responder: $(tail -n 3 "$fifo.out" | tr '\n' '|')"
fi
exec 9>&-
kill "$resp" 2>/dev/null
wait "$resp" 2>/dev/null
rm -f "$fifo" "$fifo.out"

# SampleEnclave with the SDK's EDMM configuration (dynamic threads, stack
# and a user region): the same enclave code, signed with config.05.xml.
edmm=$S/SampleEnclaveEDMM
if [ ! -f "$edmm/enclave.signed.so" ] || [ "$S/SampleEnclave/enclave.so" -nt "$edmm/enclave.signed.so" ]; then
	mkdir -p "$edmm"
	cp "$S/SampleEnclave/app" "$S/SampleEnclave/enclave.so" "$edmm/"
	"$dest/sgxsdk/bin/x64/sgx_sign" sign -key "$S/SampleEnclave/Enclave/Enclave_private_test.pem" \
		-enclave "$edmm/enclave.so" -out "$edmm/enclave.signed.so" \
		-config "$S/SampleEnclave/Enclave/config.05.xml" >"$edmm/sign.log" 2>&1 ||
		bad SampleEnclave_EDMM_sign "$(tail -n 2 "$edmm/sign.log")"
fi
sample SampleEnclave_EDMM "$edmm" ./app "SampleEnclave successfully returned"
out=$(cd "$edmm" && timeout -s KILL 120 "$CLI" run --no-sgx2 ./app </dev/null 2>&1)
rc=$?
if [ "$rc" -eq 255 ] && grep -q "Invalid enclave metadata" <<<"$out"; then
	ok SampleEnclave_EDMM_refused_on_sgx1
else
	bad SampleEnclave_EDMM_refused_on_sgx1 "exit $rc: $(tail -n 3 <<<"$out" | tr '\n' '|')"
fi

# Switchless last: its 4 x 500000 calls take the longest.
sample Switchless "$S/Switchless" ./app "ECall that does nothing"

finish
