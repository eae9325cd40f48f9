#!/usr/bin/env bash
# `make valgrind`: the CLI's tests (tests/integration/test_tools.sh,
# test_platform_cli.sh, test_audit_cli.sh) with every sgxemu command run
# under valgrind (memcheck, full leak check). Valgrind's reports go to one
# log file per process, not to stderr, because the tests count stderr
# lines; any report at all (an error or a definite leak) fails the run,
# also in commands the tests expect to fail. `sgxemu run` is checked up
# to its exec; the program it starts runs natively.
# Last line: "N passed, N failed, N skipped" (the scripts' own, summed),
# then the valgrind verdict.
set -u
B=${B:-build}
cd "$(dirname "$0")/../.." || exit 2
command -v valgrind >/dev/null || { echo "valgrind is not installed"; exit 2; }
[ -x "$B/sgxemu" ] || { echo "$B/sgxemu not built"; exit 2; }

T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
mkdir "$T/logs"
cat >"$T/sgxemu" <<WRAP
#!/bin/sh
exec valgrind -q --error-exitcode=1 --leak-check=full \\
	--show-leak-kinds=definite --errors-for-leak-kinds=definite \\
	--log-file="$T/logs/vg.%p" "$PWD/$B/sgxemu" "\$@"
WRAP
chmod +x "$T/sgxemu"

pass=0 fail=0 skip=0 calls=0
for t in tests/integration/test_tools.sh tests/integration/test_platform_cli.sh \
	 tests/integration/test_audit_cli.sh; do
	echo "== $t (under valgrind)"
	out=$(SGXEMU="$T/sgxemu" CLI="$T/sgxemu" B="$B" "$t" 2>&1)
	rc=$?
	echo "$out" | grep -v '^ok '
	line=$(echo "$out" | grep -E '^[0-9]+ passed, [0-9]+ failed' | tail -n 1)
	if [ -z "$line" ]; then
		echo "FAIL $t: exited with $rc and no summary line"
		fail=$((fail + 1))
		continue
	fi
	pass=$((pass + $(echo "$line" | sed -E 's/^([0-9]+) passed.*/\1/')))
	fail=$((fail + $(echo "$line" | sed -E 's/^[0-9]+ passed, ([0-9]+) failed.*/\1/')))
	s=$(echo "$line" | sed -nE 's/.*, ([0-9]+) skipped.*/\1/p')
	skip=$((skip + ${s:-0}))
done
calls=$(ls "$T/logs" | wc -l)
reports=0
for l in "$T"/logs/vg.*; do
	[ -s "$l" ] || continue
	reports=$((reports + 1))
	echo "== valgrind report ($l)"
	cat "$l"
done
echo "$pass passed, $fail failed, $skip skipped"
echo "valgrind: $calls sgxemu processes, $reports with errors or definite leaks"
[ "$fail" -eq 0 ] && [ "$reports" -eq 0 ] && [ "$calls" -gt 0 ]
