# Sourced by test scripts (tests/integration/*.sh): the counters, the
# ok/bad/skp lines and the closing "N passed, N failed, N skipped" that
# tests/run.sh adds up. An ASan build's libsgxemu.so is preloaded into
# programs built without ASan: its runtime is then not first in the
# library list, and the programs' own leaks are not ours to report.
B=${B:-build}
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0:detect_leaks=0"
pass=0 fail=0 skip=0
ok()  { echo "ok $1"; pass=$((pass + 1)); }
bad() { echo "FAIL $1: $2"; fail=$((fail + 1)); }
skp() { echo "skip $1: $2"; skip=$((skip + 1)); }
# An ASan build (make asan): its shim needs ASAN_OPTIONS in the program's
# environment, so cases that empty the environment cannot run there.
asan_build() { ldd "$B/libsgxemu.so" 2>/dev/null | grep -q libasan; }
# The closing line; the exit status says whether anything failed.
finish() { echo "$pass passed, $fail failed, $skip skipped"; [ "$fail" -eq 0 ]; exit; }
