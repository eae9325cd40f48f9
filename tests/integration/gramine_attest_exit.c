/* SPDX-License-Identifier: MIT */
/*
 * Run under Gramine with DCAP attestation by test_gramine_attest.sh, as
 * Gramine's own attestation test is (TC_04 test_000_attestation): a
 * local report for itself through /dev/attestation, a quote, then
 * open/close of the attestation files LOOPS times each, then exit. The
 * report and quote must carry the report data written; the process must
 * exit (the test runs it under a timeout). With an argument: the number of
 * loops (default 100000, as Gramine's test). Figures go to stderr.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define REPORT_SIZE		432	/* sgx_report_t */
#define REPORT_DATA_OFF		320	/* its report_data */
#define QUOTE_REPORT_DATA_OFF	(48 + 320)	/* header, then the body */

static const char *const files[] = {
	"/dev/attestation/user_report_data",
	"/dev/attestation/target_info",
	"/dev/attestation/my_target_info",
	"/dev/attestation/report",
};

static long io(const char *path, void *buf, size_t len, int write_it)
{
	int fd = open(path, write_it ? O_WRONLY : O_RDONLY);
	long done = 0, n;

	if (fd < 0)
		return -1;
	while ((size_t)done < len) {
		n = write_it ? write(fd, (char *)buf + done, len - done)
			     : read(fd, (char *)buf + done, len - done);
		if (n <= 0)
			break;
		done += n;
	}
	close(fd);
	return done;
}

static double now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec + t.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	static unsigned char quote[8192];
	unsigned char ti[512], rd[64], report[REPORT_SIZE];
	long loops = argc > 1 ? atol(argv[1]) : 100000, n;
	double t0;

	memset(rd, 0, sizeof(rd));
	strcpy((char *)rd, "sgxemu gramine_attest_exit");
	n = io("/dev/attestation/my_target_info", ti, sizeof(ti), 0);
	if (n <= 0 || io("/dev/attestation/target_info", ti, n, 1) != n ||
	    io("/dev/attestation/user_report_data", rd, 64, 1) != 64 ||
	    io("/dev/attestation/report", report, sizeof(report), 0) !=
		    REPORT_SIZE) {
		printf("attest: local report failed\n");
		return 1;
	}
	printf("attest: report data %s\n",
	       memcmp(report + REPORT_DATA_OFF, rd, 64) ? "differs" : "matches");
	n = io("/dev/attestation/quote", quote, sizeof(quote), 0);
	printf("attest: quote %s\n", n < QUOTE_REPORT_DATA_OFF + 64 ? "failed" :
	       memcmp(quote + QUOTE_REPORT_DATA_OFF, rd, 64) ? "differs" :
							     "matches");
	fflush(stdout);
	t0 = now();
	for (size_t f = 0; f < sizeof(files) / sizeof(files[0]); f++) {
		double t1 = now();

		for (long i = 0; i < loops; i++) {
			int fd = open(files[f], O_RDONLY);

			if (fd < 0 || close(fd) < 0) {
				printf("attest: open/close %s failed at %ld\n",
				       files[f], i);
				return 1;
			}
		}
		/* Figures on stderr: the test compares stdout only. */
		fprintf(stderr, "figures: %ld open/close of %s: %.1f us each\n",
			loops, files[f], (now() - t1) * 1e6 / (double)loops);
	}
	printf("attest: open/close done\n");
	fprintf(stderr, "figures: all open/close in %.1f s\n", now() - t0);
	return 0;
}
