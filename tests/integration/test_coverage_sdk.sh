#!/usr/bin/env bash
# Coverage of a real SDK enclave (docs/guide.md "Testing enclaves:
# coverage and fuzzing"): Intel's SampleEnclave (../shared/clients/
# intel-sdk), copied into a temporary directory and built with its own
# Makefile plus the guide's recipe: gcc's freestanding coverage flags in
# Enclave_C_Flags, a linker fragment keeping .gcov_info, and
# __gcov_merge_add defined as a symbol of the enclave. Under `sgxemu run
# --coverage DIR` the app runs as without them, and gcov's report of the
# .gcda files (written when the app destroys its enclave) counts
# ecall_array_in once and its loop body 4 times, and marks what never ran.
# The enclave's ELF is found with no help (the urts maps enclave.signed.so
# while it loads it). Skipped, with the reason, without the client tree or
# where the unmodified sample does not run on this host.
# Last line: "N passed, N failed, N skipped".
set -u
. "$(dirname "$0")/../lib/test_lib.sh"
root=$(cd "$(dirname "$0")/../.." && pwd)
client=$(cd "$root/.." && pwd)/shared/clients/intel-sdk

if [ ! -x "$client/setup.sh" ] || [ ! -f "$client/sgxsdk-2.26-install.tar.xz" ]; then
	skp coverage_sdk "no Intel SDK client at $client (../shared/clients is absent)"
	finish
fi
command -v gcov >/dev/null || { skp coverage_sdk "no gcov (build-essential)"; finish; }
CLI=$(cd "$B" 2>/dev/null && pwd)/sgxemu
[ -x "$CLI" ] || { bad coverage_sdk "$B/sgxemu is not built"; finish; }
dest=$(cd "$B" && pwd)/intel-sdk
mkdir -p "$dest"
if [ ! -x "$dest/samples/SampleEnclave/app" ] || [ ! -x "$dest/sgxsdk/bin/x64/sgx_sign" ]; then
	if ! out=$("$client/setup.sh" "$dest" SampleEnclave 2>&1); then
		bad coverage_sdk_setup "$out"
		finish
	fi
fi
export LD_LIBRARY_PATH="$dest/psw/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT

# The unmodified sample first: what it cannot do here, coverage cannot.
# (In $(...) with its stderr dropped: the shell's own "Aborted" line.)
rc=$( (cd "$dest/samples/SampleEnclave" && timeout -s KILL 120 "$CLI" run ./app) \
	> "$T/plain.out" 2>&1 < /dev/null; echo $?) 2>/dev/null
if [ "$rc" != 0 ] || ! grep -q 'SampleEnclave successfully returned' "$T/plain.out"; then
	why=$(tail -n 1 "$T/plain.out")
	skp coverage_sdk "the unmodified SampleEnclave does not run here (status $rc; see test_intel_sdk.sh)${why:+: $why}"
	finish
fi

# The recipe (docs/guide.md), applied to a copy.
S=$T/SampleEnclave
cp -r "$dest/sgxsdk/SampleCode/SampleEnclave" "$S"
printf 'SECTIONS { .gcov_info : { KEEP(*(.gcov_info)) } } INSERT AFTER .data;\n' > "$S/gcov_info.ld"
sed -i -e '/^Enclave_Cpp_Flags := /i Enclave_C_Flags += --coverage -fprofile-info-section -fprofile-update=atomic' \
       -e 's|^\(\t-Wl,--defsym,__ImageBase=0 -Wl,--gc-sections\)|\1 -Wl,-T,gcov_info.ld -Wl,--defsym,__gcov_merge_add=enclave_entry|' \
       "$S/Makefile"
if ! grep -q '^Enclave_C_Flags += --coverage' "$S/Makefile" ||
   ! grep -q 'gcov_info.ld -Wl,--defsym,__gcov_merge_add=enclave_entry' "$S/Makefile"; then
	bad coverage_sdk_recipe "the Makefile did not take the two lines"
	finish
fi
set +u
# shellcheck disable=SC1091
. "$dest/sgxsdk/environment"
set -u
if (cd "$S" && CPATH=$SGX_SDK/include LIBRARY_PATH=$dest/psw/lib \
	make SGX_MODE=HW SGX_DEBUG=1 > build.log 2>&1); then
	ok sample_builds_with_coverage_flags
else
	bad sample_builds_with_coverage_flags "$(tail -n 5 "$S/build.log")"
	finish
fi

(cd "$S" && timeout -s KILL 120 "$CLI" run --coverage "$T/cov" ./app) \
	> "$T/cov.out" 2> "$T/cov.err" < /dev/null
rc=$?
if [ $rc = 0 ] && grep -q 'SampleEnclave successfully returned' "$T/cov.out"; then
	ok sample_runs_with_coverage
else
	bad sample_runs_with_coverage "status $rc: $(tail -n 3 "$T/cov.err")"
	finish
fi
[ -s "$T/cov.err" ] && bad no_coverage_lines "$(cat "$T/cov.err")" || ok no_coverage_lines
n=$(find "$T/cov" -name '*.gcda' | wc -l)
[ "$n" -ge 9 ] && ok "gcda_per_object_$n" || bad gcda_per_object "$n .gcda files"

# gcov on Arrays.cpp: ecall_array_in's line, its loop body's lines.
G=$T/cov$S/Enclave/Edger8rSyntax
cp "$S/Enclave/Edger8rSyntax/Arrays.gcno" "$G/" 2>/dev/null
(cd "$S" && gcov -t -o "$G" Enclave/Edger8rSyntax/Arrays.cpp) > "$T/arrays.gcov" 2> "$T/gcov.err"
line_of() { grep -n "$1" "$S/Enclave/Edger8rSyntax/Arrays.cpp" | head -n 1 | cut -d: -f1; }
count() { awk -F: -v n="$1" '$2 + 0 == n { gsub(/ /, "", $1); print $1; exit }' "$T/arrays.gcov"; }
fn=$(line_of '^void ecall_array_in(int arr')
# The function's line once, the loop test 5 times (4 iterations and the
# exit), its body 4 times; the assertion's line 4 times with a block that
# never ran (its failure path): gcov's "4*".
for want in "$fn:1" "$((fn + 2)):5" "$((fn + 3)):4*" "$((fn + 4)):4" "$((fn + 6)):1"; do
	got=$(count "${want%%:*}")
	[ "$got" = "${want#*:}" ] && ok "ecall_array_in_line_${want%%:*}_count_${want#*:}" ||
		bad "ecall_array_in_line_${want%%:*}" "gcov says '$got', want ${want#*:}: $(sed -n "${want%%:*}p" "$S/Enclave/Edger8rSyntax/Arrays.cpp")"
done
# Lines never run: the edger8r bridge's refusals of bad parameters
# (Enclave_t.c), which the app never provokes, are marked "#####".
cp "$S/Enclave/Enclave_t.gcno" "$T/cov$S/Enclave/" 2>/dev/null
(cd "$S" && gcov -t -o "$T/cov$S/Enclave" Enclave/Enclave_t.c) > "$T/bridge.gcov" 2>> "$T/gcov.err"
grep -qE '^ +#####:' "$T/bridge.gcov" &&
	ok never_run_lines_marked || bad never_run_lines_marked "$(head -n 3 "$T/gcov.err")"
finish
