#!/usr/bin/env bash
# Fuzzing throughput of an ECALL that does little (issue 43, item 4):
# tests/debug/fuzz_host.c under `sgxemu run` with FUZZ_CMD=little (each
# input one ECALL into tests/enclaves/fuzz_encl.c's fuzz_little, with the
# enclave's edges given to libFuzzer), against its floor: one ECALL round
# trip (timed by the harness itself, FUZZ_ECALL_BENCH) plus libFuzzer on
# the same function called in the host (tests/debug/fuzz_native.c).
# Each figure is the difference between a long and a short run (N2 and N1
# executions), so start-up cancels out; the median of RUNS.
# Last line: "fuzz_ecall ratio=R target=0.8", R = floor time per execution
# / measured time per execution. Skipped without clang's libFuzzer.
set -u
B=${B:-build}
RUNS=${RUNS:-3}
n1=${N1:-200000} n2=${N2:-1200000}
HOST=$B/tests/debug/fuzz_host NATIVE=$B/tests/debug/fuzz_native
for f in "$B/sgxemu" "$HOST" "$NATIVE" "$B/enclaves/fuzz_encl.bin" "$B/keys/signing_key.pem"; do
	if [ ! -e "$f" ]; then
		echo "fuzz_ecall: skipped: $f not built (needs clang's libFuzzer: make bench)"
		exit 0
	fi
done
CLI=$(realpath "$B/sgxemu") HOST=$(realpath "$HOST") NATIVE=$(realpath "$NATIVE")
export FUZZ_KEY=$(realpath "$B/keys/signing_key.pem") FUZZ_BIN=$(realpath "$B/enclaves/fuzz_encl.bin")
export SGXEMU_COVERAGE_ELF=$(realpath "$B/enclaves/fuzz_encl.elf") FUZZ_CMD=little
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
now() { date +%s%N; }
median() { sort -n | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }'; }

# ns per execution of CMD... as (t(N2) - t(N1)) / (N2 - N1).
per_exec() {
	local t1 t2 a b
	a=$(now); (cd "$T" && "$@" -runs=$n1 -seed=1 -max_len=16 >/dev/null 2>&1); b=$(now); t1=$((b - a))
	a=$(now); (cd "$T" && "$@" -runs=$n2 -seed=1 -max_len=16 >/dev/null 2>&1); b=$(now); t2=$((b - a))
	echo $(( (t2 - t1) / (n2 - n1) ))
}

encl=$(for _ in $(seq "$RUNS"); do per_exec "$CLI" run "$HOST"; done | median)
native=$(for _ in $(seq "$RUNS"); do per_exec "$NATIVE"; done | median)
ecall=$(for _ in $(seq "$RUNS"); do
	(cd "$T" && FUZZ_ECALL_BENCH=200000 "$CLI" run "$HOST" -runs=0 2>&1) |
		sed -n 's/^fuzz_host: ECALL round trip \([0-9]*\) ns$/\1/p'
done | median)
if [ -z "$encl" ] || [ -z "$native" ] || [ -z "$ecall" ] || [ "$encl" -le 0 ]; then
	echo "fuzz_ecall: a run failed (encl='$encl' native='$native' ecall='$ecall')"
	exit 1
fi
floor=$((ecall + native))
echo "libFuzzer, ECALL into the enclave:  $encl ns/exec ($((1000000000 / encl)) exec/s)"
echo "libFuzzer, the function in the host: $native ns/exec ($((1000000000 / (native > 0 ? native : 1))) exec/s)"
echo "one ECALL round trip:                $ecall ns"
echo "floor (round trip + host run):       $floor ns/exec ($((1000000000 / floor)) exec/s)"
awk -v f="$floor" -v e="$encl" 'BEGIN { printf "fuzz_ecall ratio=%.3f target=0.8\n", f / e }'
