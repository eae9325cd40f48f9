#!/usr/bin/env bash
# Re-create the seed corpora under fuzz/corpus/ (they are committed; run
# this only to change them). Every seed is made here from scratch: a
# fresh RSA key, a two-page image signed by `sgxemu sign`, a .sgxs stream
# and secrets files written byte by byte, the shipped strict policy, and
# operation sequences in each harness's input format (see its header).
set -eu
cd "$(dirname "$0")/.."
CLI=${CLI:-build/sgxemu}
C=fuzz/corpus
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir -p $C/fuzz_policy $C/fuzz_secrets $C/fuzz_sgxs $C/fuzz_sigstruct \
	 $C/fuzz_encls $C/fuzz_enclu $C/fuzz_ioctl $C/fuzz_abort_page \
	 $C/fuzz_aesm $C/fuzz_quote $C/fuzz_qv $C/fuzz_qpl $C/fuzz_cov_image

# -- enclave ELF files with coverage sections (src/cov/image.c): a small
# object of each kind, stripped, its segments not page-separated
printf 'int x(int a) { return a ? a + 1 : 2; }\n' > "$tmp/x.c"
small="-O1 -nostdlib -shared -fPIC -Wl,-z,noseparate-code -Wl,--build-id=none"
gcc $small --coverage -fprofile-info-section \
	-Wl,--defsym,__gcov_merge_add=x -o "$tmp/gcov.so" "$tmp/x.c"
strip -o $C/fuzz_cov_image/gcov_info "$tmp/gcov.so"
clang $small -fsanitize-coverage=inline-8bit-counters,pc-table \
	-Wl,--unresolved-symbols=ignore-all -o "$tmp/sancov.so" "$tmp/x.c"
strip -o $C/fuzz_cov_image/sancov "$tmp/sancov.so"

# -- policy files
cp policies/strict.policy $C/fuzz_policy/strict
printf 'mode permissive\naudit all\naudit-log stderr\n' > $C/fuzz_policy/modes
printf 'signer allow %s\nsigner.default deny\nenclave deny %s\n' \
	"$(printf '%064x' 1)" "$(printf 'ab%.0s' $(seq 32))" > $C/fuzz_policy/hashes
printf 'page.write-exec strip-exec # comment\nmap.write-exec deny\n\n  init.debug allow\n' \
	> $C/fuzz_policy/switches

# -- secrets files: switches, two length-prefixed strings, the file
python3 - "$C/fuzz_secrets" <<'PY'
import hashlib, struct, sys, os
d = sys.argv[1]
img = b"SGXEMUPS" + struct.pack("<II", 1, 96) + bytes(range(96))
img += hashlib.sha256(img).digest()
open(d + "/valid", "wb").write(b"\0\0\0" + img)
hexs = b"0102030405060708090a0b0c0d0e0f10"
open(d + "/cpusvn", "wb").write(b"\x03" + bytes([32]) + hexs + bytes([32]) + hexs + img)
open(d + "/short-env", "wb").write(b"\x01\x03abc\x00" + img)
open(d + "/truncated", "wb").write(b"\0\0\0" + img[:100])
# Switch 4: a microcode update to the CPUSVN string's first 16 bytes, on a
# version-1 file and on a version-2 one (CPUSVN, pending, previous).
up = bytes([2, 3] + [2] * 14)
open(d + "/update-v1", "wb").write(b"\x04" + bytes([16]) + up + b"\0" + img)
v2 = b"SGXEMUPS" + struct.pack("<II", 2, 144) + bytes(range(96)) + bytes([2] * 48)
v2 += hashlib.sha256(v2).digest()
open(d + "/update-v2", "wb").write(b"\x04" + bytes([16]) + up + b"\0" + v2)
PY

# -- a .sgxs stream: ECREATE, a TCS and a page, one UNMEASRD chunk
python3 - "$C/fuzz_sgxs" <<'PY'
import struct, sys
d = sys.argv[1]
def blk(tag, rest): return (tag + rest).ljust(64, b"\0")
s = blk(b"ECREATE\0", struct.pack("<IQ", 1, 0x4000))
s += blk(b"EADD\0\0\0\0", struct.pack("<QQ", 0, 0x100))
for c in range(0, 4096, 256):
    s += blk(b"EEXTEND\0", struct.pack("<Q", c)) + bytes(256)
s += blk(b"EADD\0\0\0\0", struct.pack("<QQ", 0x1000, 0x207))
s += blk(b"EEXTEND\0", struct.pack("<Q", 0x1000)) + bytes([0x90]) * 256
s += blk(b"UNMEASRD", struct.pack("<Q", 0x1100)) + bytes(256)
open(d + "/stream", "wb").write(s)
open(d + "/flat", "wb").write(bytes(8192))
PY

# -- a SIGSTRUCT from `sgxemu sign` over a two-page image, with a fresh key
openssl genrsa -3 -out "$tmp/key.pem" 3072 2>/dev/null
head -c 8192 /dev/zero > "$tmp/encl.bin"
"$CLI" sign --key "$tmp/key.pem" --in "$tmp/encl.bin" --out $C/fuzz_sigstruct/signed --debug
# ... and the same with the re-sign flag set (last byte 0x0f)
{ cat $C/fuzz_sigstruct/signed; printf '\x0f'; } > $C/fuzz_sigstruct/resign

# -- ENCLS: empty = the default enclave; switches SIGN|MEASURE with pages
printf '' > $C/fuzz_encls/default
printf '\x24\x00\x00\x00\x03\x00\x00\x00\xff\xff\x01\x00\x00\xff\xff\x01\x00\x00\xff\xff\x00\x00\x00' \
	> $C/fuzz_encls/launch
printf '\x2c\x00\x00\x00\x01\x00\x00\x00\xff\xff\x00\x00\x00\x00' > $C/fuzz_encls/token
# the launch with SW_UPDATESVN and a newer microcode (component 2 + 1)
printf '\x64\x00\x00\x00\x03\x00\x00\x00\xff\xff\x01\x00\x00\xff\xff\x01\x00\x00\xff\xff\x00\x00\x00\x02\x03\x02\x02\x02\x02\x02\x02\x02\x02\x02\x02\x02\x02\x02\x02' \
	> $C/fuzz_encls/updatesvn

# -- ENCLU: enclave, then opcodes with operands
printf '\x00\x02\x00\x00\x00\x02' > $C/fuzz_enclu/egetkey
printf '\x01\x01\x00\x00\x00\x02\x00\x04' > $C/fuzz_enclu/ereport
printf '\x02\x04\x03' > $C/fuzz_enclu/aex
printf '\x03\x03\x05\x00\x00\x00\x00\x00\x00' > $C/fuzz_enclu/eaccept

# -- ioctls: CREATE, ADD TCS, ADD page, INIT, on both APIs
for api in 0 1; do
	printf "\\x0$api\\x00\\x00\\x00\\x01\\x00\\x00\\x01\\x01\\x00\\x03\\x00" \
		> $C/fuzz_ioctl/launch-$api
	printf "\\x0$api\\x00\\x00\\x00\\x04\\x0$api\\x01\\x00\\x00\\x01\\x01\\x00\\x03\\x00" \
		> $C/fuzz_ioctl/provision-$api
done
printf '\x00\x05\xf0\x00\x01\x00\x00\x00\x00\x00\x00' > $C/fuzz_ioctl/raw
# -- abort pages: switches, frame size, XSTATE_BV, RSI/RDI/RCX offsets,
#    RAX, RFLAGS, the instruction (rep movsb out of the abort page, a
#    VEX ymm load, an ALU load, an EVEX zmm17 load)
python3 - "$C/fuzz_abort_page" <<'PY'
import struct, sys
d = sys.argv[1]
def seed(name, sw, rsi, rdi, rcx, insn):
    b = struct.pack("<BHQHHHQQ", sw, 2688, 7, rsi, rdi, rcx, 0x1122334455667788, 0)
    open(d + "/" + name, "wb").write(b + bytes(insn))
seed("rep_movsb", 1, 0x8ff0, 0x1000, 32, [0xf3, 0xa4])
seed("vex_ymm_load", 1, 0, 0, 0, [0xc5, 0xfe, 0x6f, 0x09])
seed("add_load", 0, 0, 0, 0, [0x48, 0x03, 0x01])
seed("evex_zmm17_load", 1, 0, 0, 0, [0x62, 0xe1, 0xfe, 0x48, 0x6f, 0x09])
PY
# -- AESM requests (the bodies after the length): Gramine's InitQuoteEx
#    (attestation-facts.md §7.1), GetSupportedAttKeyIDNum, an EPID
#    GetQuote, and a GetQuoteEx whose report (0xEE bytes) the harness
#    swaps for a real one (leading 0x01)
python3 - "$C/fuzz_aesm" <<'PY'
import struct, sys
d = sys.argv[1]
def bytes_field(n, b):
    return bytes([n << 3 | 2]) + varint(len(b)) + b
def varint(v):
    out = b""
    while True:
        out += bytes([(v & 0x7f) | (0x80 if v > 0x7f else 0)])
        v >>= 7
        if not v:
            return out
key = bytearray(256)
key[4:6] = struct.pack("<H", 32)
key[6:38] = bytes.fromhex("8c4f5775d796503e96137f77c68a829a0056ac8ded70140b081b094490c57bff")
key[54:58] = struct.pack("<I", 1)
key[154:158] = struct.pack("<I", 2)
init = bytes_field(1, bytes(key)) + b"\x18\x01\x20\x20"
open(d + "/gramine_init_quote_ex", "wb").write(b"\x7a" + varint(len(init)) + init)
open(d + "/key_id_num", "wb").write(b"\xaa\x01\x00")
open(d + "/epid_get_quote", "wb").write(b"\x12\x0a\x0a\x02\xaa\xbb\x10\x01\x1a\x00\x30\x10")
gq = bytes_field(1, b"\xee" * 432) + bytes_field(2, bytes(key)) + b"\x20" + varint(8192)
open(d + "/get_quote_ex", "wb").write(b"\x01" + b"\x8a\x01" + varint(len(gq)) + gq)
PY
# -- quotes: collateral documents of a fresh platform (modes 1, 2, 4),
#    patches to the harness's own good quote (mode 5)
SGXEMU_SECRETS_FILE="$tmp/secrets" "$CLI" attest collateral --out "$tmp/col"
{ printf '\x01'; cat "$tmp/col/tcbInfo.json"; } > $C/fuzz_quote/tcb_info
{ printf '\x02'; cat "$tmp/col/qeIdentity.json"; } > $C/fuzz_quote/qe_identity
{ printf '\x04'; cat "$tmp/col/tcbInfo.json"; } > $C/fuzz_quote/json
printf '\x05' > $C/fuzz_quote/good
printf '\x05\x64\x00\x01\x40\x04\x80' > $C/fuzz_quote/patched
# -- the DCAP verifier: the call and its arguments, then operations on
#    the harness's own good quote and collateral (fuzz/fuzz_qv.c)
python3 - "$C/fuzz_qv" <<'PY'
import struct, sys
d = sys.argv[1]
def seed(name, b0, b1, ops=b""):
    open(d + "/" + name, "wb").write(bytes([b0, b1]) + ops)
seed("sgx_qv_verify_quote", 0x00, 0x00)
seed("tee_verify_quote", 0x01, 0x08)
seed("supplemental_version", 0x02, 0x00)
seed("fmspc", 0x03, 0x00)
seed("pem_crls", 0x10, 0x00)
seed("der_crls_tee", 0x21, 0x00)
seed("version4", 0x30, 0x00)
seed("tcb_out_of_date", 0x04, 0x00)
seed("revoked_tee", 0x0d, 0x00)
seed("expired", 0x00, 0x40)
seed("quote_patched", 0x00, 0x00, b"\x00" + struct.pack("<HB", 100, 1))
seed("quote_appended", 0x00, 0x00, b"\x02\x02\x00")
seed("tcb_info_nul_outside", 0x00, 0x00, b"\x05\x04\xff\x00")
seed("qe_chain_is_pck_chain", 0x01, 0x00, b"\x08\x05\x00")
seed("hex_crl_bad_digit", 0x00, 0x00, b"\x04\x02" + struct.pack("<HB", 10, 0x40))
seed("version_2", 0x00, 0x00, b"\x0a\x04")
seed("no_collateral", 0x00, 0x00, b"\x0c")
seed("qve_report_info", 0x01, 0x00, b"\x0d" + struct.pack("<HB", 0, 0))
seed("qve_legacy_call", 0x00, 0x00, b"\x0d" + struct.pack("<HB", 0, 0))
seed("qve_no_supplemental", 0x00, 0x01, b"\x0d" + struct.pack("<HB", 0, 0))
seed("qve_other_target", 0x00, 0x00, b"\x0d" + struct.pack("<HB", 16, 1))
seed("qve_nonce_changed", 0x01, 0x00, b"\x0d" + struct.pack("<HB", 3, 0x80))
seed("qve_supplemental_too_small", 0x00, 0x07, b"\x0d" + struct.pack("<HB", 0, 0))
seed("qve_revoked", 0x0c, 0x00, b"\x0d" + struct.pack("<HB", 0, 0))
seed("qve_expired", 0x01, 0x40, b"\x0d" + struct.pack("<HB", 0, 0))
PY
# -- the quote provider: PCCS answers (headers, an empty line, the body)
#    made of a fresh platform's collateral, and QCNL configurations
python3 - "$C/fuzz_qpl" "$tmp/col" <<'PY'
import sys, urllib.parse
d, col = sys.argv[1], sys.argv[2]
def read(f): return open(col + "/" + f, "rb").read()
def pct(b): return urllib.parse.quote(b, safe="").encode()
def answer(name, b0, headers, body, status=b"HTTP/1.1 200 OK"):
    h = b"".join(l + b"\r\n" for l in [status] + headers)
    open(d + "/" + name, "wb").write(bytes([b0]) + h + b"\r\n" + body)
pck, tcb = read("pckSignChain.pem"), read("tcbSignChain.pem")
# No PCK certificate among the collateral: the PCK CA stands in for the
# leaf, the root for its issuer chain (each still issued by the next).
leaf = pck[:pck.index(b"-----END CERTIFICATE-----") + 26]
answer("pckcert", 0, [b"Content-Type: application/x-pem-file",
       b"SGX-TCBm: " + b"02" * 16 + b"0d00",
       b"SGX-PCK-Certificate-Issuer-Chain: " + pct(read("trustedRootCaCert.pem"))],
       leaf)
answer("tcb_info", 2, [b"TCB-Info-Issuer-Chain: " + pct(tcb)], read("tcbInfo.json"))
answer("tcb_info_v3", 2, [b"SGX-TCB-Info-Issuer-Chain: " + pct(tcb)],
       read("tcbInfo.json"))
answer("qe_identity", 3, [b"SGX-Enclave-Identity-Issuer-Chain: " + pct(tcb)],
       read("qeIdentity.json"))
answer("pck_crl_hex", 1 | 4, [b"SGX-PCK-CRL-Issuer-Chain: " + pct(pck)],
       read("intermediateCaCrl.der").hex().encode())
answer("root_crl_hex", 4, [], read("rootCaCrl.der").hex().encode() + b"\n")
answer("not_found", 1 << 3, [b"Content-Length: 0"], b"", b"HTTP/1.1 404 Not Found")
conf = b"""{
  // the PCCS
  "pccs_url": "https://localhost:8081/sgx/certification/v4/",
  /* its certificate is self-signed */
  "use_secure_cert": false,
  "collateral_service": "https://localhost:8081/sgx/certification/v4",
  "local_pck_url": "http://localhost:8082/",
  "retry_times": 6, "retry_delay": 10,
  "pccs_api_version": "3.1", "tcb_update_type": "early",
  "custom_request_options": {"get_cert": {"headers": {"x": "y"}}}
}
"""
open(d + "/conf_json", "wb").write(b"\x00\n" + conf)
open(d + "/conf_lines", "wb").write(b"\x00\n# legacy\nPCCS_URL=https://pccs:8081/"
    b"sgx/certification/v3/\nUSE_SECURE_CERT=FALSE\n RETRY_TIMES = 3\n")
PY
echo "seeds written to $C"
