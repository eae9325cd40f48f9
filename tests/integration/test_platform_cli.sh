#!/usr/bin/env bash
# The platform's identity from the outside: `sgxemu info` shows a stable
# fingerprint per secrets file (never the secret), another one for another
# platform, and refuses to start on a damaged secrets file.
# Last line: "N passed, N failed, N skipped".
set -u
B=${B:-build}
CLI=${CLI:-$B/sgxemu}
pass=0 fail=0
ok()  { echo "ok $1"; pass=$((pass + 1)); }
bad() { echo "FAIL $1: $2"; fail=$((fail + 1)); }
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT

id() { SGXEMU_SECRETS_FILE="$1" "$CLI" info 2>&1 | sed -n 's/^platform id: *\([0-9a-f]*\).*/\1/p'; }

a1=$(id "$T/a/secrets")
a2=$(id "$T/a/secrets")
b1=$(id "$T/b/secrets")
[ ${#a1} -eq 32 ] && [ "$a1" = "$a2" ] && ok fingerprint_stable || bad fingerprint_stable "$a1 / $a2"
[ -n "$b1" ] && [ "$a1" != "$b1" ] && ok platforms_differ || bad platforms_differ "$a1 / $b1"
mode=$(stat -c %a "$T/a/secrets")
[ "$mode" = 600 ] && ok secrets_mode_0600 || bad secrets_mode_0600 "$mode"
if ! od -An -tx1 "$T/a/secrets" | tr -d ' \n' | grep -q "$a1"; then
	ok fingerprint_is_not_in_the_file
else
	bad fingerprint_is_not_in_the_file "found"
fi
printf 'x' | dd of="$T/a/secrets" bs=1 seek=40 conv=notrunc 2>/dev/null
out=$(SGXEMU_SECRETS_FILE="$T/a/secrets" "$CLI" info 2>&1)
rc=$?
[ $rc -ne 0 ] && echo "$out" | grep -q "checksum mismatch" && ok damaged_secrets_refused \
	|| bad damaged_secrets_refused "rc=$rc $out"
out=$(SGXEMU_CPUSVN=0a0a0a0a0a0a0a0a0a0a0a0a0a0a0a0a SGXEMU_SECRETS_FILE="$T/b/secrets" "$CLI" info 2>&1)
echo "$out" | grep -q "CPUSVN: *0a0a0a0a0a0a0a0a0a0a0a0a0a0a0a0a" && ok cpusvn_configurable \
	|| bad cpusvn_configurable "$out"
out=$(SGXEMU_CPUSVN=zz SGXEMU_SECRETS_FILE="$T/b/secrets" "$CLI" info 2>&1)
rc=$?
[ $rc -ne 0 ] && echo "$out" | grep -q "SGXEMU_CPUSVN must be 32 hex digits" && ok bad_cpusvn_refused \
	|| bad bad_cpusvn_refused "rc=$rc $out"
# SGXEMU_LE_HASH: exactly 64 hex digits (signs, blanks, 0x and short
# values are refused, not half-parsed); a good one locks launch control.
good=$(printf 'ab%.0s' $(seq 32))
for h in "-1$(printf '0%.0s' $(seq 62))" " f$(printf '0%.0s' $(seq 62))" \
	 "0x$(printf '0%.0s' $(seq 62))" "abc" "${good}00"; do
	out=$(SGXEMU_LAUNCH_CONTROL=locked SGXEMU_LE_HASH="$h" \
	      SGXEMU_SECRETS_FILE="$T/b/secrets" "$CLI" info 2>&1)
	rc=$?
	[ $rc -ne 0 ] && echo "$out" | grep -q "SGXEMU_LE_HASH must be 64 hex digits" \
		&& ok "bad_le_hash_refused '$h'" || bad "bad_le_hash_refused '$h'" "rc=$rc $out"
done
out=$(SGXEMU_LAUNCH_CONTROL=locked SGXEMU_LE_HASH="$good" \
      SGXEMU_SECRETS_FILE="$T/b/secrets" "$CLI" info 2>&1)
echo "$out" | grep -q "launch control: *locked.*0xabababababababab" && ok le_hash_locks \
	|| bad le_hash_locks "$out"
echo "$pass passed, $fail failed, 0 skipped"
[ $fail -eq 0 ]
