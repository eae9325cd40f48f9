/* SPDX-License-Identifier: MIT */
/* Shared helpers of the sgxemu subcommands: see cli.h. */
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <openssl/err.h>

#include "cli.h"

static char command_name[64] = "sgxemu";

void cli_set_command(const char *name)
{
	snprintf(command_name, sizeof(command_name), "sgxemu %s", name);
}

void cli_error(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "%s: ", command_name);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

void cli_error_crypto(const char *what)
{
	unsigned long e = ERR_get_error();
	char reason[256];

	if (!e) {
		cli_error("%s", what);
		return;
	}
	ERR_error_string_n(e, reason, sizeof(reason));
	/* Keep the promise of one line: drop the rest of OpenSSL's queue. */
	ERR_clear_error();
	cli_error("%s: %s", what, reason);
}

void cli_print_usage(const struct cli_command *cmd, FILE *f)
{
	fputs(cmd->usage, f);
}

int cli_read_file(const char *path, uint8_t **data, size_t *size)
{
	FILE *f = fopen(path, "rb");
	struct stat st;
	uint8_t *buf;

	if (!f) {
		cli_error("cannot open %s: %s", path, strerror(errno));
		return -1;
	}
	if (fstat(fileno(f), &st)) {
		cli_error("cannot stat %s: %s", path, strerror(errno));
		fclose(f);
		return -1;
	}
	/* Directories open fine with fopen() but read as errors later. */
	if (!S_ISREG(st.st_mode)) {
		cli_error("%s is not a regular file", path);
		fclose(f);
		return -1;
	}
	buf = malloc((size_t)st.st_size + 1);
	if (!buf) {
		cli_error("out of memory reading %s", path);
		fclose(f);
		return -1;
	}
	if (fread(buf, 1, (size_t)st.st_size, f) != (size_t)st.st_size) {
		cli_error("cannot read %s: %s", path,
			  ferror(f) ? strerror(errno) : "short read");
		free(buf);
		fclose(f);
		return -1;
	}
	fclose(f);
	buf[st.st_size] = 0;
	*data = buf;
	*size = (size_t)st.st_size;
	return 0;
}

int cli_write_file(const char *path, const void *data, size_t size)
{
	FILE *f = fopen(path, "wb");

	if (!f) {
		cli_error("cannot create %s: %s", path, strerror(errno));
		return -1;
	}
	if (fwrite(data, 1, size, f) != size) {
		cli_error("cannot write %s: %s", path, strerror(errno));
		fclose(f);
		return -1;
	}
	/* A full disk shows up only at close: check it, or we'd report success. */
	if (fclose(f)) {
		cli_error("cannot write %s: %s", path, strerror(errno));
		return -1;
	}
	return 0;
}

bool cli_parse_uint(const char *s, uint64_t max, uint64_t *out)
{
	unsigned long long v;
	char *end;

	/* strtoull accepts "-1" and wraps it: refuse signs outright. */
	if (!s || !*s || *s == '-' || *s == '+' || *s == ' ')
		return false;
	errno = 0;
	v = strtoull(s, &end, 0);
	if (errno || *end || v > max)
		return false;
	*out = v;
	return true;
}

bool cli_parse_hex(const char *s, uint64_t *out)
{
	unsigned long long v;
	char *end;

	if (!s || !*s || *s == '-' || *s == '+' || *s == ' ')
		return false;
	errno = 0;
	v = strtoull(s, &end, 16);
	if (errno || *end)
		return false;
	*out = v;
	return true;
}

void cli_print_hex(FILE *f, const uint8_t *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		fprintf(f, "%02x", p[i]);
}
