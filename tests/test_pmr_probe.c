// SPDX-License-Identifier: MIT
/*
 * test_pmr_probe.c - `pmwal probe` and pmr_probe_json(): the facts reported
 * for files, directories, fake PMRs and the machine listing, the JSON the
 * benchmark stores, and the exit codes and messages for missing targets and
 * bad usage.
 */
#include "cli.h"
#include "probe.h"

#include "testutil.h"

#include <criterion/criterion.h>
#include <criterion/redirect.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static char *dir; /* per test, on tmpfs: the emulated-pmem case */
static char err[1024];

static void setup(void)
{
	dir = tu_mkdtemp_shm();
	cr_assert_not_null(dir, "mkdtemp: %s", strerror(errno));
}

static void teardown(void)
{
	tu_rmdir(dir);
	dir = NULL;
}

TestSuite(probe, .init = setup, .fini = teardown);

static const char *str(json_t *o, const char *key)
{
	json_t *v = json_object_get(o, key);

	cr_assert(json_is_string(v), "\"%s\" missing or not a string", key);
	return json_string_value(v);
}

static bool dir_is_empty(void)
{
	struct dirent *e;
	DIR *d = opendir(dir);
	bool empty = true;

	while (d && (e = readdir(d)))
		if (e->d_name[0] != '.')
			empty = false;
	if (d)
		closedir(d);
	return empty;
}

Test(probe, file_on_tmpfs)
{
	char path[128];
	json_t *o;
	int fd;

	snprintf(path, sizeof(path), "%s/f", dir);
	fd = open(path, O_CREAT | O_RDWR, 0644);
	cr_assert_geq(fd, 0);
	cr_assert_eq(ftruncate(fd, 1u << 20), 0);
	close(fd);
	o = pmr_probe_json(path, err, sizeof(err));
	cr_assert_not_null(o, "%s", err);
	cr_assert_str_eq(str(o, "kind"), "file");
	cr_assert_str_eq(str(o, "filesystem"), "tmpfs");
	cr_assert_str_eq(str(o, "pmem2_granularity"), "page");
	cr_assert(json_is_true(json_object_get(o, "pmem_emulated")));
	cr_assert_eq(json_integer_value(json_object_get(o, "size_bytes")), 1u << 20);
	cr_assert(json_object_get(o, "o_direct") || json_object_get(o, "o_direct_error"));
	cr_assert_not_null(json_object_get(o, "atomic_write"));
	json_decref(o);
}

Test(probe, directory_probes_a_scratch_file_and_removes_it)
{
	json_t *o = pmr_probe_json(dir, err, sizeof(err));

	cr_assert_not_null(o, "%s", err);
	cr_assert_str_eq(str(o, "kind"), "directory");
	cr_assert_str_eq(str(o, "pmem2_granularity"), "page");
	cr_assert(dir_is_empty(), "the scratch file is gone");
	json_decref(o);
}

/* A new regular file of @bytes (a fake PMR's durable image); 0 or -1. */
static int truncate_new(const char *path, off_t bytes)
{
	int fd = open(path, O_CREAT | O_EXCL | O_RDWR, 0644);
	int rc;

	if (fd < 0)
		return -1;
	rc = ftruncate(fd, bytes);
	close(fd);
	return rc;
}

Test(probe, fake_pmr_registers)
{
	char target[160], path[128];
	json_t *o, *pmr;

	snprintf(path, sizeof(path), "%s/pmr", dir);
	cr_assert_eq(truncate_new(path, 1 << 20), 0, "%s: %s", path, strerror(errno));
	snprintf(target, sizeof(target), "fakepmr:%s,wbm=1,en=0", path);
	o = pmr_probe_json(target, err, sizeof(err));
	cr_assert_not_null(o, "%s", err);
	cr_assert_str_eq(str(o, "kind"), "fakepmr");
	pmr = json_object_get(o, "pmr");
	cr_assert(json_is_object(pmr));
	cr_assert(json_is_true(json_object_get(pmr, "supported")));
	cr_assert_eq(json_integer_value(json_object_get(pmr, "pmrwbm")), 1);
	cr_assert_str_eq(str(pmr, "write_barrier"), "PMR read");
	cr_assert(json_is_false(json_object_get(pmr, "enabled")));
	cr_assert_str_eq(str(pmr, "health"), "normal");
	json_decref(o);
}

/* The simulated registers look healthy whatever the file is: the probe must
 * look at the file and refuse one that cannot hold a region. */
Test(probe, fake_pmr_refuses_what_is_no_region_file)
{
	char path[128], target[160];
	json_t *o;

	snprintf(path, sizeof(path), "%s/fifo", dir);
	cr_assert_eq(mkfifo(path, 0644), 0);
	snprintf(target, sizeof(target), "fakepmr:%s", path);
	cr_assert_eq(pmr_probe(target, &o, err, sizeof(err)), -ENODEV); /* no hang */
	cr_assert_null(o);
	cr_assert_not_null(strstr(err, "fifo is a FIFO, not a regular file"), "%s", err);

	snprintf(target, sizeof(target), "fakepmr:%s/none,wbm=1", dir);
	cr_assert_eq(pmr_probe(target, &o, err, sizeof(err)), -ENOENT);
	cr_assert_not_null(strstr(err, "none: no such file"), "%s", err);
	cr_assert_not_null(strstr(err, "pmwal create fakepmr:"), "%s", err);

	cr_assert_eq(pmr_probe("fakepmr:/dev/null", &o, err, sizeof(err)), -ENODEV);
	cr_assert_not_null(strstr(err, "/dev/null is a character device"), "%s", err);

	snprintf(path, sizeof(path), "%s/empty", dir);
	cr_assert_eq(truncate_new(path, 0), 0);
	snprintf(target, sizeof(target), "fakepmr:%s", path);
	cr_assert_eq(pmr_probe(target, &o, err, sizeof(err)), -EINVAL);
	cr_assert_not_null(strstr(err, "holds 0 bytes"), "%s", err);
}

Test(probe, machine_listing)
{
	json_t *o = pmr_probe_json(NULL, err, sizeof(err));

	cr_assert_not_null(o, "%s", err);
	cr_assert_str_eq(str(o, "kind"), "system");
	cr_assert(json_is_array(json_object_get(o, "nvme_controllers")));
	cr_assert(json_is_array(json_object_get(o, "pmrs")));
	cr_assert(json_is_array(json_object_get(o, "dax_devices")));
	cr_assert(json_is_array(json_object_get(o, "pmem_devices")));
	cr_assert_not_null(json_object_get(o, "kernel"));
	json_decref(o);
}

Test(probe, block_device_queue_facts)
{
	char path[300] = "";
	struct dirent *e;
	DIR *d = opendir("/sys/class/block");
	json_t *o, *q;

	while (d && (e = readdir(d))) {
		if (e->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "/dev/%s", e->d_name);
		if (access(path, R_OK) == 0)
			break;
		path[0] = '\0';
	}
	if (d)
		closedir(d);
	if (!path[0])
		cr_skip_test("no readable block device node");
	o = pmr_probe_json(path, err, sizeof(err));
	cr_assert_not_null(o, "%s", err);
	q = json_object_get(o, "queue");
	cr_assert(json_is_object(q), "queue facts for %s", path);
	cr_assert(json_is_integer(json_object_get(q, "logical_block_size")));
	json_decref(o);
}

Test(probe, missing_target_is_named)
{
	json_t *o;
	char path[128];

	snprintf(path, sizeof(path), "%s/none", dir);
	cr_assert_eq(pmr_probe(path, &o, err, sizeof(err)), -ENOENT);
	cr_assert_null(o);
	cr_assert_not_null(strstr(err, "no such file or device"), "%s", err);
	cr_assert_null(pmr_probe_json("pmr:0000:ff:1f.7", err, sizeof(err)));
	cr_assert_not_null(strstr(err, "no such PCI device"), "%s", err);
}

Test(probe, cli_prints_one_json_object, .init = cr_redirect_stdout)
{
	char *argv[] = {"probe", dir, "--json", NULL};
	json_error_t jerr;
	json_t *o;

	cr_assert_eq(cmd_probe(3, argv), 0);
	fflush(stdout);
	o = json_loadf(cr_get_redirected_stdout(), 0, &jerr);
	cr_assert_not_null(o, "not JSON: %s", jerr.text);
	cr_assert_str_eq(str(o, "kind"), "directory");
	json_decref(o);
}

Test(probe, cli_text_output, .init = cr_redirect_stdout)
{
	char *argv[] = {"probe", dir, NULL};
	char line[512];
	bool seen = false;
	FILE *f;

	cr_assert_eq(cmd_probe(2, argv), 0);
	fflush(stdout);
	f = cr_get_redirected_stdout();
	while (fgets(line, sizeof(line), f))
		if (strcmp(line, "kind: directory\n") == 0)
			seen = true;
	cr_assert(seen);
}

Test(probe, cli_errors_exit_2, .init = cr_redirect_stderr)
{
	char *missing[] = {"probe", "/nonexistent/pmwal", NULL};
	char *badopt[] = {"probe", "--frobnicate", NULL};
	char *two[] = {"probe", "/a", "/b", NULL};

	cr_assert_eq(cmd_probe(2, missing), 2);
	cr_assert_eq(cmd_probe(2, badopt), 2);
	cr_assert_eq(cmd_probe(3, two), 2);
	fflush(stderr);
	cr_assert_stderr_neq_str("");
}
