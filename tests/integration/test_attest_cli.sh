#!/usr/bin/env bash
# `sgxemu attest` and `sgxemu quote verify` from the outside: the CA
# hierarchy appears next to the platform secrets with private keys 0600,
# collateral files are written and are what they claim (openssl reads
# them), bad input is refused with a one-line reason naming the check.
# (The accepted path with a real enclave's quote is in
# tests/integration/test_attestation.c.)
# Last line: "N passed, N failed, N skipped".
set -u
. "$(dirname "$0")/../lib/test_lib.sh"
CLI=${CLI:-$B/sgxemu}
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
export SGXEMU_SECRETS_FILE="$T/p/secrets"

out=$("$CLI" attest info 2>&1)
echo "$out" | grep -q "nothing chains to Intel's root" && ok info_says_not_intel ||
	bad info_says_not_intel "$out"
modes=$(stat -c '%a %n' "$T"/p/secrets.pki/*.key | awk '{print $1}' | sort -u)
[ "$modes" = 600 ] && ok private_keys_0600 || bad private_keys_0600 "$modes"
[ "$(stat -c %a "$T/p/secrets.pki")" = 700 ] && ok pki_dir_0700 || bad pki_dir_0700 "$(stat -c %a "$T/p/secrets.pki")"
root1=$(echo "$out" | sed -n 's/^root CA: *SHA-256 //p')
root2=$("$CLI" attest info 2>&1 | sed -n 's/^root CA: *SHA-256 //p')
[ -n "$root1" ] && [ "$root1" = "$root2" ] && ok root_created_once || bad root_created_once "$root1 / $root2"

if "$CLI" attest collateral --out "$T/col" --revoke-pck; then
	n=$(ls "$T/col" | wc -l)
	[ "$n" = 7 ] && ok collateral_files || bad collateral_files "$n files"
	if openssl crl -inform DER -in "$T/col/intermediateCaCrl.der" -noout -text 2>/dev/null |
	   grep -q "Serial Number"; then
		ok revoked_pck_listed
	else
		bad revoked_pck_listed "no revoked serial"
	fi
	if openssl verify -CAfile "$T/col/trustedRootCaCert.pem" \
	   -untrusted "$T/col/tcbSignChain.pem" "$T/col/tcbSignChain.pem" >/dev/null 2>&1; then
		ok tcb_chain_verifies
	else
		bad tcb_chain_verifies "openssl verify failed"
	fi
	grep -q '"tcbInfo":{"id":"SGX","version":3' "$T/col/tcbInfo.json" &&
		ok tcb_info_v3 || bad tcb_info_v3 "$(head -c 80 "$T/col/tcbInfo.json")"
else
	bad collateral_files "exit $?"
fi

head -c 100 /dev/urandom > "$T/short.dat"
out=$("$CLI" quote verify "$T/short.dat" 2>&1); rc=$?
[ $rc = 1 ] && echo "$out" | grep -q "refused: quote format" && ok short_quote_refused ||
	bad short_quote_refused "rc $rc: $out"
out=$("$CLI" quote verify --json "$T/short.dat" 2>/dev/null); rc=$?
[ $rc = 1 ] && echo "$out" | grep -q '"accepted":false,"status":37' && ok json_result ||
	bad json_result "rc $rc: $out"
head -c 432 /dev/zero > "$T/report.dat"
out=$("$CLI" attest quote "$T/report.dat" --out "$T/q.dat" 2>&1); rc=$?
[ $rc = 1 ] && echo "$out" | grep -q "AESM error 47" && ok forged_report_refused ||
	bad forged_report_refused "rc $rc: $out"
"$CLI" quote verify 2>/dev/null; [ $? = 2 ] && ok usage_exit_2 || bad usage_exit_2 "rc"

finish
