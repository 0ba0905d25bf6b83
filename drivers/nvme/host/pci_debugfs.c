// SPDX-License-Identifier: GPL-2.0
/*
 * Knobs and debugfs of nvme-pci: every range-checked knob, a module
 * parameter (what an operator sets at boot) or a tuning file in
 * /sys/kernel/debug/nvme_pci/ (no ABI), is parsed and stored here; the
 * directory also holds the fault injection attributes, and one directory
 * per controller (nvme<N>) its counters.  Every knob rejects
 * malformed input with -EINVAL and values outside its range with -ERANGE,
 * keeping its value.
 */
#include <linux/fs.h>
#include <linux/kernel.h>
#include <linux/mutex.h>
#include <linux/sysfs.h>
#include <linux/uaccess.h>

#include "pci_debugfs.h"

static struct dentry *nvme_pci_debugfs_root;

/* Orders the store and the change hook of concurrent writers. */
static DEFINE_MUTEX(nvme_pci_knob_lock);

/**
 * nvme_pci_knob_set() - parse, check and store a new value of a knob
 * @knob: the knob
 * @buf: the value as text; a trailing newline is accepted
 *
 * Context: process, or early boot for a boot parameter; may sleep.
 *
 * Return: 0; -EINVAL if @buf is not an unsigned integer, -ERANGE if it is
 * outside the knob's range: the value is then left as it was.
 */
int nvme_pci_knob_set(const struct nvme_pci_knob *knob, const char *buf)
{
	unsigned int val;
	int ret;

	ret = kstrtouint(buf, 0, &val);
	if (ret)
		return ret;
	if (val < knob->min || val > knob->max)
		return -ERANGE;
	mutex_lock(&nvme_pci_knob_lock);
	WRITE_ONCE(*knob->val, val);
	if (knob->changed)
		knob->changed(val);
	mutex_unlock(&nvme_pci_knob_lock);
	return 0;
}

static int knob_param_set(const char *val, const struct kernel_param *kp)
{
	return nvme_pci_knob_set(kp->arg, val);
}

static int knob_param_get(char *buf, const struct kernel_param *kp)
{
	const struct nvme_pci_knob *knob = kp->arg;

	return sysfs_emit(buf, "%u\n", READ_ONCE(*knob->val));
}

/* the module parameters NVME_PCI_KNOB() declares */
const struct kernel_param_ops nvme_pci_knob_param_ops = {
	.set = knob_param_set,
	.get = knob_param_get,
};

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
	char tmp[24];
	int ret;

	if (*ppos || count >= sizeof(tmp))
		return -EINVAL;
	if (copy_from_user(tmp, buf, count))
		return -EFAULT;
	tmp[count] = '\0';
	ret = nvme_pci_knob_set(knob, tmp);
	return ret ? ret : count;
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
void nvme_pci_debugfs_knob(struct dentry *parent,
			   const struct nvme_pci_knob *knob)
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
}

/**
 * nvme_pci_debugfs_dir() - the nvme_pci directory
 *
 * For a file that is neither a knob nor a controller's, such as the fault
 * injection attributes.
 *
 * Context: process, after nvme_pci_debugfs_init().
 *
 * Return: the directory, or an error pointer that debugfs calls accept.
 */
struct dentry *nvme_pci_debugfs_dir(void)
{
	return nvme_pci_debugfs_root;
}

/* Context: module exit, after every controller is gone. */
void nvme_pci_debugfs_exit(void)
{
	debugfs_remove_recursive(nvme_pci_debugfs_root);
}
