# Intel's DCAP quote libraries as sgxemu builds them (src/dcap/): the same
# sonames and ABI as Intel's, in $(B)/dcap/, where the audit module sends
# the dynamic loader for those names (src/shim/audit/audit.c), so that a
# program linked against Intel's libraries gets these under sgxemu run.
# Each has its own version script: Intel's exports and nothing else. The
# unversioned name is a link for -l at build time.

DCAP_DIR := $(B)/dcap
DCAP_QL  := $(DCAP_DIR)/libsgx_dcap_ql.so.1
DCAP_QPL := $(DCAP_DIR)/libdcap_quoteprov.so.1
DCAP_QV  := $(DCAP_DIR)/libsgx_dcap_quoteverify.so.1
DCAP_LIBS := $(DCAP_QL) $(DCAP_QPL) $(DCAP_QV)
QPL_OBJS := $(patsubst %.c,$(B)/%.o,$(wildcard src/dcap/qpl*.c))
QV_OBJS  := $(patsubst %.c,$(B)/%.o,$(wildcard src/dcap/qv*.c))
ALL_TARGETS += $(DCAP_LIBS)

$(DCAP_QL): $(B)/src/dcap/ql.o src/dcap/ql.map
	@mkdir -p $(@D)
	$(CC) -shared $(LDFLAGS) -o $@ $(B)/src/dcap/ql.o -Wl,-soname,$(@F) \
		-Wl,--version-script=src/dcap/ql.map -Wl,-z,noexecstack -ldl -pthread
	ln -sf $(@F) $(basename $@)

# The provider takes the JSON reader, the secrets' location and the PKI
# paths from libsgxemu.a (static: it runs in verifiers, outside sgxemu
# run) and HTTP(S) from libcurl.
$(DCAP_QPL): $(QPL_OBJS) $(LIB) src/dcap/qpl.map
	@mkdir -p $(@D)
	$(CC) -shared $(LDFLAGS) -o $@ $(QPL_OBJS) $(LIB) -Wl,-soname,$(@F) \
		-Wl,--version-script=src/dcap/qpl.map -Wl,-z,noexecstack \
		-lcurl $(LDLIBS)
	ln -sf $(@F) $(basename $@)

# The verifier takes sgxemu's verifier from libsgxemu.a (static, as the
# provider does) and loads the provider at run time, as Intel's does.
$(DCAP_QV): $(QV_OBJS) $(LIB) src/dcap/qv.map
	@mkdir -p $(@D)
	$(CC) -shared $(LDFLAGS) -o $@ $(QV_OBJS) $(LIB) -Wl,-soname,$(@F) \
		-Wl,--version-script=src/dcap/qv.map -Wl,-z,noexecstack \
		$(LDLIBS)
	ln -sf $(@F) $(basename $@)

all: $(DCAP_LIBS)

# The test's program linked against the library by soname as DCAP
# programs are, and a decoy "Intel" library it finds first through its
# RUNPATH when nothing redirects the loader (tests/integration/test_dcap.sh).
DCAP_DECOY := $(B)/tests/dcap/decoy/libsgx_dcap_ql.so.1
DCAP_PROBE := $(B)/tests/dcap/ql_probe

$(DCAP_DECOY): tests/dcap/decoy_ql.c
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) -shared -o $@ $< -Wl,-soname,$(@F) $(LDFLAGS)

$(DCAP_PROBE): tests/dcap/ql_probe.c $(DCAP_QL) $(DCAP_DECOY)
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) -o $@ $< -L$(DCAP_DIR) -lsgx_dcap_ql -ldl $(LDFLAGS) \
		-Wl,--enable-new-dtags,-rpath,$(abspath $(dir $(DCAP_DECOY)))

TEST_DEPS += $(DCAP_PROBE)

# Preloaded into Intel's QuoteVerificationSample to change what a
# QvE-checked call returned (tests/integration/test_dcap_samples.sh).
DCAP_QVE_TAMPER := $(B)/tests/dcap/qve_tamper.so

$(DCAP_QVE_TAMPER): tests/dcap/qve_tamper.c
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) -shared -o $@ $< $(LDFLAGS) -ldl

TEST_DEPS += $(DCAP_QVE_TAMPER)

# test_attestation dlopens the library in-process (dcap_ql_* tests): its
# platform API must be in the dynamic symbol table, as libsgxemu.so's is.
$(B)/tests/integration/test_attestation: LDFLAGS += -rdynamic
$(B)/tests/integration/test_attestation: | $(DCAP_QL) $(DCAP_QV)

# The provider's unit test links its objects (tests/unit/test_dcap_qpl.c).
$(B)/tests/unit/test_dcap_qpl: $(QPL_OBJS)
$(B)/tests/unit/test_dcap_qpl: TLIB_OBJS += $(QPL_OBJS)
$(B)/tests/unit/test_dcap_qpl: LDLIBS += -lcurl
$(B)/tests/integration/test_pccs: | $(DCAP_QPL)

# The verifier's unit test links its objects (tests/unit/test_dcap_qv.c).
$(B)/tests/unit/test_dcap_qv: $(QV_OBJS)
$(B)/tests/unit/test_dcap_qv: TLIB_OBJS += $(QV_OBJS)
$(B)/tests/unit/test_dcap_qv: | $(DCAP_QPL)

# bench/dcap loads the libraries by path and exports libsgxemu's platform
# API to libsgx_dcap_ql.so.1 as libsgxemu.so does under sgxemu run.
$(B)/bench/dcap: LDFLAGS += -rdynamic
BENCH_DEPS += $(DCAP_LIBS)
