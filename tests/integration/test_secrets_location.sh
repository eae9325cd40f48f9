#!/usr/bin/env bash
# The emulated platform comes up whatever the environment holds
# (src/base/secrets.c sgx_state_path): with no HOME it keeps its secrets
# under the password database's home, for a user without one in
# /var/tmp/sgxemu-<uid> (0700, refused when it is not the user's own);
# sealing keys stay the same across runs (the platform id is a MAC under
# the SEAL root). A secrets file that is truncated, of the wrong mode or
# unreadable stops the device open with a line naming it, and is left as
# it was. Last line: "N passed, N failed, N skipped".
set -u
. "$(dirname "$0")/../lib/test_lib.sh"

CLI=$B/sgxemu
if [ ! -x "$CLI" ] || [ ! -f "$B/libsgxemu.so" ]; then
	bad secrets_location "$CLI or $B/libsgxemu.so not built"
	finish
fi
CLI=$(realpath "$CLI")
if asan_build; then
	skp secrets_location "sanitizer build: these runs empty the environment, losing the ASAN_OPTIONS its shim needs (make test runs them)"
	finish
fi
T=$(mktemp -d)
trap 'rm -rf "$T"; [ -n "${FB:-}" ] && rm -rf "$FB"' EXIT
chmod 755 "$T"

# A shell under the shim opens the device: the platform comes up.
OPEN='exec 3<>/dev/sgx_enclave && echo opened'
pid_of() { sed -n 's/^platform id: *\([0-9a-f]*\) (secrets in \(.*\))$/\1 \2/p'; }

# 1. No environment at all: the password database's home.
home=$(getent passwd "$(id -u)" | cut -d: -f6)
out=$(env -i "$CLI" run /bin/sh -c "$OPEN" 2>&1)
[ "$out" = opened ] && ok device_opens_with_empty_environment ||
	bad device_opens_with_empty_environment "$out"
a=$(env -i "$CLI" info 2>&1 | pid_of)
b=$(env -i "$CLI" info 2>&1 | pid_of)
if [ -n "$home" ] && [ -w "$home" ]; then
	case "$a" in *" $home/.local/state/sgxemu/platform-secrets")
		[ "$a" = "$b" ] && ok passwd_home_same_platform_across_runs ||
			bad passwd_home_same_platform_across_runs "'$a' then '$b'" ;;
	*) bad passwd_home_same_platform_across_runs "'$a'" ;; esac
else
	skp passwd_home_same_platform_across_runs "no writable home for $(id -u)"
fi

# 2. A user the password database does not know (needs root to be one).
U=$((50000 + $$ % 10000))
FB=/var/tmp/sgxemu-$U
as_u() { setpriv --reuid=$U --regid=$U --clear-groups env -i "$@"; }
if [ "$(id -u)" -ne 0 ] || ! command -v setpriv >/dev/null ||
	getent passwd $U >/dev/null || ! as_u test -x "$CLI"; then
	skp default_location "needs root, setpriv, a free uid and $CLI reachable by it"
else
	rm -rf "$FB"
	out=$(as_u "$CLI" run /bin/sh -c "$OPEN" 2>&1)
	a=$(as_u "$CLI" info 2>&1 | pid_of)
	b=$(as_u "$CLI" info 2>&1 | pid_of)
	mode=$(stat -c '%a %u' "$FB" 2>/dev/null)
	case "$out|$a|$mode" in "opened|"*" $FB/platform-secrets|700 $U")
		[ "$a" = "$b" ] && ok default_location_same_platform_across_runs ||
			bad default_location_same_platform_across_runs "'$a' then '$b'" ;;
	*) bad default_location_same_platform_across_runs "$out | $a | $mode" ;; esac
	# Someone else's directory there: refused, with the reason.
	rm -rf "$FB" && mkdir -m 755 "$FB"
	out=$(as_u "$CLI" run /bin/sh -c "$OPEN" 2>&1); rc=$?
	[ $rc -ne 0 ] && printf '%s' "$out" | grep -q "platform secrets: no location.*$FB" &&
		ok foreign_default_directory_refused ||
		bad foreign_default_directory_refused "rc=$rc $out"
	rm -rf "$FB"
	# An unreadable secrets file (root reads everything: as that user).
	mkdir -m 700 "$FB" && chown $U:$U "$FB"
	printf 'x' >"$FB/s" && chown $U:$U "$FB/s" && chmod 000 "$FB/s"
	out=$(as_u SGXEMU_SECRETS_FILE="$FB/s" "$CLI" run /bin/sh -c "$OPEN" 2>&1); rc=$?
	[ $rc -ne 0 ] && [ "$(printf '%s\n' "$out" | grep -c "sgxemu: platform secrets: .*$FB/s")" -eq 1 ] &&
		[ "$(stat -c %s "$FB/s")" -eq 1 ] && ok unreadable_file_named_not_replaced ||
		bad unreadable_file_named_not_replaced "rc=$rc $out"
	rm -rf "$FB"
fi

# 3. Truncated, wrong mode: named, never replaced.
head -c 100 /dev/zero >"$T/short" && chmod 600 "$T/short"
out=$(env -i SGXEMU_SECRETS_FILE="$T/short" "$CLI" run /bin/sh -c "$OPEN" 2>&1); rc=$?
[ $rc -ne 0 ] && printf '%s' "$out" | grep -q "platform secrets: $T/short is damaged: 100 bytes" &&
	[ "$(stat -c %s "$T/short")" -eq 100 ] && ok truncated_file_named_not_replaced ||
	bad truncated_file_named_not_replaced "rc=$rc $out"
env -i SGXEMU_SECRETS_FILE="$T/good" "$CLI" info >/dev/null 2>&1
chmod 644 "$T/good"
sum=$(sha256sum <"$T/good")
out=$(env -i SGXEMU_SECRETS_FILE="$T/good" "$CLI" run /bin/sh -c "$OPEN" 2>&1); rc=$?
[ $rc -ne 0 ] && printf '%s' "$out" | grep -q "$T/good must be owned by you and mode 0600 (it is 644)" &&
	[ "$(sha256sum <"$T/good")" = "$sum" ] && ok wrong_mode_named_not_replaced ||
	bad wrong_mode_named_not_replaced "rc=$rc $out"

finish
