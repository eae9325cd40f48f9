#!/usr/bin/env bash
# A microcode update on request, from the outside (issue 44): `sgxemu
# platform update-svn` raises the pending CPUSVN, `sgxemu info` shows it,
# and an unmodified program (Debian's python3) under `sgxemu run` whose
# open() of an enclave device finds no enclave takes it (ENCLS[EUPDATESVN],
# "SVN updated successfully"); EAGAIN when entropy fails; not with
# --no-eupdatesvn; bad input refused in one line with the file unchanged.
# Last line: "N passed, N failed, N skipped".
set -u
B=${B:-build}
CLI=${CLI:-$B/sgxemu}
pass=0 fail=0 skip=0
ok()   { echo "ok $1"; pass=$((pass + 1)); }
bad()  { echo "FAIL $1: $2"; fail=$((fail + 1)); }
skip() { echo "skip $1: $2"; skip=$((skip + 1)); }
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
export SGXEMU_SECRETS_FILE="$T/secrets"
unset SGXEMU_CPUSVN SGXEMU_EUPDATESVN SGXEMU_EUPDATESVN_ENTROPY

cpusvn()  { "$CLI" info 2>/dev/null | sed -n 's/^CPUSVN: *\([0-9a-f]*\).*/\1/p'; }
pending() { "$CLI" info 2>/dev/null | sed -n 's/^pending CPUSVN: *\([0-9a-f]*\).*/\1/p'; }
OLD=02020202020202020202020202020202
NEW=02030202020202020202020202020202

[ "$(cpusvn)" = $OLD ] && [ -z "$(pending)" ] && ok new_platform_no_update_pending \
	|| bad new_platform_no_update_pending "$(cpusvn) / $(pending)"
size=$(stat -c %s "$T/secrets")
[ "$size" = 144 ] && ok secrets_version_1_until_an_update || bad secrets_version_1_until_an_update "$size"
id1=$("$CLI" info | sed -n 's/^platform id: *\([0-9a-f]*\).*/\1/p')

out=$("$CLI" platform update-svn 2>&1)
rc=$?
[ $rc -eq 0 ] && [ "$(pending)" = $NEW ] && [ "$(cpusvn)" = $OLD ] \
	&& ok update_svn_raises_pending_only || bad update_svn_raises_pending_only "rc=$rc $out"
id2=$("$CLI" info | sed -n 's/^platform id: *\([0-9a-f]*\).*/\1/p')
[ -n "$id1" ] && [ "$id1" = "$id2" ] && ok identity_kept || bad identity_kept "$id1 / $id2"

# Bad input: one line, the exact code, the file byte for byte unchanged.
cp "$T/secrets" "$T/before"
out=$("$CLI" platform update-svn --cpusvn $NEW 2>&1)
rc=$?
[ $rc -eq 1 ] && echo "$out" | grep -q "Invalid argument: CPUSVN $NEW is not newer" \
	&& [ "$(echo "$out" | wc -l)" -eq 1 ] && cmp -s "$T/before" "$T/secrets" \
	&& ok not_newer_refused || bad not_newer_refused "rc=$rc $out"
out=$("$CLI" platform update-svn --cpusvn 0203 2>&1)
[ $? -eq 2 ] && echo "$out" | grep -q "32 hex digits" && ok bad_hex_refused \
	|| bad bad_hex_refused "$out"
out=$("$CLI" platform update-svn --component 0 2>&1)
[ $? -eq 2 ] && echo "$out" | grep -q "1..16" && ok bad_component_refused \
	|| bad bad_component_refused "$out"
cp "$T/secrets" "$T/damaged"
printf 'x' | dd of="$T/damaged" bs=1 seek=120 conv=notrunc 2>/dev/null
cp "$T/damaged" "$T/damaged.before"
out=$(SGXEMU_SECRETS_FILE="$T/damaged" "$CLI" platform update-svn 2>&1)
rc=$?
[ $rc -eq 1 ] && echo "$out" | grep -q "checksum mismatch" && cmp -s "$T/damaged" "$T/damaged.before" \
	&& ok damaged_file_refused_untouched || bad damaged_file_refused_untouched "rc=$rc $out"
rm -f "$T/secrets.lock"
mkdir "$T/secrets.lock"		# a lock that cannot be taken
out=$("$CLI" platform update-svn 2>&1)
rc=$?
rmdir "$T/secrets.lock"
[ $rc -eq 1 ] && echo "$out" | grep -q "cannot lock" && cmp -s "$T/before" "$T/secrets" \
	&& ok unlockable_refused_untouched || bad unlockable_refused_untouched "rc=$rc $out"

PY=/usr/bin/python3
if [ ! -x $PY ]; then
	skip shim_opens "no $PY"
else
	prog='import os,sys
for p in sys.argv[1:]:
    try:
        os.close(os.open(p, os.O_RDWR)); print("open", p, "ok")
    except OSError as e:
        print("open", p, "errno", e.errno)'
	# A processor without the leaf never takes it.
	out=$("$CLI" run --no-eupdatesvn $PY -c "$prog" /dev/sgx_enclave 2>&1)
	[ "$out" = "open /dev/sgx_enclave ok" ] && [ "$(cpusvn)" = $OLD ] \
		&& ok no_leaf_no_update || bad no_leaf_no_update "$out"
	# Entropy that never comes: EAGAIN (11), nothing taken.
	out=$(SGXEMU_EUPDATESVN_ENTROPY=fail "$CLI" run $PY -c "$prog" /dev/sgx/enclave 2>&1)
	echo "$out" | grep -q "open /dev/sgx/enclave errno 11" && [ "$(cpusvn)" = $OLD ] \
		&& ok entropy_failure_is_eagain || bad entropy_failure_is_eagain "$out"
	out=$("$CLI" run $PY -c "$prog" /dev/sgx/enclave /dev/sgx_enclave 2>&1)
	echo "$out" | grep -q "SVN updated successfully (CPUSVN $NEW)" \
		&& echo "$out" | grep -q "open /dev/sgx/enclave ok" \
		&& echo "$out" | grep -q "open /dev/sgx_enclave ok" \
		&& [ "$(cpusvn)" = $NEW ] && [ -z "$(pending)" ] \
		&& ok open_takes_the_update || bad open_takes_the_update "$out"
	# No update pending: SGX_NO_UPDATE, silent.
	out=$("$CLI" run $PY -c "$prog" /dev/sgx_enclave 2>&1)
	[ "$out" = "open /dev/sgx_enclave ok" ] && ok no_update_pending_silent \
		|| bad no_update_pending_silent "$out"
fi
echo "$pass passed, $fail failed, $skip skipped"
[ $fail -eq 0 ]
