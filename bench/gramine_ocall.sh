#!/usr/bin/env bash
# A Gramine OCALL round trip (issue 26): a sched_yield loop in a Gramine
# enclave (bench/gramine/ocall_loop.c; every call is an OCALL) against the
# same loop run directly. Prints the engine's traps per OCALL (host ENCLU,
# enclave ENCLU and AEX traps counted through SGXEMU_TRAP_COUNTS, between
# a short and a long run, so start-up cancels out; goal <= 1.1: the
# enclave's EEXIT only, the loader's ENCLU[EENTER] being rewritten to the
# fast entry) and the time per call, with the rewrite and without it
# (SGXEMU_ENCLU_PATCH=0). Skipped without ../shared/clients.
set -u
B=${B:-build}
root=$(cd "$(dirname "$0")/.." && pwd)
client=$(cd "$root/.." && pwd)/shared/clients/gramine
if [ ! -x "$client/setup.sh" ]; then
	echo "gramine_ocall: skipped: no Gramine client at $client"
	exit 0
fi
CLI=$(cd "$B" && pwd)/sgxemu
dest=$(cd "$B" && pwd)/gramine
if [ ! -x "$dest/install/bin/gramine-sgx" ] || [ ! -f "$dest/helloworld/enclave-key.pem" ]; then
	"$client/setup.sh" "$dest" >/dev/null 2>&1 || { echo "gramine_ocall: setup.sh failed"; exit 1; }
fi
d=$dest/ocall_bench
rm -rf "$d" && mkdir -p "$d"
gcc -O2 -o "$d/ocall_loop" "$root/bench/gramine/ocall_loop.c" || exit 1
sed -e 's/helloworld/ocall_loop/g' -e 's/^sgx.edmm_enable = .*/sgx.edmm_enable = false/' \
	"$client/helloworld.manifest.template" >"$d/ocall_loop.manifest.template"
echo 'loader.insecure__use_cmdline_argv = true' >>"$d/ocall_loop.manifest.template"
(cd "$d" && export PATH="$dest/install/bin:$PATH" \
	PYTHONPATH="$dest/install/lib/python3.11/site-packages" &&
 gramine-manifest -Dlog_level=error ocall_loop.manifest.template ocall_loop.manifest &&
 gramine-sgx-sign --key ../helloworld/enclave-key.pem --manifest ocall_loop.manifest \
	--output ocall_loop.manifest.sgx) >"$d/sign.log" 2>&1 ||
	{ echo "gramine_ocall: signing failed"; exit 1; }

# run N [env...]: prints "TRAPS NS_PER_CALL"
run() {
	local n=$1 counts=$d/counts out
	shift
	rm -f "$counts"
	out=$(cd "$d" && env "$@" SGXEMU_TRAP_COUNTS="$counts" \
		"$CLI" run "$dest/install/bin/gramine-sgx" ocall_loop "$n" 2>&1)
	# Four little-endian counters: host ENCLU, enclave ENCLU, AEX, fast.
	read -r h e a f < <(od -A n -t u8 -N 32 "$counts" | tr -s ' \n' ' ')
	echo "$((h + e + a)) $(sed -n 's/^ns_per_call: //p' <<<"$out")"
}

n1=20000 n2=120000
native=$("$d/ocall_loop" "$n2" | sed -n 's/^ns_per_call: //p')
for mode in rewrite trap; do
	env=()
	[ "$mode" = trap ] && env=(SGXEMU_ENCLU_PATCH=0)
	read -r t1 _ < <(run "$n1" "${env[@]}")
	read -r t2 ns < <(run "$n2" "${env[@]}")
	per=$(awk -v a="$t1" -v b="$t2" -v n=$((n2 - n1)) 'BEGIN { printf "%.3f", (b - a) / n }')
	ratio=$(awk -v a="$ns" -v b="$native" 'BEGIN { printf "%.1f", a / b }')
	if [ "$mode" = rewrite ]; then
		echo "gramine OCALL (sched_yield), host ENCLU[EENTER] rewritten: $per traps per OCALL (goal <= 1.1); $ns ns per call in the enclave, $native ns direct ($ratio x)"
	else
		echo "gramine OCALL (sched_yield), SGXEMU_ENCLU_PATCH=0:           $per traps per OCALL; $ns ns per call in the enclave ($ratio x direct)"
	fi
done
