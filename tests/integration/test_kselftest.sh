#!/usr/bin/env bash
# The Linux kernel's own SGX selftest (tools/testing/selftests/sgx of
# Debian's linux-source, the mainline API: /dev/sgx_enclave, the vDSO's
# struct sgx_enclave_run, SGX2's ioctls), built unmodified by
# scripts/kselftest.sh and run under `sgxemu run`: each of its tests is a
# case here. Then all of them again with the other vendor's ENCLU
# fault injected (SGXEMU_FAULT_STYLE), so both hosts' paths run on either.
# Skipped with the reason where linux-source is not installed.
# Last line: "N passed, N failed, N skipped".
set -u
. "$(dirname "$0")/../lib/test_lib.sh"

CLI=$(cd "$B" 2>/dev/null && pwd)/sgxemu
if ! ls /usr/src/linux-source-*.tar.xz >/dev/null 2>&1; then
	skp kernel_sgx_selftest "no /usr/src/linux-source-*.tar.xz (Debian's linux-source; scripts/deps.sh test installs it)"
	finish
fi
if ! out_dir=$(scripts/kselftest.sh "$B/kselftest" 2>&1 >/dev/null | tail -n 1;
	       [ "${PIPESTATUS[0]}" -eq 0 ]); then
	bad kernel_sgx_selftest_build "$out_dir"
	finish
fi
out_dir=$B/kselftest/out

# run NAME_PREFIX [ENV...] -- [ARGS...]: one case per "ok N name" line.
run() {
	local prefix=$1 envs=() out rc line; shift
	while [ "$1" != -- ]; do envs+=("$1"); shift; done
	shift
	out=$(cd "$out_dir" && env "${envs[@]}" timeout -s KILL 600 "$CLI" run ./test_sgx "$@" 2>&1)
	rc=$?
	while IFS= read -r line; do
		case "$line" in
		"ok "*) ok "$prefix${line#ok [0-9]* }" ;;
		"not ok "*) bad "$prefix${line#not ok [0-9]* }" "$(grep -B3 -F "$line" <<<"$out" | head -n 3 | tr '\n' '|')" ;;
		esac
	done <<<"$out"
	if ! grep -q '^# Totals: pass:[1-9][0-9]* fail:0 ' <<<"$out" || [ "$rc" -ne 0 ]; then
		bad "${prefix}run" "exit $rc: $(tail -n 3 <<<"$out" | tr '\n' '|')"
	fi
}

run "" --
# The other vendor's ENCLU fault: #GP where this host raises #UD, and
# the reverse (docs/guide.md, SGXEMU_FAULT_STYLE).
if "$CLI" info 2>/dev/null | grep -q '^ENCLU trap: *#UD'; then
	other=gp
else
	other=ud
fi
run "fault_style_$other/" SGXEMU_FAULT_STYLE=$other --
finish
