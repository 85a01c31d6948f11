// SPDX-License-Identifier: MIT
/*
 * target.c - what bench knows about targets before it touches them: the
 * default targets ("flash", "pmem"), the refusal to write over a filesystem
 * or a pmwal log without --force, and the environment record (kernel, CPU,
 * device facts, probe output) stored with every result so a number can be
 * traced to the machine that produced it.
 */
#include "bench.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/sysmacros.h>
#include <sys/utsname.h>
#include <unistd.h>
#include <liburing.h>

#include "pmwal.h"

/* Set by CMake when pmr/ builds the probe (pmwal_probe). */
#ifdef PMWAL_BENCH_PROBE
#include "probe.h"
#define BENCH_HAVE_PROBE 1
#endif

#define TMPFS_MAGIC_NR 0x01021994
/* Superblock magics, as blkid finds them. */
#define EXT_MAGIC_OFF	1080
#define BTRFS_MAGIC_OFF 0x10040
#define PROBE_BYTES	(BTRFS_MAGIC_OFF + 8)

static const char *fs_magic(const uint8_t *b, size_t n)
{
	if (n >= EXT_MAGIC_OFF + 2 && b[EXT_MAGIC_OFF] == 0x53 &&
	    b[EXT_MAGIC_OFF + 1] == 0xEF)
		return "an ext2/3/4 filesystem";
	if (n >= 4 && !memcmp(b, "XFSB", 4))
		return "an XFS filesystem";
	if (n >= PROBE_BYTES && !memcmp(b + BTRFS_MAGIC_OFF, "_BHRfS_M", 8))
		return "a btrfs filesystem";
	return NULL;
}

static bool holds_pmwal_log(const char *target)
{
	struct pmwal_options o = {.target = target, .flags = PMWAL_OPEN_READONLY};
	struct pmwal_report rep;
	int ret = pmwal_verify(&o, &rep);

	return ret == 0 || ret == PMWAL_ECORRUPT;
}

const char *target_fs_magic(const char *target)
{
	const char *path = !strncmp(target, "pmem:", 5) ? target + 5 : target;
	const char *what = NULL;
	uint8_t *buf;
	int fd;

	if (target_is_region(target) && strncmp(target, "pmem:", 5))
		return NULL;
	/* O_NONBLOCK: a FIFO must not hang the look. */
	fd = open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	if (fd < 0)
		return NULL;
	buf = calloc(1, PROBE_BYTES);
	if (buf) {
		ssize_t n = pread(fd, buf, PROBE_BYTES, 0);

		if (n > 0)
			what = fs_magic(buf, (size_t)n);
		free(buf);
	}
	close(fd);
	return what;
}

int target_check_writable(const char *target, bool force, char *err, size_t errlen)
{
	const char *path = !strncmp(target, "pmem:", 5) ? target + 5 : target;
	const char *what = force ? NULL : target_fs_magic(target);

	if (!what && !force && holds_pmwal_log(target))
		what = "a pmwal log";
	if (!what)
		return 0;
	snprintf(err, errlen,
		 "%s holds %s; a write benchmark would destroy it (pass --force "
		 "to write anyway)",
		 path, what);
	return -1;
}

static bool on_tmpfs(const char *path)
{
	struct statfs fs;
	char dir[4096];

	snprintf(dir, sizeof(dir), "%s", path);
	if (statfs(dir, &fs) == 0)
		return fs.f_type == TMPFS_MAGIC_NR;
	char *slash = strrchr(dir, '/');
	if (slash)
		*slash = 0;
	return statfs(slash ? (*dir ? dir : "/") : ".", &fs) == 0 &&
	       fs.f_type == TMPFS_MAGIC_NR;
}

/* A file on tmpfs maps with page granularity; force the cache-line path so the
 * CPU cost of real pmem is what gets measured (labelled emulated). */
static void force_cache_line(const char *target)
{
	if (!strncmp(target, "pmem:", 5) && on_tmpfs(target + 5))
		setenv("PMEM2_FORCE_GRANULARITY", "CACHE_LINE", 0);
}

/* Where "flash" lives: a writable directory on a disk filesystem (O_DIRECT
 * is refused on tmpfs): $PMWAL_BENCH_DIR, ., $TMPDIR, /var/tmp. */
static const char *flash_dir(void)
{
	const char *d = getenv("PMWAL_BENCH_DIR");
	const char *cand[] = {".", getenv("TMPDIR"), "/var/tmp"};

	if (d && *d)
		return d;
	for (size_t i = 0; i < sizeof(cand) / sizeof(cand[0]); i++)
		if (cand[i] && *cand[i] && access(cand[i], W_OK) == 0 &&
		    !on_tmpfs(cand[i]))
			return cand[i];
	return "/var/tmp";
}

const char *target_resolve(const char *t, int role, char *label, size_t labellen)
{
	static char paths[2][2][4096];
	const char *name = role ? "pmwal-bench.wal" : "pmwal-bench.dat";

	snprintf(label, labellen, "%s", "");
	if (!strcmp(t, "flash")) {
		snprintf(paths[role][0], sizeof(paths[0][0]), "%s/%s", flash_dir(), name);
		snprintf(label, labellen, "flash");
		return paths[role][0];
	}
	if (!strcmp(t, "pmem") || !strcmp(t, "emulated")) {
		snprintf(paths[role][1], sizeof(paths[0][0]), "pmem:/dev/shm/%s", name);
		snprintf(label, labellen, "emulated pmem");
		force_cache_line(paths[role][1]);
		return paths[role][1];
	}
	force_cache_line(t);
	if (!strncmp(t, "pmem:", 5) && on_tmpfs(t + 5))
		snprintf(label, labellen, "emulated pmem");
	return t;
}

bool target_owned(const char *t)
{
	static const char *const names[] = {"/pmwal-bench.dat", "/pmwal-bench.wal"};
	size_t n = strlen(t);

	for (int i = 0; i < 2; i++) {
		size_t k = strlen(names[i]);
		if (n > k && !strcmp(t + n - k, names[i]))
			return true;
	}
	return false;
}

static json_t *cpu_json(void)
{
	FILE *f = fopen("/proc/cpuinfo", "r");
	char line[512], model[256] = "";

	while (f && fgets(line, sizeof(line), f)) {
		char *c = strchr(line, ':');
		if (!strncmp(line, "model name", 10) && c) {
			snprintf(model, sizeof(model), "%s", c + 2);
			model[strcspn(model, "\n")] = 0;
			break;
		}
	}
	if (f)
		fclose(f);
	return json_pack("{s:s,s:i,s:I}", "model", model, "online",
			 (int)sysconf(_SC_NPROCESSORS_ONLN), "memory_bytes",
			 (json_int_t)sysconf(_SC_PHYS_PAGES) * sysconf(_SC_PAGESIZE));
}

static void sysfs_add(json_t *o, const char *key, const char *path)
{
	char buf[256] = "";
	FILE *f = fopen(path, "r");

	if (!f)
		return;
	if (fgets(buf, sizeof(buf), f)) {
		buf[strcspn(buf, "\n")] = 0;
		while (*buf && buf[strlen(buf) - 1] == ' ')
			buf[strlen(buf) - 1] = 0;
		json_object_set_new(o, key, json_string(buf));
	}
	fclose(f);
}

/* The block device under a file or device: sector sizes, model, rotational. */
static void blockdev_facts(json_t *o, dev_t dev)
{
	char base[256], p[512];

	snprintf(base, sizeof(base), "/sys/dev/block/%u:%u", major(dev), minor(dev));
	snprintf(p, sizeof(p), "%s/partition", base);
	if (access(p, F_OK) == 0)
		snprintf(base + strlen(base), sizeof(base) - strlen(base), "/..");
	static const char *const keys[][2] = {
	    {"logical_block_size", "queue/logical_block_size"},
	    {"physical_block_size", "queue/physical_block_size"},
	    {"rotational", "queue/rotational"},
	    {"scheduler", "queue/scheduler"},
	    {"model", "device/model"},
	    {"nr_requests", "queue/nr_requests"},
	};
	for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
		snprintf(p, sizeof(p), "%s/%s", base, keys[i][1]);
		sysfs_add(o, keys[i][0], p);
	}
}

json_t *target_env_json(const char *t)
{
	json_t *o = json_pack("{s:s}", "target", t);
	const char *path = !strncmp(t, "pmem:", 5) ? t + 5 : t;
	struct stat st;
	struct statfs fs;

	if (target_is_region(t) && strncmp(t, "pmem:", 5)) {
		json_object_set_new(o, "kind", json_string("region"));
	} else if (stat(path, &st) == 0) {
		json_object_set_new(
		    o, "kind", json_string(S_ISBLK(st.st_mode) ? "blockdev" : "file"));
		blockdev_facts(o, S_ISBLK(st.st_mode) ? st.st_rdev : st.st_dev);
		if (statfs(path, &fs) == 0)
			json_object_set_new(o, "fs_magic",
					    json_integer((json_int_t)fs.f_type));
	}
	json_object_set_new(o, "emulated",
			    json_boolean(!strncmp(t, "pmem:", 5) && on_tmpfs(path)));
#ifdef BENCH_HAVE_PROBE
	char err[256] = "";
	json_t *probe = pmr_probe_json(t, err, sizeof(err));
	json_object_set_new(o, "probe", probe ? probe : json_string(err));
#endif
	return o;
}

json_t *environment_json(const char **targets, int ntargets, json_t *options)
{
	struct utsname u;
	const char *g = getenv("PMEM2_FORCE_GRANULARITY");
	json_t *tj = json_array();

	uname(&u);
	for (int i = 0; i < ntargets; i++)
		json_array_append_new(tj, target_env_json(targets[i]));
	json_t *env =
	    json_pack("{s:s,s:s,s:s,s:s,s:o,s:s,s:s,s:o}", "kernel", u.release,
		      "kernel_version", u.version, "machine", u.machine, "hostname",
		      u.nodename, "cpu", cpu_json(), "pmwal_version", pmwal_version(),
		      "pmem2_force_granularity", g ? g : "", "targets", tj);
#ifdef IO_URING_VERSION_MAJOR
	json_object_set_new(
	    env, "liburing",
	    json_sprintf("%d.%d", IO_URING_VERSION_MAJOR, IO_URING_VERSION_MINOR));
#else
	json_object_set_new(env, "liburing", json_string("< 2.4 (no version macros)"));
#endif
	json_object_set_new(env, "clock", json_string(bench_clock_name()));
	json_object_set_new(env, "histogram",
			    json_pack("{s:s,s:i,s:f}", "kind", "log-linear",
				      "sub_buckets", HIST_SUB_COUNT, "rel_error_bound",
				      HIST_REL_ERROR));
	if (options)
		json_object_set(env, "options", options);
	return env;
}
