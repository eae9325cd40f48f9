#!/usr/bin/env bash
# The Intel SDK's urts looks for __vdso_sgx_enter_enclave in its
# constructor (walking the vDSO's section headers), before an LD_PRELOAD
# library's constructor runs. Under `sgxemu run` the shim is started
# earlier (src/shim/audit/audit.c), so with the emulation of host ENCLU
# off (SGXEMU_HOST_ENCLU=0) the SDK's SampleEnclave, built with the SDK's
# own Makefile (../shared/clients/intel-sdk/setup.sh), still passes: it
# enters through the vDSO. With the shim preloaded alone the urts misses
# the vDSO, takes its legacy path (its own ENCLU) and is stopped with a
# reason, not left hanging. Skipped when the client tree is absent.
# Last line: "N passed, N failed, N skipped".
set -u
. "$(dirname "$0")/../lib/test_lib.sh"
root=$(cd "$(dirname "$0")/../.." && pwd)
client=$(cd "$root/.." && pwd)/shared/clients/intel-sdk

if [ ! -x "$client/setup.sh" ] || [ ! -f "$client/sgxsdk-2.26-install.tar.xz" ]; then
	skp sdk_vdso "no Intel SDK client at $client (../shared/clients is absent)"
	finish
fi
if ldd "$B/libsgxemu.so" 2>/dev/null | grep -q libasan; then
	skp sdk_vdso "the SDK's programs are not built for AddressSanitizer (make asan)"
	finish
fi
B=$(cd "$B" && pwd)
dest=$B/sdk-vdso
if ! out=$("$client/setup.sh" "$dest" SampleEnclave 2>&1); then
	bad setup "setup.sh failed: $(tail -n 3 <<<"$out")"
	finish
fi
cd "$dest/samples/SampleEnclave" || { bad setup "no sample"; finish; }
export LD_LIBRARY_PATH=$dest/psw/lib

out=$(SGXEMU_HOST_ENCLU=0 timeout -s KILL 120 "$B/sgxemu" run ./app </dev/null 2>&1)
rc=$?
[ $rc -eq 0 ] && grep -q 'SampleEnclave successfully returned' <<<"$out" &&
	ok sample_enclave_enters_through_vdso ||
	bad sample_enclave_enters_through_vdso "exit $rc: $(tail -n 3 <<<"$out" | tr '\n' '|')"

out=$(SGXEMU_HOST_ENCLU=0 LD_PRELOAD=$B/libsgxemu.so timeout -s KILL 120 ./app </dev/null 2>&1)
rc=$?
[ $rc -ne 0 ] && [ $rc -ne 137 ] && grep -q 'emulation of host ENCLU is off' <<<"$out" &&
	ok preload_alone_stops_with_a_reason ||
	bad preload_alone_stops_with_a_reason "exit $rc: $(tail -n 3 <<<"$out" | tr '\n' '|')"
finish
