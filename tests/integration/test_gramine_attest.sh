#!/usr/bin/env bash
# Remote attestation from Gramine v1.9 (../shared/clients/gramine), unmodified:
# a program in a manifest with sgx.remote_attestation = "dcap" writes
# /dev/attestation/user_report_data and reads /dev/attestation/quote.
# Gramine asks the AESM socket (InitQuoteEx at start, GetQuoteEx for the
# quote) through its own raw system calls; the shim serves it. Then
# `sgxemu quote verify` must accept the quote and show the MRENCLAVE that
# gramine-sgx-sigstruct-view prints and the report data the program wrote;
# with --require-production it must refuse (the enclave is DEBUG).
# And a TCB recovery: quotes before and after `sgxemu platform update-svn`
# verify OutOfDate and UpToDate under collateral that requires the new
# level. Skipped, with the reason, only when the client tree is absent.
# Last line: "N passed, N failed, N skipped".
set -u
. "$(dirname "$0")/../lib/test_lib.sh"
root=$(cd "$(dirname "$0")/../.." && pwd)
client=$(cd "$root/.." && pwd)/shared/clients/gramine

if [ ! -x "$client/setup.sh" ] || [ ! -f "$client/gramine-1.9-install.tar.xz" ]; then
	skp gramine_attest "no Gramine client at $client (../shared/clients is absent)"
	finish
fi
CLI=$(cd "$B" 2>/dev/null && pwd)/sgxemu
[ -x "$CLI" ] || { bad gramine_attest "$B/sgxemu is not built"; finish; }
if ldd "$B/libsgxemu.so" 2>/dev/null | grep -q libasan; then
	# As test_gramine.sh: no enclave at 0 under AddressSanitizer's shadow.
	skp gramine_attest "an AddressSanitizer build cannot host Gramine's enclave"
	finish
fi
dest=$(cd "$B" && pwd)/gramine-attest
export SGXEMU_SECRETS_FILE="$dest/platform/secrets"

if ! out=$("$client/setup.sh" "$dest" 2>&1); then
	bad setup "setup.sh failed: $(echo "$out" | tail -n 3)"
	finish
fi
d=$dest/quote
rm -rf "$d" && mkdir -p "$d" "$dest/platform"
if ! gcc -O2 -o "$d/gramine_quote" "$root/tests/integration/gramine_quote.c"; then
	bad gramine_attest "gcc failed"
	finish
fi
sed -e 's/helloworld/gramine_quote/g' "$client/helloworld.manifest.template" \
	>"$d/gramine_quote.manifest.template"
echo 'sgx.remote_attestation = "dcap"' >>"$d/gramine_quote.manifest.template"
export PATH="$dest/install/bin:$PATH"
export PYTHONPATH="$dest/install/lib/python3.11/site-packages"
if ! (cd "$d" &&
      gramine-manifest -Dlog_level=error gramine_quote.manifest.template \
	gramine_quote.manifest &&
      gramine-sgx-sign --key ../helloworld/enclave-key.pem \
	--manifest gramine_quote.manifest --output gramine_quote.manifest.sgx) \
	>"$d/sign.log" 2>&1; then
	bad sign "$(tail -n 2 "$d/sign.log")"
	finish
fi
mrenclave=$(cd "$d" && gramine-sgx-sigstruct-view gramine_quote.sig 2>/dev/null |
	    sed -n 's/^ *mr_enclave: *\([0-9a-f]*\).*/\1/p')
[ ${#mrenclave} -eq 64 ] && ok sigstruct_view || bad sigstruct_view "no mr_enclave"

# As test_gramine.sh: tried up to three times where FSGSBASE runs
# untracked by the host kernel (`sgxemu info`).
tries=1
[ "$("$CLI" info --json 2>/dev/null | sed -n 's/.*"fsgsbase":"\([a-z]*\)".*/\1/p')" = untracked ] && tries=3
for t in $(seq 1 $tries); do
	out=$(cd "$d" && timeout -s KILL 300 "$CLI" run \
		"$dest/install/bin/gramine-sgx" gramine_quote 2>&1)
	rc=$?
	[ $rc -eq 0 ] && break
done
if [ $rc -ne 0 ] || ! grep -q '^type dcap' <<<"$out"; then
	bad quote_from_gramine "exit $rc: $(tail -n 4 <<<"$out" | tr '\n' '|')"
	finish
fi
ok quote_from_gramine
rd=$(sed -n 's/^report_data //p' <<<"$out")
sed -n 's/^quote //p' <<<"$out" | python3 -c \
	'import sys; sys.stdout.buffer.write(bytes.fromhex(sys.stdin.read().strip()))' \
	>"$d/quote.dat"

v=$("$CLI" quote verify "$d/quote.dat" 2>&1); rc=$?
if [ $rc -eq 0 ] && grep -q "^MRENCLAVE: *$mrenclave" <<<"$v" &&
   grep -q "^REPORTDATA: *$rd" <<<"$v"; then
	ok verify_accepts_gramine_quote
else
	bad verify_accepts_gramine_quote "exit $rc: $(tr '\n' '|' <<<"$v")"
fi
v=$("$CLI" quote verify --require-production "$d/quote.dat" 2>&1); rc=$?
[ $rc -eq 1 ] && grep -q "production enclave" <<<"$v" && ok debug_refused_for_production ||
	bad debug_refused_for_production "exit $rc: $(tail -n 1 <<<"$v")"

# A TCB recovery (docs/guide.md 3.7), on a platform of its own: a quote,
# `sgxemu platform update-svn`, Gramine's next run takes the update at
# its open of /dev/sgx_enclave and quotes again; with collateral that
# requires the new level the first verifies OutOfDate, the second UpToDate.
export SGXEMU_SECRETS_FILE="$d/recovery/secrets"
mkdir -p "$d/recovery"
gramine_quote() {	# OUT: run the program (retried as above), its quote
	for t in $(seq 1 $tries); do
		out=$(cd "$d" && timeout -s KILL 300 "$CLI" run \
			"$dest/install/bin/gramine-sgx" gramine_quote 2>&1)
		rc=$?
		[ $rc -eq 0 ] && break
	done
	[ $rc -eq 0 ] && sed -n 's/^quote //p' <<<"$out" | python3 -c \
		'import sys; sys.stdout.buffer.write(bytes.fromhex(sys.stdin.read().strip()))' >"$1"
}
cpusvn_of() { od -An -tx1 -j48 -N16 "$1" | tr -d ' \n'; }
verdict() { "$CLI" quote verify "$1" --collateral "$d/recovery/col" 2>/dev/null |
	sed -n 's/^TCB status: *\([A-Za-z]*\).*/\1/p'; }
if gramine_quote "$d/before.dat" && "$CLI" platform update-svn >/dev/null &&
   gramine_quote "$d/after.dat" && grep -q "SVN updated successfully" <<<"$out" &&
   [ "$(cpusvn_of "$d/before.dat")" = 02020202020202020202020202020202 ] &&
   [ "$(cpusvn_of "$d/after.dat")" = 02030202020202020202020202020202 ]; then
	ok gramine_takes_the_update
else
	bad gramine_takes_the_update "exit $rc: $(tail -n 3 <<<"$out" | tr '\n' '|')"
	finish
fi
"$CLI" attest collateral --tcb-recovery --out "$d/recovery/col" >/dev/null 2>&1
v1=$(verdict "$d/before.dat"); v2=$(verdict "$d/after.dat")
[ "$v1" = OutOfDate ] && [ "$v2" = UpToDate ] && ok gramine_quotes_before_and_after_recovery ||
	bad gramine_quotes_before_and_after_recovery "before $v1, after $v2"
finish
