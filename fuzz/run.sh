#!/usr/bin/env bash
# Run the libFuzzer harnesses (built by `make fuzz` into $FUZZ_B/fuzz/).
#
#   fuzz/run.sh smoke NAME...   each harness over its committed corpus,
#                               then FUZZ_SMOKE_S seconds of fuzzing;
#                               "ok"/"FAIL" per harness and a summary line
#   fuzz/run.sh long NAME...    FUZZ_LONG_S seconds per harness, one at a
#                               time (one core), restarted after a crash;
#                               executions and crashes per harness go to
#                               $FUZZ_B/fuzz-long.txt
#
# New inputs go to a scratch corpus under $FUZZ_B, never into
# fuzz/corpus/; crash inputs are kept as $FUZZ_B/crashes/NAME-crash-*.
set -u
cd "$(dirname "$0")/.." || exit 2
FUZZ_B=${FUZZ_B:-build-fuzz}
mode=${1:-smoke}
shift
mkdir -p "$FUZZ_B/crashes" "$FUZZ_B/work"

# The total execution count of a libFuzzer log: its last "#N" line.
execs_of() {
	grep -aoE '^#[0-9]+' "$1" | tail -n 1 | tr -d '#'
}

run_one() {	# NAME SECONDS LOG
	local name=$1 secs=$2 log=$3 work="$FUZZ_B/work/$1"

	mkdir -p "$work"
	"$FUZZ_B/fuzz/$name" -max_total_time="$secs" -timeout=20 \
		-rss_limit_mb=2048 -print_final_stats=1 \
		-artifact_prefix="$FUZZ_B/crashes/$name-" \
		"$work" "fuzz/corpus/$name" >"$log" 2>&1
}

case $mode in
smoke)
	pass=0 fail=0
	for name in "$@"; do
		log="$FUZZ_B/work/$name.smoke.log"
		if run_one "$name" "${FUZZ_SMOKE_S:-5}" "$log"; then
			echo "ok $name: $(execs_of "$log") executions"
			pass=$((pass + 1))
		else
			echo "FAIL $name: see $log"
			grep -aE 'ERROR|SUMMARY|runtime error' "$log" | head -n 5
			fail=$((fail + 1))
		fi
	done
	echo "$pass passed, $fail failed, 0 skipped"
	[ "$fail" -eq 0 ]
	;;
long)
	out="$FUZZ_B/fuzz-long.txt"
	echo "# $(date -u +%FT%TZ) FUZZ_LONG_S=${FUZZ_LONG_S:-600} $(nproc) cores, one used" >>"$out"
	for name in "$@"; do
		total=0 crashes=0 left=${FUZZ_LONG_S:-600}
		while [ "$left" -gt 0 ]; do
			start=$(date +%s)
			log="$FUZZ_B/work/$name.long.log"
			run_one "$name" "$left" "$log"
			rc=$?
			n=$(execs_of "$log")
			total=$((total + ${n:-0}))
			left=$((left - ($(date +%s) - start)))
			if [ "$rc" -ne 0 ]; then
				crashes=$((crashes + 1))
				cp "$log" "$FUZZ_B/crashes/$name-$crashes.log"
				[ "$crashes" -ge 20 ] && break
			fi
		done
		corpus=$(ls "$FUZZ_B/work/$name" | wc -l)
		echo "$name executions $total crashes $crashes corpus $corpus" | tee -a "$out"
	done
	;;
*)
	echo "usage: fuzz/run.sh smoke|long NAME..." >&2
	exit 2
	;;
esac
