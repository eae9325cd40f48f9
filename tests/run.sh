#!/usr/bin/env bash
# Run every test program under $B/tests (C test binaries) and every
# tests/integration/*.sh script; add their "N passed, N failed, N skipped"
# lines up. A program that dies without its summary line counts one failure.
# With arguments, only the tests whose names contain one of them run
# (tests/run.sh dcap_samples gdb). The failing cases are listed again at
# the end, so that the last lines of a long run name them.
set -u
B=${B:-build}
export B
cd "$(dirname "$0")/.." || exit 2

total_pass=0 total_fail=0 total_skip=0 failures=
progs=$(find "$B/tests" -type f -perm -u+x -name 'test_*' 2>/dev/null | sort)
scripts=$(ls tests/integration/*.sh 2>/dev/null | sort)

wanted() {
	[ $# -eq 1 ] && return 0
	local t=$1 w; shift
	for w in "$@"; do case $t in *"$w"*) return 0;; esac; done
	return 1
}

for t in $progs $scripts; do
	wanted "$t" "$@" || continue
	echo "== $t"
	out=$(mktemp)
	"$t" 2>&1 | tee "$out"
	rc=${PIPESTATUS[0]}
	line=$(grep -E '^[0-9]+ passed, [0-9]+ failed' "$out" | tail -n 1)
	failures="$failures$(grep -E '^(FAIL|not ok)' "$out" | sed "s|^|$t: |" | cut -c1-300)
"
	rm -f "$out"
	if [ -z "$line" ]; then
		echo "FAIL $t: exited with $rc and no summary line"
		failures="$failures$t: exited with $rc and no summary line
"
		total_fail=$((total_fail + 1))
		continue
	fi
	p=$(echo "$line" | sed -E 's/^([0-9]+) passed.*/\1/')
	f=$(echo "$line" | sed -E 's/^[0-9]+ passed, ([0-9]+) failed.*/\1/')
	s=$(echo "$line" | sed -nE 's/.*, ([0-9]+) skipped.*/\1/p')
	total_pass=$((total_pass + p))
	total_fail=$((total_fail + f))
	total_skip=$((total_skip + ${s:-0}))
	if [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; then
		echo "FAIL $t: exit status $rc"
		failures="$failures$t: exit status $rc
"
		total_fail=$((total_fail + 1))
	fi
done

failures=$(printf '%s' "$failures" | grep -v '^$')
if [ -n "$failures" ]; then
	echo "== failures"
	printf '%s\n' "$failures"
fi
echo "$total_pass passed, $total_fail failed, $total_skip skipped"
[ "$total_fail" -eq 0 ]
