# `make deb`: a Debian package of what `make install` writes with
# PREFIX=/usr (scripts/mkdeb.sh packs it with dpkg-deb):
#   /usr/bin/sgxemu, /usr/lib/sgxemu/ (libsgxemu.so, libsgxemu-audit.so,
#   libsgxemu_ptrace.so: bin/sgxemu finds them there, ../lib/sgxemu/ from
#   its own path), /usr/share/sgxemu/sgxemu.gdb, the man page, and the C
#   API: /usr/include/sgxemu/*.h, libsgxemu.a and pkgconfig/sgxemu.pc in
#   the multiarch library directory.
# The package is $(B)/sgxemu_VERSION_ARCH.deb (VERSION file, plus the last
# commit's date and hash in a git checkout); `apt-get install ./that.deb`.

DEB_MULTIARCH ?= $(shell dpkg-architecture -qDEB_HOST_MULTIARCH 2>/dev/null || $(CC) -print-multiarch)
DEB_STAGE     := $(B)/deb/root

# sgxemu.pc for the C API in libsgxemu.a, which links statically: its
# libraries are in Libs. Paths hang off ${prefix}, so that
# `pkg-config --define-variable=prefix=DIR` finds an unpacked copy.
sgxemu_pc = libdir='$(patsubst $(PREFIX)%,$${prefix}%,$(LIBDIR))'; \
	incdir='$(patsubst $(PREFIX)%,$${prefix}%,$(INCLUDEDIR))'; \
	printf '%s\n' 'prefix=$(PREFIX)' "libdir=$$libdir" "includedir=$$incdir" '' \
	  'Name: sgxemu' \
	  'Description: Intel SGX in software: build and run enclaves on the emulated processor' \
	  "Version: $$(cat VERSION)" \
	  'Cflags: -I$${includedir}' \
	  'Libs: -L$${libdir} -lsgxemu $(filter-out -pthread,$(LDLIBS)) -pthread' > $(1)

deb: all
	@case "$(SAN)" in ?*) echo "deb: a sanitizer build is not packaged (make deb without SAN)" >&2; exit 1;; esac
	rm -rf $(DEB_STAGE)
	$(MAKE) --no-print-directory install PREFIX=/usr LIBDIR=/usr/lib/$(DEB_MULTIARCH) \
		DESTDIR=$(abspath $(DEB_STAGE))
	scripts/mkdeb.sh $(DEB_STAGE) $(B)
