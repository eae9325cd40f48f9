#!/usr/bin/env bash
# Build the Linux kernel's own SGX selftest (tools/testing/selftests/sgx),
# unmodified, with its own Makefile and the kselftest lib.mk, from Debian's
# linux-source package: the main job's program on a clone with no seed tree
# beside it (mk/seed.mk), and tests/integration/test_kselftest.sh's.
#
#   scripts/kselftest.sh DIR     extract into DIR/src, build into DIR/out;
#                                prints DIR/out (test_sgx, test_encl.elf)
#
# Only the files the selftest's build reads come out of the tarball: the
# selftest, the kselftest harness and lib.mk, x86/check_cc.sh, tools/include
# and the three kernel headers its defines.h names. Exit 1 with one line on
# stderr when the package is missing or the build fails.
set -euo pipefail

dir=${1:?usage: $0 DIR}
tar=$(ls /usr/src/linux-source-*.tar.xz 2>/dev/null | sort -V | tail -n 1 || true)
if [ -z "$tar" ]; then
	echo "sgxemu: no /usr/src/linux-source-*.tar.xz (Debian's linux-source package: scripts/deps.sh kselftest)" >&2
	exit 1
fi
top=$(basename "$tar" .tar.xz)
mkdir -p "$dir"
dir=$(cd "$dir" && pwd)
st=tools/testing/selftests
# Extracted once per tarball: a stamp names the one it came from.
if [ "$(cat "$dir/src.stamp" 2>/dev/null)" != "$tar" ]; then
	rm -rf "$dir/src" "$dir/src.stamp"
	mkdir -p "$dir/src"
	tar -xJf "$tar" -C "$dir/src" --wildcards \
		"$top/$st/sgx/*" "$top/$st/lib.mk" "$top/$st/kselftest*.h" \
		"$top/$st/x86/check_cc.sh" "$top/$st/x86/trivial_64bit_program.c" \
		"$top/tools/include/*" "$top/arch/x86/include/asm/sgx.h" \
		"$top/arch/x86/include/asm/enclu.h" \
		"$top/arch/x86/include/uapi/asm/sgx.h" ||
		{ echo "sgxemu: cannot extract the SGX selftest from $tar" >&2; exit 1; }
	echo "$tar" > "$dir/src.stamp"
fi
mkdir -p "$dir/out"
# The kernel's selftests build with gcc (as mk/seed.mk's SEED_CC).
if ! make --no-print-directory -C "$dir/src/$top/$st/sgx" CC=gcc \
	OUTPUT="$dir/out" all > "$dir/build.log" 2>&1 ||
   [ ! -x "$dir/out/test_sgx" ] || [ ! -f "$dir/out/test_encl.elf" ]; then
	rm -f "$dir/out/test_sgx" "$dir/out/test_encl.elf"
	echo "sgxemu: the kernel's SGX selftest from $tar did not build ($dir/build.log)" >&2
	exit 1
fi
echo "$dir/out"
