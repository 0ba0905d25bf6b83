/* SPDX-License-Identifier: GPL-2.0 */
/*
 * debugfs of nvme-pci: /sys/kernel/debug/nvme_pci/ with global knobs and a
 * directory per controller.
 */
#ifndef _NVME_PCI_DEBUGFS_H
#define _NVME_PCI_DEBUGFS_H

#include <linux/bitops.h>
#include <linux/debugfs.h>
#include <linux/moduleparam.h>

/**
 * struct nvme_pci_knob - an unsigned integer knob with a valid range
 * @name: its name: of the module parameter, or of the debugfs file
 *	(nvme_pci_debugfs_knob())
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
 * NVME_PCI_KNOB() - declare a range-checked module parameter of nvme-pci
 * @_name: the module parameter nvme.@_name
 * @_var: the unsigned int it sets
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
/**
 * enum nvme_pci_warn - the messages a controller logs once: bits of its
 *	warned bitmap (struct nvme_dev)
 * @NVME_PCI_WARN_LOST_IRQ: a completion interrupt went missing
 * @NVME_PCI_WARN_DEADLINE: a command's early deadline found it complete
 * @NVME_PCI_WARN_MODERATION: genirq refused nvme.irq_moderation_us
 * @NVME_PCI_WARN_COAL_GENIRQ: genirq refused a vector adaptive coalescing
 *	wanted to moderate
 * @NVME_PCI_WARN_EARLY_IRQ: a completion interrupt came before its
 *	completion was visible
 */
enum nvme_pci_warn {
	NVME_PCI_WARN_LOST_IRQ,
	NVME_PCI_WARN_DEADLINE,
	NVME_PCI_WARN_MODERATION,
	NVME_PCI_WARN_COAL_GENIRQ,
	NVME_PCI_WARN_EARLY_IRQ,
};

/**
 * nvme_pci_warn_once() - is this the controller's first such message?
 * @warned: the controller's warned bitmap
 * @w: the message
 *
 * Context: any.
 *
 * Return: true the first time for @warned and @w, false after.
 */
static inline bool nvme_pci_warn_once(unsigned long *warned,
				      enum nvme_pci_warn w)
{
	return !test_and_set_bit(w, warned);
}

void nvme_pci_debugfs_knob(struct dentry *parent,
			   const struct nvme_pci_knob *knob);
void nvme_pci_debugfs_init(void);
void nvme_pci_debugfs_exit(void);
struct dentry *nvme_pci_debugfs_ctrl(const char *name);
struct dentry *nvme_pci_debugfs_dir(void);

#endif /* _NVME_PCI_DEBUGFS_H */
