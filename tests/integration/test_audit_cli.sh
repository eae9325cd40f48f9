#!/usr/bin/env bash
# `sgxemu audit`: prints the audit log, filters denials and operations,
# reports a missing log without failing, and refuses bad command lines.
# Also: a real denial under `sgxemu run --policy` lands in the log it reads.
# Last line: "N passed, N failed, N skipped".
set -u
B=${B:-build}
CLI=${CLI:-$B/sgxemu}
# An ASan build's libsgxemu.so preloaded into a program built without ASan.
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0:detect_leaks=0"
pass=0 fail=0
ok()  { echo "ok $1"; pass=$((pass + 1)); }
bad() { echo "FAIL $1: $2"; fail=$((fail + 1)); }
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT

cat > "$T/log" <<'LOG'
type=SGX_AVC msg=audit(1.000:1): op=page_add result=denied permissive=0 pid=1 rule=page.anon-exec line=1 errno=EACCES policy="p"
type=SGX_AVC msg=audit(1.000:2): op=mmap result=allowed pid=1 policy="p"
type=SGX_AVC msg=audit(1.000:3): op=init result=denied permissive=0 pid=1 rule=signer line=2 errno=EACCES policy="p"
LOG

out=$("$CLI" audit --log "$T/log")
[ "$(echo "$out" | wc -l)" -eq 3 ] && ok all_records || bad all_records "$out"
out=$("$CLI" audit --log "$T/log" --denied)
[ "$(echo "$out" | wc -l)" -eq 2 ] && ! echo "$out" | grep -q result=allowed \
	&& ok denied_only || bad denied_only "$out"
out=$("$CLI" audit --log "$T/log" --op init)
echo "$out" | grep -q "rule=signer" && [ "$(echo "$out" | wc -l)" -eq 1 ] \
	&& ok one_operation || bad one_operation "$out"
out=$(SGXEMU_AUDIT_LOG="$T/log" "$CLI" audit --denied --op page_add)
echo "$out" | grep -q "rule=page.anon-exec" && ok log_from_environment \
	|| bad log_from_environment "$out"
"$CLI" audit --log "$T/none" >"$T/o" 2>"$T/e"
rc=$?
[ $rc -eq 0 ] && [ ! -s "$T/o" ] && grep -q "no records yet" "$T/e" \
	&& ok missing_log_is_not_an_error || bad missing_log_is_not_an_error "rc=$rc"
"$CLI" audit --bogus >/dev/null 2>"$T/e"
rc=$?
[ $rc -eq 2 ] && [ "$(wc -l <"$T/e")" -eq 1 ] && ok bad_option || bad bad_option "rc=$rc"
"$CLI" audit --help | grep -q "usage: sgxemu audit" && ok help || bad help "no usage"

# A denial made by the driver's policy hook appears in the log.
printf 'provision-device deny\n' > "$T/policy"
cat > "$T/open_prov.c" <<'C'
#include <fcntl.h>
#include <stdio.h>
#include <errno.h>
int main(void)
{
	int fd = open("/dev/sgx_provision", O_RDONLY);
	printf("%d %d\n", fd, fd < 0 ? errno : 0);
	return 0;
}
C
if cc -o "$T/open_prov" "$T/open_prov.c" 2>/dev/null; then
	out=$(SGXEMU_AUDIT_LOG="$T/real.log" "$CLI" run --policy "$T/policy" "$T/open_prov" 2>/dev/null)
	[ "$out" = "-1 13" ] && ok provision_open_refused || bad provision_open_refused "$out"
	"$CLI" audit --log "$T/real.log" --denied | grep -q 'op=provision_open.*rule=provision-device' \
		&& ok denial_in_the_log || bad denial_in_the_log "$(cat "$T/real.log" 2>&1)"
else
	bad compile "cc failed"
fi

echo "$pass passed, $fail failed, 0 skipped"
[ $fail -eq 0 ]
