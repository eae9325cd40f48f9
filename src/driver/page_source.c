// SPDX-License-Identifier: MIT
/*
 * The source mapping of an added page (see page_source.h), read from
 * /proc/self/maps. A mapping is a file mapping when it has an inode; the
 * noexec property comes from the mount the mapped file lives on, asked
 * through /proc/self/map_files (the mapped file itself, even if it was
 * renamed or deleted) and, failing that, through its path.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "driver/page_source.h"

/* Parse one maps line; returns true when it covers @addr. */
static bool parse_maps_line(const char *line, uint64_t addr, uint64_t *start,
			    uint64_t *end, unsigned *maj, unsigned *min,
			    uint64_t *ino, char *path, size_t pathlen)
{
	char perms[8];
	uint64_t off;
	int pos = 0;

	if (sscanf(line, "%" SCNx64 "-%" SCNx64 " %7s %" SCNx64 " %x:%x %" SCNu64 " %n",
		   start, end, perms, &off, maj, min, ino, &pos) < 7)
		return false;
	if (addr < *start || addr >= *end)
		return false;
	snprintf(path, pathlen, "%s", line + pos);
	path[strcspn(path, "\n")] = '\0';
	return true;
}

/* Is the file mapped at [start, end) on a noexec mount? */
static bool mapped_file_noexec(uint64_t start, uint64_t end, const char *path)
{
	char link[96];
	struct statvfs sv;
	int fd;

	snprintf(link, sizeof(link), "/proc/self/map_files/%" PRIx64 "-%" PRIx64,
		 start, end);
	fd = open(link, O_RDONLY | O_CLOEXEC);
	if (fd >= 0) {
		int r = fstatvfs(fd, &sv);

		close(fd);
		if (!r)
			return sv.f_flag & ST_NOEXEC;
	}
	if (path[0] == '/' && !statvfs(path, &sv))
		return sv.f_flag & ST_NOEXEC;
	return false;
}

int sgx_page_source(uint64_t addr, struct sgx_page_source *out)
{
	char line[1024];
	uint64_t start, end, ino;
	unsigned maj, min;
	FILE *f;
	bool found = false;

	memset(out, 0, sizeof(*out));
	f = fopen("/proc/self/maps", "re");
	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f))
		if (parse_maps_line(line, addr, &start, &end, &maj, &min, &ino,
				    out->path, sizeof(out->path))) {
			found = true;
			break;
		}
	fclose(f);
	if (!found)
		return -EFAULT;
	out->start = start;
	out->end = end;
	out->valid = true;

	if (!ino) {
		out->src.anonymous = true;
		return 0;
	}
	out->src.path = out->path;
	out->src.dev = makedev(maj, min);
	out->src.ino = ino;
	out->src.noexec_mount = mapped_file_noexec(start, end, out->path);
	if (out->path[0] == '/') {
		struct stat st;

		if (!stat(out->path, &st) && st.st_ino == ino) {
			out->src.uid = st.st_uid;
			out->src.mode = st.st_mode;
			out->src.exec_denied =
				faccessat(AT_FDCWD, out->path, X_OK, AT_EACCESS) != 0;
		}
	}
	return 0;
}
