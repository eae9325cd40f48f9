#!/usr/bin/env bash
# Build the SDK test enclave and its host program with the Intel SDK's own
# tools, as an SDK user's Makefile does: sgx_edger8r on encl.edl, the
# trusted libraries (trts, tstdc, tservice, tcrypto, tswitchless, the EMM)
# with -nostdlib, and sgx_sign with a configuration XML; one enclave signed
# with encl.config.xml (static), one with encl_edmm.config.xml (EDMM) and
# one with encl_aexn.config.xml (AEX-Notify).
#
# usage: build.sh SDKDEST OUT     (SDKDEST: where ../shared/clients/
#                                  intel-sdk/setup.sh unpacked the SDK)
# Rebuilds only when a source is newer than OUT/app. Exit 0 when built.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
sdkdest=$(cd "${1:?usage: build.sh SDKDEST OUT}" && pwd)
out=${2:?usage: build.sh SDKDEST OUT}
mkdir -p "$out"
out=$(cd "$out" && pwd)

stale=0
for f in "$here"/*; do
	[ "$out/app" -nt "$f" ] || stale=1
done
[ -f "$out/encl.signed.so" ] && [ -f "$out/encl_edmm.signed.so" ] &&
	[ -f "$out/encl_aexn.signed.so" ] || stale=1
[ "$stale" = 0 ] && exit 0

set +u
# shellcheck disable=SC1091
. "$sdkdest/sgxsdk/environment"
set -u
sdk=$SGX_SDK
cd "$out"
rm -f app encl.so encl.signed.so encl_edmm.signed.so encl_aexn.signed.so
"$sdk/bin/x64/sgx_edger8r" --search-path "$sdk/include" \
	--trusted-dir . --untrusted-dir . "$here/encl.edl" >/dev/null

# Trusted side: the SDK's headers only, position independent, no libc.
tinc="-I. -I$sdk/include -I$sdk/include/tlibc"
tcflags="-m64 -O2 -nostdinc -fvisibility=hidden -fpie -ffunction-sections \
	-fdata-sections -fstack-protector-strong $tinc"
gcc $tcflags -c encl_t.c -o encl_t.o
gcc $tcflags -c "$here/encl.c" -o encl.o
gcc encl_t.o encl.o -o encl.so \
	-Wl,-z,relro,-z,now,-z,noexecstack -Wl,--no-undefined -nostdlib \
	-nodefaultlibs -nostartfiles -L"$sdk/lib64" \
	-Wl,--whole-archive -lsgx_tswitchless -lsgx_trts -Wl,--no-whole-archive \
	-Wl,--start-group -lsgx_tstdc -lsgx_tcxx -lsgx_tcrypto -lsgx_tservice \
	-Wl,--end-group -Wl,-Bstatic -Wl,-Bsymbolic -Wl,--no-undefined \
	-Wl,-pie,-eenclave_entry -Wl,--export-dynamic \
	-Wl,--defsym,__ImageBase=0 -Wl,--gc-sections \
	-Wl,--version-script="$here/encl.lds"

# A throw-away signing key: RSA-3072, exponent 3, as SGX requires.
[ -f key.pem ] || openssl genrsa -3 -out key.pem 3072 2>/dev/null
"$sdk/bin/x64/sgx_sign" sign -key key.pem -enclave encl.so \
	-out encl.signed.so -config "$here/encl.config.xml" >sign.log 2>&1 ||
	{ cat sign.log >&2; exit 1; }
"$sdk/bin/x64/sgx_sign" sign -key key.pem -enclave encl.so \
	-out encl_edmm.signed.so -config "$here/encl_edmm.config.xml" \
	>sign_edmm.log 2>&1 || { cat sign_edmm.log >&2; exit 1; }
"$sdk/bin/x64/sgx_sign" sign -key key.pem -enclave encl.so \
	-out encl_aexn.signed.so -config "$here/encl_aexn.config.xml" \
	>sign_aexn.log 2>&1 || { cat sign_aexn.log >&2; exit 1; }

# Untrusted side: the urts (and the switchless library, whole).
gcc -m64 -O2 -fPIC -I. -I"$sdk/include" -c encl_u.c -o encl_u.o
gcc -m64 -O2 -fPIC -I. -I"$sdk/include" -c "$here/app.c" -o app.o
gcc app.o encl_u.o -o app -L"$sdk/lib64" -L"$sdkdest/psw/lib" \
	-Wl,--whole-archive -lsgx_uswitchless -Wl,--no-whole-archive \
	-lsgx_urts -lpthread
