/* SPDX-License-Identifier: MIT */
/*
 * Loading a flat test enclave image (tests/enclaves/layout.h) the way an
 * SGX runtime does under `sgxemu run`: /dev/sgx_enclave, CREATE, ADD_PAGES
 * page by page with the layout's permissions, INIT with a SIGSTRUCT signed
 * by KEY, and each page mapped. The debugger tests' program (dbg_host.c)
 * and the enclave fuzzing test's (fuzz_host.c) share it. Needs test.h,
 * encl_util.h and shim_encl.h included first.
 */
#ifndef SGXEMU_TEST_FLAT_LOAD_H
#define SGXEMU_TEST_FLAT_LOAD_H

/* The device file of the last enclave loaded (dbg_host --destroy). */
static int flat_fd = -1;

/* 0 with the enclave at *@basep and shim_vdso_fn set; -1 after a line. */
static int flat_load(const char *key, const char *bin, bool debug, uint64_t *basep)
{
	struct sgx_enclave_create create;
	struct sgx_enclave_init init;
	struct sgx_secs secs;
	struct sgx_sigstruct *sig = aligned_alloc(4096, 4096);
	struct tm_log log = { 0 };
	uint8_t *img, *page = aligned_alloc(4096, 4096), mr[32];
	size_t size = 0;
	int fd = open("/dev/sgx_enclave", O_RDWR);
	uint8_t *rsv = mmap(NULL, 2 * L_SIZE, PROT_NONE,
			    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	img = tu_read(bin, &size);
	if (fd < 0 || rsv == MAP_FAILED || !img || !sig || !page) {
		fprintf(stderr, "flat_load: cannot open the device, reserve "
			"ELRANGE or read %s\n", bin);
		return -1;
	}
	*basep = ((uint64_t)(uintptr_t)rsv + L_SIZE - 1) & ~(L_SIZE - 1);
	memset(&secs, 0, sizeof(secs));
	secs.size = L_SIZE;
	secs.base = *basep;
	secs.ssa_frame_size = 1;
	secs.attributes.flags = SGX_ATTR_MODE64BIT | (debug ? SGX_ATTR_DEBUG : 0);
	secs.attributes.xfrm = SGX_XFRM_LEGACY;
	create.src = (uint64_t)(uintptr_t)&secs;
	if (ioctl(fd, SGX_IOC_ENCLAVE_CREATE, &create)) {
		perror("flat_load: SGX_IOC_ENCLAVE_CREATE");
		return -1;
	}
	tm_init(&log, 1, L_SIZE);
	for (size_t i = 0; i < L_PAGES; i++) {
		struct sgx_secinfo si __attribute__((aligned(64)));
		struct sgx_enclave_add_pages add = {
			.src = (uint64_t)(uintptr_t)page, .offset = i * 4096,
			.length = 4096, .secinfo = (uint64_t)(uintptr_t)&si,
			.flags = SGX_PAGE_MEASURE,
		};

		memset(&si, 0, sizeof(si));
		si.flags = tu_layout_secinfo(i);
		memset(page, 0, 4096);
		if ((i + 1) * 4096 <= size)
			memcpy(page, img + i * 4096, 4096);
		tm_add(&log, i * 4096, si.flags, page, 0xffff);
		if (ioctl(fd, SGX_IOC_ENCLAVE_ADD_PAGES, &add)) {
			perror("flat_load: SGX_IOC_ENCLAVE_ADD_PAGES");
			return -1;
		}
	}
	if (tm_final(&log, mr) || tu_sigstruct(mr, &secs, sig, key)) {
		fprintf(stderr, "flat_load: cannot sign with %s\n", key);
		return -1;
	}
	init.sigstruct = (uint64_t)(uintptr_t)sig;
	if (ioctl(fd, SGX_IOC_ENCLAVE_INIT, &init)) {
		perror("flat_load: SGX_IOC_ENCLAVE_INIT");
		return -1;
	}
	for (size_t i = 0; i < L_PAGES; i++) {
		void *want = (void *)(uintptr_t)(*basep + i * 4096);

		if (mmap(want, 4096, tu_prot(tu_layout_secinfo(i)),
			 MAP_SHARED | MAP_FIXED, fd, 0) != want) {
			perror("flat_load: mmap");
			return -1;
		}
	}
	shim_vdso_fn = shim_vdso_sym("__vdso_sgx_enter_enclave");
	if (!shim_vdso_fn) {
		fprintf(stderr, "flat_load: no __vdso_sgx_enter_enclave (run "
			"under sgxemu run)\n");
		return -1;
	}
	free(img);
	free(page);
	free(sig);
	flat_fd = fd;
	return 0;
}

#endif
