#!/usr/bin/env bash
# `make deb` (mk/deb.mk, scripts/mkdeb.sh): the package has every file it
# lists and its control fields; unpacked into a scratch root (or, in CI as
# root, installed on the machine with apt-get), its own sgxemu runs the
# seed selftest and the Intel SDK's SampleEnclave, finding libsgxemu.so,
# the audit module, libsgxemu_ptrace.so and sgxemu.gdb from where it is;
# and a program builds against `pkg-config --cflags --libs sgxemu` and
# runs on the C API.
# Last line: "N passed, N failed, N skipped".
set -u
. "$(dirname "$0")/../lib/test_lib.sh"
root=$(cd "$(dirname "$0")/../.." && pwd)
T=$(mktemp -d)
installed=0
cleanup() {
	# Only a package this test installed is taken away again.
	[ "$installed" = 1 ] && dpkg -r sgxemu > /dev/null 2>&1
	rm -rf "$T"
}
trap cleanup EXIT

if asan_build; then
	skp deb "sanitizer build: make deb packages the plain build (make test runs this)"
	finish
fi
for t in dpkg-deb dpkg-shlibdeps pkg-config; do
	if ! command -v $t > /dev/null; then
		bad deb_tools "$t is missing (scripts/deps.sh test installs it)"
		finish
	fi
done

# 1. The package.
if ! make -C "$root" --no-print-directory -s B="$B" deb > "$T/make.out" 2>&1; then
	bad make_deb "$(tail -n 5 "$T/make.out" | tr '\n' '|')"
	finish
fi
deb=$(tail -n 1 "$T/make.out")
case "$deb" in /*) ;; *) deb=$root/$deb ;; esac
# One package, the one it named (mkdeb.sh takes older ones away).
debs=("$(dirname "$deb")"/sgxemu_*.deb)
if [ -f "$deb" ] && [ ${#debs[@]} -eq 1 ] && [ "${debs[0]}" -ef "$deb" ]; then
	ok make_deb
else
	bad make_deb "no package at '$deb'"
	finish
fi
dpkg-deb --info "$deb" > "$T/info" 2>&1
field() { sed -n "s/^ $1: //p" "$T/info"; }
[ "$(field Package)" = sgxemu ] && ok deb_package_name || bad deb_package_name "$(field Package)"
[ "$(field Architecture)" = "$(dpkg --print-architecture)" ] && ok deb_architecture ||
	bad deb_architecture "$(field Architecture)"
v=$(field Version)
case "$v" in "$(cat "$root/VERSION")"*) ok deb_version ;; *) bad deb_version "'$v'" ;; esac
# Depends names the package of every library the ELF files link.
dep=$(field Depends)
miss=
for f in "$B/sgxemu" "$B/libsgxemu.so" "$B/libsgxemu_ptrace.so" "$B/libsgxemu-audit.so"; do
	for so in $(objdump -p "$f" | awk '/NEEDED/ {print $2}'); do
		[ "$so" = ld-linux-x86-64.so.2 ] && continue
		path=$(ldconfig -p | awk -v l="$so" '$1 == l {print $NF; exit}')
		pkg=$(dpkg -S "$(readlink -f "$path")" 2>/dev/null | head -n 1 | cut -d: -f1)
		[ -n "$pkg" ] || pkg=$(dpkg -S "$path" 2>/dev/null | head -n 1 | cut -d: -f1)
		grep -Eq "(^|, )$pkg( |,|$)" <<< "$dep" || miss="$miss $so($pkg)"
	done
done
[ -z "$miss" ] && [ -n "$dep" ] && ok deb_depends_cover_linked_libraries ||
	bad deb_depends_cover_linked_libraries "Depends '$dep' lacks$miss"
ma=$(dpkg-architecture -qDEB_HOST_MULTIARCH)
want="usr/bin/sgxemu usr/lib/sgxemu/libsgxemu.so usr/lib/sgxemu/libsgxemu-audit.so
usr/lib/sgxemu/libsgxemu_ptrace.so usr/share/sgxemu/sgxemu.gdb usr/share/man/man1/sgxemu.1.gz
usr/lib/$ma/libsgxemu.a usr/lib/$ma/pkgconfig/sgxemu.pc usr/share/doc/sgxemu/copyright"
for h in "$root"/include/sgxemu/*.h; do want="$want usr/include/sgxemu/$(basename "$h")"; done
dpkg-deb --contents "$deb" | awk '{print $NF}' | sed 's|^\./||' > "$T/contents"
miss=
for f in $want; do grep -qx "$f" "$T/contents" || miss="$miss $f"; done
[ -z "$miss" ] && ok deb_contents || bad deb_contents "missing:$miss"
R=$T/root
dpkg-deb -x "$deb" "$R"
miss=
for f in $want; do [ -s "$R/$f" ] || miss="$miss $f"; done
[ -z "$miss" ] && ok deb_extracts || bad deb_extracts "empty or missing:$miss"
[ -x "$R/usr/bin/sgxemu" ] || { bad deb_cli "no executable usr/bin/sgxemu"; finish; }

# 2. Where it runs from: the scratch root, or the machine in CI as root
# (apt-get resolves Depends; all are installed there already).
if [ "${CI:-}" = true ] && [ "$(id -u)" -eq 0 ] && ! dpkg-query -W sgxemu > /dev/null 2>&1; then
	if apt-get install -y -qq -o DPkg::Lock::Timeout=120 --no-install-recommends "$deb" > "$T/apt.out" 2>&1; then
		installed=1
		R=
		ok deb_apt_install
	else
		bad deb_apt_install "$(tail -n 5 "$T/apt.out" | tr '\n' '|')"
		finish
	fi
fi
CLI=$R/usr/bin/sgxemu
# Its pieces, found relative to itself: `sgxemu gdb`'s command line names
# the installed sgxemu.gdb and libsgxemu.so; `sgxemu info` finds the
# debugger library.
line=$(SGXEMU_GDB="echo" "$CLI" gdb /bin/true 2>&1)
case "$line" in
"-x $R/usr/share/sgxemu/sgxemu.gdb -iex set exec-wrapper env 'LD_PRELOAD=$R/usr/lib/sgxemu/libsgxemu.so' --args /bin/true")
	ok installed_gdb_finds_its_files ;;
*)	bad installed_gdb_finds_its_files "'$line'" ;;
esac
"$CLI" info > "$T/cli-info" 2>&1
if grep -q '^debugger: .*libsgxemu_ptrace.so' "$T/cli-info" &&
   ! grep -q 'libsgxemu_ptrace.so not found' "$T/cli-info"; then
	ok installed_info_finds_ptrace_library
else
	bad installed_info_finds_ptrace_library "$(grep '^debugger' "$T/cli-info")"
fi
# The shim runs a program with the audit module (LD_AUDIT) beside it (a
# missing one is a warning): a plain program sees /dev/sgx_enclave.
out=$("$CLI" run sh -c 'test -c /dev/sgx_enclave && echo device' 2>&1)
if grep -qx device <<< "$out" && ! grep -qiE 'not found|missing|warning' <<< "$out"; then
	ok installed_run_has_the_device
else
	bad installed_run_has_the_device "$(tail -n 3 <<< "$out" | tr '\n' '|')"
fi

# 3. The seed selftest with the installed sgxemu (built as make seed does).
SEED=$B/seed
if [ ! -x "$SEED/test_sgx" ] && [ -d "${SGXEMU_SHARED:-$root/../shared}/seed-tree" ]; then
	make -C "$root" --no-print-directory -s B="$B" seed-build > "$T/seed.out" 2>&1
fi
if [ ! -x "$SEED/test_sgx" ] || [ ! -f "$SEED/encl.bin" ] || [ ! -f "$SEED/encl.ss" ]; then
	skp installed_seed_selftest "no seed selftest built (../shared/seed-tree absent)"
else
	out=$(cd "$SEED" && timeout 60 "$CLI" run ./test_sgx 2>&1)
	rc=$?
	in=$(sed -n 's/^Input: //p' <<< "$out")
	res=$(sed -n 's/^Output: //p' <<< "$out")
	if [ "$rc" -eq 0 ] && [ -n "$in" ] && [ "$in" = "$res" ]; then
		ok installed_seed_selftest
	else
		bad installed_seed_selftest "rc $rc, Input '$in', Output '$res': $(tail -n 3 <<< "$out" | tr '\n' '|')"
	fi
fi

# 4. An SDK sample with the installed sgxemu.
client=${SGXEMU_SHARED:-$root/../shared}/clients/intel-sdk
if [ ! -x "$client/setup.sh" ] || [ ! -f "$client/sgxsdk-2.26-install.tar.xz" ]; then
	skp installed_sdk_sample "no Intel SDK client at $client (../shared/clients is absent)"
else
	D=$(cd "$B" && pwd)/sdk-deb
	if [ ! -x "$D/samples/SampleEnclave/app" ] &&
	   ! "$client/setup.sh" "$D" SampleEnclave > "$T/sdk.out" 2>&1; then
		bad installed_sdk_sample "setup.sh failed: $(tail -n 3 "$T/sdk.out" | tr '\n' '|')"
	else
		out=$(cd "$D/samples/SampleEnclave" && LD_LIBRARY_PATH=$D/psw/lib \
			timeout -s KILL 120 "$CLI" run ./app < /dev/null 2>&1)
		rc=$?
		[ $rc -eq 0 ] && grep -q 'SampleEnclave successfully returned' <<< "$out" &&
			ok installed_sdk_sample ||
			bad installed_sdk_sample "exit $rc: $(tail -n 3 <<< "$out" | tr '\n' '|')"
	fi
fi

# 5. A program on the C API, built with pkg-config's flags: it brings the
# platform up with an 8 MiB EPC and reports its pages and the version.
pc=(pkg-config)
if [ -n "$R" ]; then
	export PKG_CONFIG_PATH=$R/usr/lib/$ma/pkgconfig
	pc+=(--define-variable=prefix="$R/usr")
fi
flags=$("${pc[@]}" --cflags --libs sgxemu 2>&1)
if [ $? -eq 0 ] && grep -q -- '-lsgxemu' <<< "$flags"; then
	ok pkg_config_flags
else
	bad pkg_config_flags "'$flags'"
	finish
fi
[ "$("${pc[@]}" --modversion sgxemu)" = "$(cat "$root/VERSION")" ] && ok pkg_config_version ||
	bad pkg_config_version "$("${pc[@]}" --modversion sgxemu)"
if [ -n "$R" ] && ! grep -q -- "-I$R/usr/include" <<< "$flags"; then
	bad pkg_config_relocated "'$flags' does not name $R/usr/include"
elif [ -n "$R" ]; then
	ok pkg_config_relocated
fi
cat > "$T/api.c" <<'C'
#include <stdio.h>
#include <sgxemu/sgxemu.h>

int main(void)
{
	struct sgxemu_platform_stats st;
	uint32_t r[4];

	if (sgxemu_platform_init() || sgxemu_platform_stats(&st) ||
	    sgxemu_cpuid(0x12, 0, r))
		return 1;
	printf("%s\nepc pages %llu\nsgx1 %u\n", sgxemu_version(),
	       (unsigned long long)st.epc_total_pages, r[0] & 1);
	return 0;
}
C
# shellcheck disable=SC2086
if cc -o "$T/api" "$T/api.c" $flags > "$T/cc.out" 2>&1; then
	ok pkg_config_builds_a_program
	out=$(SGXEMU_EPC_SIZE=8M "$T/api" 2>&1)
	rc=$?
	want="$("$CLI" info | head -n 1)
epc pages $((8 * 1024 * 1024 / 4096))
sgx1 1"
	[ $rc -eq 0 ] && [ "$out" = "$want" ] && ok c_api_program_runs ||
		bad c_api_program_runs "exit $rc: '$out', want '$want'"
else
	bad pkg_config_builds_a_program "$(tail -n 5 "$T/cc.out" | tr '\n' '|')"
fi
finish
