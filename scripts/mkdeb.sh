#!/usr/bin/env bash
# Pack a staged /usr tree (mk/deb.mk: `make install DESTDIR=STAGE`) into
# OUTDIR/sgxemu_VERSION_ARCH.deb with dpkg-deb; prints the file's path.
#
#   scripts/mkdeb.sh STAGE OUTDIR
#
# Depends: comes from dpkg-shlibdeps on the staged ELF files (the packages
# of the libraries they link, at the versions their symbols need), so it
# names what this build really uses. The C API's libsgxemu.a links with
# OpenSSL, Zydis and protobuf-c: their -dev packages are recommended.
set -euo pipefail

stage=${1:?usage: mkdeb.sh STAGE OUTDIR}
out=${2:?usage: mkdeb.sh STAGE OUTDIR}
cd "$(dirname "$0")/.."
for t in dpkg-deb dpkg-shlibdeps dpkg-architecture; do
	command -v $t >/dev/null ||
		{ echo "mkdeb.sh: $t is missing (apt-get install -y dpkg-dev)" >&2; exit 1; }
done
[ -x "$stage/usr/bin/sgxemu" ] || { echo "mkdeb.sh: $stage/usr/bin/sgxemu not staged" >&2; exit 1; }

version=$(cat VERSION)
# A checkout: the last commit's time and hash, so later builds sort later.
if stamp=$(git log -1 --format='%cd.%h' --date=format:%Y%m%d%H%M%S 2>/dev/null) && [ -n "$stamp" ]; then
	version="$version+git$stamp"
fi
arch=$(dpkg-architecture -qDEB_HOST_ARCH)
maint=${DEB_MAINTAINER:-$(git log -1 --format='%an <%ae>' 2>/dev/null || true)}
maint=${maint:-sgxemu maintainers <root@localhost>}

# Debian keeps man pages compressed and a copyright file per package.
find "$stage/usr/share/man" -type f -name '*.[0-9]' -exec gzip -9nf {} +
doc=$stage/usr/share/doc/sgxemu
mkdir -p "$doc"
cat > "$doc/copyright" <<COPY
sgxemu: Intel SGX in software.
Every source file of sgxemu carries SPDX-License-Identifier: MIT.
COPY

# dpkg-shlibdeps wants a debian/control naming the package.
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/debian"
printf 'Source: sgxemu\n\nPackage: sgxemu\nArchitecture: %s\n' "$arch" > "$tmp/debian/control"
mapfile -t elfs < <(find "$stage/usr" -type f \( -name '*.so' -o -path '*/bin/*' \) | sort)
abs=()
for f in "${elfs[@]}"; do abs+=("$(realpath "$f")"); done
depends=$(cd "$tmp" && dpkg-shlibdeps -O "${abs[@]}" 2>/dev/null | sed -n 's/^shlibs:Depends=//p')
[ -n "$depends" ] || { echo "mkdeb.sh: dpkg-shlibdeps found no dependencies" >&2; exit 1; }

size=$(du -sk --exclude=DEBIAN "$stage" | cut -f1)
mkdir -p "$stage/DEBIAN"
cat > "$stage/DEBIAN/control" <<CTRL
Package: sgxemu
Version: $version
Architecture: $arch
Maintainer: $maint
Installed-Size: $size
Depends: $depends
Recommends: gdb, libssl-dev, libzydis-dev, libprotobuf-c-dev
Section: devel
Priority: optional
Description: Intel SGX in software
 sgxemu implements the Intel SGX processor architecture and the Linux SGX
 driver in software, so that unmodified SGX programs run on an x86-64
 Linux machine without SGX: sgxemu run PROG, sgxemu gdb PROG, sign,
 measure and dump enclaves, attestation tools, and the C API
 (<sgxemu/sgxemu.h>, pkg-config sgxemu). It is not a TEE.
CTRL
deb=$out/sgxemu_${version}_$arch.deb
rm -f "$out"/sgxemu_*.deb
dpkg-deb --root-owner-group -Zxz --build "$stage" "$deb" >/dev/null
echo "$deb"
