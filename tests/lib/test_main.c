/* SPDX-License-Identifier: MIT */
/* The test harness's main(): see test.h. */
#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "test.h"

#define TEST_TIMEOUT_S	120
#define SKIP_EXIT	77

/*
 * The registered tests, in a table that grows as constructors register
 * them: a binary may hold any number. A test that cannot be registered
 * (out of memory) is counted and main() fails the binary, naming how
 * many were lost; a test is never dropped without a word.
 */
static struct test_entry { const char *name; test_fn fn; } *tests;
static int nr_tests, cap_tests, lost_tests;
static int failures;	/* in the running test (the child) */

void test_register(const char *name, test_fn fn)
{
	if (nr_tests == cap_tests) {
		int cap = cap_tests ? 2 * cap_tests : 64;
		struct test_entry *t = realloc(tests, (size_t)cap * sizeof(*t));

		if (!t) {
			fprintf(stderr, "test harness: cannot register %s: out of memory\n",
				name);
			lost_tests++;
			return;
		}
		tests = t;
		cap_tests = cap;
	}
	tests[nr_tests].name = name;
	tests[nr_tests].fn = fn;
	nr_tests++;
}

void test_fail(const char *file, int line, const char *fmt, ...)
{
	va_list ap;

	fprintf(stdout, "    %s:%d: ", file, line);
	va_start(ap, fmt);
	vfprintf(stdout, fmt, ap);
	va_end(ap);
	fputc('\n', stdout);
	fflush(stdout);
	failures++;
}

void test_skip(const char *fmt, ...)
{
	va_list ap;

	fprintf(stdout, "    skipped: ");
	va_start(ap, fmt);
	vfprintf(stdout, fmt, ap);
	va_end(ap);
	fputc('\n', stdout);
	fflush(stdout);
	/* As a test's child ends after passing: no exit handlers (LSan's
	 * leak check among them, whose tracer thread a seccomp filter of
	 * the shim kills, so that it waits for it for ever). */
	_exit(SKIP_EXIT);
}

void test_abort(const char *fmt, ...)
{
	va_list ap;

	fprintf(stdout, "    ");
	va_start(ap, fmt);
	vfprintf(stdout, fmt, ap);
	va_end(ap);
	fputc('\n', stdout);
	fflush(stdout);
	_exit(1);	/* as test_skip(), without exit handlers */
}

/* Wait for @pid, killing it after TEST_TIMEOUT_S seconds. */
static int wait_child(pid_t pid, bool *timed_out)
{
	struct timespec step = { 0, 2 * 1000 * 1000 };
	long waited_ms = 0;
	int status;

	*timed_out = false;
	for (;;) {
		pid_t r = waitpid(pid, &status, WNOHANG);

		if (r == pid)
			return status;
		if (r < 0 && errno != EINTR)
			return -1;
		if (waited_ms >= TEST_TIMEOUT_S * 1000L) {
			*timed_out = true;
			kill(pid, SIGKILL);
			waitpid(pid, &status, 0);
			return status;
		}
		nanosleep(&step, NULL);
		waited_ms += 2;
	}
}

int main(int argc, char **argv)
{
	int passed = 0, failed = 0, skipped = 0;

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc > 1 && lost_tests) {
		printf("FAIL harness: %d test(s) could not be registered\n", lost_tests);
		return 1;
	}
	if (argc > 1) {
		for (int i = 0; i < nr_tests; i++)
			if (!strcmp(tests[i].name, argv[1])) {
				tests[i].fn();
				printf("%s %s\n", failures ? "FAIL" : "ok", tests[i].name);
				return failures ? 1 : 0;
			}
		fprintf(stderr, "%s: no test named %s\n", argv[0], argv[1]);
		return 2;
	}

	for (int i = 0; i < nr_tests; i++) {
		bool timed_out;
		int status;
		pid_t pid;

		fflush(stdout);
		pid = fork();
		if (pid < 0) {
			perror("fork");
			return 2;
		}
		if (pid == 0) {
			tests[i].fn();
			fflush(stdout);
			_exit(failures ? 1 : 0);
		}
		status = wait_child(pid, &timed_out);
		if (timed_out) {
			printf("FAIL %s: timed out after %d s\n", tests[i].name, TEST_TIMEOUT_S);
			failed++;
		} else if (WIFEXITED(status) && WEXITSTATUS(status) == 0) {
			printf("ok %s\n", tests[i].name);
			passed++;
		} else if (WIFEXITED(status) && WEXITSTATUS(status) == SKIP_EXIT) {
			printf("skip %s\n", tests[i].name);
			skipped++;
		} else if (WIFSIGNALED(status)) {
			printf("FAIL %s: killed by signal %d (%s)\n", tests[i].name,
			       WTERMSIG(status), strsignal(WTERMSIG(status)));
			failed++;
		} else {
			printf("FAIL %s\n", tests[i].name);
			failed++;
		}
	}
	if (lost_tests) {
		printf("FAIL harness: %d test(s) could not be registered and did not run\n",
		       lost_tests);
		failed += lost_tests;
	}
	printf("%d passed, %d failed, %d skipped\n", passed, failed, skipped);
	return failed ? 1 : 0;
}
