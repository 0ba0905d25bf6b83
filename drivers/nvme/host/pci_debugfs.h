/* SPDX-License-Identifier: GPL-2.0 */
/*
 * debugfs of nvme-pci: /sys/kernel/debug/nvme_pci/ with global knobs and a
 * directory per controller.
 */
#ifndef _NVME_PCI_DEBUGFS_H
#define _NVME_PCI_DEBUGFS_H

#include <linux/debugfs.h>

/**
 * struct nvme_pci_knob - an unsigned integer knob with a valid range
 * @name: file name
 * @val: the value; read locklessly by its users
 * @min: smallest value accepted
 * @max: largest value accepted
 */
struct nvme_pci_knob {
	const char *name;
	unsigned int *val;
	unsigned int min;
	unsigned int max;
};

void nvme_pci_debugfs_knob(struct dentry *parent, const struct nvme_pci_knob *knob);
void nvme_pci_debugfs_init(void);
void nvme_pci_debugfs_exit(void);
struct dentry *nvme_pci_debugfs_ctrl(const char *name);

#endif /* _NVME_PCI_DEBUGFS_H */
