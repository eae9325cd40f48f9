#!/usr/bin/env bash
# Remote attestation from an Intel SGX SDK 2.26 application
# (../shared/clients/intel-sdk): an enclave built with the SDK (EDL,
# sgx_edger8r, trts/tservice, sgx_sign; tests/integration/sdk_quote/) and
# a host program that asks the PSW's own libsgx_quote_ex for a quote
# (sgx_select_att_key_id, sgx_init_quote_ex, sgx_get_quote_size_ex,
# sgx_get_quote_ex), which talks to /var/run/aesmd/aesm.socket: under
# `sgxemu run` the shim answers. `sgxemu quote verify` must accept the
# quote and show the enclave's MRENCLAVE (as `sgx_sign dump` prints it),
# ISVPRODID, ISVSVN and the REPORTDATA the enclave put in.
# Skipped, with the reason, only when the client tree is absent.
# Last line: "N passed, N failed, N skipped".
set -u
. "$(dirname "$0")/../lib/test_lib.sh"
root=$(cd "$(dirname "$0")/../.." && pwd)
client=$(cd "$root/.." && pwd)/shared/clients/intel-sdk

if [ ! -x "$client/setup.sh" ] || [ ! -f "$client/psw-urts-2.26.tar.xz" ]; then
	skp sdk_quote "no Intel SDK client at $client (../shared/clients is absent)"
	finish
fi
CLI=$(cd "$B" 2>/dev/null && pwd)/sgxemu
[ -x "$CLI" ] || { bad sdk_quote "$B/sgxemu is not built"; finish; }
dest=$(cd "$B" && pwd)/sdk-attest
export SGXEMU_SECRETS_FILE="$dest/platform/secrets"

if ! out=$("$client/setup.sh" "$dest" SampleEnclave 2>&1); then
	bad setup "setup.sh failed: $(echo "$out" | tail -n 3)"
	finish
fi
set +u
# shellcheck disable=SC1091
. "$dest/sgxsdk/environment"
set -u
d=$dest/quote
rm -rf "$d" && mkdir -p "$d" "$dest/platform" && cp "$root"/tests/integration/sdk_quote/* "$d"
build() {
	cd "$d" &&
	sgx_edger8r --trusted quote.edl --search-path "$SGX_SDK/include" &&
	sgx_edger8r --untrusted quote.edl --search-path "$SGX_SDK/include" &&
	gcc -O2 -nostdinc -fvisibility=hidden -fpie -ffunction-sections \
	    -fdata-sections -fstack-protector-strong -I. -I"$SGX_SDK/include" \
	    -I"$SGX_SDK/include/tlibc" -c enclave.c quote_t.c &&
	gcc -o enclave.so enclave.o quote_t.o -Wl,-z,relro,-z,now,-z,noexecstack \
	    -Wl,--no-undefined -nostdlib -nodefaultlibs -nostartfiles \
	    -L"$SGX_SDK/lib64" -Wl,--whole-archive -lsgx_trts -Wl,--no-whole-archive \
	    -Wl,--start-group -lsgx_tstdc -lsgx_tcrypto -lsgx_tservice -Wl,--end-group \
	    -Wl,-Bstatic -Wl,-Bsymbolic -Wl,-pie,-eenclave_entry -Wl,--export-dynamic \
	    -Wl,--defsym,__ImageBase=0 -Wl,--gc-sections \
	    -Wl,--version-script=enclave.lds &&
	openssl genrsa -3 -out key.pem 3072 2>/dev/null &&
	sgx_sign sign -key key.pem -enclave enclave.so -out enclave.signed.so \
	    -config enclave.config.xml &&
	sgx_sign dump -enclave enclave.signed.so -dumpfile meta.txt &&
	gcc -O2 -I. -I"$SGX_SDK/include" -o app app.c quote_u.c \
	    -L"$dest/psw/lib" -Wl,-rpath-link,"$dest/psw/lib" -lsgx_urts -lsgx_quote_ex
}
if ! (build) >"$d/build.log" 2>&1; then
	bad build "$(tail -n 3 "$d/build.log" | tr '\n' '|')"
	finish
fi
ok build
# MRENCLAVE as sgx_sign dumps it: the 32 bytes after "enclave_hash.m:".
mrenclave=$(sed -n '/enclave_hash.m:/,/^[^0]/p' "$d/meta.txt" | grep -o '0x[0-9a-f][0-9a-f]' |
	    head -n 32 | sed 's/0x//' | tr -d '\n')
[ ${#mrenclave} -eq 64 ] || bad sgx_sign_dump "no enclave_hash in meta.txt"

out=$(cd "$d" && LD_LIBRARY_PATH="$dest/psw/lib" timeout -s KILL 120 \
	"$CLI" run ./app enclave.signed.so quote.dat 2>&1); rc=$?
if [ $rc -ne 0 ]; then
	bad quote_ex "exit $rc: $(tail -n 3 <<<"$out" | tr '\n' '|')"
	finish
fi
ok quote_ex
rd=$(sed -n 's/^report_data //p' <<<"$out")
v=$("$CLI" quote verify "$d/quote.dat" 2>&1); rc=$?
if [ $rc -eq 0 ] && grep -q "^MRENCLAVE: *$mrenclave" <<<"$v" &&
   grep -q "^REPORTDATA: *$rd" <<<"$v" && grep -q "^ISVPRODID: *7" <<<"$v" &&
   grep -q "^ISVSVN: *3" <<<"$v"; then
	ok verify_accepts_sdk_quote
else
	bad verify_accepts_sdk_quote "exit $rc: $(tr '\n' '|' <<<"$v")"
fi
finish
