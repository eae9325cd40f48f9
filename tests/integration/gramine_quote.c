// SPDX-License-Identifier: MIT
/*
 * Remote attestation from inside Gramine (test_gramine_attest.sh): writes
 * 64 bytes of user report data to /dev/attestation/user_report_data,
 * reads /dev/attestation/quote, and prints the attestation type, the
 * report data and the quote as hex lines for the test to verify outside.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static int read_all(const char *path, unsigned char *buf, size_t cap, size_t *len)
{
	int fd = open(path, O_RDONLY);
	ssize_t n;

	*len = 0;
	if (fd < 0)
		return -1;
	while (*len < cap && (n = read(fd, buf + *len, cap - *len)) > 0)
		*len += (size_t)n;
	close(fd);
	return 0;
}

static void hex_line(const char *tag, const unsigned char *p, size_t n)
{
	printf("%s ", tag);
	for (size_t i = 0; i < n; i++)
		printf("%02x", p[i]);
	printf("\n");
}

int main(void)
{
	static unsigned char quote[16384];
	unsigned char rd[64], type[32];
	size_t len, tlen;
	int fd;

	for (int i = 0; i < 64; i++)
		rd[i] = (unsigned char)(0xa0 + i);
	if (read_all("/dev/attestation/attestation_type", type, sizeof(type) - 1, &tlen)) {
		perror("attestation_type");
		return 1;
	}
	type[tlen] = '\0';
	printf("type %s\n", type);
	fd = open("/dev/attestation/user_report_data", O_WRONLY);
	if (fd < 0 || write(fd, rd, sizeof(rd)) != (ssize_t)sizeof(rd)) {
		perror("user_report_data");
		return 1;
	}
	close(fd);
	if (read_all("/dev/attestation/quote", quote, sizeof(quote), &len) || len < 436) {
		perror("quote");
		return 1;
	}
	hex_line("report_data", rd, sizeof(rd));
	hex_line("quote", quote, len);
	return 0;
}
