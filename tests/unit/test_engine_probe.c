/* SPDX-License-Identifier: MIT */
/*
 * The CPU-feature probe's child (src/engine/probe.c): an instruction tried
 * in a child process, whose fault is its exit status. Its answer must not
 * depend on what the program made of SIGCHLD: Gramine's loader ignores
 * it, every process the loader starts inherits that, and a probe that
 * failed there took this host's untracked FSGSBASE for an absent one (the
 * engine then lost each FS base the enclave wrote at its next AEX). Nor
 * may the probe hand the program a SIGCHLD of a child it never made.
 *
 * Each case runs in a forked process of its own, so that the SIGCHLD
 * disposition it sets stays there.
 */
#include <signal.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "test.h"
#include "engine/engine.h"

static void try_nothing(void)
{
}

static void try_ud2(void)
{
	__asm__ volatile("ud2");
}

/* A load from page 0: SIGSEGV, written in assembly so that it is no
 * undefined behaviour for the sanitizers to stop at first. */
static void try_null_load(void)
{
	__asm__ volatile("movl (%0), %%eax" : : "r"(0UL) : "eax", "memory");
}

static volatile sig_atomic_t chld_seen;

static void on_chld(int sig)
{
	(void)sig;
	chld_seen++;
}

enum chld_mode { CHLD_DEFAULT, CHLD_IGNORED, CHLD_NOCLDWAIT, CHLD_HANDLED };

/*
 * In a child process with SIGCHLD as @mode says: the three probes' answers
 * as its exit status, 0 when each was the right one and no SIGCHLD reached
 * the handler, else the number of the first wrong one.
 */
static int probe_under(enum chld_mode mode)
{
	struct sigaction sa;
	pid_t pid;
	int status;

	pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0) {
		memset(&sa, 0, sizeof(sa));
		sa.sa_handler = mode == CHLD_IGNORED ? SIG_IGN :
				mode == CHLD_HANDLED ? on_chld : SIG_DFL;
		if (mode == CHLD_NOCLDWAIT)
			sa.sa_flags = SA_NOCLDWAIT;
		if (sigaction(SIGCHLD, &sa, NULL))
			_exit(10);
		if (sgxemu__probe_child(try_nothing) != 0)
			_exit(1);
		if (sgxemu__probe_child(try_ud2) != SGXEMU_PROBE_FAULTED)
			_exit(2);
		if (sgxemu__probe_child(try_null_load) != SGXEMU_PROBE_FAULTED)
			_exit(3);
		if (chld_seen)
			_exit(4);
		_exit(0);
	}
	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status))
		return -1;
	return WEXITSTATUS(status);
}

TEST(probe_with_sigchld_default)
{
	CHECK_EQ(probe_under(CHLD_DEFAULT), 0);
}

TEST(probe_with_sigchld_ignored)
{
	CHECK_EQ(probe_under(CHLD_IGNORED), 0);
}

TEST(probe_with_sa_nocldwait)
{
	CHECK_EQ(probe_under(CHLD_NOCLDWAIT), 0);
}

TEST(probe_sends_the_program_no_sigchld)
{
	CHECK_EQ(probe_under(CHLD_HANDLED), 0);
}
