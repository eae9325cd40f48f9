# The test enclaves' signing keys: RSA-3072 with public exponent 3, as
# SIGSTRUCT requires, made once per build folder by OpenSSL and never
# committed (build/ is not in git). A second key gives the tests a signer
# that is not the platform's launch signer. Written beside and renamed so
# that an interrupted build leaves no half key behind.
TEST_KEYS := $(B)/keys/signing_key.pem $(B)/keys/other_key.pem

$(B)/keys/%.pem: | $(B)/.deps-build
	@mkdir -p $(@D)
	@rm -f $@.tmp
	@if (umask 077 && openssl genpkey -algorithm RSA \
	      -pkeyopt rsa_keygen_bits:3072 -pkeyopt rsa_keygen_pubexp:3 \
	      -out $@.tmp) 2>$@.err; then rm -f $@.err; mv $@.tmp $@; \
	 else echo "sgxemu: cannot make the signing key $@: $$(head -n1 $@.err)" >&2; \
	      rm -f $@.tmp $@.err; exit 1; fi
	@echo "  KEY     $@ (RSA-3072, e=3)"

keys: $(TEST_KEYS)
.PHONY: keys
TEST_DEPS  += $(TEST_KEYS)
BENCH_DEPS += $(TEST_KEYS)
