#!/usr/bin/env bash
# Install the Debian packages sgxemu needs when some are missing, so that
# `make seed` and `make test` work on a fresh Debian 12 machine (README.md,
# "Requirements"). Run by make before the first compile, and by .ci/run.
#
#   scripts/deps.sh build   what the build needs (compilers, OpenSSL, Zydis;
#                           dpkg-dev for `make deb`)
#   scripts/deps.sh test    that, plus what the test suite uses (the Gramine
#                           client's setup.sh, gdb for tests/integration/
#                           test_gdb.sh; xz-utils for the Intel SDK
#                           client's archives, whose samples build with
#                           build-essential's g++ and make; pkg-config for
#                           tests/integration/test_deb.sh; linux-source
#                           for test_kselftest.sh; clang's libFuzzer
#                           runtime and llvm-symbolizer, which names enclave
#                           functions in libFuzzer's reports, for
#                           tests/integration/test_fuzz_enclave.sh)
#   scripts/deps.sh kselftest   build's, plus linux-source: the kernel's SGX
#                           selftest that `make seed` runs on a clone with
#                           no seed tree beside it (scripts/kselftest.sh)
#
# A machine that has everything is left alone (no apt-get at all). Without
# root and without sudo the missing packages are named and it fails.
set -euo pipefail

build=(build-essential libssl-dev clang openssl libzydis-dev libprotobuf-c-dev
       protobuf-c-compiler libmicrohttpd-dev libcurl4-openssl-dev dpkg-dev)
test=(libprotobuf-c1 python3-click python3-jinja2 python3-pyelftools
      python3-tomli python3-tomli-w python3-voluptuous python3-cryptography
      gdb curl xz-utils pkg-config linux-source libclang-rt-14-dev llvm)

want=("${build[@]}")
case "${1:-build}" in
build) ;;
test) want+=("${test[@]}") ;;
kselftest) want+=(linux-source xz-utils) ;;
*) echo "usage: $0 build|test|kselftest" >&2; exit 2 ;;
esac

# Not Debian: nothing to check with; the compiler will say what is missing.
command -v dpkg-query >/dev/null 2>&1 || exit 0

missing=()
for p in "${want[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" ||
		missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0

if ! command -v apt-get >/dev/null 2>&1; then
	echo "sgxemu: missing packages (no apt-get here): ${missing[*]}" >&2
	exit 1
fi
sudo=""
if [ "$(id -u)" -ne 0 ]; then
	if ! command -v sudo >/dev/null 2>&1; then
		echo "sgxemu: missing packages; as root run: apt-get install -y ${missing[*]}" >&2
		exit 1
	fi
	sudo=sudo
fi
echo "sgxemu: installing ${missing[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq
$sudo apt-get install -y -qq "${missing[@]}"
