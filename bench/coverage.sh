#!/usr/bin/env bash
# The cost of gcov coverage on bench/compute (issue 43, item 4): SHA-256 of
# 1 MiB (tests/enclaves/sha256.c) in the compute enclave and in the host,
# once as built for the other benchmarks and once with the gcov flags of
# docs/guide.md "Testing enclaves" (--coverage -fprofile-info-section
# -fprofile-update=atomic: an atomic add per arc, the same in both). The
# goal is that the enclave pays only the instrumentation's own cost: the
# slowdown in the enclave over the slowdown in the host. sgxemu itself
# adds nothing while the enclave runs (the counters are read at release
# or exit only), so the ratio measures the engine running instrumented
# code, not the coverage support.
# Last line: "coverage ratio=R target=0.95", R = host slowdown / enclave
# slowdown (medians of RUNS runs of each).
set -u
B=${B:-build}
RUNS=${RUNS:-3}
for f in "$B/bench/compute" "$B/bench/compute_cov" "$B/enclaves/compute_encl.bin" \
	 "$B/enclaves/compute_cov_encl.bin"; do
	[ -e "$f" ] || { echo "coverage: $f not built (make bench builds it)"; exit 1; }
done
median() { sort -n | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }'; }
# "native ENCLAVE" in ms of one run of bench/compute[_cov].
one() {
	B=$B COMPUTE_ENCL=$2 "$B/bench/$1" |
		awk '/native:/ { n = $5 } /enclave:/ { e = $5 } END { print n, e }'
}
for _ in $(seq "$RUNS"); do one compute compute_encl.bin; done > "${TMPDIR:-/tmp}/cov_plain.$$"
for _ in $(seq "$RUNS"); do one compute_cov compute_cov_encl.bin; done > "${TMPDIR:-/tmp}/cov_inst.$$"
np=$(cut -d' ' -f1 "${TMPDIR:-/tmp}/cov_plain.$$" | median)
ep=$(cut -d' ' -f2 "${TMPDIR:-/tmp}/cov_plain.$$" | median)
ni=$(cut -d' ' -f1 "${TMPDIR:-/tmp}/cov_inst.$$" | median)
ei=$(cut -d' ' -f2 "${TMPDIR:-/tmp}/cov_inst.$$" | median)
rm -f "${TMPDIR:-/tmp}/cov_plain.$$" "${TMPDIR:-/tmp}/cov_inst.$$"
if [ -z "$np" ] || [ -z "$ei" ]; then
	echo "coverage: a run of bench/compute failed"
	exit 1
fi
awk -v np="$np" -v ep="$ep" -v ni="$ni" -v ei="$ei" 'BEGIN {
	printf "sha256 1 MiB host:    %.3f ms, with gcov %.3f ms (x%.2f)\n", np, ni, ni / np
	printf "sha256 1 MiB enclave: %.3f ms, with gcov %.3f ms (x%.2f)\n", ep, ei, ei / ep
	printf "coverage ratio=%.3f target=0.95\n", (ni / np) / (ei / ep)
}'
