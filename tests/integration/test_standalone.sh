#!/usr/bin/env bash
# The project on its own (no ../shared beside it): the signing keys the
# build makes for the test enclaves (mk/keys.mk), what a test does when the
# key is missing or bad, `make seed` without the seed tree (the kernel's
# selftest instead) and SEED_DIR given a wrong tree.
# Run from the repository root (tests/run.sh does); B is the build folder.
set -u
. tests/lib/test_lib.sh

T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
# The nested makes are ours alone: not the caller's jobserver or flags.
unset MAKEFLAGS MAKELEVEL MFLAGS
KEY=$B/keys/signing_key.pem
OTHER=$B/keys/other_key.pem

# expect_fail NAME PATTERN CMD...: non-zero exit, one line on stderr that
# matches PATTERN (make's own "*** [...] Error" line aside).
expect_fail() {
	local name=$1 pat=$2 lines; shift 2
	if "$@" >"$T/out" 2>"$T/err"; then
		bad "$name" "exit status 0"
		return
	fi
	grep -v '^make.*: \*\*\* ' "$T/err" >"$T/err1"
	lines=$(wc -l <"$T/err1")
	if [ "$lines" -ne 1 ]; then
		bad "$name" "$lines lines on stderr: $(head -c 300 "$T/err")"
	elif ! grep -q -- "$pat" "$T/err1"; then
		bad "$name" "no '$pat' in: $(cat "$T/err1")"
	else
		ok "$name"
	fi
}

# --- the keys the build made ----------------------------------------------
if [ ! -f "$KEY" ] || [ ! -f "$OTHER" ]; then
	bad keys_built "$KEY or $OTHER missing (make keys)"
else
	text=$(openssl rsa -in "$KEY" -noout -text 2>/dev/null)
	if grep -q 'Private-Key: (3072 bit' <<<"$text" &&
	   grep -q 'publicExponent: 3 (0x3)' <<<"$text"; then
		ok key_is_rsa3072_exponent3
	else
		bad key_is_rsa3072_exponent3 "$(head -n 2 <<<"$text")"
	fi
	mode=$(stat -c %a "$KEY")
	[ "$mode" = 600 ] && ok key_private_to_its_owner ||
		bad key_private_to_its_owner "mode $mode"
	m1=$(openssl rsa -in "$KEY" -noout -modulus 2>/dev/null)
	m2=$(openssl rsa -in "$OTHER" -noout -modulus 2>/dev/null)
	[ -n "$m1" ] && [ "$m1" != "$m2" ] && ok two_different_signers ||
		bad two_different_signers "the two keys share a modulus"
fi

# Never committed: nothing under keys/ or any private key in git.
if ! git rev-parse --git-dir >/dev/null 2>&1; then
	skp keys_not_in_git "not a git checkout"
elif git ls-files | grep -q 'signing_key.pem\|other_key.pem'; then
	bad keys_not_in_git "$(git ls-files | grep 'key.pem' | head -n 3)"
elif [ "$B" = build ] && ! git check-ignore -q "$KEY"; then
	bad keys_not_in_git "$KEY is not ignored by git"
else
	ok keys_not_in_git
fi

# Made from nothing in a scratch build folder, by the rule make test uses.
if make -s --no-print-directory B="$T/b" "$T/b/keys/signing_key.pem" \
	>"$T/out" 2>&1 && [ -s "$T/b/keys/signing_key.pem" ] &&
   openssl rsa -in "$T/b/keys/signing_key.pem" -noout -check >/dev/null 2>&1; then
	ok key_made_by_the_build
else
	bad key_made_by_the_build "$(tail -n 2 "$T/out")"
fi

# OpenSSL failing: one line, and no key (nor half a key) left behind.
mkdir -p "$T/bin"
printf '#!/bin/sh\necho "genpkey: out of entropy" >&2\nexit 1\n' >"$T/bin/openssl"
chmod +x "$T/bin/openssl"
expect_fail key_generation_failure_one_line "cannot make the signing key" \
	env PATH="$T/bin:$PATH" make -s --no-print-directory B="$T/b" \
	"$T/b/keys/other_key.pem"
if ls "$T/b/keys/" | grep -q 'other_key'; then
	bad key_generation_failure_leaves_nothing "$(ls "$T/b/keys/")"
else
	ok key_generation_failure_leaves_nothing
fi

# --- a test without its key fails, naming the file --------------------------
EINIT=$B/tests/unit/test_cpu_einit
if [ ! -x "$EINIT" ]; then
	bad missing_key_fails_the_test "$EINIT not built"
else
	SGXEMU_TEST_KEY=$T/no-such-key.pem "$EINIT" einit_ok >"$T/out" 2>&1
	rc=$?
	if [ "$rc" -ne 0 ] && grep -q "$T/no-such-key.pem" "$T/out"; then
		ok missing_key_fails_the_test
	else
		bad missing_key_fails_the_test "exit $rc: $(head -c 300 "$T/out")"
	fi
	echo "not a key" >"$T/garbage.pem"
	SGXEMU_TEST_KEY=$T/garbage.pem "$EINIT" einit_ok >"$T/out" 2>&1
	[ $? -ne 0 ] && ok garbage_key_fails_the_test ||
		bad garbage_key_fails_the_test "exit 0 with a key that is no key"
	chmod 000 "$T/garbage.pem"
	if [ "$(id -u)" -eq 0 ]; then
		skp unreadable_key_fails_the_test "root reads a mode-000 file"
	else
		SGXEMU_TEST_KEY=$T/garbage.pem "$EINIT" einit_ok >"$T/out" 2>&1
		[ $? -ne 0 ] && grep -q "Permission denied" "$T/out" &&
			ok unreadable_key_fails_the_test ||
			bad unreadable_key_fails_the_test "$(head -c 300 "$T/out")"
	fi
fi
# The shim-side loaders (tests/enclaves/shim_encl.h) likewise.
SHIMT=$B/tests/integration/test_shim_mainline
if [ -x "$SHIMT" ]; then
	SGXEMU_TEST_KEY=$T/no-such-key.pem "$SHIMT" >"$T/out" 2>&1
	if [ $? -ne 0 ] && grep -q "no-such-key.pem" "$T/out" &&
	   ! grep -q '^skip ' "$T/out"; then
		ok missing_key_fails_shim_tests
	else
		bad missing_key_fails_shim_tests "$(grep -m2 'skip\|FAIL' "$T/out")"
	fi
fi

# --- make seed and SEED_DIR --------------------------------------------------
expect_fail seed_dir_missing "SEED_DIR: $T/none not found" \
	make -s --no-print-directory seed-build SEED_DIR="$T/none"
mkdir -p "$T/wrong"
echo 'all:' >"$T/wrong/Makefile"
expect_fail seed_dir_wrong_tree "is not the seed selftest (no main.c encl.c sgxsign.c" \
	make -s --no-print-directory seed-build SEED_DIR="$T/wrong"
# A clone on its own: the default tree is missing, and make seed runs the
# kernel's own SGX selftest instead, built unmodified from linux-source
# (scripts/kselftest.sh), saying so first. A SEED_DIR given by hand that is
# missing is still an error that names it.
if make -s --no-print-directory seed SEED_DIR_DEFAULT="$T/none" \
	SEED_DIR="$T/none" >"$T/out" 2>&1; then
	if ! grep -q "^== running the Linux kernel's SGX selftest .* under sgxemu: $T/none not found" "$T/out"; then
		bad make_seed_without_the_tree "no line saying which selftest ran: $(head -c 300 "$T/out")"
	elif ! grep -q '^# Totals: pass:[1-9][0-9]* fail:0 ' "$T/out"; then
		bad make_seed_without_the_tree "$(grep -E '^(not ok|# Totals)' "$T/out" | head -n 5 | tr '\n' '|')"
	else
		ok make_seed_without_the_tree
	fi
else
	bad make_seed_without_the_tree "exit status $?: $(tail -n 5 "$T/out" | tr '\n' '|')"
fi
expect_fail make_seed_dir_missing "set SEED_DIR=" \
	make -s --no-print-directory seed SEED_DIR="$T/none"

# A seed tree that does not compile leaves no test_sgx to be run as good.
seed_src=""
for d in "${SGXEMU_SHARED:-}" ../shared ../../shared; do
	s=$d/seed-tree/tools/testing/selftests/x86/sgx
	if [ -n "$d" ] && [ -f "$s/main.c" ]; then seed_src=$s; break; fi
done
if [ -z "$seed_src" ]; then
	skp seed_build_failure_leaves_nothing "no seed tree (../shared absent)"
else
	cp -r "$seed_src" "$T/broken"
	echo 'this is not C;' >>"$T/broken/main.c"
	mkdir -p "$T/b2/seed"
	touch "$T/b2/seed/test_sgx"	# a stale program from an earlier build
	if make -s --no-print-directory B="$T/b2" seed-build \
		SEED_DIR="$T/broken" >"$T/out" 2>"$T/err"; then
		bad seed_build_failure_says_so "exit status 0"
	else
		grep -q "sgxemu: the seed selftest in $T/broken did not build" "$T/err" &&
			ok seed_build_failure_says_so ||
			bad seed_build_failure_says_so "$(tail -n 2 "$T/err")"
	fi
	[ ! -e "$T/b2/seed/test_sgx" ] && ok seed_build_failure_leaves_nothing ||
		bad seed_build_failure_leaves_nothing "$T/b2/seed/test_sgx is there"
fi

finish
