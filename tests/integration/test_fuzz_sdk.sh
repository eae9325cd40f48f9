#!/usr/bin/env bash
# libFuzzer on an ECALL of real SDK code (docs/guide.md "Testing enclaves:
# coverage and fuzzing"): Intel's SampleEnclave, copied into a temporary
# directory, its ECALL objects (Enclave/Edger8rSyntax/*.cpp and the
# edger8r bridge Enclave/Enclave_t.c) built by clang with
# -fsanitize-coverage=inline-8bit-counters,pc-table through four lines
# appended to its own Makefile, and tests/enclaves/sancov_stub.c added as
# a source; the rest as the SDK builds it. The unmodified app still runs;
# a libFuzzer harness (tests/integration/sdk_fuzz/harness.c) that makes
# the ECALLs through the SDK's urts gets the enclave's edges (two modules)
# and -print_coverage=1 names the sample's enclave functions with their
# source lines. Skipped, with the reason, without the client tree or
# clang's libFuzzer.
# Last line: "N passed, N failed, N skipped".
set -u
. "$(dirname "$0")/../lib/test_lib.sh"
root=$(cd "$(dirname "$0")/../.." && pwd)
client=$(cd "$root/.." && pwd)/shared/clients/intel-sdk

if [ ! -x "$client/setup.sh" ] || [ ! -f "$client/sgxsdk-2.26-install.tar.xz" ]; then
	skp fuzz_sdk "no Intel SDK client at $client (../shared/clients is absent)"
	finish
fi
if ! echo 'int LLVMFuzzerTestOneInput(const char *d, long n) { (void)d; return (int)n & 0; }' |
	clang -x c -fsanitize=fuzzer -o /dev/null - >/dev/null 2>&1; then
	skp fuzz_sdk "clang's libFuzzer runtime is missing (clang, libclang-rt-dev: scripts/deps.sh)"
	finish
fi
asan_build && { skp fuzz_sdk "sanitizer build: the harness is built without ASan"; finish; }
CLI=$(cd "$B" 2>/dev/null && pwd)/sgxemu
[ -x "$CLI" ] || { bad fuzz_sdk "$B/sgxemu is not built"; finish; }
dest=$(cd "$B" && pwd)/intel-sdk
mkdir -p "$dest"
if [ ! -x "$dest/samples/SampleEnclave/app" ] || [ ! -x "$dest/sgxsdk/bin/x64/sgx_sign" ]; then
	if ! out=$("$client/setup.sh" "$dest" SampleEnclave 2>&1); then
		bad fuzz_sdk_setup "$out"
		finish
	fi
fi
export LD_LIBRARY_PATH="$dest/psw/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT

S=$T/SampleEnclave
cp -r "$dest/sgxsdk/SampleCode/SampleEnclave" "$S"
cp "$root/tests/enclaves/sancov_stub.c" "$S/Enclave/Edger8rSyntax/sancov_stub.cpp"
cat >> "$S/Makefile" <<'MK'

SANCOV := -fsanitize-coverage=inline-8bit-counters,pc-table
Enclave/Edger8rSyntax/%.o: CXX := clang++
Enclave/Edger8rSyntax/%.o: Enclave_Cpp_Flags += $(SANCOV)
Enclave/Enclave_t.o: CC := clang
Enclave/Enclave_t.o: Enclave_C_Flags += $(SANCOV)
MK
set +u
# shellcheck disable=SC1091
. "$dest/sgxsdk/environment"
set -u
if (cd "$S" && CPATH=$SGX_SDK/include LIBRARY_PATH=$dest/psw/lib \
	make SGX_MODE=HW SGX_DEBUG=1 > build.log 2>&1); then
	ok sample_builds_with_clang_edges
else
	bad sample_builds_with_clang_edges "$(grep -m 3 error "$S/build.log")"
	finish
fi
"$CLI" info --enclave "$S/enclave.signed.so" > "$T/info.out" 2>&1
grep -Eq '^libFuzzer: *__sancov_cntrs, [0-9]+ edges, with their PC table' "$T/info.out" &&
	ok info_enclave_counts_edges || bad info_enclave_counts_edges "$(cat "$T/info.out")"
rc=$( (cd "$S" && echo | timeout -s KILL 120 "$CLI" run ./app) > "$T/app.out" 2>&1; echo $?) 2>/dev/null
[ "$rc" = 0 ] && grep -q 'SampleEnclave successfully returned' "$T/app.out" &&
	ok app_runs_unchanged || bad app_runs_unchanged "status $rc: $(tail -n 2 "$T/app.out")"

if clang -O1 -g -Wall -Wextra -Werror -Wno-attributes -fsanitize=fuzzer \
	-I"$S/Include" -I"$S/App" -I"$SGX_SDK/include" -o "$S/fuzz_sample" \
	"$root/tests/integration/sdk_fuzz/harness.c" "$S/App/Enclave_u.c" \
	-L"$dest/psw/lib" -Wl,-rpath-link,"$dest/psw/lib" -lsgx_urts -lpthread \
	> "$T/harness.log" 2>&1; then
	ok harness_builds
else
	bad harness_builds "$(head -n 3 "$T/harness.log")"
	finish
fi
mkdir -p "$T/fz"
(cd "$T/fz" && SAMPLE_ENCLAVE="$S/enclave.signed.so" timeout -s KILL 300 \
	"$CLI" run "$S/fuzz_sample" -runs=20000 -seed=1 -max_len=64 -print_coverage=1) \
	> "$T/fuzz.log" 2>&1
rc=$?
[ $rc = 0 ] && grep -q 'Done 20000 runs' "$T/fuzz.log" &&
	ok fuzzing_runs || bad fuzzing_runs "status $rc: $(tail -n 3 "$T/fuzz.log")"
grep -q 'INFO: Loaded 2 modules' "$T/fuzz.log" && grep -q 'INFO: Loaded 2 PC tables' "$T/fuzz.log" &&
	ok enclave_edges_registered || bad enclave_edges_registered "$(grep 'INFO: Loaded' "$T/fuzz.log")"
for f in 'ecall_pointer_size .*/Enclave/Edger8rSyntax/Pointers.cpp:[0-9]+' \
	 'ecall_pointer_string_const .*/Enclave/Edger8rSyntax/Pointers.cpp:[0-9]+' \
	 'sgx_ecall_pointer_size .*/Enclave/Enclave_t.c:[0-9]+'; do
	name=${f%% *}
	grep -Eq "^COVERED_FUNC: .* $f" "$T/fuzz.log" &&
		ok "print_coverage_names_$name" ||
		bad "print_coverage_names_$name" "$(grep -E "COVERED_FUNC.* $name " "$T/fuzz.log" | head -n 2)"
done
grep -Eq '^UNCOVERED_FUNC: .* ecall_array_in .*/Enclave/Edger8rSyntax/Arrays.cpp:[0-9]+' "$T/fuzz.log" &&
	ok print_coverage_uncovered_enclave_function ||
	bad print_coverage_uncovered_enclave_function "$(grep -E 'ecall_array_in ' "$T/fuzz.log" | head -n 2)"
finish
