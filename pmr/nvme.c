// SPDX-License-Identifier: MIT
/*
 * nvme.c - a real NVMe controller's Persistent Memory Region, reached from
 * user space the only way Linux offers: the PCI BAR files in sysfs. BAR0
 * (uncached) carries the controller registers the protocol in ctrl.c reads
 * and writes; the PMR BAR (PMRCAP.BIR) is mapped write-combining for the data
 * and, when PMRWBM wants a PMR read as the barrier, one page uncached for
 * that read. Everything that can go wrong on the way (wrong address, not
 * NVMe, no permission, strict devmem) is named with its fix, because the
 * person reading the message is usually at a console with the device.
 */
#include "pmr_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

struct pmr_nvme {
	struct pmr_region r;
	struct pmr_ctrl c;
	char bdf[16];
	char name[32];
	volatile uint8_t *bar0;
	size_t bar0_bytes;
	uint8_t *data; /* PMR BAR, write-combining (or uncached) */
	size_t data_bytes;
	volatile uint8_t *uc; /* first page of the PMR BAR, uncached */
	size_t uc_bytes;
	bool data_wc;
};

static struct pmr_nvme *ctrl_to_nvme(struct pmr_ctrl *c)
{
	return (struct pmr_nvme *)((char *)c - offsetof(struct pmr_nvme, c));
}

static uint32_t mmio_read32(struct pmr_ctrl *c, uint32_t off)
{
	return *(volatile uint32_t *)(ctrl_to_nvme(c)->bar0 + off);
}

static void mmio_write32(struct pmr_ctrl *c, uint32_t off, uint32_t val)
{
	*(volatile uint32_t *)(ctrl_to_nvme(c)->bar0 + off) = val;
}

static void mmio_pmr_read(struct pmr_ctrl *c)
{
	(void)*(volatile uint32_t *)ctrl_to_nvme(c)->uc;
}

/*
 * Where PCI devices live. Tests point PMWAL_TEST_PCI_ROOT at a directory of
 * files laid out like sysfs (class, resource0, resource4_wc), so the MMIO
 * path above runs against file mappings on any machine.
 */
static const char *pci_root(void)
{
	const char *r = getenv("PMWAL_TEST_PCI_ROOT");

	return r && *r ? r : "/sys/bus/pci/devices";
}

static const struct pmr_ctrl_ops mmio_ops = {
    .reg_read32 = mmio_read32,
    .reg_write32 = mmio_write32,
    .pmr_read = mmio_pmr_read,
};

/* "0000:00:04.0" or "00:04.0"; only hex digits, ':' and '.' (it becomes a
 * sysfs path). */
static int parse_spec(const char *spec, char *bdf, size_t bdflen, bool *enable, char *err,
		      size_t errlen)
{
	char buf[64];
	char *opt, *save = NULL;
	unsigned dom, bus, dev, fn;
	char tail;

	if (strlen(spec) >= sizeof(buf))
		return pmr_errf(err, errlen, -EINVAL, "pmr:%s: target too long", spec);
	snprintf(buf, sizeof(buf), "%s", spec);
	opt = strchr(buf, ',');
	if (opt) {
		*opt++ = '\0';
		for (char *o = strtok_r(opt, ",", &save); o;
		     o = strtok_r(NULL, ",", &save)) {
			if (strcmp(o, "enable") == 0)
				*enable = true;
			else
				return pmr_errf(
				    err, errlen, -EINVAL,
				    "pmr:%s: unknown option \"%s\" (known: enable)", spec,
				    o);
		}
	}
	if (sscanf(buf, "%4x:%2x:%2x.%1x%c", &dom, &bus, &dev, &fn, &tail) == 4) {
		/* full form */
	} else if (sscanf(buf, "%2x:%2x.%1x%c", &bus, &dev, &fn, &tail) == 3) {
		dom = 0;
	} else {
		return pmr_errf(
		    err, errlen, -EINVAL,
		    "pmr:%s: not a PCI address: write it as DOMAIN:BUS:DEV.FN, "
		    "e.g. pmr:0000:00:04.0 (see `lspci -D`)",
		    spec);
	}
	if (dev > 0x1f || fn > 7)
		return pmr_errf(err, errlen, -EINVAL,
				"pmr:%s: device or function out of range", spec);
	snprintf(bdf, bdflen, "%04x:%02x:%02x.%x", dom, bus, dev, fn);
	return 0;
}

static int check_device(const char *bdf, char *err, size_t errlen)
{
	char path[PATH_MAX], buf[64];
	uint64_t cls;
	int rc;

	snprintf(path, sizeof(path), "%s/%s", pci_root(), bdf);
	if (access(path, F_OK) != 0)
		return pmr_errf(err, errlen, -ENOENT,
				"pmr:%s: no such PCI device: list NVMe controllers with "
				"`pmwal probe` or `lspci -D -d ::0108`",
				bdf);
	snprintf(path, sizeof(path), "%s/%s/class", pci_root(), bdf);
	rc = pmr_read_file(path, buf, sizeof(buf));
	if (rc || !pmr_parse_u64(buf, &cls))
		return pmr_errf(err, errlen, rc ? rc : -EIO,
				"pmr:%s: cannot read the PCI class from %s", bdf, path);
	if ((cls >> 8) != 0x0108)
		return pmr_errf(
		    err, errlen, -ENODEV,
		    "pmr:%s: not an NVMe controller (PCI class 0x%06llx, NVMe "
		    "is 0x0108xx): check the address with `lspci -D`",
		    bdf, (unsigned long long)cls);
	return 0;
}

int pmr_nvme_mmap_error(const char *bdf, const char *file, int rc, char *err,
			size_t errlen)
{
	if (rc == -EINVAL)
		return pmr_errf(
		    err, errlen, rc,
		    "pmr:%s: mmap of %s refused (EINVAL): the kernel "
		    "(CONFIG_IO_STRICT_DEVMEM) blocks BAR access while a driver "
		    "owns the controller: boot with iomem=relaxed, or unbind the "
		    "nvme driver from %s: echo %s > /sys/bus/pci/drivers/nvme/unbind",
		    bdf, file, bdf, bdf);
	if (rc == -EPERM || rc == -EACCES)
		return pmr_errf(
		    err, errlen, rc,
		    "pmr:%s: mmap of %s not permitted: run as root (needs "
		    "CAP_SYS_ADMIN and CAP_SYS_RAWIO; a kernel in lockdown mode "
		    "refuses PCI BAR access to everyone)",
		    bdf, file);
	return pmr_errf(err, errlen, rc, "pmr:%s: mmap of %s: %s", bdf, file,
			strerror(-rc));
}

/* Map @len bytes (0: the whole file) of a sysfs BAR file. */
static int map_bar(const char *bdf, const char *res, bool writable, size_t len,
		   void **addr, size_t *mapped, char *err, size_t errlen)
{
	char path[PATH_MAX];
	struct stat st;
	void *p;
	int fd, rc;

	snprintf(path, sizeof(path), "%s/%s/%s", pci_root(), bdf, res);
	fd = open(path, (writable ? O_RDWR : O_RDONLY) | O_CLOEXEC);
	if (fd < 0) {
		rc = -errno;
		if (rc == -EACCES || rc == -EPERM)
			return pmr_errf(
			    err, errlen, rc,
			    "pmr:%s: cannot open %s: permission denied: run as root", bdf,
			    path);
		return pmr_errf(err, errlen, rc, "pmr:%s: cannot open %s: %s", bdf, path,
				strerror(-rc));
	}
	if (fstat(fd, &st) != 0 || st.st_size <= 0) {
		close(fd);
		return pmr_errf(err, errlen, -EIO, "pmr:%s: %s has no size", bdf, path);
	}
	if (!len || len > (size_t)st.st_size)
		len = (size_t)st.st_size;
	p = mmap(NULL, len, PROT_READ | (writable ? PROT_WRITE : 0), MAP_SHARED, fd, 0);
	rc = p == MAP_FAILED ? -errno : 0;
	close(fd); /* the mapping holds its own reference */
	if (rc)
		return pmr_nvme_mmap_error(bdf, path, rc, err, errlen);
	*addr = p;
	*mapped = len;
	return 0;
}

static uint64_t bar_size(const char *bdf, unsigned bir)
{
	char path[PATH_MAX];
	struct stat st;

	snprintf(path, sizeof(path), "%s/%s/resource%u", pci_root(), bdf, bir);
	return stat(path, &st) == 0 && st.st_size > 0 ? (uint64_t)st.st_size : 0;
}

static void unmap_all(struct pmr_nvme *n)
{
	if (n->data)
		munmap(n->data, n->data_bytes);
	if (n->uc)
		munmap((void *)n->uc, n->uc_bytes);
	if (n->bar0)
		munmap((void *)n->bar0, n->bar0_bytes);
	n->data = NULL;
	n->uc = NULL;
	n->bar0 = NULL;
}

/* Steps shared by open and query: find the device, map its registers. */
static int attach(struct pmr_nvme *n, const char *spec, bool writable, bool *enable,
		  char *err, size_t errlen)
{
	void *p = NULL;
	int rc;

	rc = parse_spec(spec, n->bdf, sizeof(n->bdf), enable, err, errlen);
	if (rc)
		return rc;
	/* Enabling is a register write, even for a read-only open (",enable"
	 * in the target counts as much as pmr_params.enable). */
	writable = writable || *enable;
	snprintf(n->name, sizeof(n->name), "pmr:%s", n->bdf);
	rc = check_device(n->bdf, err, errlen);
	if (rc)
		return rc;
	rc = map_bar(n->bdf, "resource0", writable, PMR_BAR0_MIN, &p, &n->bar0_bytes, err,
		     errlen);
	if (rc)
		return rc;
	if (n->bar0_bytes < PMR_BAR0_MIN) {
		munmap(p, n->bar0_bytes);
		return pmr_errf(
		    err, errlen, -ENODEV,
		    "pmr:%s: BAR0 is only %zu bytes: not an NVMe register block", n->bdf,
		    n->bar0_bytes);
	}
	n->bar0 = p;
	n->c.ops = &mmio_ops;
	n->c.name = n->name;
	pmr_ctrl_read_caps(&n->c);
	if (n->c.caps.pmrs)
		n->c.caps.bar_bytes = bar_size(n->bdf, n->c.caps.bir);
	return 0;
}

int pmr_nvme_query(const char *spec, struct pmr_caps *caps, char *err, size_t errlen)
{
	struct pmr_nvme n;
	bool enable = false;
	int rc;

	memset(&n, 0, sizeof(n));
	rc = attach(&n, spec, false, &enable, err, errlen);
	if (rc)
		return rc;
	*caps = n.c.caps;
	unmap_all(&n);
	return 0;
}

static void nvme_copy_nodrain(struct pmr_region *r, uint64_t off, const void *src,
			      size_t len)
{
	/* Write-combining stores; the barrier's SFENCE pushes them out. */
	memcpy(r->base + off, src, len);
}

static int nvme_barrier(struct pmr_region *r)
{
	return pmr_ctrl_barrier(&((struct pmr_nvme *)r)->c);
}

static void nvme_close(struct pmr_region *r)
{
	struct pmr_nvme *n = (struct pmr_nvme *)r;

	/* Posted writes still reach the device after munmap; the PMR stays
	 * enabled so the next open finds it as we left it. */
	unmap_all(n);
	free(n);
}

static const struct pmr_region_ops nvme_ops = {
    .copy_nodrain = nvme_copy_nodrain,
    .barrier = nvme_barrier,
    .close = nvme_close,
};

static int map_data(struct pmr_nvme *n, bool readonly, char *err, size_t errlen)
{
	char wc[32], uc[32];
	void *p = NULL;
	int rc;

	snprintf(wc, sizeof(wc), "resource%u_wc", n->c.caps.bir);
	snprintf(uc, sizeof(uc), "resource%u", n->c.caps.bir);
	/* resourceN_wc exists only for a prefetchable BAR; uncached stores
	 * are slower but just as correct. */
	rc = map_bar(n->bdf, wc, !readonly, 0, &p, &n->data_bytes, err, errlen);
	n->data_wc = rc == 0;
	if (rc == -ENOENT)
		rc = map_bar(n->bdf, uc, !readonly, 0, &p, &n->data_bytes, err, errlen);
	if (rc)
		return rc;
	n->data = p;
	if (n->c.barrier == PMR_BARRIER_PMR_READ) {
		rc = map_bar(n->bdf, uc, false, 4096, &p, &n->uc_bytes, err, errlen);
		if (rc)
			return rc;
		n->uc = p;
	}
	return 0;
}

int pmr_nvme_open(const struct pmr_params *p, const char *spec, struct pmr_region **out,
		  char *err, size_t errlen)
{
	struct pmr_nvme *n;
	struct pmr_info *info;
	bool enable = p->enable;
	int rc;

	n = calloc(1, sizeof(*n));
	if (!n)
		return pmr_errf(err, errlen, -ENOMEM, "out of memory");
	/* BAR0 is writable unless read-only without enable: attach() decides
	 * once the target's own options are parsed. */
	rc = attach(n, spec, !p->readonly, &enable, err, errlen);
	if (rc)
		goto cleanup;
	rc = pmr_ctrl_start(&n->c, enable, p->readonly, err, errlen);
	if (rc)
		goto cleanup;
	rc = map_data(n, p->readonly, err, errlen);
	if (rc)
		goto cleanup;

	n->r.ops = &nvme_ops;
	n->r.base = n->data;
	n->r.size_bytes = n->data_bytes;
	n->r.readonly = p->readonly;
	info = &n->r.info;
	info->kind = PMR_KIND_NVME;
	info->size_bytes = n->r.size_bytes;
	snprintf(info->kind_name, sizeof(info->kind_name), "pmr");
	pmr_ctrl_fill_info(&n->c, info);
	if (!n->data_wc)
		snprintf(info->barrier + strlen(info->barrier),
			 sizeof(info->barrier) - strlen(info->barrier),
			 " (uncached map)");
	info->emulated = false;
	*out = &n->r;
	return 0;

cleanup:
	unmap_all(n);
	free(n);
	return rc;
}
