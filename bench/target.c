// SPDX-License-Identifier: MIT
/*
 * target.c - what bench knows about targets before it touches them: what a
 * target is (pmwal_target_parse(), the library's one parser of targets), the
 * default targets ("flash", "pmem"), the refusal to write over a filesystem
 * or a pmwal log without --force, and the environment record (kernel, CPU,
 * device facts, probe output) stored with every result so a number can be
 * traced to the machine that produced it.
 */
#include "bench.h"
#include "outfile.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/sysmacros.h>
#include <sys/utsname.h>
#include <sys/xattr.h>
#include <unistd.h>
#include <liburing.h>

#include "pmr.h"

#include "pmwal.h"
#include "probe.h"

#define TMPFS_MAGIC_NR 0x01021994

enum pmwal_target_kind target_kind(const char *target)
{
	struct pmwal_target t;

	(void)pmwal_target_parse(target, &t); /* malformed: the kind still stands */
	return t.kind;
}

const char *target_file(const char *target)
{
	struct pmwal_target t;

	(void)pmwal_target_parse(target, &t);
	switch (t.kind) {
	case PMWAL_TARGET_FILE:
	case PMWAL_TARGET_PMEM:
	case PMWAL_TARGET_DEVDAX:
		return t.rest; /* points into @target: no options follow these */
	case PMWAL_TARGET_PMR:
	case PMWAL_TARGET_FAKEPMR:
	case PMWAL_TARGET_SIM:
		break;
	}
	return NULL;
}

bool target_no_fio(const char *target, char *buf, size_t len)
{
	switch (target_kind(target)) {
	case PMWAL_TARGET_PMR:
		snprintf(buf, len, "none: fio has no engine for an NVMe PMR's BAR with its "
				   "read barrier");
		return true;
	case PMWAL_TARGET_FAKEPMR:
		snprintf(buf, len, "none: a simulated PMR exists only in pmwal");
		return true;
	case PMWAL_TARGET_SIM:
		snprintf(buf, len, "none: a simulated medium exists only in pmwal");
		return true;
	default:
		return false;
	}
}

bool target_is_region(const char *target)
{
	enum pmwal_target_kind k = target_kind(target);

	return k == PMWAL_TARGET_PMEM || k == PMWAL_TARGET_DEVDAX ||
	       k == PMWAL_TARGET_PMR || k == PMWAL_TARGET_FAKEPMR;
}

static bool holds_pmwal_log(const char *target)
{
	struct pmwal_options o = {.target = target, .flags = PMWAL_OPEN_READONLY};
	struct pmwal_report rep;
	int ret = pmwal_verify(&o, &rep);

	return ret == 0 || ret == PMWAL_ECORRUPT;
}

/* A regular file (PATH, file:, pmem:, fakepmr:) that bench did not create:
 * the user's, refused for writes (log, recovery, primitives and io alike).
 * An empty one too: the user made it (touch, a placeholder another program
 * fills), and being empty does not make it bench's to grow, fill and mark. */
static int scratch_path(const char *t, char *buf, size_t len);
static bool is_scratch_file(const char *file);

static bool users_file(const char *target, char *err, size_t errlen)
{
	enum pmwal_target_kind k = target_kind(target);
	char file[4096];
	struct stat st;

	if ((k != PMWAL_TARGET_FILE && k != PMWAL_TARGET_PMEM &&
	     k != PMWAL_TARGET_FAKEPMR) ||
	    scratch_path(target, file, sizeof(file)) || stat(file, &st) ||
	    !S_ISREG(st.st_mode) || is_scratch_file(file))
		return false;
	snprintf(err, errlen,
		 "%s is a file pmwal bench did not create (%lld bytes); a write "
		 "benchmark would overwrite it (pass --force to write anyway, or name a "
		 "new file: bench creates it and reuses it on the next run)",
		 file, (long long)st.st_size);
	return true;
}

int target_place_check(const char *t, char *err, size_t errlen)
{
	char file[4096];
	struct stat st;

	if (scratch_path(t, file, sizeof(file)))
		return 0; /* a region, not a file bench could make */
	if (lstat(file, &st) == 0 && (S_ISBLK(st.st_mode) || S_ISCHR(st.st_mode)))
		return 0; /* a device node: nothing is created beside it */
	return out_place_check("target", file, err, errlen);
}

int target_check_writable(const char *target, bool force, char *err, size_t errlen)
{
	const char *file = target_file(target), *path = file ? file : target;
	if (target_place_check(target, err, errlen))
		return -1;
	const char *what =
	    force || target_is_scratch(target) ? NULL : pmr_probe_fs_magic(target);

	if (!what && !force && !target_is_scratch(target) && holds_pmwal_log(target))
		what = "a pmwal log";
	if (!what && !force && users_file(target, err, errlen))
		return -1;
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
	if (target_kind(target) == PMWAL_TARGET_PMEM && on_tmpfs(target_file(target)))
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

/* Where "pmem" and "pmr" live: a tmpfs directory, $PMWAL_BENCH_SHM or
 * /dev/shm (two runs at once, e.g. test suites, give each its own). */
static const char *shm_dir(void)
{
	const char *d = getenv("PMWAL_BENCH_SHM");

	return d && *d ? d : "/dev/shm";
}

const char *target_resolve(const char *t, int role, char *label, size_t labellen)
{
	static char paths[2][3][4096];
	const char *name = role ? "pmwal-bench.wal" : "pmwal-bench.dat";

	snprintf(label, labellen, "%s", "");
	if (!strcmp(t, "flash")) {
		snprintf(paths[role][0], sizeof(paths[0][0]), "%s/%s", flash_dir(), name);
		snprintf(label, labellen, "flash");
		return paths[role][0];
	}
	if (!strcmp(t, "pmem") || !strcmp(t, "emulated")) {
		snprintf(paths[role][1], sizeof(paths[0][0]), "pmem:%s/%s", shm_dir(), name);
		snprintf(label, labellen, "emulated pmem");
		force_cache_line(paths[role][1]);
		return paths[role][1];
	}
	/* The fake PMR: NVMe PMR's registers and barrier protocol over a file in
	 * /dev/shm; it measures the protocol's CPU cost, not a device. */
	if (!strcmp(t, "pmr") || !strcmp(t, "fakepmr")) {
		snprintf(paths[role][2], sizeof(paths[0][0]), "fakepmr:%s/pmwal-bench-pmr.%s",
			 shm_dir(), role ? "wal" : "dat");
		snprintf(label, labellen, "emulated PMR");
		return paths[role][2];
	}
	force_cache_line(t);
	if (target_kind(t) == PMWAL_TARGET_PMEM && on_tmpfs(target_file(t)))
		snprintf(label, labellen, "emulated pmem");
	if (target_kind(t) == PMWAL_TARGET_FAKEPMR)
		snprintf(label, labellen, "emulated PMR");
	return t;
}

/* The file behind @t, fakepmr: included (its options cut off); 0 or -1. */
static int scratch_path(const char *t, char *buf, size_t len)
{
	struct pmwal_target pt;

	if (pmwal_target_parse(t, &pt) || !pt.has_file || !*pt.path ||
	    pt.kind == PMWAL_TARGET_DEVDAX)
		return -1;
	snprintf(buf, len, "%s", pt.path);
	return 0;
}

/*
 * A file bench created is its scratch file, wherever the user named it. Bench
 * marks a file only when it creates it (open O_CREAT|O_EXCL, which never
 * follows a symlink), on the descriptor it created: the extended attribute
 * user.pmwal.bench, or, only on a filesystem that refuses user xattrs, a
 * marker beside it (PATH.pmwal-bench) recording the file's device, inode and
 * birth time, so a stale marker does not pass for a new file on a reused
 * inode. A marked file may be written over, emptied or (a default name)
 * deleted by this run or the next; a file without the mark is the user's:
 * a write refuses it without --force, and nothing deletes it. A symlink is
 * never bench's, wherever it points.
 */
#define SCRATCH_XATTR "user.pmwal.bench"
#define SCRATCH_LINE  "pmwal bench scratch file dev=%llu ino=%llu btime=%lld.%u"

static void marker_path(const char *file, char *buf, size_t len)
{
	snprintf(buf, len, "%s.pmwal-bench", file);
}

static bool xattr_unsupported(int err)
{
	return err == ENOTSUP || err == EOPNOTSUPP;
}

/* The identity a marker records: device, inode, birth time (0 where the
 * filesystem keeps none). */
static int file_identity(int dirfd, const char *file, int flags, char *buf, size_t len)
{
	struct statx sx;

	if (statx(dirfd, file, flags | AT_SYMLINK_NOFOLLOW, STATX_INO | STATX_BTIME,
		  &sx))
		return -1;
	if (!S_ISREG(sx.stx_mode))
		return -1;
	bool bt = sx.stx_mask & STATX_BTIME;
	snprintf(buf, len, SCRATCH_LINE,
		 (unsigned long long)makedev(sx.stx_dev_major, sx.stx_dev_minor),
		 (unsigned long long)sx.stx_ino, bt ? (long long)sx.stx_btime.tv_sec : 0LL,
		 bt ? sx.stx_btime.tv_nsec : 0u);
	return 0;
}

static bool is_scratch_file(const char *file)
{
	char mk[4200], line[160], want[160];
	struct stat st;

	if (lstat(file, &st) || !S_ISREG(st.st_mode))
		return false; /* missing, a symlink, a device: never bench's */
	if (lgetxattr(file, SCRATCH_XATTR, line, sizeof(line)) > 0)
		return true;
	/* The marker counts only where the filesystem has no user xattrs: where
	 * it has them, a file without the attribute is not bench's. */
	if (!xattr_unsupported(errno))
		return false;
	marker_path(file, mk, sizeof(mk));
	int fd = open(mk, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0)
		return false;
	ssize_t n = read(fd, line, sizeof(line) - 1);
	close(fd);
	if (n <= 0 || file_identity(AT_FDCWD, file, 0, want, sizeof(want)))
		return false;
	line[n] = 0;
	line[strcspn(line, "\n")] = 0;
	return !strcmp(line, want);
}

/* Marks the file bench just created (@fd, from O_EXCL) as its own. */
static bool mark_created(int fd, const char *file)
{
	char mk[4200], id[160];

	if (fsetxattr(fd, SCRATCH_XATTR, "scratch", 7, 0) == 0)
		return true;
	if (!xattr_unsupported(errno) || file_identity(fd, "", AT_EMPTY_PATH, id, sizeof(id)))
		return false;
	marker_path(file, mk, sizeof(mk));
	/* Made fresh and renamed into place: a link or another user's file
	 * under the marker's name is refused, never written through. */
	struct out_file o;
	char err[512];
	if (out_open(&o, "marker", mk, err, sizeof(err)))
		return false;
	fprintf(o.f, "%s\n(pmwal bench created %s and may write over it; delete both)\n",
		id, file);
	return out_close(&o, err, sizeof(err)) == 0;
}

int target_path(const char *t, char *buf, size_t len)
{
	return scratch_path(t, buf, len);
}

bool target_is_scratch(const char *t)
{
	char file[4096];

	return !scratch_path(t, file, sizeof(file)) && is_scratch_file(file);
}

bool target_claim(const char *t)
{
	char file[4096];

	if (scratch_path(t, file, sizeof(file))) {
		errno = EINVAL;
		return false;
	}
	/* Under /dev a missing name is a missing device, not a file to make. */
	if (pmr_in_dev_fs(file)) { /* /dev//x, /dev/shm/../x too */
		errno = ENODEV;
		return false;
	}
	/* Not in a directory another user controls (outfile.h's rule). */
	char why[512];
	if (target_place_check(t, why, sizeof(why))) {
		errno = EPERM;
		return false;
	}
	/* O_EXCL: only a name that is free (no file, no symlink) becomes ours,
	 * made in the directory the walk judged (pmr/openat.h). */
	struct pmr_walk w;

	if (pmr_walk(file, NULL, PMR_WALK_NOFOLLOW, &w, why, sizeof(why)))
		return false;
	int fd = pmr_walk_open(&w, file, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644, why,
			       sizeof(why));
	if (fd < 0) {
		int e = errno;
		pmr_walk_end(&w);
		errno = e;
		return false; /* there already, or not ours to create */
	}
	if (!mark_created(fd, file)) {
		int e = errno;
		close(fd);
		unlinkat(w.dirfd, w.name, 0);
		pmr_walk_end(&w);
		errno = e;
		return false;
	}
	close(fd);
	pmr_walk_end(&w);
	return true;
}

/* Removes @path's last name in the directory the path rule reaches (never
 * in one another user's link leads to). */
static void unlink_walked(const char *path)
{
	struct pmr_walk w;
	char why[512];

	if (pmr_walk(path, NULL, PMR_WALK_NOFOLLOW, &w, why, sizeof(why)))
		return;
	unlinkat(w.dirfd, w.name, 0);
	pmr_walk_end(&w);
}

static void remove_scratch(const char *file)
{
	char mk[4200];

	marker_path(file, mk, sizeof(mk));
	unlink_walked(file);
	unlink_walked(mk); /* ENOENT where the mark was the xattr */
}

void target_unclaim(const char *t)
{
	char file[4096];

	if (!scratch_path(t, file, sizeof(file)) && is_scratch_file(file))
		remove_scratch(file);
}

void target_reset_scratch(const char *t)
{
	char file[4096];

	if (scratch_path(t, file, sizeof(file)) || !is_scratch_file(file))
		return;
	/* The scratch file itself, never a link at its name (O_NOFOLLOW), in
	 * the directory the path rule reaches. */
	struct pmr_walk w;
	char why[512];

	if (pmr_walk(file, NULL, PMR_WALK_NOFOLLOW, &w, why, sizeof(why)))
		return;
	int fd = pmr_walk_open(&w, file, O_WRONLY | O_CLOEXEC | O_NONBLOCK, 0, why, sizeof(why));
	if (fd >= 0) {
		(void)ftruncate(fd, 0);
		close(fd);
	}
	pmr_walk_end(&w);
}

static bool default_name(const char *t)
{
	static const char *const names[] = {"pmwal-bench.dat", "pmwal-bench.wal",
					    "pmwal-bench-pmr.dat",
					    "pmwal-bench-pmr.wal"};
	const char *base = strrchr(t, '/');

	base = base ? base + 1 : t;
	for (int i = 0; i < 4; i++)
		if (!strcmp(base, names[i]))
			return true;
	return false;
}

void target_remove_owned(const char *t)
{
	char file[4096];

	/* A default name with bench's mark: a file with that name but no mark
	 * is the user's, and stays. */
	if (!scratch_path(t, file, sizeof(file)) && default_name(file) &&
	    is_scratch_file(file))
		remove_scratch(file);
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
	enum pmwal_target_kind kind = target_kind(t);
	const char *file = target_file(t), *path = file ? file : t;
	struct stat st;
	struct statfs fs;

	if (target_is_region(t) && kind != PMWAL_TARGET_PMEM) {
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
			    json_boolean((kind == PMWAL_TARGET_PMEM && on_tmpfs(path)) ||
					 kind == PMWAL_TARGET_FAKEPMR));
	char err[256] = "";
	json_t *probe = pmr_probe_json(t, err, sizeof(err));
	json_object_set_new(o, "probe", probe ? probe : json_string(err));
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
