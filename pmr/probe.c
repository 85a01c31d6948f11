// SPDX-License-Identifier: MIT
/*
 * probe.c - the facts behind `pmwal probe` and the benchmark's environment
 * record. Each fact comes from the source that owns it: NVMe identify
 * (libnvme) for what the controller promises (volatile write cache, atomic
 * write unit), sysfs queue/ for what the block layer will do, statfs,
 * mountinfo and statx for files, libpmem2 (through pmr_open) for the store
 * granularity a mapping really gets, the PMR registers for a PMR. A fact that
 * cannot be read is reported with why ("*_error"), never guessed.
 */
#include "probe.h"
#include "pmr_internal.h"
#include "pmwal.h"

#include <dirent.h>
#include <endian.h>
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <libpmem2.h>
#ifdef PMWAL_HAVE_LIBNVME
#include <libnvme.h>
#endif
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <sys/utsname.h>
#include <unistd.h>

/* statx fields newer than Debian 12's headers; the kernel fills what it
 * knows and says so in stx_mask, so older kernels just leave them out. */
/* room for a PATH_MAX path plus the sysfs attribute appended to it */
#define PROBE_PATH (PATH_MAX + 512)

#define PROBE_STATX_DIOALIGN	  0x00002000u
#define PROBE_STATX_WRITE_ATOMIC  0x00010000u
#define PROBE_STATX_ATTR_DAX	  0x00200000ull
#define PROBE_STATX_ATTR_ATOMIC	  0x00400000ull
#define PROBE_STATX_OFF_MASK	  0x00
#define PROBE_STATX_OFF_ATTR	  0x08
#define PROBE_STATX_OFF_ATTR_MASK 0x38
#define PROBE_STATX_OFF_DIO_MEM	  0x98
#define PROBE_STATX_OFF_DIO_OFF	  0x9c
#define PROBE_STATX_OFF_AWU_MIN	  0xa8
#define PROBE_STATX_OFF_AWU_MAX	  0xac
#define PROBE_STATX_OFF_AW_SEGS	  0xb0

static void set_str(json_t *o, const char *key, const char *val)
{
	json_object_set_new(o, key, json_string(val));
}

static void set_int(json_t *o, const char *key, long long val)
{
	json_object_set_new(o, key, json_integer(val));
}

static void set_bool(json_t *o, const char *key, bool val)
{
	json_object_set_new(o, key, json_boolean(val));
}

static void set_hex(json_t *o, const char *key, unsigned long long val)
{
	char buf[32];

	snprintf(buf, sizeof(buf), "0x%llx", val);
	set_str(o, key, buf);
}

/* A sysfs attribute as an integer if it is one, as a string otherwise. */
static void set_sysfs(json_t *o, const char *key, const char *dir, const char *attr)
{
	char path[PROBE_PATH], buf[256];
	uint64_t v;

	snprintf(path, sizeof(path), "%s/%s", dir, attr);
	if (pmr_read_file(path, buf, sizeof(buf)) != 0)
		return;
	if (pmr_parse_u64(buf, &v) && buf[0] != '0')
		set_int(o, key, (long long)v);
	else if (strcmp(buf, "0") == 0)
		set_int(o, key, 0);
	else
		set_str(o, key, buf);
}

static int target_error(const char *target, int rc, char *err, size_t errlen)
{
	if (rc == -ENOENT)
		return pmr_errf(err, errlen, rc, "%s: no such file or device", target);
	if (rc == -EACCES || rc == -EPERM)
		return pmr_errf(err, errlen, rc, "%s: permission denied: run as root",
				target);
	return pmr_errf(err, errlen, rc, "%s: %s", target, strerror(-rc));
}

/* ---- NVMe PMR ---------------------------------------------------------- */

static json_t *caps_json(const struct pmr_caps *k)
{
	json_t *o = json_object();

	set_bool(o, "supported", k->pmrs);
	set_hex(o, "cap", k->cap);
	if (!k->pmrs)
		return o;
	set_hex(o, "pmrcap", k->pmrcap);
	set_hex(o, "pmrctl", k->pmrctl);
	set_hex(o, "pmrsts", k->pmrsts);
	set_bool(o, "read_data_support", k->rds);
	set_bool(o, "write_data_support", k->wds);
	set_int(o, "bar", k->bir);
	set_int(o, "bar_bytes", (long long)k->bar_bytes);
	set_int(o, "pmrwbm", k->pmrwbm);
	set_str(o, "write_barrier", pmr_wbm_name(k->pmrwbm));
	set_bool(o, "durability_possible",
		 k->pmrwbm & (PMR_WBM_PMR_READ | PMR_WBM_PMRSTS_READ));
	set_int(o, "pmrtu", k->pmrtu);
	set_int(o, "pmrto", k->pmrto);
	set_int(o, "enable_timeout_ms", (long long)k->timeout_ms);
	set_bool(o, "controller_memory_space", k->cmss);
	set_bool(o, "enabled", k->enabled);
	set_bool(o, "not_ready", k->nrdy);
	set_int(o, "hsts", k->hsts);
	set_str(o, "health", pmr_hsts_name(k->hsts));
	set_bool(o, "cba_invalid", k->cbai);
	set_int(o, "error", k->err);
	set_int(o, "elasticity_buffer_bytes", (long long)k->elasticity_bytes);
	set_hex(o, "pmrswtp", k->pmrswtp);
	return o;
}

/* PCI facts of a controller: ids, bound driver, the nvme name. */
static void pci_facts(json_t *o, const char *bdf)
{
	char dir[PATH_MAX], path[PROBE_PATH], link[PATH_MAX];
	ssize_t n;
	DIR *d;
	struct dirent *e;

	snprintf(dir, sizeof(dir), "/sys/bus/pci/devices/%s", bdf);
	set_str(o, "pci_address", bdf);
	set_sysfs(o, "pci_vendor", dir, "vendor");
	set_sysfs(o, "pci_device", dir, "device");
	snprintf(path, sizeof(path), "%s/driver", dir);
	n = readlink(path, link, sizeof(link) - 1);
	if (n > 0) {
		link[n] = '\0';
		set_str(o, "driver", basename(link));
	} else {
		set_str(o, "driver", "none");
	}
	snprintf(path, sizeof(path), "%s/nvme", dir);
	d = opendir(path);
	if (!d)
		return;
	while ((e = readdir(d))) {
		if (strncmp(e->d_name, "nvme", 4) != 0)
			continue;
		snprintf(path, sizeof(path), "%s/nvme/%s", dir, e->d_name);
		set_str(o, "controller", e->d_name);
		set_sysfs(o, "model", path, "model");
		set_sysfs(o, "serial", path, "serial");
		set_sysfs(o, "firmware", path, "firmware_rev");
		break;
	}
	closedir(d);
}

/* The smallest fake PMR the region code opens: one 64-byte line. */
#define FAKE_PMR_MIN_BYTES 64u

/*
 * A fake PMR is a regular file holding the region's durable image. Its
 * registers are simulated, so they would look healthy whatever PATH is: look
 * at PATH itself (stat only: opening a FIFO would block) and refuse what
 * cannot back a region, saying how to make one.
 */
static int fake_pmr_file(const char *spec, char *err, size_t errlen)
{
	char path[PATH_MAX];
	size_t len = strcspn(spec, ",");
	struct stat st;
	const char *what;
	int rc;

	if (len == 0 || len >= sizeof(path))
		return 0; /* pmr_query_caps names the malformed target */
	memcpy(path, spec, len);
	path[len] = '\0';
	if (stat(path, &st) != 0) {
		rc = -errno;
		if (rc == -ENOENT)
			return pmr_errf(
			    err, errlen, rc,
			    "fakepmr:%s: no such file; a fake PMR is a file of "
			    "the region's size: make one with `pmwal create "
			    "fakepmr:%s --size BYTES`",
			    path, path);
		return target_error(path, rc, err, errlen);
	}
	if (!S_ISREG(st.st_mode)) {
		what = S_ISFIFO(st.st_mode)   ? "a FIFO"
		       : S_ISSOCK(st.st_mode) ? "a socket"
		       : S_ISDIR(st.st_mode)  ? "a directory"
		       : S_ISCHR(st.st_mode)  ? "a character device"
		       : S_ISBLK(st.st_mode)  ? "a block device"
					      : "not a file";
		return pmr_errf(err, errlen, -ENODEV,
				"fakepmr:%s: %s is %s, not a regular file: a fake PMR "
				"is a regular file (make one with `pmwal create "
				"fakepmr:FILE --size BYTES`)",
				path, path, what);
	}
	if ((uint64_t)st.st_size < FAKE_PMR_MIN_BYTES)
		return pmr_errf(err, errlen, -EINVAL,
				"fakepmr:%s: the file holds %lld bytes, less than the "
				"%u-byte smallest region; give it a size (`pmwal create "
				"fakepmr:%s --size BYTES --force`)",
				path, (long long)st.st_size, FAKE_PMR_MIN_BYTES, path);
	if (access(path, R_OK) != 0)
		return target_error(path, -errno, err, errlen);
	return 0;
}

/* @t: @target parsed (pmr: or fakepmr:). */
static int probe_pmr(const char *target, const struct pmwal_target *t, json_t *o,
		     char *err, size_t errlen)
{
	struct pmr_caps caps;
	char bdf[32];
	int rc;

	if (t->kind == PMWAL_TARGET_FAKEPMR && (rc = fake_pmr_file(t->rest, err, errlen)))
		return rc;
	rc = pmr_query_caps(target, &caps, err, errlen);
	if (rc)
		return rc;
	if (t->kind == PMWAL_TARGET_FAKEPMR) {
		set_str(o, "kind", "fakepmr");
		set_bool(o, "emulated", true);
	} else {
		set_str(o, "kind", "pmr");
		/* pmr_query_caps accepted it, so it is a well-formed BDF */
		int len = (int)strcspn(t->rest, ",");

		snprintf(bdf, sizeof(bdf), "%s%.*s", len == 7 ? "0000:" : "",
			 len > 12 ? 12 : len, t->rest); /* 7: the short form BB:DD.F */
		pci_facts(o, bdf);
	}
	json_object_set_new(o, "pmr", caps_json(&caps));
	return 0;
}

/* ---- files and filesystems --------------------------------------------- */

/*
 * The superblock options (after " - TYPE SOURCE ") carry the DAX mode: "dax"
 * or "dax=always", "dax=inode", "dax=never". Appends that option to @opts as
 * it is ("dax=never" included: a mount without DAX must not read as one).
 */
static void append_dax_option(char *opts, size_t len, const char *dash)
{
	char super[1024], *save = NULL, *tok;

	if (sscanf(dash, " - %*s %*s %1023s", super) != 1)
		return;
	for (tok = strtok_r(super, ",", &save); tok; tok = strtok_r(NULL, ",", &save))
		if (!strcmp(tok, "dax") || !strncmp(tok, "dax=", 4)) {
			snprintf(opts + strlen(opts), len - strlen(opts), ",%s", tok);
			return;
		}
}

/* The mount holding @path (same device, longest mount point prefix). */
static void mount_facts(json_t *o, const char *path, dev_t dev)
{
	char real[PATH_MAX], line[4096], best_mp[PATH_MAX] = "", best_type[64] = "";
	char best_opts[1024] = "", best_src[PATH_MAX] = "";
	FILE *f;

	if (!realpath(path, real))
		snprintf(real, sizeof(real), "%s", path);
	f = fopen("/proc/self/mountinfo", "re");
	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		char mp[PATH_MAX], opts[1024], type[64], src[PATH_MAX], *dash;
		unsigned maj, min;
		size_t len;

		if (sscanf(line, "%*u %*u %u:%u %*s %4095s %1023s", &maj, &min, mp,
			   opts) != 4)
			continue;
		dash = strstr(line, " - ");
		if (!dash || sscanf(dash, " - %63s %4095s", type, src) != 2)
			continue;
		if (makedev(maj, min) != dev)
			continue;
		len = strlen(mp);
		if (strncmp(real, mp, len) != 0 ||
		    (real[len] != '/' && real[len] != '\0' && strcmp(mp, "/") != 0))
			continue;
		if (len < strlen(best_mp))
			continue;
		snprintf(best_mp, sizeof(best_mp), "%s", mp);
		snprintf(best_type, sizeof(best_type), "%s", type);
		snprintf(best_opts, sizeof(best_opts), "%s", opts);
		snprintf(best_src, sizeof(best_src), "%s", src);
		append_dax_option(best_opts, sizeof(best_opts), dash);
	}
	fclose(f);
	if (!best_mp[0])
		return;
	set_str(o, "mount_point", best_mp);
	set_str(o, "filesystem", best_type);
	set_str(o, "mount_source", best_src);
	set_str(o, "mount_options", best_opts);
}

static void statx_facts(json_t *o, const char *path)
{
	uint8_t buf[256] __attribute__((aligned(8)));
	uint32_t mask, dio_mem, dio_off, awu_min, awu_max, aw_segs;
	uint64_t attr, attr_mask;

	memset(buf, 0, sizeof(buf));
	if (syscall(SYS_statx, AT_FDCWD, path, 0,
		    0x7ffu | PROBE_STATX_DIOALIGN | PROBE_STATX_WRITE_ATOMIC, buf) != 0) {
		set_str(o, "statx_error", strerror(errno));
		return;
	}
	memcpy(&mask, buf + PROBE_STATX_OFF_MASK, 4);
	memcpy(&attr, buf + PROBE_STATX_OFF_ATTR, 8);
	memcpy(&attr_mask, buf + PROBE_STATX_OFF_ATTR_MASK, 8);
	if (attr_mask & PROBE_STATX_ATTR_DAX)
		set_bool(o, "dax", attr & PROBE_STATX_ATTR_DAX);
	if (mask & PROBE_STATX_DIOALIGN) {
		memcpy(&dio_mem, buf + PROBE_STATX_OFF_DIO_MEM, 4);
		memcpy(&dio_off, buf + PROBE_STATX_OFF_DIO_OFF, 4);
		set_int(o, "dio_mem_align", dio_mem);
		set_int(o, "dio_offset_align", dio_off);
	}
	if (mask & PROBE_STATX_WRITE_ATOMIC) {
		memcpy(&awu_min, buf + PROBE_STATX_OFF_AWU_MIN, 4);
		memcpy(&awu_max, buf + PROBE_STATX_OFF_AWU_MAX, 4);
		memcpy(&aw_segs, buf + PROBE_STATX_OFF_AW_SEGS, 4);
		set_bool(o, "atomic_write", attr & PROBE_STATX_ATTR_ATOMIC);
		set_int(o, "atomic_write_unit_min", awu_min);
		set_int(o, "atomic_write_unit_max", awu_max);
		set_int(o, "atomic_write_segments_max", aw_segs);
	} else {
		set_str(o, "atomic_write",
			"not reported by this kernel (statx STATX_WRITE_ATOMIC)");
	}
}

static void odirect_fact(json_t *o, const char *path)
{
	int fd = open(path, O_RDONLY | O_DIRECT | O_CLOEXEC);

	if (fd >= 0) {
		set_bool(o, "o_direct", true);
		close(fd);
	} else if (errno == EINVAL) {
		set_bool(o, "o_direct", false);
	} else {
		set_str(o, "o_direct_error", strerror(errno));
	}
}

#ifndef MAP_SHARED_VALIDATE
#define MAP_SHARED_VALIDATE 0x03
#endif
#ifndef MAP_SYNC
#define MAP_SYNC 0x80000
#endif

/* "1" in /sys/dev/block/MAJ:MIN/queue/dax (a partition's is its disk's). */
static bool blockdev_dax(dev_t dev)
{
	char sys[128], real[PATH_MAX], path[PROBE_PATH], buf[16];

	snprintf(sys, sizeof(sys), "/sys/dev/block/%u:%u", major(dev), minor(dev));
	if (!realpath(sys, real))
		return false;
	snprintf(path, sizeof(path), "%s/partition", real);
	if (access(path, F_OK) == 0)
		snprintf(path, sizeof(path), "%s/../queue/dax", real);
	else
		snprintf(path, sizeof(path), "%s/queue/dax", real);
	return pmr_read_file(path, buf, sizeof(buf)) == 0 && strcmp(buf, "1") == 0;
}

/*
 * Whether the kernel maps @path with MAP_SYNC (@len bytes: device-DAX maps
 * whole alignment units): page faults then commit the file's metadata, so
 * flushed stores are durable without msync, which is what gives libpmem2
 * cache-line granularity on a DAX file. When it does not, "map_sync_note"
 * says why and what to do. @st: the file's stat (NULL for device-DAX).
 */
static void map_sync_fact(json_t *o, const char *path, size_t len, const struct stat *st)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY), e;
	json_t *dax = json_object_get(o, "dax");
	void *p;

	if (fd < 0) {
		set_str(o, "map_sync_error", strerror(errno));
		return;
	}
	p = mmap(NULL, len, PROT_READ, MAP_SHARED_VALIDATE | MAP_SYNC, fd, 0);
	e = errno;
	close(fd);
	if (p != MAP_FAILED) {
		munmap(p, len);
		set_bool(o, "map_sync", true);
		return;
	}
	if (e != EOPNOTSUPP && e != EINVAL) {
		set_str(o, "map_sync_error", strerror(e));
		return;
	}
	set_bool(o, "map_sync", false);
	if (!st)
		set_str(o, "map_sync_note",
			"this device-DAX refuses MAP_SYNC: libpmem2 maps it without");
	else if (json_is_true(dax))
		set_str(
		    o, "map_sync_note",
		    "DAX without MAP_SYNC (asynchronous DAX such as virtio-pmem, or a "
		    "filesystem without synchronous faults): libpmem2 maps it at page "
		    "granularity and msync makes stores durable");
	else if (blockdev_dax(st->st_dev))
		set_str(
		    o, "map_sync_note",
		    "not DAX, though its device can do DAX: mount the filesystem with "
		    "-o dax (ext4, xfs), or under dax=inode set the file's DAX flag "
		    "(xfs_io -c 'chattr +x'), for MAP_SYNC and cache-line flushes; "
		    "until then libpmem2 uses page granularity (msync)");
	else
		set_str(o, "map_sync_note",
			"not DAX (its filesystem is not on persistent memory): libpmem2 "
			"uses page granularity (msync)");
}

/* The unit libpmem2 maps @path in (the page size for a file, the device's
 * alignment for device-DAX). */
static void pmem2_alignment_fact(json_t *o, const char *path)
{
	struct pmem2_source *src = NULL;
	size_t align = 0;
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);

	if (fd < 0)
		return;
	if (pmem2_source_from_fd(&src, fd) == 0 &&
	    pmem2_source_alignment(src, &align) == 0)
		set_int(o, "pmem2_alignment", (long long)align);
	if (src)
		pmem2_source_delete(&src);
	close(fd);
}

/* Map the file through pmr_open (libpmem2) read-only and report. */
static void pmem2_fact(json_t *o, const char *path)
{
	char target[PATH_MAX + 8], err[512];
	struct pmr_params p = {.target = target, .readonly = true};
	struct pmr_region *r;
	struct pmr_info info;
	int rc;

	snprintf(target, sizeof(target), "pmem:%s", path);
	rc = pmr_open(&p, &r, err, sizeof(err));
	if (rc) {
		set_str(o, "pmem2_error", err);
		return;
	}
	pmr_get_info(r, &info);
	set_str(o, "pmem2_granularity", info.granularity);
	set_str(o, "pmem2_barrier", info.barrier);
	set_bool(o, "pmem_emulated", info.emulated);
	pmr_close(r);
	pmem2_alignment_fact(o, path);
}

static void fs_facts(json_t *o, const char *path, const struct stat *st)
{
	struct statfs sfs;

	if (statfs(path, &sfs) == 0) {
		set_hex(o, "statfs_type", (unsigned long long)sfs.f_type);
		set_int(o, "fs_block_bytes", (long long)sfs.f_bsize);
		set_int(o, "fs_free_bytes",
			(long long)sfs.f_bavail * (long long)sfs.f_bsize);
	}
	mount_facts(o, path, st->st_dev);
	statx_facts(o, path);
}

static int probe_file(const char *path, const struct stat *st, json_t *o)
{
	set_str(o, "kind", "file");
	set_int(o, "size_bytes", (long long)st->st_size);
	fs_facts(o, path, st);
	odirect_fact(o, path);
	if (st->st_size > 0) {
		map_sync_fact(o, path, 4096, st);
		pmem2_fact(o, path);
	} else {
		set_str(o, "pmem2_error", "empty file: nothing to map");
	}
	return 0;
}

/* For a directory, the facts of a file created in it (then removed). */
static int probe_dir(const char *path, const struct stat *st, json_t *o)
{
	char tmp[PATH_MAX];
	int fd;

	set_str(o, "kind", "directory");
	fs_facts(o, path, st);
	snprintf(tmp, sizeof(tmp), "%s/.pmwal-probe-XXXXXX", path);
	fd = mkostemp(tmp, O_CLOEXEC);
	if (fd < 0) {
		set_str(o, "file_probe_error", strerror(errno));
		return 0;
	}
	if (ftruncate(fd, 2u << 20) == 0) {
		statx_facts(o, tmp); /* per-file attributes (DAX, atomic write) */
		odirect_fact(o, tmp);
		map_sync_fact(o, tmp, 4096, st);
		pmem2_fact(o, tmp);
	}
	close(fd);
	unlink(tmp);
	return 0;
}

/* ---- block devices and NVMe -------------------------------------------- */

#ifdef PMWAL_HAVE_LIBNVME
/* Copy a fixed-width, space-padded identify string. */
static void set_idstr(json_t *o, const char *key, const char *src, size_t len)
{
	char buf[64];

	if (len >= sizeof(buf))
		len = sizeof(buf) - 1;
	memcpy(buf, src, len);
	buf[len] = '\0';
	while (len && (buf[len - 1] == ' ' || buf[len - 1] == '\0'))
		buf[--len] = '\0';
	set_str(o, key, buf);
}

static void probe_identify(json_t *o, const char *path, bool ctrl_only)
{
	struct nvme_id_ctrl id;
	struct nvme_id_ns ns;
	json_t *n = json_object();
	__u32 nsid = 0;
	unsigned lba_shift;
	int fd, rc;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		set_str(o, "nvme_identify_error", strerror(errno));
		json_decref(n);
		return;
	}
	rc = nvme_identify_ctrl(fd, &id);
	if (rc) {
		set_str(o, "nvme_identify_error",
			rc < 0 ? (errno == EACCES || errno == EPERM
				      ? "permission denied: run as root"
				      : strerror(errno))
			       : "controller returned an NVMe error status");
		goto out;
	}
	set_idstr(n, "model", id.mn, sizeof(id.mn));
	set_idstr(n, "serial", id.sn, sizeof(id.sn));
	set_idstr(n, "firmware", id.fr, sizeof(id.fr));
	set_hex(n, "pci_vendor", le16toh(id.vid));
	set_bool(n, "volatile_write_cache", id.vwc & 1u);
	/* AWUN/AWUPF are 0-based counts of logical blocks */
	set_int(n, "awun_blocks", le16toh(id.awun) + 1);
	set_int(n, "awupf_blocks", le16toh(id.awupf) + 1);
	set_hex(n, "oncs", le16toh(id.oncs));
	/* every NVMe write command has FUA; whether the kernel uses it is
	 * queue/fua */
	set_bool(n, "fua", true);
	if (ctrl_only || nvme_get_nsid(fd, &nsid) != 0 ||
	    nvme_identify_ns(fd, nsid, &ns) != 0)
		goto out;
	set_int(n, "nsid", nsid);
	lba_shift = ns.lbaf[ns.flbas & 0xfu].ds;
	if (lba_shift >= 9 && lba_shift < 32) {
		set_int(n, "lba_bytes", 1ll << lba_shift);
		set_int(n, "awupf_bytes",
			(long long)(le16toh(id.awupf) + 1) << lba_shift);
	}
	if (ns.nsfeat & 0x2u) { /* NSABP: namespace atomic fields valid */
		set_int(n, "nawun_blocks", le16toh(ns.nawun) + 1);
		set_int(n, "nawupf_blocks", le16toh(ns.nawupf) + 1);
		if (lba_shift >= 9 && lba_shift < 32)
			set_int(n, "nawupf_bytes",
				(long long)(le16toh(ns.nawupf) + 1) << lba_shift);
	}
	if (ns.nsfeat & 0x10u) { /* OPTPERF: npwg etc. valid */
		set_int(n, "preferred_write_granularity_blocks", le16toh(ns.npwg) + 1);
		set_int(n, "optimal_write_size_blocks", le16toh(ns.nows) + 1);
	}
out:
	close(fd);
	json_object_set_new(o, "nvme", n);
}

#else
static void probe_identify(json_t *o, const char *path, bool ctrl_only)
{
	set_str(o, "nvme_identify_error", "built without libnvme (install libnvme-dev)");
}
#endif

static void queue_facts(json_t *o, const char *sysdir)
{
	static const char *const attrs[] = {
	    "logical_block_size",
	    "physical_block_size",
	    "minimum_io_size",
	    "optimal_io_size",
	    "write_cache",
	    "fua",
	    "rotational",
	    "dax",
	    "atomic_write_unit_min_bytes",
	    "atomic_write_unit_max_bytes",
	    "atomic_write_max_bytes",
	    "atomic_write_boundary_bytes",
	    "max_hw_sectors_kb",
	    "nr_requests",
	    "scheduler",
	    "zoned",
	};
	char qdir[PROBE_PATH + 16];
	json_t *q = json_object();

	snprintf(qdir, sizeof(qdir), "%s/queue", sysdir);
	for (size_t i = 0; i < sizeof(attrs) / sizeof(attrs[0]); i++)
		set_sysfs(q, attrs[i], qdir, attrs[i]);
	json_object_set_new(o, "queue", q);
}

/* ndctl's name for a namespace mode the kernel calls @sysfs. */
static const char *ndctl_mode(const json_t *sysfs)
{
	const char *m = json_string_value(sysfs);

	if (!m)
		return "unknown";
	if (!strcmp(m, "memory"))
		return "fsdax";
	if (!strcmp(m, "dax"))
		return "devdax";
	if (!strcmp(m, "safe"))
		return "sector";
	return m; /* raw */
}

/*
 * The NVDIMM namespace behind a pmem block device or a device-DAX (@real: its
 * sysfs directory): the libnvdimm devices on the path name its region and the
 * personality (pfnX.Y for fsdax, daxX.Y for devdax, bttX.Y for sector) whose
 * info block sets the alignment; the namespace says its mode, the region its
 * persistence domain (cpu_cache: eADR, stores durable once globally visible).
 * Sets "nvdimm" and returns true when there is one.
 */
static bool nd_facts(json_t *o, const char *real)
{
	char copy[PROBE_PATH], prefix[PROBE_PATH] = "", path[PROBE_PATH + 64];
	char buf[128], *save = NULL, *c;
	json_t *n = json_object();
	bool found = false;

	snprintf(copy, sizeof(copy), "%s", real);
	for (c = strtok_r(copy, "/", &save); c; c = strtok_r(NULL, "/", &save)) {
		unsigned a, b;
		char kind[8];

		snprintf(prefix + strlen(prefix), sizeof(prefix) - strlen(prefix), "/%s",
			 c);
		if (sscanf(c, "ndbus%u", &a) == 1) {
			set_str(n, "bus", c);
		} else if (sscanf(c, "region%u", &a) == 1) {
			found = true;
			set_str(n, "region", c);
			set_sysfs(n, "region_size_bytes", prefix, "size");
			set_sysfs(n, "persistence_domain", prefix, "persistence_domain");
		} else if (sscanf(c, "namespace%u.%u", &a, &b) == 2) {
			set_str(n, "namespace", c);
		} else if (sscanf(c, "%3[a-z]%u.%u", kind, &a, &b) == 3 &&
			   (!strcmp(kind, "pfn") || !strcmp(kind, "dax") ||
			    !strcmp(kind, "btt")) &&
			   !json_object_get(n, "personality")) {
			snprintf(path, sizeof(path), "%s/namespace", prefix);
			if (pmr_read_file(path, buf, sizeof(buf)) != 0)
				continue; /* the dax device itself, not nd's daxX.Y */
			set_str(n, "personality", c);
			set_str(n, "namespace", buf);
			set_sysfs(n, "align", prefix, "align");
		}
	}
	if (!found) {
		json_decref(n);
		return false;
	}
	if (json_is_string(json_object_get(n, "namespace"))) {
		snprintf(path, sizeof(path), "/sys/bus/nd/devices/%s",
			 json_string_value(json_object_get(n, "namespace")));
		set_sysfs(n, "mode_sysfs", path, "mode");
		set_str(n, "mode", ndctl_mode(json_object_get(n, "mode_sysfs")));
		set_sysfs(n, "namespace_size_bytes", path, "size");
	}
	json_object_set_new(o, "nvdimm", n);
	return true;
}

static int probe_blockdev(const char *path, const struct stat *st, json_t *o)
{
	char sys[PROBE_PATH], real[PATH_MAX], disk[PROBE_PATH], buf[64];
	uint64_t sectors;

	set_str(o, "kind", "blockdev");
	snprintf(sys, sizeof(sys), "/sys/dev/block/%u:%u", major(st->st_rdev),
		 minor(st->st_rdev));
	if (!realpath(sys, real)) {
		set_str(o, "sysfs_error", "no sysfs entry for this device");
		return 0;
	}
	/* A partition's queue/ lives on its disk. */
	snprintf(disk, sizeof(disk), "%s/partition", real);
	if (access(disk, F_OK) == 0) {
		snprintf(disk, sizeof(disk), "%s", real);
		snprintf(disk, sizeof(disk), "%s", dirname(disk));
		set_bool(o, "partition", true);
	} else {
		snprintf(disk, sizeof(disk), "%s", real);
	}
	snprintf(sys, sizeof(sys), "%s/size", real);
	if (pmr_read_file(sys, buf, sizeof(buf)) == 0 && pmr_parse_u64(buf, &sectors))
		set_int(o, "size_bytes", (long long)(sectors * 512u));
	set_sysfs(o, "model", disk, "device/model");
	set_sysfs(o, "vendor", disk, "device/vendor");
	queue_facts(o, disk);
	if (nd_facts(o, disk)) {
		set_str(o, "kind", "pmem-namespace");
		set_str(o, "map_sync_note",
			"a block device maps through the page cache: MAP_SYNC and "
			"cache-line granularity are for files on a filesystem mounted "
			"-o dax on it (nvdimm.mode fsdax), or for device-DAX");
	}
	if (strncmp(basename(disk), "nvme", 4) == 0) {
		set_str(o, "kind", "nvme-namespace");
		set_sysfs(o, "controller_model", disk, "device/model");
		set_sysfs(o, "controller_serial", disk, "device/serial");
		set_sysfs(o, "controller_firmware", disk, "device/firmware_rev");
		set_sysfs(o, "controller_address", disk, "device/address");
		probe_identify(o, path, false);
	}
	return 0;
}

static int probe_chardev(const char *path, const struct stat *st, json_t *o, char *err,
			 size_t errlen)
{
	char sys[PATH_MAX], real[PATH_MAX];
	const char *name;

	snprintf(sys, sizeof(sys), "/sys/dev/char/%u:%u", major(st->st_rdev),
		 minor(st->st_rdev));
	if (!realpath(sys, real))
		return pmr_errf(
		    err, errlen, -ENODEV,
		    "%s: a character device pmwal does not know (not DAX, not NVMe)",
		    path);
	name = strrchr(real, '/') ? strrchr(real, '/') + 1 : real;
	if (strncmp(name, "dax", 3) == 0) {
		json_t *align;
		size_t unit = 2u << 20; /* device-DAX's default alignment */

		set_str(o, "kind", "devdax");
		set_bool(o, "dax", true);
		set_sysfs(o, "size_bytes", real, "size");
		set_sysfs(o, "align", real, "align");
		set_sysfs(o, "numa_node", real, "numa_node");
		nd_facts(o, real);
		/* device-DAX maps whole alignment units only */
		align = json_object_get(o, "align");
		if (json_is_integer(align) && json_integer_value(align) > 0)
			unit = (size_t)json_integer_value(align);
		map_sync_fact(o, path, unit, NULL);
		pmem2_fact(o, path);
		return 0;
	}
	if (strncmp(name, "nvme", 4) == 0) {
		set_str(o, "kind", "nvme-controller");
		set_sysfs(o, "model", real, "model");
		set_sysfs(o, "serial", real, "serial");
		set_sysfs(o, "firmware", real, "firmware_rev");
		set_sysfs(o, "transport", real, "transport");
		set_sysfs(o, "address", real, "address");
		probe_identify(o, path, true);
		return 0;
	}
	return pmr_errf(err, errlen, -ENODEV,
			"%s: a character device pmwal does not know (not DAX, not NVMe)",
			path);
}

/* ---- listing ----------------------------------------------------------- */

/* The PCI address of an NVMe controller on PCIe (not fabrics). */
static bool ctrl_pci_address(const char *name, char *bdf, size_t len)
{
	char path[PATH_MAX], buf[64];

	snprintf(path, sizeof(path), "/sys/class/nvme/%s/transport", name);
	if (pmr_read_file(path, buf, sizeof(buf)) != 0 || strcmp(buf, "pcie") != 0)
		return false;
	snprintf(path, sizeof(path), "/sys/class/nvme/%s/address", name);
	return pmr_read_file(path, bdf, len) == 0 && bdf[0];
}

static void list_nvme(json_t *top, json_t *pmrs)
{
	json_t *arr = json_array();
	struct dirent *e;
	DIR *d = opendir("/sys/class/nvme");

	while (d && (e = readdir(d))) {
		char dir[PATH_MAX], buf[64], target[80], err[512];
		json_t *c, *ns = json_array();
		struct pmr_caps caps;
		struct dirent *e2;
		DIR *d2;

		if (e->d_name[0] == '.')
			continue;
		c = json_object();
		snprintf(dir, sizeof(dir), "/sys/class/nvme/%s", e->d_name);
		set_str(c, "name", e->d_name);
		set_sysfs(c, "model", dir, "model");
		set_sysfs(c, "serial", dir, "serial");
		set_sysfs(c, "firmware", dir, "firmware_rev");
		set_sysfs(c, "transport", dir, "transport");
		set_sysfs(c, "address", dir, "address");
		d2 = opendir(dir);
		while (d2 && (e2 = readdir(d2))) {
			char dev[300];

			if (strncmp(e2->d_name, e->d_name, strlen(e->d_name)) != 0 ||
			    e2->d_name[strlen(e->d_name)] != 'n')
				continue;
			snprintf(dev, sizeof(dev), "/dev/%s", e2->d_name);
			json_array_append_new(ns, json_string(dev));
		}
		if (d2)
			closedir(d2);
		json_object_set_new(c, "namespaces", ns);
		if (ctrl_pci_address(e->d_name, buf, sizeof(buf))) {
			snprintf(target, sizeof(target), "pmr:%s", buf);
			if (pmr_query_caps(target, &caps, err, sizeof(err)) == 0) {
				json_object_set_new(c, "pmr", caps_json(&caps));
				if (caps.pmrs)
					json_array_append_new(pmrs, json_string(target));
			} else {
				set_str(c, "pmr_error", err);
			}
		}
		json_array_append_new(arr, c);
	}
	if (d)
		closedir(d);
	json_object_set_new(top, "nvme_controllers", arr);
}

static void list_dax(json_t *top)
{
	json_t *arr = json_array();
	struct dirent *e;
	DIR *d = opendir("/sys/bus/dax/devices");

	while (d && (e = readdir(d))) {
		char dir[PATH_MAX], dev[300];
		json_t *x;

		if (e->d_name[0] == '.')
			continue;
		x = json_object();
		snprintf(dir, sizeof(dir), "/sys/bus/dax/devices/%s", e->d_name);
		snprintf(dev, sizeof(dev), "/dev/%s", e->d_name);
		set_str(x, "path", dev);
		set_sysfs(x, "size_bytes", dir, "size");
		set_sysfs(x, "align", dir, "align");
		set_sysfs(x, "numa_node", dir, "numa_node");
		json_array_append_new(arr, x);
	}
	if (d)
		closedir(d);
	json_object_set_new(top, "dax_devices", arr);
}

static void list_pmem(json_t *top)
{
	json_t *arr = json_array();
	struct dirent *e;
	DIR *d = opendir("/sys/class/block");

	while (d && (e = readdir(d))) {
		char dir[PATH_MAX], dev[300], buf[64];
		uint64_t sectors;
		json_t *x;

		if (strncmp(e->d_name, "pmem", 4) != 0)
			continue;
		x = json_object();
		snprintf(dir, sizeof(dir), "/sys/class/block/%s/size", e->d_name);
		snprintf(dev, sizeof(dev), "/dev/%s", e->d_name);
		set_str(x, "path", dev);
		if (pmr_read_file(dir, buf, sizeof(buf)) == 0 &&
		    pmr_parse_u64(buf, &sectors))
			set_int(x, "size_bytes", (long long)(sectors * 512u));
		json_array_append_new(arr, x);
	}
	if (d)
		closedir(d);
	json_object_set_new(top, "pmem_devices", arr);
}

static void system_facts(json_t *top)
{
	struct utsname u;
	char cmdline[4096];

	if (uname(&u) == 0) {
		set_str(top, "kernel", u.release);
		set_str(top, "machine", u.machine);
	}
	if (pmr_read_file("/proc/cmdline", cmdline, sizeof(cmdline)) == 0)
		set_bool(top, "iomem_relaxed", strstr(cmdline, "iomem=relaxed") != NULL);
	set_bool(top, "root", geteuid() == 0);
}

static int probe_list(json_t *o)
{
	json_t *pmrs = json_array();

	set_str(o, "kind", "system");
	system_facts(o);
	list_nvme(o, pmrs);
	json_object_set_new(o, "pmrs", pmrs);
	list_dax(o);
	list_pmem(o);
	return 0;
}

/* ---- what a target holds ----------------------------------------------- */

/* Superblock magics, as blkid finds them. */
#define FS_EXT_MAGIC_OFF   1080
#define FS_BTRFS_MAGIC_OFF 0x10040
#define FS_PROBE_BYTES	   (FS_BTRFS_MAGIC_OFF + 8)

static const char *fs_magic(const uint8_t *b, size_t n)
{
	if (n >= FS_EXT_MAGIC_OFF + 2 && b[FS_EXT_MAGIC_OFF] == 0x53 &&
	    b[FS_EXT_MAGIC_OFF + 1] == 0xEF)
		return "an ext2/3/4 filesystem";
	if (n >= 4 && !memcmp(b, "XFSB", 4))
		return "an XFS filesystem";
	if (n >= FS_PROBE_BYTES && !memcmp(b + FS_BTRFS_MAGIC_OFF, "_BHRfS_M", 8))
		return "a btrfs filesystem";
	return NULL;
}

const char *pmr_probe_fs_magic(const char *target)
{
	struct pmwal_target t;
	const char *what = NULL;
	uint8_t *buf;
	int fd;

	(void)pmwal_target_parse(target, &t);
	if (t.kind != PMWAL_TARGET_FILE && t.kind != PMWAL_TARGET_PMEM)
		return NULL; /* device-DAX, PMRs, simulated media: not read here */
	/* O_NONBLOCK: a FIFO must not hang the look. */
	fd = open(t.rest, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	if (fd < 0)
		return NULL;
	buf = calloc(1, FS_PROBE_BYTES);
	if (buf) {
		ssize_t n = pread(fd, buf, FS_PROBE_BYTES, 0);

		if (n > 0)
			what = fs_magic(buf, (size_t)n);
		free(buf);
	}
	close(fd);
	return what;
}

/* ---- entry points ------------------------------------------------------ */

int pmr_probe(const char *target, json_t **out, char *err, size_t errlen)
{
	struct pmwal_target t;
	const char *path;
	struct stat st;
	json_t *o;
	int rc;

	*out = NULL;
	o = json_object();
	if (!o)
		return pmr_errf(err, errlen, -ENOMEM, "out of memory");
	if (!target || !*target) {
		rc = probe_list(o);
		goto done;
	}
	set_str(o, "target", target);
	/* A malformed target keeps its kind: the kind's own check names it. */
	(void)pmwal_target_parse(target, &t);
	if (t.kind == PMWAL_TARGET_PMR || t.kind == PMWAL_TARGET_FAKEPMR) {
		rc = probe_pmr(target, &t, o, err, errlen);
		goto done;
	}
	if (t.kind == PMWAL_TARGET_SIM) {
		rc = pmr_errf(err, errlen, -EINVAL,
			      "%s: a simulated medium (sim:NAME) lives in the process "
			      "that made it: nothing to probe",
			      target);
		goto done;
	}
	path = t.rest; /* PATH, or after pmem: or file: */
	if (stat(path, &st) != 0) {
		rc = target_error(path, -errno, err, errlen);
		goto done;
	}
	if (S_ISBLK(st.st_mode))
		rc = probe_blockdev(path, &st, o);
	else if (S_ISCHR(st.st_mode))
		rc = probe_chardev(path, &st, o, err, errlen);
	else if (S_ISDIR(st.st_mode))
		rc = probe_dir(path, &st, o);
	else if (S_ISREG(st.st_mode))
		rc = probe_file(path, &st, o);
	else
		rc = pmr_errf(err, errlen, -ENODEV, "%s: not a file, directory or device",
			      path);
done:
	if (rc) {
		json_decref(o);
		return rc;
	}
	*out = o;
	return 0;
}

json_t *pmr_probe_json(const char *target, char *err, size_t errlen)
{
	json_t *o;

	return pmr_probe(target, &o, err, errlen) ? NULL : o;
}

static void print_value(FILE *f, const json_t *v, int indent);

static void print_object(FILE *f, const json_t *obj, int indent)
{
	const char *key;
	json_t *v;

	json_object_foreach((json_t *)obj, key, v)
	{
		fprintf(f, "%*s%s:", indent, "", key);
		if (json_is_object(v) || json_is_array(v)) {
			fputc('\n', f);
			print_value(f, v, indent + 2);
		} else {
			fputc(' ', f);
			print_value(f, v, 0);
		}
	}
}

static void print_value(FILE *f, const json_t *v, int indent)
{
	size_t i;
	json_t *e;

	switch (json_typeof(v)) {
	case JSON_OBJECT:
		print_object(f, v, indent);
		break;
	case JSON_ARRAY:
		if (json_array_size(v) == 0)
			fprintf(f, "%*s(none)\n", indent, "");
		json_array_foreach((json_t *)v, i, e)
		{
			if (json_is_object(e)) {
				fprintf(f, "%*s-\n", indent, "");
				print_object(f, e, indent + 2);
			} else {
				fprintf(f, "%*s- ", indent, "");
				print_value(f, e, 0);
			}
		}
		break;
	case JSON_STRING:
		fprintf(f, "%s\n", json_string_value(v));
		break;
	case JSON_INTEGER:
		fprintf(f, "%" JSON_INTEGER_FORMAT "\n", json_integer_value(v));
		break;
	case JSON_REAL:
		fprintf(f, "%g\n", json_real_value(v));
		break;
	case JSON_TRUE:
		fprintf(f, "yes\n");
		break;
	case JSON_FALSE:
		fprintf(f, "no\n");
		break;
	default:
		fprintf(f, "-\n");
		break;
	}
}

void pmr_probe_print(FILE *f, const json_t *obj)
{
	print_value(f, obj, 0);
}
