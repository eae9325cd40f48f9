#!/usr/bin/env bash
# One CA hierarchy for a fleet of platforms (`sgxemu pki`), with two
# platforms and two outsiders on one host, each its own secrets file:
# platform A exports its hierarchy, B imports it; a real enclave's quote
# made on A verifies on B (B's own root, and a verifier given only the
# root and collateral), an outsider's quote is refused on B for its root;
# one `sgxemu pccs` serves the PCK certificates of A and B by QE id and
# 404 for others, on B after the import and from the exported directory
# used in place (SGXEMU_PKI_DIR) once B has registered there; imports of
# broken or foreign hierarchies are refused with one line; an older
# installation's PCK certificate is adopted by the registry.
# Last line: "N passed, N failed, N skipped".
set -u
. "$(dirname "$0")/../lib/test_lib.sh"
CLI=${CLI:-$B/sgxemu}
QUOTE=$B/tests/enclave_quote
CLI=$(realpath "$CLI" 2>/dev/null || echo "$CLI")
QUOTE=$(realpath "$QUOTE" 2>/dev/null || echo "$QUOTE")
T=$(mktemp -d)
PCCS_PID=
trap '[ -n "$PCCS_PID" ] && kill "$PCCS_PID" 2>/dev/null; rm -rf "$T"' EXIT
unset SGXEMU_PKI_DIR SGXEMU_TRUSTED_ROOT SGXEMU_CPUSVN
export B

if [ ! -x "$CLI" ] || [ ! -x "$QUOTE" ]; then
	bad fleet_built "$CLI or $QUOTE not built (make test builds them)"
	finish
fi

PA=$T/a/secrets PB=$T/b/secrets PC=$T/c/secrets FLEET=$T/fleet
# on SECRETS CMD...: CMD as the platform of that secrets file.
on() { local s=$1; shift; SGXEMU_SECRETS_FILE=$s "$@"; }
qe_id() { on "$1" "$CLI" attest info | sed -n 's/^QE_ID: *//p'; }
# refused NAME PATTERN CMD...: CMD fails with exactly one line on stderr,
# nothing on stdout, and the line matches PATTERN.
refused() {
	local name=$1 pat=$2 rc; shift 2
	"$@" >"$T/out" 2>"$T/err"; rc=$?
	if [ $rc -ne 0 ] && [ ! -s "$T/out" ] && [ "$(wc -l <"$T/err")" = 1 ] &&
	   grep -q -- "$pat" "$T/err"; then
		ok "$name"
	else
		bad "$name" "rc $rc, stdout '$(head -c 200 "$T/out")', stderr '$(head -c 300 "$T/err")'"
	fi
}

# --- A exports, B imports ---------------------------------------------------
if out=$(on "$PA" "$CLI" pki export "$FLEET" 2>&1); then
	modes=$(stat -c %a "$FLEET"/*.key | sort -u)
	nreg=$(ls "$FLEET/pck" | wc -l)
	if [ "$modes" = 600 ] && [ "$(stat -c %a "$FLEET")" = 700 ] &&
	   [ -f "$FLEET/root-ca.pem" ] && [ -f "$FLEET/pck-ca.pem" ] &&
	   [ -f "$FLEET/tcb-signing.pem" ] && [ "$nreg" = 1 ]; then
		ok export_writes_hierarchy_and_registration
	else
		bad export_writes_hierarchy_and_registration "keys $modes, dir $(stat -c %a "$FLEET"), $nreg registered: $out"
	fi
else
	bad export_writes_hierarchy_and_registration "$out"
fi
# As after a copy that lost the modes: the keys are written back 0600.
cp -r "$FLEET" "$T/loose"; chmod 644 "$T/loose"/*.key; chmod 755 "$T/loose"
if out=$(on "$PB" "$CLI" pki import "$T/loose" 2>&1) &&
   cmp -s "$FLEET/root-ca.pem" "$PB.pki/root-ca.pem"; then
	ok import_on_a_new_platform
else
	bad import_on_a_new_platform "$out"
fi
[ "$(stat -c %a "$PB.pki"/*.key | sort -u)" = 600 ] && [ "$(stat -c %a "$PB.pki")" = 700 ] &&
	ok imported_keys_0600 ||
	bad imported_keys_0600 "$(stat -c '%a %n' "$PB.pki"/*.key)"
ra=$(on "$PA" "$CLI" pki root) rb=$(on "$PB" "$CLI" pki root)
if [ -n "$ra" ] && [ "$ra" = "$rb" ] && echo "$ra" | openssl x509 -noout 2>/dev/null; then
	ok pki_root_same_on_both
else
	bad pki_root_same_on_both "A and B print different roots"
fi
out=$(on "$PB" "$CLI" pki import "$FLEET" 2>&1)
echo "$out" | grep -q "already the hierarchy" && ok import_again_is_a_no_op ||
	bad import_again_is_a_no_op "$out"

# --- A's quote on B --------------------------------------------------------
on "$PA" "$QUOTE" "$T/qa" >"$T/qa.id" 2>"$T/qa.err" || bad quote_on_a "$(cat "$T/qa.err")"
mr=$(sed -n 's/^MRENCLAVE //p' "$T/qa.id")
rd=$(sed -n 's/^REPORTDATA //p' "$T/qa.id")
out=$(on "$PB" "$CLI" quote verify "$T/qa" 2>&1); rc=$?
if [ $rc = 0 ] && [ -n "$mr" ] && echo "$out" | grep -qx "MRENCLAVE: *$mr" &&
   echo "$out" | grep -qx "REPORTDATA: *$rd" && echo "$out" | grep -q "accepted"; then
	ok quote_of_a_verifies_on_b
else
	bad quote_of_a_verifies_on_b "rc $rc: $out"
fi
# A verifier that trusts the fleet's root and has B's collateral only.
on "$PB" "$CLI" pki root >"$T/fleet-root.pem"
on "$PB" "$CLI" attest collateral --out "$T/col-b" >/dev/null 2>&1
out=$(on "$T/v/secrets" "$CLI" quote verify "$T/qa" --collateral "$T/col-b" \
      --root "$T/fleet-root.pem" 2>&1); rc=$?
[ $rc = 0 ] && ok quote_of_a_verifies_with_root_and_collateral_only ||
	bad quote_of_a_verifies_with_root_and_collateral_only "rc $rc: $out"

# --- an outsider with its own hierarchy ---------------------------------------
on "$PC" "$QUOTE" "$T/qc" >/dev/null 2>"$T/qc.err" || bad quote_on_c "$(cat "$T/qc.err")"
out=$(on "$PB" "$CLI" quote verify "$T/qc" 2>&1); rc=$?
if [ $rc = 1 ] && echo "$out" | grep -q "refused: trusted root:.*STATUS_SGX_PCK_CERT_CHAIN_UNTRUSTED"; then
	ok outsider_quote_refused_for_its_root
else
	bad outsider_quote_refused_for_its_root "rc $rc: $out"
fi

# --- one PCCS for the fleet ------------------------------------------------
qa=$(qe_id "$PA") qb=$(qe_id "$PB") qc=$(qe_id "$PC")
PORT=
# start_pccs SECRETS ROOT [ENV=VALUE...]: `sgxemu pccs` of that platform
# on a free port (PORT), its TLS checked against ROOT; false when none
# answers.
start_pccs() {
	local s=$1 root=$2; shift 2
	for attempt in 1 2 3 4 5 6 7 8; do
		PORT=$((20000 + (RANDOM * 7 + attempt * 997) % 40000))
		env SGXEMU_SECRETS_FILE="$s" "$@" "$CLI" pccs --port "$PORT" \
			>/dev/null 2>&1 &
		PCCS_PID=$!
		for _ in $(seq 100); do
			kill -0 "$PCCS_PID" 2>/dev/null || break
			[ "$(curl -s -o /dev/null -w '%{http_code}' --cacert "$root" \
			     "https://127.0.0.1:$PORT/sgx/certification/v4/rootcacrl")" = 200 ] &&
				return 0
			sleep 0.05
		done
		kill "$PCCS_PID" 2>/dev/null; wait "$PCCS_PID" 2>/dev/null
		PCCS_PID=
	done
	return 1
}
stop_pccs() {
	kill "$PCCS_PID" 2>/dev/null; wait "$PCCS_PID" 2>/dev/null
	PCCS_PID=
}
# pck NAME QEID: GET pckcert for the platform with that QE id at the
# default TCB into $T/NAME.pem (headers $T/NAME.h); the HTTP status.
pck() {
	curl -s --cacert "$T/fleet-root.pem" -D "$T/$1.h" -o "$T/$1.pem" \
		-w '%{http_code}' "https://127.0.0.1:$PORT/sgx/certification/v4/pckcert?qeid=$2&cpusvn=02020202020202020202020202020202&pcesvn=0200&pceid=0000"
}
# serves NAME QEID SECRETS: 200 with the very certificate the platform of
# SECRETS registered, which chains to the fleet's root, and its TCBm.
serves() {
	local st reg
	st=$(pck "$1" "$2")
	reg=$(ls "$3.pki/pck/$2"-*.pem 2>/dev/null | head -n1)
	if [ "$st" = 200 ] && [ -n "$reg" ] && cmp -s "$T/$1.pem" "$reg" &&
	   openssl verify -CAfile "$T/fleet-root.pem" -untrusted "$FLEET/pck-ca.pem" "$T/$1.pem" >/dev/null 2>&1 &&
	   grep -qi '^SGX-TCBm: 020202020202020202020202020202020200' "$T/$1.h"; then
		ok "$1"
	else
		bad "$1" "status $st, registered '$reg'"
	fi
}
if ! command -v curl >/dev/null 2>&1; then
	skp pccs_serves_the_fleet "curl is not installed"
elif ! start_pccs "$PB" "$T/fleet-root.pem"; then
	bad pccs_starts "no sgxemu pccs answered on a free port"
else
	serves pccs_on_b_serves_a "$qa" "$PA"
	serves pccs_on_b_serves_b "$qb" "$PB"
	cmp -s "$T/pccs_on_b_serves_a.pem" "$T/pccs_on_b_serves_b.pem" &&
		bad pccs_serves_each_platform_its_own "A and B got one certificate" ||
		ok pccs_serves_each_platform_its_own
	st=$(pck unknown 00112233445566778899aabbccddeeff)
	[ "$st" = 404 ] && grep -q "No cache data" "$T/unknown.pem" &&
		ok pccs_unknown_qeid_404 || bad pccs_unknown_qeid_404 "status $st"
	# As the quote provider sends it: an encrypted PPID, taken, not used.
	u="https://127.0.0.1:$PORT/sgx/certification/v4/pckcert?qeid=$qa&cpusvn=02020202020202020202020202020202&pcesvn=0200&pceid=0000&encrypted_ppid="
	st=$(curl -s --cacert "$T/fleet-root.pem" -o /dev/null -w '%{http_code}' "$u$(printf '%0768d' 0)")
	st2=$(curl -s --cacert "$T/fleet-root.pem" -o /dev/null -w '%{http_code}' "${u}00")
	[ "$st$st2" = 200400 ] && ok pccs_encrypted_ppid_accepted ||
		bad pccs_encrypted_ppid_accepted "768 hex: $st, 2 hex: $st2"
	st=$(pck outsider "$qc")
	[ "$st" = 404 ] && ok pccs_outsider_404 || bad pccs_outsider_404 "status $st"
	stop_pccs

	# B registers in the exported directory, which then serves in place.
	out=$(on "$PB" "$CLI" pki export "$FLEET" 2>&1) &&
		[ "$(ls "$FLEET/pck" | wc -l)" = 2 ] && ok b_registers_by_export ||
		bad b_registers_by_export "$out; $(ls "$FLEET/pck")"
	if start_pccs "$T/d/secrets" "$T/fleet-root.pem" SGXEMU_PKI_DIR="$FLEET"; then
		qd=$(SGXEMU_PKI_DIR=$FLEET qe_id "$T/d/secrets")
		st_a=$(pck shared_a "$qa") st_b=$(pck shared_b "$qb") st_d=$(pck shared_d "$qd")
		st_c=$(pck shared_c "$qc")
		[ "$st_a$st_b$st_d$st_c" = 200200200404 ] && ok pccs_on_shared_dir_serves_a_b_and_itself ||
			bad pccs_on_shared_dir_serves_a_b_and_itself "A $st_a, B $st_b, D $st_d, outsider $st_c"
		stop_pccs
	else
		bad pccs_on_shared_dir "no sgxemu pccs answered on a free port"
	fi
	# A platform of the shared directory verifies A's quote too.
	out=$(SGXEMU_PKI_DIR=$FLEET on "$T/d/secrets" "$CLI" quote verify "$T/qa" 2>&1) &&
		ok quote_of_a_verifies_on_shared_dir_platform ||
		bad quote_of_a_verifies_on_shared_dir_platform "$out"
fi

# --- refusals --------------------------------------------------------------
on "$PC" "$CLI" pki export "$T/cexp" >/dev/null
cp -r "$FLEET" "$T/bad1"; rm "$T/bad1/tcb-signing.key"
refused import_refuses_missing_file "tcb-signing.key" on "$T/n1/secrets" "$CLI" pki import "$T/bad1"
refused import_refuses_missing_dir "root-ca.key" on "$T/n1/secrets" "$CLI" pki import "$T/nowhere"
cp -r "$FLEET" "$T/bad2"; cp "$T/cexp/pck-ca.key" "$T/bad2/pck-ca.key"
refused import_refuses_mismatched_key "does not match" on "$T/n2/secrets" "$CLI" pki import "$T/bad2"
cp -r "$FLEET" "$T/bad3"; cp "$T/cexp/pck-ca.key" "$T/cexp/pck-ca.pem" "$T/bad3/"
refused import_refuses_certs_that_do_not_chain "do not chain" on "$T/n3/secrets" "$CLI" pki import "$T/bad3"
cp -r "$FLEET" "$T/bad4"; echo garbage >"$T/bad4/root-ca.pem"
refused import_refuses_damaged_cert "not a PEM certificate" on "$T/n4/secrets" "$CLI" pki import "$T/bad4"
[ ! -e "$T/n1" ] && [ ! -e "$T/n2" ] && [ ! -e "$T/n3" ] && [ ! -e "$T/n4" ] &&
	ok refused_import_leaves_no_hierarchy || bad refused_import_leaves_no_hierarchy "a root was written"
cp "$PC.pki/root-ca.pem" "$T/c-root-before.pem"
refused import_refuses_foreign_hierarchy_with_pck_certs "force" on "$PC" "$CLI" pki import "$FLEET"
cmp -s "$T/c-root-before.pem" "$PC.pki/root-ca.pem" && ok refused_import_leaves_hierarchy ||
	bad refused_import_leaves_hierarchy "C's root changed"
refused export_refuses_foreign_hierarchy "another hierarchy" on "$PA" "$CLI" pki export "$T/cexp"
refused pki_usage "usage" on "$PA" "$CLI" pki import
# With --force C joins the fleet: its next quote verifies on B.
if out=$(on "$PC" "$CLI" pki import --force "$FLEET" 2>&1) &&
   on "$PC" "$QUOTE" "$T/qc2" >/dev/null 2>&1 &&
   on "$PB" "$CLI" quote verify "$T/qc2" >/dev/null 2>&1; then
	ok forced_import_joins_the_fleet
else
	bad forced_import_joins_the_fleet "$out"
fi

# --- an installation from before the registry ----------------------------------
PL=$T/l/secrets
on "$PL" "$CLI" attest info >/dev/null 2>&1
reg=$(ls "$PL.pki/pck/"*.pem 2>/dev/null | head -n1)
if [ -n "$reg" ]; then
	serial=$(openssl x509 -in "$reg" -noout -serial)
	mv "$reg" "$PL.pki/pck-02020202020202020202020202020202-0002.pem"
	rm -r "$PL.pki/pck"
	on "$PL" "$CLI" attest info >/dev/null 2>&1
	reg=$(ls "$PL.pki/pck/"*.pem 2>/dev/null | head -n1)
	[ -n "$reg" ] && [ "$(openssl x509 -in "$reg" -noout -serial)" = "$serial" ] &&
		ok legacy_pck_cert_adopted || bad legacy_pck_cert_adopted "serial changed or not registered"
else
	bad legacy_pck_cert_adopted "no registry file"
fi

finish
