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
# The AEX tick: 4 ms by default, as SGXEMU_AEX_TICK or --aex-tick says,
# none at 0; a value that is not a tick is one line naming where it came
# from, and a usage exit (2) before anything runs.
out=$(SGXEMU_SECRETS_FILE="$T/b/secrets" "$CLI" info 2>&1)
echo "$out" | grep -q "^AEX tick: *every 4000 us .*the default" && ok aex_tick_default_4ms \
	|| bad aex_tick_default_4ms "$(echo "$out" | grep 'AEX tick')"
out=$(SGXEMU_AEX_TICK=250us SGXEMU_SECRETS_FILE="$T/b/secrets" "$CLI" info 2>&1)
echo "$out" | grep -q "^AEX tick: *every 250 us .*SGXEMU_AEX_TICK" && ok aex_tick_250us \
	|| bad aex_tick_250us "$(echo "$out" | grep 'AEX tick')"
out=$(SGXEMU_AEX_TICK=0 SGXEMU_SECRETS_FILE="$T/b/secrets" "$CLI" info 2>&1)
echo "$out" | grep -q "^AEX tick: *none" && ok aex_tick_0_none \
	|| bad aex_tick_0_none "$(echo "$out" | grep 'AEX tick')"
one_line_refusal() {	# NAME WANT COMMAND...
	local name=$1 want=$2 out rc
	shift 2
	out=$(SGXEMU_SECRETS_FILE="$T/b/secrets" "$@" 2>&1)
	rc=$?
	if [ "$rc" -eq 2 ] && [ "$(printf '%s\n' "$out" | wc -l)" -eq 1 ] &&
	   grep -qF -- "$want" <<<"$out"; then
		ok "$name"
	else
		bad "$name" "rc=$rc $out"
	fi
}
for v in 4x 10us 61s -1 "" 1.5ms; do
	one_line_refusal "aex_tick_option_refused '$v'" "--aex-tick '$v' is not a tick" \
		"$CLI" run --aex-tick "$v" /bin/echo ran
done
one_line_refusal "aex_tick_option_needs_a_value" "--aex-tick needs a time" \
	"$CLI" run --aex-tick
for v in 4x abc 50us; do
	one_line_refusal "aex_tick_env_refused_by_run '$v'" "SGXEMU_AEX_TICK='$v' is not a tick" \
		env SGXEMU_AEX_TICK="$v" "$CLI" run /bin/echo ran
	one_line_refusal "aex_tick_env_refused_by_info '$v'" "SGXEMU_AEX_TICK='$v' is not a tick" \
		env SGXEMU_AEX_TICK="$v" "$CLI" info
done
out=$(SGXEMU_SECRETS_FILE="$T/b/secrets" "$CLI" run --aex-tick 0 /bin/echo ran 2>&1)
[ "$out" = ran ] && ok aex_tick_option_0_runs || bad aex_tick_option_0_runs "$out"
echo "$pass passed, $fail failed, 0 skipped"
[ $fail -eq 0 ]
