// SPDX-License-Identifier: GPL-2.0
/*
 * debugfs of nvme-pci: /sys/kernel/debug/nvme_pci/ holds the global knobs
 * and fault injection attributes, and a directory per controller (nvme<N>)
 * for its counters.  Every knob rejects malformed input with -EINVAL and
 * values outside its range with -ERANGE, keeping its value.
 */
#include <linux/fs.h>
#include <linux/kernel.h>
#include <linux/uaccess.h>

#include "lost_irq.h"
#include "pci_debugfs.h"

static struct dentry *nvme_pci_debugfs_root;

static ssize_t knob_read(struct file *file, char __user *buf, size_t count,
			 loff_t *ppos)
{
	const struct nvme_pci_knob *knob = file->private_data;
	char tmp[16];
	int len;

	len = scnprintf(tmp, sizeof(tmp), "%u\n", READ_ONCE(*knob->val));
	return simple_read_from_buffer(buf, count, ppos, tmp, len);
}

static ssize_t knob_write(struct file *file, const char __user *buf,
			  size_t count, loff_t *ppos)
{
	const struct nvme_pci_knob *knob = file->private_data;
	unsigned int val;
	int ret;

	ret = kstrtouint_from_user(buf, count, 0, &val);
	if (ret)
		return ret;
	if (val < knob->min || val > knob->max)
		return -ERANGE;
	WRITE_ONCE(*knob->val, val);
	return count;
}

static const struct file_operations knob_fops = {
	.owner = THIS_MODULE,
	.open = simple_open,
	.read = knob_read,
	.write = knob_write,
	.llseek = default_llseek,
};

/**
 * nvme_pci_debugfs_knob() - create a range-checked knob file
 * @parent: directory; NULL for /sys/kernel/debug/nvme_pci/ itself
 * @knob: the knob; must outlive the file
 *
 * Context: process.
 */
void nvme_pci_debugfs_knob(struct dentry *parent, const struct nvme_pci_knob *knob)
{
	debugfs_create_file(knob->name, 0600, parent ?: nvme_pci_debugfs_root,
			    (void *)knob, &knob_fops);
}

/**
 * nvme_pci_debugfs_ctrl() - create a controller's directory
 * @name: the controller's name, nvme<N>
 *
 * Context: process.
 *
 * Return: the directory, or an error pointer that debugfs calls accept.
 */
struct dentry *nvme_pci_debugfs_ctrl(const char *name)
{
	return debugfs_create_dir(name, nvme_pci_debugfs_root);
}

/* Context: module init. */
void nvme_pci_debugfs_init(void)
{
	nvme_pci_debugfs_root = debugfs_create_dir("nvme_pci", NULL);
	nvme_lost_irq_inject_debugfs(nvme_pci_debugfs_root);
}

/* Context: module exit, after every controller is gone. */
void nvme_pci_debugfs_exit(void)
{
	debugfs_remove_recursive(nvme_pci_debugfs_root);
}
