#!/usr/bin/env bash
# Build bench/oe_calls's enclave and host (calls.edl, enc.c, host.c) with
# Open Enclave's own tools, as its samples' Makefiles do: oeedger8r on the
# EDL, the flags of pkg-config's oeenclave-clang / oehost-clang (OE's
# mbedtls crypto libraries, the samples' default), oesign with a
# configuration and a fresh 3072-bit exponent-3 key. The enclave has 4
# TCSs: the caller and up to 3 switchless enclave workers.
#
# usage: build.sh OEDEST OUT   (OEDEST: where ../shared/clients/openenclave/
#                               setup.sh unpacked OE, holding openenclave/)
# Rebuilds only when a source is newer than OUT/calls_host. Exit 0 when built.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
oe=$(cd "${1:?usage: build.sh OEDEST OUT}/openenclave" && pwd)
out=${2:?usage: build.sh OEDEST OUT}
mkdir -p "$out"
out=$(cd "$out" && pwd)

stale=0
for f in "$here"/*; do
	[ "$out/calls_host" -nt "$f" ] || stale=1
done
[ -f "$out/calls_enc.signed" ] || stale=1
[ "$stale" = 0 ] && exit 0

set +u
# shellcheck disable=SC1091
. "$oe/share/openenclave/openenclaverc"
set -u
export PATH="$oe/bin:$PATH"
cc=clang-14
command -v "$cc" >/dev/null || cc=clang
cd "$out"
rm -f calls_host calls_enc calls_enc.signed
inc=$(pkg-config oeenclave-clang --variable=includedir)
oeedger8r "$here/calls.edl" --search-path "$inc" --search-path "$inc/openenclave/edl/sgx" >/dev/null

# shellcheck disable=SC2046
"$cc" -O2 -c $(pkg-config oeenclave-clang --cflags) -DOE_API_VERSION=2 -I. "$here/enc.c" -o enc.o
# shellcheck disable=SC2046
"$cc" -O2 -c $(pkg-config oeenclave-clang --cflags) -DOE_API_VERSION=2 calls_t.c -o calls_t.o
# shellcheck disable=SC2046
"$cc" -o calls_enc calls_t.o enc.o $(pkg-config oeenclave-clang --libs) \
	$(pkg-config oeenclave-clang --variable=mbedtlslibs)
[ -f private.pem ] || openssl genrsa -out private.pem -3 3072 2>/dev/null
printf 'Debug=1\nNumHeapPages=1024\nNumStackPages=64\nNumTCS=4\nProductID=1\nSecurityVersion=1\n' >calls.conf
oesign sign -e calls_enc -c calls.conf -k private.pem >/dev/null

# shellcheck disable=SC2046
"$cc" -O2 -c $(pkg-config oehost-clang --cflags) -I. "$here/host.c" -o host.o
# shellcheck disable=SC2046
"$cc" -O2 -c $(pkg-config oehost-clang --cflags) calls_u.c -o calls_u.o
# shellcheck disable=SC2046
"$cc" -o calls_host calls_u.o host.o $(pkg-config oehost-clang --libs)
