#!/usr/bin/env bash
# libFuzzer on an ECALL (docs/guide.md "Testing enclaves: coverage and
# fuzzing"): tests/debug/fuzz_host.c, a clang -fsanitize=fuzzer harness,
# under `sgxemu run`, ECALLs into tests/enclaves/fuzz_encl.c, built with
# clang's inline 8-bit counters and PC table and no sanitizer runtime.
# sgxemu gives libFuzzer the DEBUG enclave's counters and PC table; the
# bug planted behind a 6-byte magic (an out-of-bounds write, a #GP in
# enclave mode) must be found within a fixed number of executions (fixed
# seed), reported as libFuzzer's crash with the input saved, and not found
# in the same budget with the enclave's coverage off
# (SGXEMU_COVERAGE_FUZZER=0); -print_coverage=1 names enclave functions
# and their source lines; a non-DEBUG enclave gets one line and no edges.
# Skipped, with the reason, without clang's libFuzzer.
# Last line: "N passed, N failed, N skipped".
set -u
. "$(dirname "$0")/../lib/test_lib.sh"

CLI=$B/sgxemu
HOST=$B/tests/debug/fuzz_host
ELF=$B/enclaves/fuzz_encl.elf
BIN=$B/enclaves/fuzz_encl.bin
KEY=${SGXEMU_TEST_KEY:-$B/keys/signing_key.pem}
# The budget: with enclave coverage the bug is found after some 600,000
# executions with this seed; without it, 2^48 inputs hold one magic.
RUNS=3000000
SEED=1

if ! echo 'int LLVMFuzzerTestOneInput(const char *d, long n) { (void)d; return (int)n & 0; }' |
	clang -x c -fsanitize=fuzzer -o /dev/null - >/dev/null 2>&1; then
	skp fuzz_enclave "clang's libFuzzer runtime is missing (clang, libclang-rt-dev: scripts/deps.sh)"
	finish
fi
for f in "$CLI" "$HOST" "$ELF" "$BIN" "$KEY"; do
	[ -e "$f" ] || { bad fuzz_enclave "$f not built (make test-build)"; finish; }
done
if asan_build; then
	skp fuzz_enclave "sanitizer build: the harness is built without ASan and cannot take the ASan shim"
	finish
fi
ACLI=$(realpath "$CLI") AHOST=$(realpath "$HOST")
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
export FUZZ_KEY=$(realpath "$KEY") FUZZ_BIN=$(realpath "$BIN")
export SGXEMU_COVERAGE_ELF=$(realpath "$ELF")

# fuzz NAME [libFuzzer options]: in $T/NAME, output in $T/NAME.log.
fuzz() {
	local name=$1
	shift
	mkdir -p "$T/$name"
	(cd "$T/$name" && timeout -s KILL 600 "$ACLI" run \
		"$AHOST" -seed=$SEED -max_len=16 "$@") \
		> "$T/$name.log" 2>&1
	echo $? > "$T/$name.rc"
}

# 1. With the enclave's edges: the modules line shows both, the crash.
fuzz on -runs=$RUNS
grep -q 'INFO: Loaded 2 modules' "$T/on.log" &&
	ok enclave_counters_registered || bad enclave_counters_registered "$(grep 'INFO: Loaded' "$T/on.log")"
grep -q 'INFO: Loaded 2 PC tables' "$T/on.log" &&
	ok enclave_pc_table_registered || bad enclave_pc_table_registered "$(grep 'INFO: Loaded' "$T/on.log")"
if grep -q 'ERROR: libFuzzer: deadly signal' "$T/on.log" &&
   grep -q 'fuzz_host: enclave exception, vector 13' "$T/on.log"; then
	ok planted_bug_found_within_budget
else
	bad planted_bug_found_within_budget "$(tail -n 3 "$T/on.log")"
fi
crash=$(ls "$T/on"/crash-* 2>/dev/null | head -n 1)
if [ -n "$crash" ] && [ "$(head -c 6 "$crash")" = SGXEMU ]; then
	ok crash_input_saved_with_magic
else
	bad crash_input_saved_with_magic "no crash file starting with the magic"
fi
[ "$(cat "$T/on.rc")" != 0 ] && ok crash_exit_status || bad crash_exit_status "status 0"
# The saved input replays to the same crash.
if [ -n "$crash" ]; then
	(cd "$T/on" && timeout -s KILL 120 "$ACLI" run "$AHOST" "$crash") \
		> "$T/replay.log" 2>&1
	grep -q 'enclave exception, vector 13' "$T/replay.log" &&
		ok crash_replays || bad crash_replays "$(tail -n 2 "$T/replay.log")"
fi

# 2. The same budget, the enclave's edges off: not found.
SGXEMU_COVERAGE_FUZZER=0 fuzz off -runs=$RUNS
grep -q 'INFO: Loaded 1 modules' "$T/off.log" &&
	ok coverage_off_host_module_only || bad coverage_off_host_module_only "$(grep 'INFO: Loaded' "$T/off.log")"
if [ "$(cat "$T/off.rc")" = 0 ] && grep -q "Done $RUNS runs" "$T/off.log" &&
   ! grep -q 'deadly signal' "$T/off.log"; then
	ok not_found_without_enclave_coverage
else
	bad not_found_without_enclave_coverage "$(tail -n 3 "$T/off.log")"
fi

# 3. -print_coverage=1 names the enclave's functions with their lines.
fuzz cov -runs=20000 -print_coverage=1
grep -Eq '^COVERED_FUNC: .* fuzz_parse .*tests/enclaves/fuzz_encl.c:[0-9]+' "$T/cov.log" &&
	ok print_coverage_names_enclave_function ||
	bad print_coverage_names_enclave_function "$(grep COVERED_FUNC "$T/cov.log" | head -n 3)"
grep -Eq '^UNCOVERED_FUNC: .* fuzz_planted ' "$T/cov.log" &&
	ok print_coverage_uncovered_enclave_function ||
	bad print_coverage_uncovered_enclave_function "$(grep COVERED_FUNC "$T/cov.log" | head -n 3)"

# 4. Not a DEBUG enclave: one line, libFuzzer runs with the host's edges.
FUZZ_NODEBUG=1 fuzz nodebug -runs=1000
if [ "$(cat "$T/nodebug.rc")" = 0 ] &&
   [ "$(grep -c 'not a DEBUG enclave: no coverage and no edges for libFuzzer' "$T/nodebug.log")" = 1 ] &&
   grep -q 'INFO: Loaded 1 modules' "$T/nodebug.log"; then
	ok non_debug_enclave_one_line
else
	bad non_debug_enclave_one_line "$(grep -E 'sgxemu|Loaded' "$T/nodebug.log")"
fi

# 5. Guard mode keeps host code out of ELRANGE between ECALLs, where
# libFuzzer reads the counters: refused in one line, nothing registered.
mkdir -p "$T/guard"
(cd "$T/guard" && timeout -s KILL 120 "$ACLI" run --guard \
	"$AHOST" -seed=$SEED -runs=1000) > "$T/guard.log" 2>&1
rc=$?
if [ $rc = 0 ] && [ "$(grep -c 'guard mode' "$T/guard.log")" = 1 ] &&
   grep -q 'INFO: Loaded 1 modules' "$T/guard.log"; then
	ok guard_mode_refused_one_line
else
	bad guard_mode_refused_one_line "rc=$rc: $(grep -E 'sgxemu|Loaded' "$T/guard.log")"
fi
finish
