// SPDX-License-Identifier: MIT
/*
 * test_pmr.c - regions opened by target string: libpmem2 files (the
 * emulated path every machine has, PAGE and forced CACHE_LINE), and the real
 * NVMe PMR code in pmr/nvme.c run against a directory laid out like sysfs
 * (PMWAL_TEST_PCI_ROOT), so BAR parsing, MMIO register access, enable,
 * barrier choice and every error message are checked without hardware.
 */
#include "pmr.h"
#include "pmr_internal.h"

#include "other_user.h"
#include "testutil.h"

#include <criterion/criterion.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <sys/wait.h>
#include <unistd.h>

static char *dir; /* per test, on tmpfs: the emulated-pmem case */
static char err[1024];

static void setup(void)
{
	dir = tu_mkdtemp_shm();
	cr_assert_not_null(dir, "mkdtemp: %s", strerror(errno));
	unsetenv("PMEM2_FORCE_GRANULARITY");
	unsetenv("PMWAL_TEST_PCI_ROOT");
}

static void teardown(void)
{
	tu_rmdir(dir);
	dir = NULL;
}

TestSuite(pmem, .init = setup, .fini = teardown);
TestSuite(nvme, .init = setup, .fini = teardown);

static int open_target(const char *target, uint64_t create_bytes, bool readonly,
		       struct pmr_region **r)
{
	struct pmr_params p = {
	    .target = target,
	    .create_bytes = create_bytes,
	    .readonly = readonly,
	};

	err[0] = '\0';
	return pmr_open(&p, r, err, sizeof(err));
}

static void fill(uint8_t *buf, size_t len, uint8_t seed)
{
	for (size_t i = 0; i < len; i++)
		buf[i] = (uint8_t)(seed ^ (i * 13u));
}

/* ---- libpmem2 regions -------------------------------------------------- */

static void round_trip(const char *gran, const char *barrier)
{
	char target[128];
	struct pmr_region *r;
	struct pmr_info info;
	uint8_t a[5000], b[64];

	snprintf(target, sizeof(target), "pmem:%s/log", dir);
	cr_assert_eq(open_target(target, 1u << 20, false, &r), 0, "%s", err);
	pmr_get_info(r, &info);
	cr_assert_eq(info.kind, PMR_KIND_PMEM);
	cr_assert_str_eq(info.kind_name, "pmem");
	cr_assert_str_eq(info.granularity, gran);
	cr_assert_str_eq(info.barrier, barrier);
	cr_assert(info.emulated, "/dev/shm is not persistent memory");
	cr_assert(info.durable);
	cr_assert_eq(pmr_size(r), 1u << 20);

	fill(a, sizeof(a), 1);
	fill(b, sizeof(b), 2);
	pmr_copy_nodrain(r, 3, a, sizeof(a));
	pmr_copy_nodrain(r, (1u << 20) - sizeof(b), b, sizeof(b));
	cr_assert_eq(pmr_barrier(r), 0);
	cr_assert_eq(pmr_barrier(r), 0, "an empty barrier is fine");
	pmr_close(r);

	cr_assert_eq(open_target(target, 0, true, &r), 0, "%s", err);
	cr_assert_arr_eq(pmr_base(r) + 3, a, sizeof(a));
	cr_assert_arr_eq(pmr_base(r) + (1u << 20) - sizeof(b), b, sizeof(b));
	cr_assert_eq(pmr_barrier(r), -EROFS, "read-only regions take no barrier");
	pmr_close(r);
}

Test(pmem, page_granularity_round_trip_through_msync)
{
	round_trip("page", "msync");
}

Test(pmem, forced_cache_line_is_still_emulated)
{
	setenv("PMEM2_FORCE_GRANULARITY", "CACHE_LINE", 1);
	round_trip("cache-line", "pmem2 drain");
}

struct writer_arg {
	struct pmr_region *r;
	unsigned id;
	int rc;
};

#define WRITERS	    4
#define SLICE_BYTES (64u * 1024u)
#define CHUNK_BYTES 4096u

static void *writer(void *p)
{
	struct writer_arg *a = p;
	uint8_t buf[CHUNK_BYTES];

	for (unsigned round = 0; round < 20; round++) {
		for (uint64_t o = 0; o < SLICE_BYTES; o += CHUNK_BYTES) {
			fill(buf, sizeof(buf),
			     (uint8_t)(a->id * 31u + round + o / CHUNK_BYTES));
			pmr_copy_nodrain(a->r, a->id * SLICE_BYTES + o, buf, sizeof(buf));
			a->rc = pmr_barrier(a->r);
			if (a->rc)
				return NULL;
		}
	}
	return NULL;
}

static void threads_round_trip(void)
{
	char target[160];
	struct pmr_region *r;
	struct writer_arg args[WRITERS];
	pthread_t t[WRITERS];
	uint8_t want[CHUNK_BYTES];

	snprintf(target, sizeof(target), "pmem:%s/mt", dir);
	cr_assert_eq(open_target(target, WRITERS * SLICE_BYTES, false, &r), 0, "%s", err);
	for (unsigned i = 0; i < WRITERS; i++) {
		args[i] = (struct writer_arg){.r = r, .id = i};
		cr_assert_eq(pthread_create(&t[i], NULL, writer, &args[i]), 0);
	}
	for (unsigned i = 0; i < WRITERS; i++) {
		pthread_join(t[i], NULL);
		cr_assert_eq(args[i].rc, 0, "writer %u: barrier %d", i, args[i].rc);
	}
	pmr_close(r);
	cr_assert_eq(open_target(target, 0, true, &r), 0, "%s", err);
	for (unsigned i = 0; i < WRITERS; i++)
		for (uint64_t o = 0; o < SLICE_BYTES; o += CHUNK_BYTES) {
			fill(want, sizeof(want),
			     (uint8_t)(i * 31u + 19u + o / CHUNK_BYTES));
			cr_assert_arr_eq(pmr_base(r) + i * SLICE_BYTES + o, want,
					 sizeof(want));
		}
	pmr_close(r);
}

Test(pmem, page_region_takes_several_writer_threads)
{
	threads_round_trip();
}

Test(pmem, cache_line_region_takes_several_writer_threads)
{
	setenv("PMEM2_FORCE_GRANULARITY", "CACHE_LINE", 1);
	threads_round_trip();
}

Test(pmem, bare_path_means_pmem)
{
	char target[128];
	struct pmr_region *r;
	struct pmr_info info;

	snprintf(target, sizeof(target), "%s/bare", dir);
	cr_assert_eq(open_target(target, 64u << 10, false, &r), 0, "%s", err);
	pmr_get_info(r, &info);
	cr_assert_eq(info.kind, PMR_KIND_PMEM);
	pmr_close(r);
}

Test(pmem, missing_file_says_how_to_create_it)
{
	char target[128];
	struct pmr_region *r = (struct pmr_region *)1;

	snprintf(target, sizeof(target), "pmem:%s/none", dir);
	cr_assert_eq(open_target(target, 0, false, &r), -ENOENT);
	cr_assert_null(r);
	cr_assert_not_null(strstr(err, "give a size"), "%s", err);
}

Test(pmem, empty_file_and_directory_are_refused)
{
	char target[160], path[128];
	struct pmr_region *r;
	int fd;

	snprintf(path, sizeof(path), "%s/empty", dir);
	fd = open(path, O_CREAT | O_WRONLY, 0644);
	cr_assert_geq(fd, 0);
	close(fd);
	snprintf(target, sizeof(target), "pmem:%s", path);
	cr_assert_eq(open_target(target, 0, false, &r), -EINVAL);
	cr_assert_not_null(strstr(err, "empty file"), "%s", err);
	snprintf(target, sizeof(target), "pmem:%s", dir);
	cr_assert_eq(open_target(target, 0, false, &r), -EISDIR);
	cr_assert_eq(open_target("pmem:", 0, false, &r), -EINVAL);
	cr_assert_eq(open_target("", 0, false, &r), -EINVAL);
}

Test(pmem, exclusive_create_refuses_an_existing_file)
{
	char target[128];
	struct pmr_region *r;
	struct pmr_params p = {
	    .target = target, .create_bytes = 4096, .create_excl = true};

	snprintf(target, sizeof(target), "pmem:%s/x", dir);
	cr_assert_eq(pmr_open(&p, &r, err, sizeof(err)), 0, "%s", err);
	pmr_close(r);
	cr_assert_eq(pmr_open(&p, &r, err, sizeof(err)), -EEXIST);
}

Test(pmem, odd_file_size_maps_whole_pages)
{
	char target[160], path[128];
	struct pmr_region *r;
	int fd;

	snprintf(path, sizeof(path), "%s/odd", dir);
	fd = open(path, O_CREAT | O_WRONLY, 0644);
	cr_assert_geq(fd, 0);
	cr_assert_eq(ftruncate(fd, 8192 + 100), 0);
	close(fd);
	snprintf(target, sizeof(target), "pmem:%s", path);
	cr_assert_eq(open_target(target, 0, false, &r), 0, "%s", err);
	cr_assert_eq(pmr_size(r), 8192);
	pmr_close(r);
}

/* A writable mapping never has a hole under it (a store there could SIGBUS
 * on a full filesystem): holes anywhere in the file are allocated at open,
 * and a file with none is left as it is, its data untouched. */
Test(pmem, every_hole_is_allocated_at_a_writable_open)
{
	char *shm = tu_mkdtemp_shm();
	const char *dirs[] = {dir, shm}; /* a disk filesystem, then tmpfs */
	const size_t size = 64u << 20;

	cr_assert_not_null(shm);
	for (int d = 0; d < 2; d++) {
		char target[160], path[128];
		struct pmr_region *r;
		struct stat st;
		int fd;

		snprintf(path, sizeof(path), "%s/holes", dirs[d]);
		fd = open(path, O_CREAT | O_RDWR | O_TRUNC, 0644);
		cr_assert_geq(fd, 0);
		cr_assert_eq(ftruncate(fd, (off_t)size), 0);
		/* Data at the start, in the middle and at the end; holes between. */
		cr_assert_eq(pwrite(fd, "head", 4, 0), 4);
		cr_assert_eq(pwrite(fd, "middle", 6, 20u << 20), 6);
		cr_assert_eq(pwrite(fd, "tail", 4, (off_t)size - 4096), 4);
		cr_assert_eq(fstat(fd, &st), 0);
		cr_assert_lt((uint64_t)st.st_blocks * 512u, size, "%s: not sparse", path);
		snprintf(target, sizeof(target), "pmem:%s", path);
		for (int round = 0; round < 2; round++) {
			cr_assert_eq(open_target(target, 0, false, &r), 0, "%s", err);
			pmr_close(r);
			cr_assert_eq(fstat(fd, &st), 0);
			/* (SEEK_HOLE would not do: ext4 and tmpfs report allocated,
			 * never written ranges as holes.) */
			cr_assert_geq((uint64_t)st.st_blocks * 512u, size,
				      "%s, round %d: holes left", path, round);
		}
		char b[8] = {0};

		cr_assert_eq(pread(fd, b, 6, 20u << 20), 6);
		cr_assert_str_eq(b, "middle");
		close(fd);
		unlink(path);
	}
	tu_rmdir(shm);
}

Test(pmem, query_caps_wants_a_pmr_target)
{
	struct pmr_caps k;

	cr_assert_eq(pmr_query_caps("/tmp/x", &k, err, sizeof(err)), -EINVAL);
	cr_assert_not_null(strstr(err, "pmr:BDF"), "%s", err);
}

/* ---- NVMe PMR through a sysfs-shaped directory ------------------------- */

#define BDF	   "0000:00:04.0"
#define DATA_BYTES (256u * 1024u)

static void write_file(const char *path, const void *buf, size_t len, size_t total,
		       mode_t mode)
{
	int fd = open(path, O_CREAT | O_RDWR | O_TRUNC, mode);

	cr_assert_geq(fd, 0, "%s: %s", path, strerror(errno));
	cr_assert_eq(ftruncate(fd, (off_t)total), 0);
	if (len)
		cr_assert_eq(pwrite(fd, buf, len, 0), (ssize_t)len);
	close(fd);
}

static void put32(uint8_t *regs, uint32_t off, uint32_t v)
{
	memcpy(regs + off, &v, 4);
}

static uint32_t get32(const char *path, uint32_t off)
{
	uint32_t v = 0;
	int fd = open(path, O_RDONLY);

	cr_assert_geq(fd, 0);
	cr_assert_eq(pread(fd, &v, 4, off), 4);
	close(fd);
	return v;
}

/*
 * A controller at BDF whose BAR0 is a file: CAP.PMRS, PMRCAP (BIR 4,
 * @wbm, PMRTO 1 = 500 ms), PMRCTL, PMRSTS as given; BAR 4 is DATA_BYTES.
 */
static void make_ctrl(const char *cls, bool pmrs, unsigned wbm, uint32_t pmrctl,
		      uint32_t pmrsts)
{
	static uint8_t regs[16384];
	char root[128], path[256];
	uint64_t cap = pmrs ? 1ull << 56 : 0;

	snprintf(root, sizeof(root), "%s/pci", dir);
	cr_assert_eq(mkdir(root, 0755), 0);
	snprintf(path, sizeof(path), "%s/%s", root, BDF);
	cr_assert_eq(mkdir(path, 0755), 0);
	chmod(dir, 0755);
	snprintf(path, sizeof(path), "%s/%s/class", root, BDF);
	write_file(path, cls, strlen(cls), strlen(cls), 0644);
	memset(regs, 0, sizeof(regs));
	memcpy(regs, &cap, 8);
	put32(regs, 0xe00, 1u << 3 | 1u << 4 | 4u << 5 | wbm << 10 | 1u << 16);
	put32(regs, 0xe04, pmrctl);
	put32(regs, 0xe08, pmrsts);
	snprintf(path, sizeof(path), "%s/%s/resource0", root, BDF);
	write_file(path, regs, sizeof(regs), sizeof(regs), 0600);
	snprintf(path, sizeof(path), "%s/%s/resource4", root, BDF);
	write_file(path, NULL, 0, DATA_BYTES, 0600);
	snprintf(path, sizeof(path), "%s/%s/resource4_wc", root, BDF);
	write_file(path, NULL, 0, DATA_BYTES, 0600);
	setenv("PMWAL_TEST_PCI_ROOT", root, 1);
}

static void nvme_round_trip(unsigned wbm, const char *barrier, const char *target)
{
	char path[256];
	struct pmr_region *r;
	struct pmr_info info;
	uint8_t buf[4096], back[4096];
	int fd;

	make_ctrl("0x010802", true, wbm, 1, 0);
	cr_assert_eq(open_target(target, 0, false, &r), 0, "%s", err);
	pmr_get_info(r, &info);
	cr_assert_eq(info.kind, PMR_KIND_NVME);
	cr_assert_str_eq(info.kind_name, "pmr");
	cr_assert_str_eq(info.barrier, barrier);
	cr_assert(info.durable);
	cr_assert_not(info.emulated);
	cr_assert_eq(info.pmrwbm, wbm);
	cr_assert_eq(pmr_size(r), DATA_BYTES);
	fill(buf, sizeof(buf), 7);
	pmr_copy_nodrain(r, 4096, buf, sizeof(buf));
	cr_assert_eq(pmr_barrier(r), 0);
	pmr_close(r);

	snprintf(path, sizeof(path), "%s/pci/%s/resource4_wc", dir, BDF);
	fd = open(path, O_RDONLY);
	cr_assert_geq(fd, 0);
	cr_assert_eq(pread(fd, back, sizeof(back), 4096), (ssize_t)sizeof(back));
	close(fd);
	cr_assert_arr_eq(back, buf, sizeof(buf), "stores went to the PMR BAR");
}

Test(nvme, pmrsts_barrier_through_mmio)
{
	nvme_round_trip(2, "sfence + PMRSTS read", "pmr:" BDF);
}

Test(nvme, pmr_read_barrier_through_mmio)
{
	nvme_round_trip(1, "sfence + PMR read", "pmr:" BDF);
}

Test(nvme, short_pci_address_form)
{
	nvme_round_trip(2, "sfence + PMRSTS read", "pmr:00:04.0");
}

Test(nvme, no_write_barrier_means_not_durable)
{
	struct pmr_region *r;
	struct pmr_info info;

	make_ctrl("0x010802", true, 0, 1, 0);
	cr_assert_eq(open_target("pmr:" BDF, 0, false, &r), 0, "%s", err);
	pmr_get_info(r, &info);
	cr_assert_not(info.durable);
	cr_assert_eq(pmr_barrier(r), -ENOTSUP);
	pmr_close(r);
}

Test(nvme, disabled_pmr_needs_enable_and_enable_writes_pmrctl)
{
	struct pmr_region *r;
	struct pmr_params p = {.target = "pmr:" BDF, .enable = true};
	char path[256];

	/* disabled: PMRCTL.EN = 0 and PMRSTS.NRDY = 1; a file never becomes
	 * ready, so enabling must end in the PMRTO timeout */
	make_ctrl("0x010802", true, 2, 0, 1u << 8);
	cr_assert_eq(open_target("pmr:" BDF, 0, false, &r), -ENXIO);
	cr_assert_not_null(strstr(err, "--enable-pmr"), "%s", err);
	cr_assert_eq(pmr_open(&p, &r, err, sizeof(err)), -ETIMEDOUT);
	cr_assert_not_null(strstr(err, "not ready after 500 ms"), "%s", err);
	snprintf(path, sizeof(path), "%s/pci/%s/resource0", dir, BDF);
	cr_assert_eq(get32(path, 0xe04), 1, "PMRCTL.EN was written");
}

Test(nvme, read_only_open_may_still_enable)
{
	struct pmr_region *r;
	char path[256];

	/* regression: BAR0 was mapped read-only when ",enable" came in the
	 * target of a read-only open, and the PMRCTL write faulted */
	make_ctrl("0x010802", true, 2, 0, 0);
	cr_assert_eq(open_target("pmr:" BDF ",enable", 0, true, &r), 0, "%s", err);
	pmr_close(r);
	snprintf(path, sizeof(path), "%s/pci/%s/resource0", dir, BDF);
	cr_assert_eq(get32(path, 0xe04), 1, "PMRCTL.EN was written");
}

Test(nvme, health_status_is_checked)
{
	struct pmr_region *r;

	make_ctrl("0x010802", true, 2, 1, 3u << 9);
	cr_assert_eq(open_target("pmr:" BDF, 0, false, &r), -EIO);
	cr_assert_not_null(strstr(err, "unreliable"), "%s", err);
}

Test(nvme, controller_without_pmr)
{
	struct pmr_region *r;

	make_ctrl("0x010802", false, 2, 1, 0);
	cr_assert_eq(open_target("pmr:" BDF, 0, false, &r), -ENODEV);
	cr_assert_not_null(strstr(err, "CAP.PMRS=0"), "%s", err);
}

Test(nvme, device_that_is_not_nvme)
{
	struct pmr_region *r;

	make_ctrl("0x020000", true, 2, 1, 0);
	cr_assert_eq(open_target("pmr:" BDF, 0, false, &r), -ENODEV);
	cr_assert_not_null(strstr(err, "not an NVMe controller"), "%s", err);
}

Test(nvme, query_decodes_registers_without_enabling)
{
	struct pmr_caps k;
	char path[256];

	make_ctrl("0x010802", true, 3, 0, 1u << 8);
	cr_assert_eq(pmr_query_caps("pmr:" BDF, &k, err, sizeof(err)), 0, "%s", err);
	cr_assert(k.pmrs);
	cr_assert_eq(k.pmrwbm, 3);
	cr_assert_eq(k.bir, 4);
	cr_assert_eq(k.bar_bytes, DATA_BYTES);
	cr_assert_not(k.enabled);
	cr_assert(k.nrdy);
	snprintf(path, sizeof(path), "%s/pci/%s/resource0", dir, BDF);
	cr_assert_eq(get32(path, 0xe04), 0, "probing never enables");
}

Test(nvme, permission_denied_says_run_as_root)
{
	struct pmr_region *r;
	char path[256];
	int fds[2], status, rc = 0;
	pid_t pid;

	make_ctrl("0x010802", true, 2, 1, 0);
	if (geteuid() != 0) {
		snprintf(path, sizeof(path), "%s/pci/%s/resource0", dir, BDF);
		chmod(path, 0);
		cr_assert_eq(open_target("pmr:" BDF, 0, false, &r), -EACCES);
		cr_assert_not_null(strstr(err, "run as root"), "%s", err);
		return;
	}
	/* As root, open as nobody in a child, so teardown keeps root. */
	cr_assert_eq(pipe(fds), 0);
	/* No Criterion call in the child: it would talk on the parent's
	 * channel (with --full-stats even passing asserts do). */
	pid = fork();
	if (pid == 0) {
		close(fds[0]);
		if (setresgid(65534, 65534, 65534) || setresuid(65534, 65534, 65534))
			_exit(3);
		rc = open_target("pmr:" BDF, 0, false, &r);
		if (write(fds[1], &rc, sizeof(rc)) != sizeof(rc) ||
		    write(fds[1], err, sizeof(err)) != sizeof(err))
			_exit(4);
		_exit(0);
	}
	cr_assert_geq(pid, 0);
	close(fds[1]);
	cr_assert_eq(read(fds[0], &rc, sizeof(rc)), sizeof(rc));
	cr_assert_eq(read(fds[0], err, sizeof(err)), sizeof(err));
	close(fds[0]);
	cr_assert_eq(waitpid(pid, &status, 0), pid);
	cr_assert_eq(rc, -EACCES, "%s", err);
	cr_assert_not_null(strstr(err, "run as root"), "%s", err);
}

Test(nvme, strict_devmem_message_names_both_fixes)
{
	pmr_nvme_mmap_error(BDF, "/sys/bus/pci/devices/" BDF "/resource0", -EINVAL, err,
			    sizeof(err));
	cr_assert_not_null(strstr(err, "iomem=relaxed"), "%s", err);
	cr_assert_not_null(strstr(err, "echo " BDF " > /sys/bus/pci/drivers/nvme/unbind"),
			   "%s", err);
	pmr_nvme_mmap_error(BDF, "x", -EPERM, err, sizeof(err));
	cr_assert_not_null(strstr(err, "run as root"), "%s", err);
}

Test(nvme, nonexistent_pci_address)
{
	struct pmr_region *r = (struct pmr_region *)1;

	cr_assert_eq(open_target("pmr:0000:ff:1f.7", 0, false, &r), -ENOENT);
	cr_assert_null(r);
	cr_assert_not_null(strstr(err, "no such PCI device"), "%s", err);
	cr_assert_not_null(strstr(err, "pmwal probe"), "%s", err);
}

Test(nvme, malformed_targets)
{
	struct pmr_region *r;

	cr_assert_eq(open_target("pmr:nonsense", 0, false, &r), -EINVAL);
	cr_assert_not_null(strstr(err, "not a PCI address"), "%s", err);
	cr_assert_eq(open_target("pmr:0000:00:04.0/../..", 0, false, &r), -EINVAL);
	cr_assert_eq(open_target("pmr:0000:00:04.0,turbo", 0, false, &r), -EINVAL);
	cr_assert_not_null(strstr(err, "unknown option"), "%s", err);
}

Test(nvme, real_device_that_is_not_nvme)
{
	char path[512], cls[64], target[300];
	struct pmr_region *r;
	struct dirent *e;
	DIR *d = opendir("/sys/bus/pci/devices");
	bool found = false;

	while (d && !found && (e = readdir(d))) {
		if (e->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "/sys/bus/pci/devices/%s/class", e->d_name);
		if (pmr_read_file(path, cls, sizeof(cls)) == 0 &&
		    strncmp(cls, "0x0108", 6) != 0) {
			snprintf(target, sizeof(target), "pmr:%s", e->d_name);
			found = true;
		}
	}
	if (d)
		closedir(d);
	if (!found)
		cr_skip_test("no non-NVMe PCI device on this machine");
	cr_assert_eq(open_target(target, 0, false, &r), -ENODEV, "%s", err);
	cr_assert_not_null(strstr(err, "not an NVMe controller"), "%s", err);
}

/*
 * A name in a sticky directory others can write (/tmp, /dev/shm): another
 * user's link is not followed for writing, another user's file is not
 * written; our own are (the kernel's protected_symlinks/protected_regular,
 * applied even where the machine has them off). The other user is made by
 * chown, as root; the victim file must come out unchanged.
 */
static void shared_dir_case(const char *log_target_fmt, bool through_pmwal)
{
	if (geteuid() != 0)
		cr_skip_test("needs root to own files as another user");
	char *shared = tu_path(dir, "shared"), *victim = tu_path(dir, "victim");
	char *name = tu_path(shared, "x.log"), target[4200];
	const char canary[] = "root's own file\n";
	char back[64] = {0};
	int fd;

	cr_assert_eq(mkdir(shared, 01777), 0);
	cr_assert_eq(chmod(shared, 01777), 0);
	fd = open(victim, O_WRONLY | O_CREAT | O_EXCL, 0600);
	cr_assert_geq(fd, 0);
	cr_assert_eq(write(fd, canary, sizeof(canary) - 1), (ssize_t)sizeof(canary) - 1);
	close(fd);
	snprintf(target, sizeof(target), log_target_fmt, name);

	for (int c = 0; c < 3; c++) {
		unlink(name);
		if (c == 0) { /* another user's link to root's file */
			cr_assert_eq(symlink(victim, name), 0);
			cr_assert_eq(lchown(name, 65534, 65534), 0);
		} else if (c == 1) { /* another user's empty file */
			fd = open(name, O_WRONLY | O_CREAT | O_EXCL, 0666);
			cr_assert_geq(fd, 0);
			cr_assert_eq(fchown(fd, 65534, 65534), 0);
			close(fd);
		} else { /* our own link is followed */
			char *ours = tu_path(dir, "ours.log");

			cr_assert_eq(symlink(ours, name), 0);
			free(ours);
		}
		int rc;

		err[0] = 0;
		if (through_pmwal) {
			struct pmwal *w = NULL;
			struct pmwal_options o = {.target = target,
						  .flags = PMWAL_OPEN_CREATE,
						  .capacity_bytes = 16u << 20,
						  .errmsg_buf = err,
						  .errmsg_len = sizeof(err)};
			rc = pmwal_open(&o, &w);
			pmwal_close(w);
		} else {
			struct pmr_region *r = NULL;
			rc = open_target(target, 16u << 20, false, &r);
			pmr_close(r);
		}
		if (c < 2) {
			cr_assert_eq(rc, -EPERM, "case %d: %d (%s)", c, rc, err);
			cr_assert(strstr(err, "another user may have planted it"), "%s", err);
		} else {
			cr_assert_eq(rc, 0, "own link: %d (%s)", rc, err);
		}
	}
	fd = open(victim, O_RDONLY);
	cr_assert_eq(read(fd, back, sizeof(back)), (ssize_t)sizeof(canary) - 1);
	close(fd);
	cr_assert_str_eq(back, canary, "root's file was written through the link");
	free(shared);
	free(victim);
	free(name);
}

Test(pmem, a_region_is_not_opened_through_another_users_link_in_a_shared_directory)
{
	shared_dir_case("pmem:%s", false);
}

Test(pmem, a_log_file_is_not_created_through_another_users_link_in_a_shared_directory)
{
	shared_dir_case("%s", true);
}

Test(pmem, a_pmem_log_is_not_created_through_another_users_link_in_a_shared_directory)
{
	shared_dir_case("pmem:%s", true);
}

/*
 * The whole path is judged, not its last name: another user's link to a
 * directory of ours, a chain whose second link is theirs, a link or a new
 * file in a directory others can write that is not sticky, and a second
 * (hard) link to a file of ours are all refused for writing, and the file
 * they lead to is left as it was.
 */
Test(pmem, every_name_on_the_path_of_a_file_opened_for_writing_is_judged)
{
	if (geteuid() != 0)
		cr_skip_test("needs root to own files as another user");
	char *sticky = tu_path(dir, "sticky"), *ww = tu_path(dir, "ww");
	char *vdir = tu_path(dir, "vdir"), *victim = tu_path(vdir, "x.log");
	char p[4096], q[4096];
	const char canary[] = "root's own file\n";
	char back[64] = {0};
	int fd;

	cr_assert_eq(mkdir(sticky, 0700), 0);
	cr_assert_eq(chmod(sticky, 01777), 0);
	cr_assert_eq(mkdir(ww, 0700), 0);
	cr_assert_eq(chmod(ww, 0777), 0);
	cr_assert_eq(mkdir(vdir, 0700), 0);
	fd = open(victim, O_WRONLY | O_CREAT | O_EXCL, 0600);
	cr_assert_geq(fd, 0);
	cr_assert_eq(write(fd, canary, sizeof(canary) - 1), (ssize_t)sizeof(canary) - 1);
	close(fd);

	struct {
		const char *what;
		char path[4096];
	} c[5];
	int n = 0;

	/* 1: their link to our directory, in the sticky one */
	snprintf(p, sizeof(p), "%s/evil", sticky);
	cr_assert_eq(symlink(vdir, p), 0);
	cr_assert_eq(lchown(p, 65534, 65534), 0);
	c[n].what = "a directory link of theirs";
	snprintf(c[n++].path, sizeof(c[0].path), "%s/x.log", p);
	/* 2: our link to their link */
	snprintf(p, sizeof(p), "%s/theirs", sticky);
	cr_assert_eq(symlink(victim, p), 0);
	cr_assert_eq(lchown(p, 65534, 65534), 0);
	snprintf(q, sizeof(q), "%s/ours", sticky);
	cr_assert_eq(symlink(p, q), 0);
	c[n].what = "a chain whose second link is theirs";
	snprintf(c[n++].path, sizeof(c[0].path), "%s", q);
	/* 3: their link in a world-writable directory without the sticky bit */
	snprintf(p, sizeof(p), "%s/x.log", ww);
	cr_assert_eq(symlink(victim, p), 0);
	cr_assert_eq(lchown(p, 65534, 65534), 0);
	c[n].what = "a link in a non-sticky shared directory";
	snprintf(c[n++].path, sizeof(c[0].path), "%s", p);
	/* 4: a new file there */
	c[n].what = "a new file in a non-sticky shared directory";
	snprintf(c[n++].path, sizeof(c[0].path), "%s/new.log", ww);
	/* 5: a second link to our file, in the sticky directory */
	snprintf(p, sizeof(p), "%s/hard", sticky);
	cr_assert_eq(link(victim, p), 0);
	c[n].what = "a hard link to our file";
	snprintf(c[n++].path, sizeof(c[0].path), "%s", p);

	for (int i = 0; i < n; i++) {
		err[0] = 0;
		fd = pmr_open_shared_safe(c[i].path, O_RDWR | O_CREAT, 0640, err, sizeof(err));
		cr_assert_lt(fd, 0, "%s: opened", c[i].what);
		cr_assert_eq(errno, EPERM, "%s: %s", c[i].what, strerror(errno));
		cr_assert(err[0], "%s: no message", c[i].what);
	}
	snprintf(p, sizeof(p), "%s/new.log", ww);
	cr_assert_neq(access(p, F_OK), 0, "a file was made in the non-sticky directory");
	fd = open(victim, O_RDONLY);
	cr_assert_eq(read(fd, back, sizeof(back)), (ssize_t)sizeof(canary) - 1);
	close(fd);
	cr_assert_str_eq(back, canary);
	/* Our own link in the sticky directory is still followed. */
	snprintf(p, sizeof(p), "%s/mine", sticky);
	snprintf(q, sizeof(q), "%s/mine.log", vdir);
	cr_assert_eq(symlink(q, p), 0);
	fd = pmr_open_shared_safe(p, O_RDWR | O_CREAT, 0640, err, sizeof(err));
	cr_assert_geq(fd, 0, "%s", err);
	close(fd);
	free(sticky);
	free(ww);
	free(vdir);
	free(victim);
}

/*
 * The walk reaches what the kernel's own resolution reaches where no link is
 * refused: relative names from the working directory, ".", "..", links of
 * ours (absolute, relative, chained, to a directory and then "..") and a
 * missing last name; a loop of links ends in ELOOP, a file on the way in
 * ENOTDIR.
 */
Test(pmem, the_walk_reaches_what_open_reaches_through_our_own_links)
{
	char p[4400], q[4400], cwd[4096];
	struct pmr_walk w;
	struct stat a, b;

	cr_assert_eq(chmod(dir, 0700), 0);
	snprintf(p, sizeof(p), "%s/d1", dir);
	cr_assert_eq(mkdir(p, 0700), 0);
	snprintf(p, sizeof(p), "%s/d1/d2", dir);
	cr_assert_eq(mkdir(p, 0700), 0);
	snprintf(p, sizeof(p), "%s/d1/d2/f", dir);
	close(open(p, O_WRONLY | O_CREAT, 0600));
	snprintf(p, sizeof(p), "%s/abs", dir); /* -> DIR/d1/d2 */
	snprintf(q, sizeof(q), "%s/d1/d2", dir);
	cr_assert_eq(symlink(q, p), 0);
	snprintf(p, sizeof(p), "%s/d1/rel", dir); /* -> d2/../d2 */
	cr_assert_eq(symlink("d2/../d2", p), 0);
	snprintf(p, sizeof(p), "%s/chain", dir); /* -> d1/rel */
	cr_assert_eq(symlink("d1/rel", p), 0);
	snprintf(p, sizeof(p), "%s/loop", dir);
	cr_assert_eq(symlink("loop", p), 0);
	cr_assert_not_null(getcwd(cwd, sizeof(cwd)));
	cr_assert_eq(chdir(dir), 0);

	const char *same[] = {"abs/f", "./d1/d2/f", "d1/../d1/d2/./f", "chain/f",
			      "chain/../d2/f", "abs/../../d1/rel/f"};

	snprintf(q, sizeof(q), "%s/d1/d2/f", dir);
	cr_assert_eq(stat(q, &a), 0);
	for (size_t i = 0; i < sizeof(same) / sizeof(same[0]); i++) {
		cr_assert_eq(pmr_walk(same[i], NULL, 0, &w, err, sizeof(err)), 0, "%s: %s", same[i],
			     strerror(errno));
		cr_assert_str_eq(w.name, "f", "%s", same[i]);
		cr_assert_eq(fstatat(w.dirfd, w.name, &b, AT_SYMLINK_NOFOLLOW), 0, "%s", same[i]);
		cr_assert(a.st_ino == b.st_ino && a.st_dev == b.st_dev, "%s: another file",
			  same[i]);
		pmr_walk_end(&w);
	}
	/* A missing last name is the name to make; a directory ends in ".". */
	cr_assert_eq(pmr_walk("abs/new", NULL, 0, &w, err, sizeof(err)), 0);
	cr_assert_str_eq(w.name, "new");
	pmr_walk_end(&w);
	cr_assert_eq(pmr_walk("chain", NULL, PMR_WALK_DIR, &w, err, sizeof(err)), 0);
	cr_assert_str_eq(w.name, ".");
	snprintf(q, sizeof(q), "%s/d1/d2", dir);
	cr_assert_eq(stat(q, &a), 0);
	cr_assert(w.dir.st_ino == a.st_ino, "chain: not d2");
	pmr_walk_end(&w);
	cr_assert_eq(pmr_walk("abs/", NULL, 0, &w, err, sizeof(err)), 0);
	cr_assert_str_eq(w.name, ".");
	pmr_walk_end(&w);
	/* Not followed on request: the link itself is the last name. */
	cr_assert_eq(pmr_walk("chain", NULL, PMR_WALK_NOFOLLOW, &w, err, sizeof(err)), 0);
	cr_assert_str_eq(w.name, "chain");
	pmr_walk_end(&w);
	cr_assert_eq(pmr_walk("loop/x", NULL, 0, &w, err, sizeof(err)), -1);
	cr_assert_eq(errno, ELOOP);
	cr_assert_eq(pmr_walk("d1/d2/f/x", NULL, 0, &w, err, sizeof(err)), -1);
	cr_assert_eq(errno, ENOTDIR);
	cr_assert_eq(pmr_walk("nowhere/x", NULL, 0, &w, err, sizeof(err)), -1);
	cr_assert_eq(errno, ENOENT);
	cr_assert_eq(w.dirfd, -1);
	/* And an open for writing through them makes the file where open would. */
	int fd = pmr_open_shared_safe("chain/g", O_WRONLY | O_CREAT | O_EXCL, 0600, err,
				      sizeof(err));

	cr_assert_geq(fd, 0, "%s", strerror(errno));
	close(fd);
	snprintf(q, sizeof(q), "%s/d1/d2/g", dir);
	cr_assert_eq(access(q, F_OK), 0);
	cr_assert_eq(chdir(cwd), 0);
}

/* ---- a directory's owner swapping names while root opens ------------------ */

static struct tu_other ou; /* a second local user, made for the test */

/* After the suite's setup (Criterion runs the suite's init, then the
 * test's; the test's fini, then the suite's). */
static void other_user(void)
{
	char why[128];

	if (tu_other_make(&ou, "pmwal-t-paths-", why, sizeof(why)))
		cr_skip_test("SKIP: %s", why);
}

static void teardown_other(void)
{
	tu_other_remove(&ou);
}

#define SWAP_MS 2000 /* how long the other user swaps: a bound, not a speed */

/* As the other user: exchanges @base/sub (a directory) and @base/lnk (a
 * link to root's directory) for SWAP_MS; true if an exchange was made. */
static bool swap_names(const char *base)
{
	char a[4200], b[4200];
	struct timespec t0, t;
	long n = 0;

	snprintf(a, sizeof(a), "%s/sub", base);
	snprintf(b, sizeof(b), "%s/lnk", base);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	do {
		for (int i = 0; i < 256; i++)
			n += renameat2(AT_FDCWD, a, AT_FDCWD, b, RENAME_EXCHANGE) == 0;
		clock_gettime(CLOCK_MONOTONIC, &t);
	} while ((t.tv_sec - t0.tv_sec) * 1000 + (t.tv_nsec - t0.tv_nsec) / 1000000 < SWAP_MS);
	return n > 0;
}

struct swapper {
	const char *base;
	bool ok, done;
};

static void *swapper_main(void *arg)
{
	struct swapper *s = arg;

	tu_as_other(&ou, swap_names, s->base, false, &s->ok);
	__atomic_store_n(&s->done, true, __ATOMIC_RELEASE);
	return NULL;
}

/*
 * The owner of a directory on the path exchanges a directory in it with a
 * link to a directory of root's (renameat2 RENAME_EXCHANGE) while root
 * opens a file below that name, again and again. Each open is judged on
 * what it opens: it lands in the other user's directory, or is refused
 * (their link, in their directory); it never creates or writes the file in
 * root's directory, where no open was allowed to go.
 */
Test(pmem, a_name_swapped_for_a_link_during_the_open_never_sends_it_through_the_link,
     .init = other_user, .fini = teardown_other, .timeout = 60)
{
	char *base = tu_path(dir, "theirs"), *victim = tu_path(dir, "victim");
	char sub[4200], lnk[4200], file[4200], landed[4200];
	const char marker[] = "written by root\n";
	struct swapper sw = {.base = base};
	pthread_t t;
	long opened = 0, refused = 0, through = 0, tries = 0;

	cr_assert_eq(chmod(dir, 0755), 0);
	cr_assert_eq(mkdir(base, 0755), 0);
	cr_assert_eq(mkdir(victim, 0755), 0);
	snprintf(sub, sizeof(sub), "%s/sub", base);
	snprintf(lnk, sizeof(lnk), "%s/lnk", base);
	snprintf(file, sizeof(file), "%s/x.log", sub);
	snprintf(landed, sizeof(landed), "%s/x.log", victim);
	cr_assert_eq(mkdir(sub, 0755), 0);
	cr_assert_eq(symlink(victim, lnk), 0);
	cr_assert_eq(chown(base, ou.uid, ou.gid), 0);
	cr_assert_eq(chown(sub, ou.uid, ou.gid), 0);
	cr_assert_eq(lchown(lnk, ou.uid, ou.gid), 0);

	/* No assertion until the other user's process is done: its user is
	 * removed after the test, which fails while the user runs anything. */
	char why[1024] = "";
	int bad_errno = 0;

	cr_assert_eq(pthread_create(&t, NULL, swapper_main, &sw), 0);
	while (!__atomic_load_n(&sw.done, __ATOMIC_ACQUIRE) && tries < 20000) {
		tries++;
		err[0] = 0;
		int fd = pmr_open_shared_safe(file, O_WRONLY | O_CREAT | O_CLOEXEC, 0600, err,
					      sizeof(err));

		if (fd < 0) {
			if (errno != EPERM && !bad_errno)
				bad_errno = errno;
			snprintf(why, sizeof(why), "%s", err);
			refused++;
			continue;
		}
		if (write(fd, marker, sizeof(marker) - 1) == (ssize_t)sizeof(marker) - 1)
			opened++;
		close(fd);
		if (unlink(landed) == 0)
			through++; /* the marker went into root's directory */
	}
	pthread_join(t, NULL);
	cr_assert(sw.ok, "the other user could not swap the names");
	cr_log_info("%ld opens: %ld in their directory, %ld refused, %ld through the link",
		    tries, opened - through, refused, through);
	cr_assert_eq(through, 0,
		     "%ld of %ld opens went through the link into root's directory", through,
		     tries);
	cr_assert_gt(opened, 0, "no open succeeded in the other user's directory");
	cr_assert_eq(bad_errno, 0, "an open failed with %s, not a refusal", strerror(bad_errno));
	cr_assert(!refused || (strstr(why, "symbolic link") && strstr(why, ou.name)),
		  "the refusal names neither the link nor its owner: %s", why);
	free(base);
	free(victim);
}

/* A mapped file is its owner's to truncate under us (SIGBUS): another
 * user's file is refused by name, for reading and for writing. */
Test(pmem, another_users_file_is_not_mapped)
{
	if (geteuid() != 0)
		cr_skip_test("needs root to give a file to another user");
	char *path = tu_path(dir, "theirs"), target[4200];
	struct pmr_region *r = NULL;

	snprintf(target, sizeof(target), "pmem:%s", path);
	cr_assert_eq(open_target(target, 1 << 20, false, &r), 0, "%s", err);
	pmr_close(r);
	cr_assert_eq(chown(path, 65534, 65534), 0);
	for (int ro = 0; ro < 2; ro++) {
		r = NULL;
		cr_assert_eq(open_target(target, 0, ro, &r), -EPERM, "%s", err);
		cr_assert_null(r);
		cr_assert(strstr(err, "uid 65534") && strstr(err, "SIGBUS"), "%s", err);
	}
	free(path);
}

/* Another user's own sticky directory: their link there is not followed for
 * writing, though they own the directory too (the kernel's rule would). */
Test(pmem, a_link_in_another_users_sticky_directory_is_not_followed)
{
	if (geteuid() != 0)
		cr_skip_test("needs root to own files as another user");
	char *theirs = tu_path(dir, "theirs"), *victim = tu_path(dir, "victim"), p[4200];
	int fd = open(victim, O_WRONLY | O_CREAT | O_EXCL, 0600);

	cr_assert_geq(fd, 0);
	close(fd);
	cr_assert_eq(mkdir(theirs, 0700), 0);
	cr_assert_eq(chmod(theirs, 01777), 0);
	cr_assert_eq(chown(theirs, 65534, 65534), 0);
	snprintf(p, sizeof(p), "%s/x.log", theirs);
	cr_assert_eq(symlink(victim, p), 0);
	cr_assert_eq(lchown(p, 65534, 65534), 0);
	err[0] = 0;
	fd = pmr_open_shared_safe(p, O_RDWR, 0, err, sizeof(err));
	cr_assert_lt(fd, 0, "followed their link");
	cr_assert_eq(errno, EPERM);
	cr_assert(strstr(err, "symbolic link"), "%s", err);
	free(theirs);
	free(victim);
}

/*
 * A magic link of /proc (a process's root, cwd or open files) is refused
 * by name, not walked by its text: /proc/PID/root of a process in another
 * mount namespace reads "/", and walked as "/" a create went to the host's
 * file of that name instead of the one the process sees. /proc's plain
 * links (self) are still followed.
 */
Test(pmem, a_proc_magic_link_on_the_path_is_refused_not_walked_by_its_text)
{
	char p[600], own[600];
	struct stat st;

	snprintf(p, sizeof(p), "/proc/self/root%s/x", dir);
	snprintf(own, sizeof(own), "%s/x", dir);
	err[0] = 0;
	int fd = pmr_open_shared_safe(p, O_RDWR | O_CREAT, 0640, err, sizeof(err));

	cr_assert_lt(fd, 0, "%s was opened", p);
	cr_assert_eq(errno, EPERM);
	cr_assert_not_null(strstr(err, "a link of /proc"), "%s", err);
	cr_assert_neq(stat(own, &st), 0, "the file was made through /proc/self/root");
	snprintf(p, sizeof(p), "/proc/self/cwd/x");
	cr_assert_lt(pmr_open_shared_safe(p, O_RDWR | O_CREAT, 0640, err, sizeof(err)), 0);
	/* /proc/self itself (text "PID") leads on: a read of a /proc file. */
	fd = pmr_open_shared_safe("/proc/self/status", O_RDONLY, 0, err, sizeof(err));
	cr_assert_geq(fd, 0, "%s", err);
	close(fd);
}
