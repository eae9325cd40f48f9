#!/usr/bin/env bash
# The acceptance test: the seed selftest (built unmodified by mk/seed.mk
# into $B/seed) run as `sgxemu run ./test_sgx` in its build folder, exactly
# as README's main job does. It must print "Input: X" and "Output: X" with
# the same X and exit 0. Also the seed ABI's exception path through the
# same binary's vDSO lookup is covered by test_shim_*.
# Last line: "N passed, N failed, N skipped".
set -u
. "$(dirname "$0")/../lib/test_lib.sh"

CLI=$(cd "$B" 2>/dev/null && pwd)/sgxemu
SEED=$B/seed

if [ ! -x "$CLI" ] || [ ! -f "$B/libsgxemu.so" ]; then
	bad seed_selftest "$B/sgxemu or $B/libsgxemu.so not built"
elif [ ! -x "$SEED/test_sgx" ] || [ ! -f "$SEED/encl.bin" ] || [ ! -f "$SEED/encl.ss" ]; then
	skp seed_selftest "$SEED/test_sgx, encl.bin or encl.ss not built (make seed-build; needs ../shared)"
else
	out=$(cd "$SEED" && timeout 60 "$CLI" run ./test_sgx 2>&1)
	rc=$?
	echo "$out" | sed 's/^/    /'
	in=$(echo "$out" | sed -n 's/^Input: //p')
	res=$(echo "$out" | sed -n 's/^Output: //p')
	if [ "$rc" -ne 0 ]; then
		bad seed_selftest "test_sgx exited with $rc"
	elif [ -z "$in" ] || [ "$in" != "$res" ]; then
		bad seed_selftest "Input '$in' and Output '$res' differ"
	else
		ok seed_selftest
	fi

	# The same run with the ABI forced and guard mode on.
	out=$(cd "$SEED" && timeout 60 "$CLI" run --guard --vdso-abi seed ./test_sgx 2>&1)
	rc=$?
	in=$(echo "$out" | sed -n 's/^Input: //p')
	res=$(echo "$out" | sed -n 's/^Output: //p')
	if [ "$rc" -eq 0 ] && [ -n "$in" ] && [ "$in" = "$res" ]; then
		ok seed_selftest_guard
	else
		bad seed_selftest_guard "rc $rc, Input '$in', Output '$res': $out"
	fi
fi

echo "$pass passed, $fail failed, $skip skipped"
[ "$fail" -eq 0 ]
