/* SPDX-License-Identifier: MIT */
/*
 * A power transition on request (`sgxemu platform power-cycle PID`,
 * docs/guide.md "Platform events"), seen by a mainline-API program under
 * the shim with its own enclave (tests/enclaves/shim_encl.h): after the
 * loss the next EENTER through the vDSO reports #PF (vector 14) with the
 * SGX bit on the TCS, a thread caught in enclave mode reports it at its
 * ERESUME, the kernel's ioctls meet the loss as faults of their leaves,
 * and the lost enclave is torn down and a new one built and entered in
 * the same process, as after a resume on hardware (linux-driver-facts.md
 * §8.3).
 *
 * The binary re-executes itself through `sgxemu run` when started without
 * the shim (tests/run.sh starts it directly); each case runs in a child
 * of its own, so each starts with no platform.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <sys/wait.h>

#include "../enclaves/shim_encl.h"
#include "test.h"

#include "../enclaves/shim_test.h"

/*
 * `sgxemu platform power-cycle PID` on this process: its exit status, its
 * output (both streams) in @out.
 */
static int power_cycle(pid_t pid, char *out, size_t size)
{
	const char *b = getenv("B");
	char cmd[4096];
	size_t n = 0;
	FILE *p;
	int st;

	snprintf(cmd, sizeof(cmd), "%s/sgxemu platform power-cycle %ld 2>&1",
		 b ? b : "build", (long)pid);
	p = popen(cmd, "r");
	if (!p)
		return -1;
	while (n + 1 < size && fgets(out + n, (int)(size - n), p))
		n += strlen(out + n);
	out[n] = 0;
	st = pclose(p);
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/* The enclave's memory and file go, as a runtime destroys an enclave. */
static void destroy(struct shim_encl *e)
{
	munmap(e->reserve, 2 * SHIM_ENCL_SIZE);
	close(e->fd);
	free(e->img);
}

/* EENTER of TCS @tcs after the loss: #PF with the SGX bit on the TCS. */
static void check_lost_eenter(struct shim_encl *e, int tcs)
{
	struct sgx_enclave_run run;
	uint64_t out[2] = { 0 };

	CHECK_EQ(shim_ecall(e, tcs, 0, out, 1, &run), 0);
	CHECK_EQ(run.function, SGX_EENTER);
	CHECK_EQ(run.exception_vector, X86_TRAP_PF);
	CHECK_EQ(run.exception_error_code,
		 X86_PF_SGX | X86_PF_USER | X86_PF_PROT);
	CHECK_EQ(run.exception_addr, e->base + SHIM_ENCL_TCS(tcs));
	CHECK_EQ(out[0], 0);
}

TEST(eenter_after_power_cycle_faults_with_the_sgx_bit)
{
	struct sgx_enclave_run run;
	struct shim_encl e;
	uint64_t out[2] = { 0 };
	char msg[512];

	BUILD(e);
	CHECK_EQ(shim_ecall(&e, 0, 0, out, 41, &run), 0);
	CHECK_EQ(run.function, SGX_EEXIT);
	CHECK_EQ(out[0], 42);

	CHECK_EQ(power_cycle(getpid(), msg, sizeof(msg)), 0);
	CHECK(strstr(msg, "1 enclave lost") != NULL);
	if (!strstr(msg, "1 enclave lost"))
		test_fail(__FILE__, __LINE__, "power-cycle said: %s", msg);
	for (int tcs = 0; tcs < SHIM_ENCL_NR_TCS; tcs++)
		check_lost_eenter(&e, tcs);
	/* Host code reading the lost pages: the abort page, all ones. */
	CHECK_EQ(*(volatile uint64_t *)(uintptr_t)(e.base + SHIM_ENCL_DATA),
		 UINT64_MAX);
	CHECK_EQ(*(volatile uint64_t *)(uintptr_t)(e.base + SHIM_ENCL_CODE),
		 UINT64_MAX);
	*(volatile uint64_t *)(uintptr_t)(e.base + SHIM_ENCL_DATA) = 7;
	CHECK_EQ(*(volatile uint64_t *)(uintptr_t)(e.base + SHIM_ENCL_DATA),
		 UINT64_MAX);
	/* Again: the loss does not go away by itself. */
	check_lost_eenter(&e, 0);

	/* The runtime's recovery: destroy, build again, enter. */
	destroy(&e);
	BUILD(e);
	memset(out, 0, sizeof(out));
	CHECK_EQ(shim_ecall(&e, 2, 0, out, 99, &run), 0);
	CHECK_EQ(run.function, SGX_EEXIT);
	CHECK_EQ(out[0], 100);
	CHECK_EQ(out[1], e.base + SHIM_ENCL_TCS(2));
	destroy(&e);
}

struct caught {
	struct shim_encl *e;
	uint64_t out[2];
	uint64_t go;			/* the enclave spins until not 0 */
	struct sgx_enclave_run run;
	int ret;
};

static void *spin_inside(void *arg)
{
	struct caught *c = arg;

	c->ret = shim_ecall(c->e, 3, 5, c->out,
			    (unsigned long)(uintptr_t)&c->go, &c->run);
	return NULL;
}

/*
 * A thread in enclave mode at the loss takes the AEX of the suspend's
 * interrupt; its AEP's ERESUME then faults, which the vDSO reports with
 * the leaf it was running: ERESUME.
 */
TEST(thread_caught_inside_faults_at_eresume)
{
	static struct caught c;
	struct shim_encl e;
	pthread_t t;
	char msg[512];

	BUILD(e);
	memset(&c, 0, sizeof(c));
	c.e = &e;
	REQUIRE_EQ(pthread_create(&t, NULL, spin_inside, &c), 0);
	/* Inside once the enclave wrote its 1: no timing involved. */
	while (!__atomic_load_n(&c.out[0], __ATOMIC_ACQUIRE))
		sched_yield();
	CHECK_EQ(power_cycle(getpid(), msg, sizeof(msg)), 0);
	if (!strstr(msg, "1 enclave lost"))
		test_fail(__FILE__, __LINE__, "power-cycle said: %s", msg);
	pthread_join(t, NULL);
	CHECK_EQ(c.ret, 0);
	CHECK_EQ(c.run.function, SGX_ERESUME);
	CHECK_EQ(c.run.exception_vector, X86_TRAP_PF);
	CHECK_EQ(c.run.exception_error_code,
		 X86_PF_SGX | X86_PF_USER | X86_PF_PROT);
	CHECK_EQ(c.run.exception_addr, e.base + SHIM_ENCL_TCS(3));
	/* It never got to its 0x600d. */
	CHECK_EQ(c.out[0], 1);
	destroy(&e);
	BUILD(e);
	c.go = 1;
	memset(c.out, 0, sizeof(c.out));
	CHECK_EQ(shim_ecall(&e, 3, 5, c.out, (unsigned long)(uintptr_t)&c.go,
			    &c.run), 0);
	CHECK_EQ(c.run.function, SGX_EEXIT);
	CHECK_EQ(c.out[0], 0x600d);
	destroy(&e);
}

/*
 * The kernel learns of the loss only through its leaves: EADD and EINIT
 * fault on the lost SECS (EIO, as __eadd's and EINIT's faults are), and
 * release succeeds (EREMOVE of an invalid page does nothing).
 */
TEST(ioctls_after_power_cycle)
{
	struct sgx_enclave_add_pages add;
	struct sgx_enclave_init init;
	struct sgx_secinfo si __attribute__((aligned(64)));
	struct shim_encl e;
	char msg[512];

	NEED_SHIM();
	REQUIRE(key());
	REQUIRE_EQ(shim_encl_create(&e, "/dev/sgx_enclave", SHIM_ENCL_ATTRS),
		   0);
	REQUIRE_EQ(shim_encl_add(&e), 0);
	CHECK_EQ(power_cycle(getpid(), msg, sizeof(msg)), 0);
	if (!strstr(msg, "1 enclave lost"))
		test_fail(__FILE__, __LINE__, "power-cycle said: %s", msg);
	memset(&si, 0, sizeof(si));
	si.flags = SGX_SECINFO_REG | SGX_SECINFO_R;
	memset(&add, 0, sizeof(add));
	add.src = (uint64_t)(uintptr_t)e.img;
	add.offset = 0xf000;
	add.length = 4096;
	add.secinfo = (uint64_t)(uintptr_t)&si;
	errno = 0;
	CHECK_EQ(ioctl(e.fd, SGX_IOC_ENCLAVE_ADD_PAGES, &add), -1);
	CHECK_EQ(errno, EIO);
	CHECK_EQ(add.count, 0);
	REQUIRE_EQ(shim_sign(key(), (uint8_t[32]){ 0 }, SHIM_ENCL_ATTRS,
			     &e.ss), 0);
	init.sigstruct = (uint64_t)(uintptr_t)&e.ss;
	errno = 0;
	CHECK_EQ(ioctl(e.fd, SGX_IOC_ENCLAVE_INIT, &init), -1);
	CHECK_EQ(errno, EIO);
	destroy(&e);
	/* Its EPC pages came back: a new enclave builds in their place. */
	BUILD(e);
	destroy(&e);
}

/* No enclave device opened: no platform, nothing lost; a platform with
 * no enclave loses none; a second power cycle finds the first's loss. */
TEST(power_cycle_without_enclaves_and_twice)
{
	struct shim_encl e;
	char msg[512];
	int fd;

	NEED_SHIM();
	CHECK_EQ(power_cycle(getpid(), msg, sizeof(msg)), 0);
	if (!strstr(msg, "nothing lost"))
		test_fail(__FILE__, __LINE__, "power-cycle said: %s", msg);
	fd = open("/dev/sgx_enclave", O_RDWR);
	REQUIRE(fd >= 0);
	CHECK_EQ(power_cycle(getpid(), msg, sizeof(msg)), 0);
	if (!strstr(msg, "0 enclaves lost"))
		test_fail(__FILE__, __LINE__, "power-cycle said: %s", msg);
	BUILD(e);
	CHECK_EQ(power_cycle(getpid(), msg, sizeof(msg)), 0);
	if (!strstr(msg, "1 enclave lost"))
		test_fail(__FILE__, __LINE__, "power-cycle said: %s", msg);
	CHECK_EQ(power_cycle(getpid(), msg, sizeof(msg)), 0);
	if (!strstr(msg, "0 enclaves lost"))
		test_fail(__FILE__, __LINE__, "power-cycle said: %s", msg);
	check_lost_eenter(&e, 1);
	destroy(&e);
	close(fd);
}

struct request {
	char msg[512];
	int rc;
};

static void *request_power_cycle(void *arg)
{
	struct request *r = arg;

	r->rc = power_cycle(getpid(), r->msg, sizeof(r->msg));
	return NULL;
}

/* Two requests at once are two power cycles in a row: one loses the
 * enclave, the other finds nothing left; both succeed. */
TEST(concurrent_power_cycles)
{
	static struct request r[2];
	struct shim_encl e;
	pthread_t t[2];
	int lost = 0;

	BUILD(e);
	for (int i = 0; i < 2; i++)
		REQUIRE_EQ(pthread_create(&t[i], NULL, request_power_cycle,
					  &r[i]), 0);
	for (int i = 0; i < 2; i++) {
		pthread_join(t[i], NULL);
		CHECK_EQ(r[i].rc, 0);
		if (strstr(r[i].msg, "1 enclave lost"))
			lost++;
		else if (!strstr(r[i].msg, "0 enclaves lost"))
			test_fail(__FILE__, __LINE__, "power-cycle said: %s",
				  r[i].msg);
	}
	CHECK_EQ(lost, 1);
	check_lost_eenter(&e, 0);
	destroy(&e);
}

/* Each process is a platform of its own: a forked child serves its own
 * requests, and its power cycle leaves the parent's enclave running. */
TEST(power_cycle_of_a_forked_child_spares_the_parent)
{
	struct sgx_enclave_run run;
	struct shim_encl e;
	uint64_t out[2] = { 0 };
	char msg[512];
	pid_t pid;
	int st;

	BUILD(e);
	CHECK_EQ(shim_ecall(&e, 0, 0, out, 1, &run), 0);
	CHECK_EQ(out[0], 2);
	pid = fork();
	REQUIRE(pid >= 0);
	if (pid == 0) {
		int rc = power_cycle(getpid(), msg, sizeof(msg));

		_exit(rc == 0 && strstr(msg, "power cycled") ? 0 : 1);
	}
	REQUIRE_EQ(waitpid(pid, &st, 0), pid);
	CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	memset(out, 0, sizeof(out));
	CHECK_EQ(shim_ecall(&e, 0, 0, out, 5, &run), 0);
	CHECK_EQ(run.function, SGX_EEXIT);
	CHECK_EQ(out[0], 6);
	destroy(&e);
}
