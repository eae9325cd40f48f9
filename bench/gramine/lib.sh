# Shared by bench/gramine_paths.sh and bench/gramine_start.sh (sourced,
# not run): the Gramine client, signing with helloworld's key, runs under
# `sgxemu run gramine-sgx`, the engine's trap counters and medians. The
# approach is bench/gramine_ocall.sh's (which keeps its own copy).
#
# gr_init NAME: sets root, client, CLI, dest; prints "NAME: skipped: ..."
# and returns 1 when ../shared/clients/gramine is absent (the caller then
# exits 0), runs the client's setup.sh when build/gramine is not there yet.
gr_init() {
	local name=$1
	B=${B:-build}
	root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
	client=$(cd "$root/.." && pwd)/shared/clients/gramine
	if [ ! -x "$client/setup.sh" ]; then
		echo "$name: skipped: no Gramine client at $client"
		return 1
	fi
	CLI=$(cd "$B" && pwd)/sgxemu
	dest=$(cd "$B" && pwd)/gramine
	if [ ! -x "$dest/install/bin/gramine-sgx" ] || [ ! -f "$dest/helloworld/enclave-key.pem" ]; then
		"$client/setup.sh" "$dest" >/dev/null 2>&1 || { echo "$name: setup.sh failed"; exit 1; }
	fi
	return 0
}

# gr_sign DIR NAME [env...]: DIR/NAME.manifest.template made into
# NAME.manifest and signed into NAME.manifest.sgx (and NAME.sig) with
# helloworld's key; the signer's output, with the enclave's memory layout,
# in DIR/NAME.sign.log.
gr_sign() {
	local dir=$1 name=$2
	shift 2
	(cd "$dir" && export PATH="$dest/install/bin:$PATH" \
		PYTHONPATH="$dest/install/lib/python3.11/site-packages" &&
	 env "$@" gramine-manifest -Dlog_level=error "$name.manifest.template" "$name.manifest" &&
	 gramine-sgx-sign --key "$dest/helloworld/enclave-key.pem" --manifest "$name.manifest" \
		--output "$name.manifest.sgx") >"$dir/$name.sign.log" 2>&1
}

# gr_counts FILE: the first twelve engine counters of SGXEMU_TRAP_COUNTS
# FILE, added over its thread lines (host ENCLU, enclave ENCLU, AEX,
# trap-free EENTER, SIGILL, SIGSEGV, SIGSYS, other signals, AEX ticks in
# host mode, AEX ticks that made an AEX, FS/GS base write sites, trap-free
# ERESUME).
gr_counts() {
	od -v -A n -t u8 -w128 "$1" 2>/dev/null |
		awk '{ for (i = 1; i <= 12; i++) s[i] += $i }
		     END { for (i = 1; i <= 12; i++) printf "%d ", s[i]; print "" }'
}

# gr_median: "median lowest highest" of the numbers on stdin, one a line.
gr_median() {
	sort -n | awk '{ v[NR] = $1 } END { if (!NR) { print "0 0 0"; exit }
		printf "%s %s %s\n", v[int((NR + 1) / 2)], v[1], v[NR] }'
}

# gr_per A B N: (B - A) / N to three places (a count that differs by a few
# start-up events prints 0.000, not -0.000).
gr_per() {
	awk -v a="$1" -v b="$2" -v n="$3" 'BEGIN { v = (b - a) / n
		if (v < 0.0005 && v > -0.0005) v = 0; printf "%.3f", v }'
}
