/* SPDX-License-Identifier: GPL-2.0 */
/*
 * debugfs of nvme-pci: /sys/kernel/debug/nvme_pci/ with global knobs and a
 * directory per controller.
 */
#ifndef _NVME_PCI_DEBUGFS_H
#define _NVME_PCI_DEBUGFS_H

#include <linux/debugfs.h>
#include <linux/moduleparam.h>

/**
 * struct nvme_pci_knob - an unsigned integer knob with a valid range
 * @name: its name: of the module parameter, or of the debugfs file
 * @val: the value; read locklessly by its users
 * @min: smallest value accepted
 * @max: largest value accepted
 * @changed: called with the new value once it is stored, or NULL;
 *	process context, or early boot for a boot parameter
 */
struct nvme_pci_knob {
	const char *name;
	unsigned int *val;
	unsigned int min;
	unsigned int max;
	void (*changed)(unsigned int val);
};

extern const struct kernel_param_ops nvme_pci_knob_param_ops;

/**
 * NVME_PCI_KNOB() - declare a range-checked knob of nvme-pci
 * @_name: the module parameter nvme.@_name, and the file
 *	/sys/kernel/debug/nvme_pci/@_name
 * @_var: the unsigned int both set
 * @_min: smallest value accepted
 * @_max: largest value accepted; outside the range -ERANGE, value kept
 * @_changed: called after a change, or NULL
 *
 * Give it a MODULE_PARM_DESC(), as module_param().
 */
#define NVME_PCI_KNOB(_name, _var, _min, _max, _changed)		\
	static const struct nvme_pci_knob nvme_pci_knob_##_name = {	\
		.name = #_name, .val = &(_var), .min = (_min),		\
		.max = (_max), .changed = (_changed),			\
	};								\
	module_param_cb(_name, &nvme_pci_knob_param_ops,		\
			(void *)&nvme_pci_knob_##_name, 0644)

int nvme_pci_knob_set(const struct nvme_pci_knob *knob, const char *buf);
void nvme_pci_debugfs_knob(struct dentry *parent, const struct nvme_pci_knob *knob);
void nvme_pci_debugfs_init(void);
void nvme_pci_debugfs_exit(void);
struct dentry *nvme_pci_debugfs_ctrl(const char *name);

#endif /* _NVME_PCI_DEBUGFS_H */
