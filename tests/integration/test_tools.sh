#!/usr/bin/env bash
# The sgxemu CLI (sign, measure, dump) against real inputs: the seed
# selftest's enclave and signing tool, and the rust-sgx known-answer files.
# Run from the repository root (tests/run.sh does); B is the build directory.
# Last line: "N passed, N failed, N skipped".
set -u
B=${B:-build}
SGXEMU=${SGXEMU:-$B/sgxemu}
pass=0 fail=0 skip=0

ok()   { echo "ok $1"; pass=$((pass + 1)); }
bad()  { echo "FAIL $1: $2"; fail=$((fail + 1)); }
skp()  { echo "skip $1: $2"; skip=$((skip + 1)); }

shared=""
for d in "${SGXEMU_SHARED:-}" ../shared ../../shared; do
	if [ -n "$d" ] && [ -d "$d/vectors" ]; then shared=$d; break; fi
done
VEC=${shared:+$shared/vectors/rust-sgx}
SEED=$B/seed
SEED_SRC=${shared:+$shared/seed-tree/tools/testing/selftests/x86/sgx}

T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT

if [ ! -x "$SGXEMU" ]; then
	bad cli "$SGXEMU not built"
	echo "$pass passed, $fail failed, $skip skipped"
	exit 1
fi

# Bytes [off, off+len) of a file as lower-case hex.
hexat() { od -An -v -tx1 -j "$2" -N "$3" "$1" | tr -d ' \n'; }

# Copy of $1 with byte $2 XORed with 0x01.
flip() {
	cp "$1" "$3"
	local b
	b=$(od -An -tu1 -j "$2" -N 1 "$1" | tr -d ' ')
	printf "$(printf '\\%03o' $((b ^ 1)))" |
		dd of="$3" bs=1 seek="$2" conv=notrunc status=none
}

# expect_error NAME CMD...: non-zero exit and exactly one line on stderr.
expect_error() {
	local name=$1; shift
	"$@" >"$T/out" 2>"$T/err"
	local rc=$? lines
	lines=$(wc -l <"$T/err")
	if [ "$rc" -eq 0 ]; then
		bad "$name" "exit status 0"
	elif [ "$lines" -ne 1 ]; then
		bad "$name" "$lines lines on stderr: $(head -c 300 "$T/err")"
	else
		ok "$name"
	fi
}

# --- help and dispatch ---------------------------------------------------
if "$SGXEMU" --help | grep -q '^usage: sgxemu' &&
   "$SGXEMU" --help | grep -q 'sign' &&
   "$SGXEMU" --help | grep -q 'measure' &&
   "$SGXEMU" --help | grep -q 'dump'; then ok help_overview
else bad help_overview "sgxemu --help lacks usage or a command"; fi

# Every command `sgxemu --help` lists (so new ones are covered too).
cmds=$("$SGXEMU" --help | sed -nE 's/^  ([a-z]+) .*/\1/p')
for c in $cmds; do
	if "$SGXEMU" help "$c" | grep -q "^usage: sgxemu $c" &&
	   "$SGXEMU" "$c" --help | grep -q "^usage: sgxemu $c"; then
		ok "help_$c"
	else
		bad "help_$c" "no usage text from help $c / $c --help"
	fi
done

"$SGXEMU" frobnicate >"$T/out" 2>"$T/err"
rc=$?
if [ "$rc" -eq 2 ] && [ "$(wc -l <"$T/err")" -eq 1 ] &&
   grep -q frobnicate "$T/err"; then ok unknown_command
else bad unknown_command "rc=$rc stderr=$(cat "$T/err")"; fi
expect_error help_unknown_command "$SGXEMU" help frobnicate

# --- known answers (rust-sgx) --------------------------------------------
if [ -z "$VEC" ]; then
	skp measure_test_enclave "../shared/vectors not found"
	skp measure_report "../shared/vectors not found"
	skp dump_test_enclave "../shared/vectors not found"
else
	m=$("$SGXEMU" measure "$VEC/test_enclave.sgxs")
	if [ "$m" = 784acfd7d5096a8f0fbd3265760bff21b120f62407a9a9e5ba31aa3c8ed198fc ]
	then ok measure_test_enclave; else bad measure_test_enclave "got '$m'"; fi

	m=$("$SGXEMU" measure "$VEC/report.sgxs")
	if [ "$m" = a06a560b26f5e397b2d7872fac66fe4b43bf4f507296ee048f110be6fb1a2290 ]
	then ok measure_report; else bad measure_report "got '$m'"; fi

	"$SGXEMU" dump "$VEC/test_enclave.sig" >"$T/dump" 2>&1
	rc=$?
	if [ "$rc" -eq 0 ] &&
	   grep -Eq '^mrsigner: +fb4bab3d6036ac1d730fa83d7366df1dd2dfeac194ef335d6854d8a6c6475542$' "$T/dump" &&
	   grep -Eq '^mrenclave: +784acfd7d5096a8f0fbd3265760bff21b120f62407a9a9e5ba31aa3c8ed198fc$' "$T/dump" &&
	   grep -Eq '^date: +0x20161214' "$T/dump" &&
	   grep -Eq '^isvprodid: +0xffff' "$T/dump" &&
	   grep -Eq '^miscmask: +0xffffffff' "$T/dump" &&
	   grep -Eq '^fields: +ok$' "$T/dump" &&
	   grep -Eq '^signature: +ok$' "$T/dump"; then
		ok dump_test_enclave
	else
		bad dump_test_enclave "rc=$rc: $(cat "$T/dump")"
	fi

	# sig1: another signer, with MRSIGNER from the facts sheet.
	if "$SGXEMU" dump "$VEC/sig1.sigstruct.bin" >"$T/dump" 2>&1 &&
	   grep -Eq '^mrsigner: +83d719e77deaca1470f6baf62a4d774303c899db69020f9c70ee1dfc08c7ce9e$' "$T/dump" &&
	   grep -Eq '^signature: +ok$' "$T/dump"; then ok dump_sig1
	else bad dump_sig1 "$(cat "$T/dump")"; fi

	# A flipped byte anywhere that EINIT checks makes dump fail: a signed
	# header byte (date), a signed body byte (ISVPRODID), the signature
	# itself, Q1, and a header constant.
	for off in 20 1024 600 1100 0; do
		flip "$VEC/test_enclave.sig" "$off" "$T/flipped.sig"
		"$SGXEMU" dump "$T/flipped.sig" >"$T/dump" 2>"$T/err"
		rc=$?
		if [ "$rc" -ne 0 ] && grep -q FAILED "$T/dump" &&
		   [ "$(wc -l <"$T/err")" -eq 1 ]; then
			ok "dump_flipped_byte_$off"
		else
			bad "dump_flipped_byte_$off" "rc=$rc $(grep -E '^(fields|signature)' "$T/dump")"
		fi
	done
	flip "$VEC/test_enclave.sig" 1024 "$T/flipped.sig"
	if "$SGXEMU" dump "$T/flipped.sig" 2>/dev/null |
	   grep -Eq '^signature: +FAILED \(SGX_INVALID_SIGNATURE\)'; then
		ok dump_names_error
	else bad dump_names_error "no SGX_INVALID_SIGNATURE in the output"; fi

	# Malformed .sgxs streams.
	head -c 1000 "$VEC/report.sgxs" >"$T/trunc.sgxs"
	expect_error measure_truncated_sgxs "$SGXEMU" measure "$T/trunc.sgxs"
	{ head -c 64 "$VEC/report.sgxs"; printf 'BOGUSTAG'; head -c 56 /dev/zero; } >"$T/tag.sgxs"
	expect_error measure_bad_tag_sgxs "$SGXEMU" measure "$T/tag.sgxs"
	# EEXTEND record right after ECREATE: its page was never added.
	{ head -c 64 "$VEC/report.sgxs"; printf 'EEXTEND\0'; head -c 312 /dev/zero; } >"$T/noadd.sgxs"
	expect_error measure_eextend_without_eadd "$SGXEMU" measure "$T/noadd.sgxs"
	# UNMEASRD records are loaded but not measured: inserting one after
	# the first EADD leaves MRENCLAVE unchanged.
	{ head -c 128 "$VEC/report.sgxs"
	  off=$(od -An -tu8 -j 72 -N 8 "$VEC/report.sgxs" | tr -d ' ')
	  printf 'UNMEASRD'
	  printf "$(printf '%016x' "$off" | sed -E 's/(..)(..)(..)(..)(..)(..)(..)(..)/\\x\8\\x\7\\x\6\\x\5\\x\4\\x\3\\x\2\\x\1/')"
	  head -c 304 /dev/urandom
	  tail -c +129 "$VEC/report.sgxs"; } >"$T/unmeasrd.sgxs"
	m=$("$SGXEMU" measure "$T/unmeasrd.sgxs")
	if [ "$m" = a06a560b26f5e397b2d7872fac66fe4b43bf4f507296ee048f110be6fb1a2290 ]
	then ok measure_skips_unmeasrd; else bad measure_skips_unmeasrd "got '$m'"; fi
fi

# --- the seed selftest's enclave and signing tool ------------------------
if [ ! -f "$SEED/encl.bin" ] || [ ! -f "$SEED/encl.ss" ] || [ -z "$SEED_SRC" ]; then
	skp sign_seed_identical "$SEED/encl.bin not built (make seed-build)"
	skp sign_measure_agree "$SEED/encl.bin not built"
else
	if "$SGXEMU" sign --key "$SEED_SRC/signing_key.pem" --in "$SEED/encl.bin" \
		--out "$T/encl.ss" && cmp -s "$T/encl.ss" "$SEED/encl.ss"; then
		ok sign_seed_identical
	else
		bad sign_seed_identical "sgxemu sign output differs from the seed's encl.ss"
	fi
	m=$("$SGXEMU" measure "$SEED/encl.bin")
	h=$(hexat "$T/encl.ss" 960 32)
	if [ -n "$m" ] && [ "$m" = "$h" ]; then ok sign_measure_agree
	else bad sign_measure_agree "measure '$m' vs ENCLAVEHASH '$h'"; fi
	if "$SGXEMU" dump "$SEED/encl.ss" >"$T/dump" 2>&1 &&
	   grep -Eq '^signature: +ok$' "$T/dump"; then ok dump_seed_sigstruct
	else bad dump_seed_sigstruct "$(cat "$T/dump")"; fi
fi

# --- sign with generated keys and the error cases ------------------------
if ! command -v openssl >/dev/null; then
	skp sign_generated_key "openssl command not installed"
else
	openssl genrsa -3 -out "$T/k3.pem" 3072 2>/dev/null
	openssl genrsa -out "$T/k2048.pem" 2048 2>/dev/null
	openssl genrsa -out "$T/k65537.pem" 3072 2>/dev/null
	openssl ecparam -name prime256v1 -genkey -noout -out "$T/ec.pem" 2>/dev/null
	head -c 12288 /dev/urandom >"$T/img.bin"	# 3 pages -> SIZE 16 KiB
	head -c 4096 /dev/zero >"$T/tcs.bin"
	cat "$T/tcs.bin" "$T/img.bin" >"$T/encl.bin"
	head -c 5000 /dev/zero >"$T/odd.bin"
	: >"$T/empty.bin"

	if "$SGXEMU" sign --key "$T/k3.pem" --in "$T/encl.bin" --out "$T/s.ss" \
		--isvprodid 0x1234 --isvsvn 7 --attributes 4 --xfrm 7 \
		--date 20240229 --debug &&
	   "$SGXEMU" dump "$T/s.ss" >"$T/dump" 2>&1 &&
	   grep -Eq '^isvprodid: +0x1234' "$T/dump" &&
	   grep -Eq '^isvsvn: +0x0007' "$T/dump" &&
	   grep -Eq '^date: +0x20240229' "$T/dump" &&
	   grep -Eq '^attributes: +flags 0x0000000000000006 \(DEBUG\|MODE64BIT\) xfrm 0x0000000000000007' "$T/dump" &&
	   grep -Eq '^signature: +ok$' "$T/dump"; then
		ok sign_options
	else
		bad sign_options "$(cat "$T/dump" 2>/dev/null)"
	fi
	m=$("$SGXEMU" measure "$T/encl.bin")
	if [ "$m" = "$(hexat "$T/s.ss" 960 32)" ]; then ok sign_measure_agree_random
	else bad sign_measure_agree_random "measure '$m'"; fi
	# MRSIGNER is SHA-256 of the little-endian modulus (bytes 128..511).
	want=$(dd if="$T/s.ss" bs=1 skip=128 count=384 status=none | sha256sum | cut -d' ' -f1)
	if grep -Eq "^mrsigner: +$want\$" "$T/dump"; then ok dump_mrsigner
	else bad dump_mrsigner "expected $want"; fi

	expect_error err_key_2048 "$SGXEMU" sign --key "$T/k2048.pem" --in "$T/encl.bin" --out "$T/o"
	expect_error err_key_e65537 "$SGXEMU" sign --key "$T/k65537.pem" --in "$T/encl.bin" --out "$T/o"
	expect_error err_key_not_rsa "$SGXEMU" sign --key "$T/ec.pem" --in "$T/encl.bin" --out "$T/o"
	expect_error err_key_not_pem "$SGXEMU" sign --key "$T/encl.bin" --in "$T/encl.bin" --out "$T/o"
	expect_error err_key_missing "$SGXEMU" sign --key "$T/nokey.pem" --in "$T/encl.bin" --out "$T/o"
	expect_error err_image_missing "$SGXEMU" sign --key "$T/k3.pem" --in "$T/none.bin" --out "$T/o"
	expect_error err_image_empty "$SGXEMU" sign --key "$T/k3.pem" --in "$T/empty.bin" --out "$T/o"
	expect_error err_image_odd_size "$SGXEMU" sign --key "$T/k3.pem" --in "$T/odd.bin" --out "$T/o"
	expect_error err_image_one_page "$SGXEMU" sign --key "$T/k3.pem" --in "$T/tcs.bin" --out "$T/o"
	expect_error err_image_directory "$SGXEMU" sign --key "$T/k3.pem" --in "$T" --out "$T/o"
	expect_error err_out_unwritable "$SGXEMU" sign --key "$T/k3.pem" --in "$T/encl.bin" --out "$T/no/such/dir"
	expect_error err_isvsvn_range "$SGXEMU" sign --key "$T/k3.pem" --in "$T/encl.bin" --out "$T/o" --isvsvn 65536
	expect_error err_isvprodid_negative "$SGXEMU" sign --key "$T/k3.pem" --in "$T/encl.bin" --out "$T/o" --isvprodid -1
	expect_error err_isvprodid_text "$SGXEMU" sign --key "$T/k3.pem" --in "$T/encl.bin" --out "$T/o" --isvprodid ten
	expect_error err_attributes_hex "$SGXEMU" sign --key "$T/k3.pem" --in "$T/encl.bin" --out "$T/o" --attributes 0xzz
	expect_error err_attributes_reserved "$SGXEMU" sign --key "$T/k3.pem" --in "$T/encl.bin" --out "$T/o" --attributes 0x100000004
	expect_error err_xfrm_no_sse "$SGXEMU" sign --key "$T/k3.pem" --in "$T/encl.bin" --out "$T/o" --xfrm 1
	expect_error err_date "$SGXEMU" sign --key "$T/k3.pem" --in "$T/encl.bin" --out "$T/o" --date 2024-01-01
	expect_error err_date_month "$SGXEMU" sign --key "$T/k3.pem" --in "$T/encl.bin" --out "$T/o" --date 20241301
	expect_error err_missing_out "$SGXEMU" sign --key "$T/k3.pem" --in "$T/encl.bin"
	expect_error err_option_no_value "$SGXEMU" sign --key
	expect_error err_unknown_option "$SGXEMU" sign --bogus
	expect_error err_measure_no_file "$SGXEMU" measure
	expect_error err_measure_missing "$SGXEMU" measure "$T/none.bin"
	expect_error err_measure_odd_size "$SGXEMU" measure "$T/odd.bin"
	expect_error err_dump_missing "$SGXEMU" dump "$T/none.ss"
	expect_error err_dump_wrong_size "$SGXEMU" dump "$T/encl.bin"
	if [ -f "$T/o" ]; then bad err_no_output "a failed sign left $T/o behind"
	else ok err_no_output; fi
fi

echo "$pass passed, $fail failed, $skip skipped"
[ "$fail" -eq 0 ]
