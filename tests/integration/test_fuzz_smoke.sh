#!/usr/bin/env bash
# `make fuzz-smoke` as part of the suite: every libFuzzer harness over its
# committed seed corpus plus a few seconds of fuzzing (FUZZ_SMOKE_S,
# default 3 here), so a crash the seeds reach fails `make test`. Skipped,
# with the reason, where clang cannot link a libFuzzer program.
# Last line: "N passed, N failed, N skipped".
set -u
cd "$(dirname "$0")/../.." || exit 2

T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
printf 'int LLVMFuzzerTestOneInput(const char *d, unsigned long n)\n{ (void)d; (void)n; return 0; }\n' >"$T/probe.c"
if ! command -v "${FUZZ_CC:-clang}" >/dev/null 2>&1; then
	echo "skip fuzz-smoke: ${FUZZ_CC:-clang} not installed (libFuzzer needs clang)"
	echo "0 passed, 0 failed, 1 skipped"
	exit 0
fi
if ! "${FUZZ_CC:-clang}" -fsanitize=fuzzer,address,undefined "$T/probe.c" \
	-o "$T/probe" >"$T/probe.log" 2>&1; then
	echo "skip fuzz-smoke: ${FUZZ_CC:-clang} cannot link -fsanitize=fuzzer ($(head -n 1 "$T/probe.log"))"
	echo "0 passed, 0 failed, 1 skipped"
	exit 0
fi

# Build quietly; show the log only when the build fails.
if ! make --no-print-directory -j2 fuzz >"$T/build.log" 2>&1; then
	tail -n 20 "$T/build.log"
	echo "FAIL fuzz-build: make fuzz failed"
	echo "0 passed, 1 failed, 0 skipped"
	exit 1
fi
FUZZ_B=build-fuzz FUZZ_SMOKE_S=${FUZZ_SMOKE_S:-3} fuzz/run.sh smoke \
	$(ls fuzz/fuzz_*.c | sed 's|fuzz/||; s|\.c$||')
