#!/usr/bin/env bash
# The Open Enclave SDK 0.19 (../shared/clients/openenclave, see its
# SOURCE.md) and its samples, unmodified, under `sgxemu run`, on Intel's
# PSW libsgx_enclave_common.so.1 (../shared/clients/intel-sdk's
# psw-urts-2.26), as a CI job would run them without SGX:
#  - each sample that builds on Linux SGX, with its Makefile's `run`
#    arguments: helloworld, data-sealing, debugmalloc, file-encryptor,
#    log_callback, pluggable_allocator, switchless, attestation sgxlocal;
#    data sealed by the data-sealing sample's enclaves in one process and
#    unsealed in the next (tests/openenclave/seal_host.c);
#  - bench/oe_calls's program (bench/openenclave, built with OE's
#    tools): its regular and switchless calls succeed, and its ECALLs
#    enter through the vDSO (no host ENCLU trap);
#  - remote attestation: the quote is made in-process (OE's dlopen of
#    libsgx_dcap_ql), collateral comes from `sgxemu pccs` through Intel's
#    QCNL configuration, and OE's own verifier accepts everything up to
#    the one check sgxemu must fail: the PCK chain's root key (and, with
#    USE_SGX_QVL=1, after libsgx_dcap_quoteverify and its QvE-checked call
#    accepted the quote, the TCB info chain's root key) is compared with
#    Intel's, compiled into OE. The cases assert that this check, and no
#    other, refuses (attestation sgxremote, attested_tls enclave to
#    enclave and the non-enclave client, host_verify on oeutil's quote;
#    in enclave_b, where OE logs nothing, seen with oegdb),
#    and that sgxemu's verifier and libsgx_dcap_quoteverify accept the
#    same quote, and the one OE makes through aesmd's socket;
#  - oegdb (OE's gdb with its plugin) with sgxemu.gdb on helloworld: a
#    breakpoint in an enclave function, bt through the enclave into the
#    host, enclave variables, the program's end, and none of the
#    messages of a broken contract ("Global enclave list processing
#    failed." shown to be the plugin's own, on a plain program).
# Everything is built once into $B/openenclave (setup.sh unpacks OE and
# builds the samples with their own Makefiles, about 60 s) and reused.
# Skipped, with the reason, only when the clients are absent.
# Last line: "N passed, N failed, N skipped".
set -u
. "$(dirname "$0")/../lib/test_lib.sh"
root=$(cd "$(dirname "$0")/../.." && pwd)
clients=$(cd "$root/.." && pwd)/shared/clients
client=$clients/openenclave
psw_tar=$clients/intel-sdk/psw-urts-2.26.tar.xz

if [ ! -x "$client/setup.sh" ] || [ ! -f "$client/openenclave-0.19-install.tar.xz" ]; then
	skp openenclave "no Open Enclave client at $client (../shared/clients is absent)"
	finish
fi
if [ ! -f "$psw_tar" ]; then
	skp openenclave "no Intel PSW at $psw_tar (OE's host needs its libsgx_enclave_common.so.1)"
	finish
fi
B=$(cd "$B" 2>/dev/null && pwd) || { bad openenclave "no build directory"; finish; }
CLI=$B/sgxemu
for f in "$CLI" "$B/dcap/libsgx_dcap_ql.so" "$B/dcap/libsgx_dcap_quoteverify.so" \
	 "$B/dcap/libdcap_quoteprov.so"; do
	[ -e "$f" ] || { bad openenclave "$f is not built"; finish; }
done
dest=$B/openenclave
S=$dest/samples
OE=$dest/openenclave
T=$(mktemp -d)
PCCS_PID=
BG_PIDS=
cleanup() {
	# A background case's subshell, and the timeout it runs (which passes
	# the signal on to the program).
	for p in $BG_PIDS; do pkill -P "$p" 2>/dev/null; kill "$p" 2>/dev/null; done
	[ -n "$PCCS_PID" ] && kill "$PCCS_PID" 2>/dev/null
	wait 2>/dev/null
	rm -rf "$T"
}
trap cleanup EXIT
# A platform of its own for this run (identity, sealing keys, PCK).
export SGXEMU_SECRETS_FILE=$T/secrets

# --- OE, its samples and the PSW, once ------------------------------------------
samples="helloworld attestation attested_tls data-sealing debugmalloc file-encryptor host_verify log_callback pluggable_allocator switchless"
prog_of() {
	case $1 in
	helloworld) echo host/helloworld_host ;;
	attestation) echo host/attestation_host ;;
	attested_tls) echo non_enc_client/tls_non_enc_client ;;
	data-sealing) echo host/host ;;
	debugmalloc) echo host/debugmallochost ;;
	file-encryptor) echo host/file-encryptorhost ;;
	host_verify) echo host_verify ;;
	log_callback) echo host/log_callbackhost ;;
	pluggable_allocator) echo host/allocator_demo_host ;;
	switchless) echo host/switchlesshost ;;
	esac
}
need=
for s in $samples; do
	[ -x "$S/$s/$(prog_of "$s")" ] || need="$need $s"
done
if [ -n "$need" ] || [ ! -x "$OE/bin/oeutil" ]; then
	# shellcheck disable=SC2086
	if ! out=$("$client/setup.sh" "$dest" ${need:-helloworld} 2>&1); then
		bad setup "setup.sh failed: $(grep -v '^BUILT' <<<"$out" | tail -n 3 | tr '\n' '|')"
		finish
	fi
fi
if [ ! -e "$dest/psw/lib/libsgx_enclave_common.so.1" ]; then
	rm -rf "$dest/psw" "$dest/psw-urts-2.26"
	tar -C "$dest" -xJf "$psw_tar" && mv "$dest/psw-urts-2.26" "$dest/psw" ||
		{ bad setup "cannot unpack $psw_tar"; finish; }
fi
ok setup
PSW=$dest/psw/lib

# run NAME DIR [VAR=VALUE...] -- HOST ARGS...: the host under sgxemu run in
# DIR, output in $T/NAME.out, exit status in $rc.
run() {
	local name=$1 dir=$2 envs=()
	shift 2
	while [ "$1" != -- ]; do envs+=("$1"); shift; done
	shift
	(cd "$dir" && env LD_LIBRARY_PATH="$PSW" "${envs[@]}" \
		timeout -s KILL 300 "$CLI" run "$@" </dev/null) >"$T/$name.out" 2>&1
	rc=$?
}
# expect NAME WANT-RC PATTERN...: each (grep -E) PATTERN in the output of
# NAME; NAME may be OUT/CASE, for case OUT_CASE on the output of OUT.
out_of() { echo "$T/${1%%/*}.out"; }
expect() {
	local name=${1/\//_} file miss=
	file=$(out_of "$1")
	shift
	local want=$1
	shift
	for p in "$@"; do grep -Eq -- "$p" "$file" || miss="$miss [$p]"; done
	if [ "$rc" -eq "$want" ] && [ -z "$miss" ]; then
		ok "$name"
	else
		bad "$name" "exit $rc (want $want), missing:$miss: $(grep -v '^[A-Za-z0-9+/=]*$' "$file" | tail -n 5 | tr '\n' '|')"
	fi
}
# refuses NAME PATTERN...: none of the PATTERNs in the output (NAME as above).
refuses() {
	local name=${1/\//_} file hit=
	file=$(out_of "$1")
	shift
	for p in "$@"; do grep -Eq -- "$p" "$file" && hit="$hit [$p]"; done
	[ -z "$hit" ] && ok "$name" || bad "$name" "found:$hit"
}

# --- the samples ------------------------------------------------------------------
# switchless makes 4 x 1,000,000 calls (fixed in its host): 2-4 minutes
# on a busy 2-core host, the longest case by far, so it runs in the
# background beside the others. SGXEMU_TEST_OE_SWITCHLESS=0 leaves it out.
switchless_pid=
if [ "${SGXEMU_TEST_OE_SWITCHLESS:-1}" = 0 ]; then
	skp switchless "SGXEMU_TEST_OE_SWITCHLESS=0 (its 4,000,000 calls take minutes)"
else
	(run switchless "$S/switchless" -- host/switchlesshost ./enclave/switchlessenc.signed
	 echo "$rc" >"$T/switchless.rc") &
	switchless_pid=$!
	BG_PIDS="$BG_PIDS $switchless_pid"
fi

run helloworld "$S/helloworld" -- host/helloworld_host ./enclave/enclave.signed
expect helloworld 0 '^Hello world from the enclave$' '^Enclave called into host to print: Hello World!$'

# Sealed by enclave A v1, unsealed by A v2 (same signer, product) and
# refused to B (another signer), each with the seal-to-unique and
# seal-to-product policies; the expected refusals print their ERRORs.
run data_sealing "$S/data-sealing" -- host/host enclave_a_v1/enclave.signed \
	enclave_a_v2/enclave.signed enclave_b/enclave.signed
expect data_sealing 0 'Host: Sample completed successfully' \
	'Succeeded: sealing and unsealing data on the same enclave worked' \
	'different enclave from the same product:Seal policy is POLICY_PRODUCT' \
	'Unseal data in a different enclave from a diffent product: failure is expected'
n=$(grep -c 'Host: exit unseal_data_and_verify_result with 0' "$T/data_sealing.out")
[ "$n" -eq 4 ] && ok data_sealing_four_unseals || bad data_sealing_four_unseals "$n of 4 unseals succeeded"

# Sealed in one process, unsealed in the next, by the sample's enclaves
# (unmodified) under a host of ours (tests/openenclave/seal_host.c, built
# with the sample's generated datasealing_u.c): the product policy opens
# in v2 of the same product and signer, not in B (another signer); the
# unique policy opens in v1 only; nothing opens on another platform.
seal_host=$dest/seal_host
if [ ! -x "$seal_host" ] || [ "$root/tests/openenclave/seal_host.c" -nt "$seal_host" ]; then
	cc_oe=clang-14; command -v "$cc_oe" >/dev/null || cc_oe=clang
	"$cc_oe" -std=gnu11 -Wall -Wextra -Werror -I"$OE/include" -I"$S/data-sealing" \
		-I"$S/data-sealing/host" -o "$seal_host" "$root/tests/openenclave/seal_host.c" \
		"$S/data-sealing/host/datasealing_u.c" -Wl,-z,noexecstack \
		-L"$OE/lib/openenclave/host" -loehost -ldl -lpthread -lssl -lcrypto \
		>"$T/seal_host.log" 2>&1 || rm -f "$seal_host"
fi
if [ -x "$seal_host" ]; then
	sealing() {	# NAME WANT-RC PATTERN [VAR=VALUE...] -- ARGS...
		local name=$1 want=$2 pat=$3
		shift 3
		run "$name" "$S/data-sealing" "$@"
		expect "$name" "$want" "$pat"
	}
	D=$T/sealed
	mkdir -p "$D"
	sealing seal_product 0 '^sealed [0-9]+ bytes' -- "$seal_host" seal enclave_a_v1/enclave.signed product "$D/product"
	sealing unseal_product_other_process 0 '^unsealed: sealed by one process, unsealed by another$' \
		-- "$seal_host" unseal enclave_a_v2/enclave.signed "$D/product"
	sealing unseal_product_other_signer_refused 1 '^unseal refused: ' \
		-- "$seal_host" unseal enclave_b/enclave.signed "$D/product"
	sealing seal_unique 0 '^sealed [0-9]+ bytes' -- "$seal_host" seal enclave_a_v1/enclave.signed unique "$D/unique"
	sealing unseal_unique_other_process 0 '^unsealed: sealed by one process, unsealed by another$' \
		-- "$seal_host" unseal enclave_a_v1/enclave.signed "$D/unique"
	sealing unseal_unique_other_enclave_refused 1 '^unseal refused: ' \
		-- "$seal_host" unseal enclave_a_v2/enclave.signed "$D/unique"
	sealing unseal_other_platform_refused 1 '^unseal refused: ' SGXEMU_SECRETS_FILE="$T/other-platform" \
		-- "$seal_host" unseal enclave_a_v1/enclave.signed "$D/unique"
else
	bad seal_host_build "$(tail -n 3 "$T/seal_host.log" | tr '\n' '|')"
fi

run debugmalloc "$S/debugmalloc" -- host/debugmallochost ./enclave/debugmallocenc.signed
expect debugmalloc 0 'Enclave called into host to print: Hello World!'
rm -f "$S/file-encryptor/out.encrypted" "$S/file-encryptor/out.decrypted"
run file_encryptor "$S/file-encryptor" -- host/file-encryptorhost testfile ./enclave/file-encryptorenc.signed
expect file_encryptor 0 'Host: Sample completed successfully' 'testfile is equal to ./out.decrypted'
rm -f "$S/log_callback/oe_host_out.txt" "$S/log_callback/oe_enclave_out.txt"
run log_callback "$S/log_callback" -- host/log_callbackhost ./enclave/log_callbackenc.signed
expect log_callback 0 'Enclave called into host to print: Hello!'
# Its callback wrote OE's host log lines to the file it opened.
if grep -q ', H, INFO, ' "$S/log_callback/oe_host_out.txt" 2>/dev/null; then ok log_callback_log_file
else bad log_callback_log_file "no host log line in oe_host_out.txt"; fi
run pluggable_allocator "$S/pluggable_allocator" -- host/allocator_demo_host \
	./enclave/enclave_default.signed ./enclave/enclave_custom.signed
expect pluggable_allocator 0 'oesnmalloc \(pluggable allocator\) = +[0-9]+ milliseconds'
run attestation_local "$S/attestation" -- host/attestation_host sgxlocal \
	./enclave_a/enclave_a.signed ./enclave_b/enclave_b.signed
expect attestation_local 0 'Host:  succeeded' \
	'^Enclave2: .*oe_verify_evidence succeeded' '^Enclave1: .*oe_verify_evidence succeeded'

# --- remote attestation -------------------------------------------------------
# sgxemu pccs on a free port, and Intel's QCNL configuration naming it
# (use_secure_cert: its certificate is checked against this platform's
# root), for OE's quote provider libdcap_quoteprov.so.
start_pccs() {
	local port attempt
	for attempt in 1 2 3 4 5 6 7 8; do
		port=$((20000 + ($$ * 7 + attempt * 997 + RANDOM) % 40000))
		"$CLI" pccs --port "$port" >"$T/pccs.log" 2>&1 &
		PCCS_PID=$!
		for _ in $(seq 100); do
			kill -0 "$PCCS_PID" 2>/dev/null || break
			if curl -s -o /dev/null -k "https://127.0.0.1:$port/sgx/certification/v4/rootcacrl"; then
				PORT=$port
				return 0
			fi
			sleep 0.1
		done
		kill "$PCCS_PID" 2>/dev/null; wait "$PCCS_PID" 2>/dev/null
		PCCS_PID=
	done
	return 1
}
# first_error NAME: OE's first host-side ERROR line in its output (log
# level INFO), which names the check that refused and where it is.
first_error() { grep -m 1 '\[(H)ERROR\]' "$T/$1.out" | sed 's/^.*| //'; }
# refused_by NAME WHAT REGEX: that first error is REGEX.
refused_by() {
	local e
	e=$(first_error "$1")
	if grep -Eq -- "$3" <<<"$e"; then ok "$1_$2"
	else bad "$1_$2" "OE's first error is not /$3/ but '$e'"; fi
}
# OE's two refusals of a quote under a root that is not Intel's, as the
# verifier raises them (common/sgx/quote.c and tcbinfo.c): the PCK chain's
# root key in OE's own verifier, and the TCB info chain's root key in its
# validity pass after libsgx_dcap_quoteverify's verdict (USE_SGX_QVL).
PCK_ROOT='^Failed to verify root public key\. \(oe_result_t=OE_QUOTE_VERIFICATION_ERROR\) \[.*common/sgx/quote\.c:oe_verify_quote_internal:'
TCB_ROOT='^:OE_INVALID_REVOCATION_INFO \[.*common/sgx/tcbinfo\.c:oe_verify_ecdsa256_signature:'

# Why oegdb cannot run here, if it cannot.
no_gdb=
if ! command -v gdb >/dev/null; then
	no_gdb="gdb is not installed (scripts/deps.sh test installs it)"
elif ! timeout 60 gdb -nx -batch -ex run --args /bin/true 2>&1 | grep -q 'exited normally'; then
	no_gdb="gdb cannot run a plain program here (ptrace refused)"
elif ldd "$B/libsgxemu_ptrace.so" 2>/dev/null | grep -q libasan; then
	no_gdb="sanitizer build: gdb cannot load an ASan-instrumented libsgxemu_ptrace.so"
fi

if ! command -v curl >/dev/null; then
	skp remote_attestation "curl is not installed (waiting for sgxemu pccs)"
elif ! start_pccs; then
	bad pccs_start "sgxemu pccs did not answer: $(tail -n 2 "$T/pccs.log" | tr '\n' '|')"
else
	printf '{\n  "pccs_url": "https://localhost:%s/sgx/certification/v4/",\n  "use_secure_cert": true,\n  "collateral_service": "https://localhost:%s/sgx/certification/v4/",\n  "retry_times": 0\n}\n' \
		"$PORT" "$PORT" >"$T/qcnl.conf"
	export QCNL_CONF_PATH=$T/qcnl.conf

	# oeutil's remote report, quoted in-process: an OE report header
	# (version 1, type 2 = remote, the quote's size) and a DCAP v3 quote.
	run oeutil_evidence "$T" OE_LOG_LEVEL=INFO -- "$OE/bin/oeutil" \
		generate-evidence -f legacy_report_remote -o "$T/report.bin"
	expect oeutil_evidence 0 'Generate OE report, report_size = [0-9]+' \
		'DCAP installed and set for in-process quoting'
	hdr=$(od -A n -t u4 -N 12 "$T/report.bin" 2>/dev/null | tr -s ' ')
	size=$(stat -c %s "$T/report.bin" 2>/dev/null || echo 0)
	if [ "$hdr" = " 1 2 $((size - 16))" ] && tail -c +17 "$T/report.bin" >"$T/quote.dat"; then
		ok oeutil_report_holds_a_quote
	else
		bad oeutil_report_holds_a_quote "header '$hdr', $size bytes"
	fi
	# The same quote: sgxemu's verifier, and Intel's library (status 0,
	# SGX_QL_QV_RESULT_OK, in OE's host log below) accept it.
	if "$CLI" quote verify "$T/quote.dat" >"$T/quote_verify.out" 2>&1 &&
	   grep -q 'result: *accepted (STATUS_OK)' "$T/quote_verify.out"; then
		ok quote_verified_by_sgxemu
	else
		bad quote_verified_by_sgxemu "$(tail -n 2 "$T/quote_verify.out" | tr '\n' '|')"
	fi

	# With SGX_AESM_ADDR set OE quotes through aesmd's socket instead
	# (the PSW's libsgx_quote_ex.so.1), which the shim serves.
	run oeutil_evidence_aesm "$T" OE_LOG_LEVEL=INFO SGX_AESM_ADDR=1 -- "$OE/bin/oeutil" \
		generate-evidence -f legacy_report_remote -o "$T/report_aesm.bin"
	expect oeutil_evidence_aesm 0 'Generate OE report, report_size = [0-9]+' \
		'quote_ex got quote for algorithm_id=2'
	if tail -c +17 "$T/report_aesm.bin" >"$T/quote_aesm.dat" 2>/dev/null &&
	   "$CLI" quote verify "$T/quote_aesm.dat" >"$T/quote_verify_aesm.out" 2>&1; then
		ok quote_through_aesm_verified_by_sgxemu
	else
		bad quote_through_aesm_verified_by_sgxemu "$(tail -n 2 "$T/quote_verify_aesm.out" | tr '\n' '|')"
	fi

	# host_verify (a verifier without SGX: Intel's libraries of this build
	# on its library path), OE's own verifier: the collateral is taken,
	# then the PCK root check is the first and only refusal.
	hv() {	# NAME [VAR=VALUE...]
		local name=$1
		shift
		(cd "$S/host_verify" && env LD_LIBRARY_PATH="$B/dcap" OE_LOG_LEVEL=INFO "$@" \
			timeout -s KILL 120 ./host_verify -r "$T/report.bin" </dev/null) >"$T/$name.out" 2>&1
		rc=$?
	}
	hv host_verify
	expect host_verify/collateral_taken 0 'Exit call oe_get_sgx_endorsements: 0\(OE_OK\)' \
		'Report verification failed'
	refused_by host_verify only_by_pck_root_key "$PCK_ROOT"
	# With USE_SGX_QVL: libsgx_dcap_quoteverify verifies the quote (status
	# 0), then OE's validity pass refuses the TCB info chain's root key.
	hv host_verify_qvl USE_SGX_QVL=1
	expect host_verify_qvl/accepted_by_intel_qvl 0 'verification status=0 ' \
		'SGX DCAP QVL-based SGX quote verification is used, res: OE_OK'
	refused_by host_verify_qvl only_by_tcb_info_root_key "$TCB_ROOT"

	# attestation sgxremote: enclave_a's evidence (quoted in-process)
	# verified in enclave_b: refused with the PCK root check's code;
	# with USE_SGX_QVL the QvE-checked call passes (OE's host log: the
	# QvE-based verification OK), then the TCB info root check's code.
	run attestation_remote "$S/attestation" OE_LOG_LEVEL=INFO -- host/attestation_host \
		sgxremote ./enclave_a/enclave_a.signed ./enclave_b/enclave_b.signed
	expect attestation_remote 1 'Enclave1: .*generate_attestation_evidence succeeded' \
		'Calling oe_get_sgx_quote_verification_collateral' \
		'Enclave2: .*oe_verify_evidence failed \(OE_QUOTE_VERIFICATION_ERROR\)'
	refuses attestation_remote/host_side_all_accepted '\[\(H\)ERROR\]'
	run attestation_remote_qvl "$S/attestation" OE_LOG_LEVEL=INFO USE_SGX_QVL=1 -- \
		host/attestation_host sgxremote ./enclave_a/enclave_a.signed ./enclave_b/enclave_b.signed
	expect attestation_remote_qvl 1 'Enclave1: .*generate_attestation_evidence succeeded' \
		'verification status=0 ' 'SGX DCAP QvE-based SGX quote verification is used, res: OE_OK' \
		'Enclave2: .*oe_verify_evidence failed \(OE_INVALID_REVOCATION_INFO\)'
	refuses attestation_remote_qvl/host_side_all_accepted '\[\(H\)ERROR\]'
	# The same in enclave_b, seen with oegdb (OE logs nothing from this
	# enclave): the first public-key comparison its verifier makes is the
	# root check, and finds the keys different; the failure follows. In OE's
	# own verifier it is the PCK root (oe_verify_quote_internal, inlined in
	# oe_verify_quote_with_sgx_endorsements), which comes before the QE
	# report and quote signature checks; with USE_SGX_QVL, after the QvE's
	# verdict was taken, the TCB info root in the validity pass.
	root_check() {	# NAME [VAR=VALUE...]
		local name=$1
		shift
		(cd "$S/attestation" && env LD_LIBRARY_PATH="$PSW" "$@" timeout -s KILL 300 \
			"$OE/bin/oegdb" -batch -x "$B/sgxemu.gdb" -ex 'set breakpoint pending on' \
			-ex 'break oe_ec_public_key_equal' -ex run -ex bt \
			-ex 'set $equal = (unsigned char *)$rdx' -ex finish -ex 'p *$equal' \
			-ex delete -ex continue --args "$CLI" run host/attestation_host sgxremote \
			./enclave_a/enclave_a.signed ./enclave_b/enclave_b.signed </dev/null) \
			>"$T/$name.out" 2>&1
		rc=0
	}
	if [ -n "$no_gdb" ]; then
		skp attestation_remote_root_check_in_enclave "$no_gdb"
	else
		root_check attestation_remote_gdb
		expect attestation_remote_gdb/pck_root_compared_first 0 \
			'^#1 +0x[0-9a-f]+ in oe_verify_quote_with_sgx_endorsements \(\)' \
			'^\$1 = 0 ' 'oe_verify_evidence failed \(OE_QUOTE_VERIFICATION_ERROR\)'
		root_check attestation_remote_qvl_gdb USE_SGX_QVL=1 OE_LOG_LEVEL=INFO
		expect attestation_remote_qvl_gdb/tcb_info_root_compared_first 0 \
			'^#1 +0x[0-9a-f]+ in oe_verify_ecdsa256_signature \(\)' \
			'^#3 +0x[0-9a-f]+ in oe_get_sgx_quote_validity \(\)' \
			'SGX DCAP QvE-based SGX quote verification is used, res: OE_OK' \
			'^\$1 = 0 ' 'oe_verify_evidence failed \(OE_INVALID_REVOCATION_INFO\)'
	fi

	# attested_tls: its enclave server, then its enclave client and its
	# non-enclave client, each verifying the server's attested certificate.
	tls_server() {	# NAME [VAR=VALUE...]: the server on a free port, listening
		local name=$1 port
		shift
		port=$((20000 + ($$ * 13 + RANDOM) % 40000))
		(cd "$S/attested_tls" && env LD_LIBRARY_PATH="$PSW" "$@" timeout -s KILL 120 "$CLI" run \
			./server/host/tls_server_host ./server/enc/tls_server_enc.signed "-port:$port" \
			</dev/null) >"$T/$name.out" 2>&1 &
		SERVER_PID=$!
		BG_PIDS="$BG_PIDS $SERVER_PID"
		for _ in $(seq 600); do
			grep -q 'Waiting for a client connection request' "$T/$name.out" && { SPORT=$port; return 0; }
			kill -0 "$SERVER_PID" 2>/dev/null || break
			sleep 0.1
		done
		bad "$name" "the server is not listening: $(tail -n 3 "$T/$name.out" | tr '\n' '|')"
		return 1
	}
	tls_pair() {	# NAME CLIENT [VAR=VALUE...]
		local name=$1 client=$2
		shift 2
		tls_server "${name}_server" "$@" || return 1
		if [ "$client" = enclave ]; then
			run "$name" "$S/attested_tls" OE_LOG_LEVEL=INFO "$@" -- ./client/host/tls_client_host \
				./client/enc/tls_client_enc.signed -server:localhost "-port:$SPORT"
		else
			(cd "$S/attested_tls" && env LD_LIBRARY_PATH="$B/dcap" OE_LOG_LEVEL=INFO "$@" \
				timeout -s KILL 120 ./non_enc_client/tls_non_enc_client \
				-server:localhost "-port:$SPORT" </dev/null) >"$T/$name.out" 2>&1
			rc=$?
		fi
		wait "$SERVER_PID"
	}
	# (The enclave client's host exits 0 whatever the handshake gave.)
	if tls_pair attested_tls_enclaves enclave; then
		expect attested_tls_enclaves 0 'TLS client: Received TLS certificate' \
			'oe_verify_attestation_certificate_with_evidence_v2 failed with result = OE_QUOTE_VERIFICATION_ERROR'
		refuses attested_tls_enclaves/host_side_all_accepted '\[\(H\)ERROR\]'
	fi
	if tls_pair attested_tls_enclaves_qvl enclave USE_SGX_QVL=1; then
		expect attested_tls_enclaves_qvl 0 'TLS client: Received TLS certificate' \
			'SGX DCAP QvE-based SGX quote verification is used, res: OE_OK' \
			'oe_verify_attestation_certificate_with_evidence_v2 failed with result = OE_INVALID_REVOCATION_INFO'
		refuses attested_tls_enclaves_qvl/host_side_all_accepted '\[\(H\)ERROR\]'
	fi
	if tls_pair attested_tls_non_enclave host; then
		expect attested_tls_non_enclave 1 'Exit call oe_get_sgx_endorsements: 0\(OE_OK\)'
		refused_by attested_tls_non_enclave only_by_pck_root_key "$PCK_ROOT"
	fi
	if tls_pair attested_tls_non_enclave_qvl host USE_SGX_QVL=1; then
		expect attested_tls_non_enclave_qvl 1 'verification status=0 ' \
			'SGX DCAP QVL-based SGX quote verification is used, res: OE_OK'
		refused_by attested_tls_non_enclave_qvl only_by_tcb_info_root_key "$TCB_ROOT"
	fi
fi

# --- bench/oe_calls's program -----------------------------------------------
# Our own enclave and host (bench/openenclave, built with OE's tools), as
# the bench runs them, checked for what it relies on rather than for
# speed: every call returns OE_OK (the host prints its line only then),
# regular and switchless, and OE's host enters through the vDSO, so the
# engine counts no host ENCLU trap and a trap-free EENTER for each of the
# 1,101 ECALLs (1,000 and the warm-up's 101) besides OE's own.
bench_out=$dest/bench
if "$root/bench/openenclave/build.sh" "$dest" "$bench_out" >"$T/bench_build.log" 2>&1; then
	counts() {	# NAME: host ENCLU traps and trap-free EENTERs in $T/NAME.counts
		od -v -A n -t u8 -w128 "$T/$1.counts" 2>/dev/null |
			awk '{ h += $1; f += $4 } END { print h + 0, f + 0 }'
	}
	run oe_calls_regular "$bench_out" SGXEMU_TRAP_COUNTS="$T/oe_calls_regular.counts" -- \
		./calls_host calls_enc.signed regular ecall 1000
	expect oe_calls_regular 0 '^ecall_ns [0-9.]+$'
	read -r host_enclu fast < <(counts oe_calls_regular)
	if [ "$host_enclu" -eq 0 ] && [ "$fast" -ge 1101 ]; then ok oe_calls_entry_through_the_vdso
	else bad oe_calls_entry_through_the_vdso "host ENCLU traps $host_enclu (want 0), trap-free EENTERs $fast (want >= 1101)"; fi
	run oe_calls_switchless_ecall "$bench_out" -- ./calls_host calls_enc.signed switchless ecall 1000 1 1
	expect oe_calls_switchless_ecall 0 '^ecall_ns [0-9.]+$'
	run oe_calls_switchless_ocall "$bench_out" -- ./calls_host calls_enc.signed switchless ocall 1000 1 1
	expect oe_calls_switchless_ocall 0 '^ocall_ns [0-9.]+$'
else
	bad oe_calls_build "$(tail -n 3 "$T/bench_build.log" | tr '\n' '|')"
fi

# --- oegdb ---------------------------------------------------------------------------
# OE's debugger (gdb with its plugin and liboe_ptrace.so) as an OE user
# starts it, with sgxemu.gdb: `oegdb -x sgxemu.gdb --args sgxemu run HOST
# ENCLAVE`. Its plugin finds the enclave through OE's debug contract
# (oe_debug_enclave_created_hook, oe_debug_enclave_t), loads its symbols
# and sets its TCSs' DBGOPTIN; its breakpoint in enclave code stops there.
if [ -n "$no_gdb" ]; then
	skp oegdb "$no_gdb"
else
	(cd "$S/helloworld" && LD_LIBRARY_PATH="$PSW" timeout -s KILL 300 "$OE/bin/oegdb" \
		-batch -x "$B/sgxemu.gdb" -ex 'set breakpoint pending on' \
		-ex 'break enc.c:enclave_helloworld' -ex run -ex bt -ex next -ex next \
		-ex 'p result' -ex 'frame 1' -ex 'p input_buffer_size' -ex continue \
		--args "$CLI" run host/helloworld_host ./enclave/enclave.signed </dev/null) \
		>"$T/oegdb.out" 2>&1
	rc=$?
	expect oegdb/finds_the_enclave 0 '^oegdb: Symbols loaded for enclave' \
		'^oegdb: All tcs set to debug for enclave'
	expect oegdb/bp_in_enclave 0 'hit Breakpoint [0-9]+, enclave_helloworld \(\) at enc\.c:21'
	expect oegdb/bt_enclave_frames 0 '^#1 +0x[0-9a-f]+ in ecall_enclave_helloworld \(.*\) at helloworld_t\.c:[0-9]+'
	expect oegdb/bt_into_the_host 0 '^#[0-9]+ +0x[0-9a-f]+ in main \(argc=2, argv=0x[0-9a-f]+\) at host\.c:[0-9]+'
	expect oegdb/next_over_an_ocall 0 '^Enclave called into host to print: Hello World!' '^25[[:space:]]+if \(result != OE_OK\)'
	expect oegdb/print_enclave_local 0 '^\$1 = OE_OK$'
	expect oegdb/print_enclave_argument 0 '^\$2 = 32$'
	expect oegdb/program_ends 0 'exited normally'
	# What a debugger on hardware does not print: breakpoints lost at the
	# exec of sgxemu run, the emulator's signals, a broken debug contract.
	refuses oegdb/quiet 'Error in re-setting' 'not defined' \
		'Global enclave list processing failed' 'received signal SIG(ILL|SEGV|BUS|SYS)' \
		'Debugging not enabled' 'simulation mode'
	# oegdb's "Global enclave list processing failed." is its plugin's,
	# whatever the platform: at each new object file it walks OE's
	# oe_enclave_list_head (when the host has its debug information, which
	# this client's liboehost has not), and for each enclave in it calls
	# enable_oeenclave_debug with two arguments where the function takes
	# one. A plain program (no SGX, no sgxemu) with such a list, one
	# entry, makes oegdb print it.
	cat >"$T/oelist.c" <<'CEOF'
struct oe_enclave { const char *path; };
struct node { struct oe_enclave *enclave; struct { struct node *le_next; } next_entry; };
static struct oe_enclave one = { "enclave.signed" };
static struct node first = { &one, { 0 } };
struct { struct node *lh_first; } oe_enclave_list_head = { &first };
int main(void) { return oe_enclave_list_head.lh_first == 0; }
CEOF
	if cc -g -O0 -o "$T/oelist" "$T/oelist.c" 2>"$T/oelist.err"; then
		timeout -s KILL 120 "$OE/bin/oegdb" -batch -ex run "$T/oelist" </dev/null >"$T/oelist.out" 2>&1
		rc=$?
		expect oelist/global_list_message_is_the_plugins 0 \
			'^oegdb: 1 enclaves in global enclave list\.' \
			'oegdb: Global enclave list processing failed\.' 'exited normally'
	else
		bad oelist_global_list_message_is_the_plugins "cannot build: $(head -n 1 "$T/oelist.err")"
	fi
fi

# --- the switchless sample, started first -----------------------------------------
if [ -n "$switchless_pid" ]; then
	wait "$switchless_pid"
	rc=$(cat "$T/switchless.rc" 2>/dev/null || echo 255)
	expect switchless 0 'host_increment_switchless\(\) calls: 1000000 \+ 1000000 = 2000000' \
		'enclave_decrement_switchless\(\) calls: 1000000 - 1000000 = 0' \
		'host_increment_regular\(\) calls: 1000000 \+ 1000000 = 2000000' \
		'enclave_decrement_regular\(\) calls: 1000000 - 1000000 = 0'
fi
finish
