// SPDX-License-Identifier: GPL-2.0
/*
 * Fault injection for the nvme-pci lost interrupt poller: make an I/O
 * queue's interrupt handler return as if the MSI had never arrived.
 *
 * Configured with the standard fault attributes in
 * /sys/kernel/debug/nvme_pci/fail_lost_irq/ or with
 * nvme.fail_lost_irq=<interval>,<probability>,<space>,<times>, and limited to
 * one I/O queue with /sys/kernel/debug/nvme_pci/fail_lost_irq_qid (0: all).
 */
#include <linux/debugfs.h>
#include <linux/fault-inject.h>
#include <linux/kstrtox.h>
#include <linux/moduleparam.h>
#include <linux/slab.h>
#include <linux/string.h>

#include "pci_lost_irq.h"
#include "pci_debugfs.h"

#ifdef CONFIG_FAULT_INJECTION

DECLARE_FAULT_ATTR(nvme_fail_lost_irq);
static unsigned int fail_lost_irq_qid;

/* Store a validated setting; this also seeds the random state. */
static int fail_lost_irq_store(unsigned long interval,
			       unsigned long probability, int space, int times)
{
	char buf[64];

	snprintf(buf, sizeof(buf), "%lu,%lu,%d,%d", interval, probability,
		 space, times);
	return setup_fault_attr(&nvme_fail_lost_irq, buf) ? 0 : -EINVAL;
}

/*
 * <interval>,<probability>,<space>,<times>: four integers and nothing else,
 * the interval at least 1, the probability a percentage, the space not
 * negative, the times -1 (no limit) or more.  setup_fault_attr() alone
 * accepts trailing text and any value.  Context: early boot (built in,
 * before slab) or process.
 */
static int fail_lost_irq_set(const char *val, const struct kernel_param *kp)
{
	char buf[64], *s, *tok[4];
	unsigned long interval, probability;
	int i, space, times;

	if (strscpy(buf, val, sizeof(buf)) < 0)
		return -EINVAL;
	s = strim(buf);
	for (i = 0; i < 4; i++) {
		tok[i] = strsep(&s, ",");
		if (!tok[i])
			return -EINVAL;
	}
	if (s)
		return -EINVAL;		/* a fifth field */
	if (kstrtoul(tok[0], 0, &interval) || kstrtoul(tok[1], 0, &probability) ||
	    kstrtoint(tok[2], 0, &space) || kstrtoint(tok[3], 0, &times))
		return -EINVAL;
	if (probability > 100 || !interval || space < 0 || times < -1)
		return -ERANGE;
	if (IS_BUILTIN(CONFIG_BLK_DEV_NVME) && !slab_is_available()) {
		/*
		 * Built in and on the command line, before the allocator:
		 * setup_fault_attr() seeds its random state with DO_ONCE,
		 * which allocates.  Store the fields; module init stores
		 * them again, which seeds it (unseeded, every ask fails).
		 */
		nvme_fail_lost_irq.interval = interval;
		nvme_fail_lost_irq.probability = probability;
		atomic_set(&nvme_fail_lost_irq.space, space);
		atomic_set(&nvme_fail_lost_irq.times, times);
		return 0;
	}
	return fail_lost_irq_store(interval, probability, space, times);
}

static const struct kernel_param_ops fail_lost_irq_ops = {
	.set = fail_lost_irq_set,
};
module_param_cb(fail_lost_irq, &fail_lost_irq_ops, NULL, 0200);
MODULE_PARM_DESC(fail_lost_irq,
		 "drop I/O queue interrupts as if lost (MSI/MSI-X only): <interval>,<probability 0-100>,<space>,<times>");

/**
 * nvme_lost_irq_inject() - should this interrupt be dropped?
 * @li: the queue's poller state
 *
 * A level-triggered line (INTx) is never dropped: its handler returning
 * with completions posted would leave the line asserted and the CPU
 * stormed, which is not what a lost message looks like.
 *
 * Context: hardirq, only when a probability is set.
 *
 * Return: true to drop it.
 */
bool nvme_lost_irq_inject(struct nvme_lost_irq *li)
{
	u32 qid = READ_ONCE(fail_lost_irq_qid);
	u16 own = nvme_pci_qid(li->nvmeq);

	if (!own || (qid && qid != own))
		return false;
	if (li->level)
		return false;
	return should_fail(&nvme_fail_lost_irq, 1);
}

/*
 * Store the setting again, which changes nothing else and seeds the random
 * state for one made before the allocator: needed only by built-in nvme
 * set on the command line without CONFIG_FAULT_INJECTION_DEBUG_FS, where
 * nothing below seeds it.  Under the parameters' lock: a module's
 * parameter file is there already.  Then create the attributes.
 * Quiet by default: at a useful loss rate a stack dump per dropped
 * interrupt floods the console; set verbose in debugfs to see them.
 * Context: module init, before any user can write the attributes.
 */
void nvme_lost_irq_inject_init(void)
{
	static const struct nvme_pci_knob qid = {
		.name = "fail_lost_irq_qid", .val = &fail_lost_irq_qid,
		.min = 0, .max = U16_MAX,
	};

	kernel_param_lock(THIS_MODULE);
	fail_lost_irq_store(nvme_fail_lost_irq.interval,
			    nvme_fail_lost_irq.probability,
			    atomic_read(&nvme_fail_lost_irq.space),
			    atomic_read(&nvme_fail_lost_irq.times));
	kernel_param_unlock(THIS_MODULE);
	nvme_fail_lost_irq.verbose = 0;
	fault_create_debugfs_attr("fail_lost_irq", nvme_pci_debugfs_dir(),
				  &nvme_fail_lost_irq);
	nvme_pci_debugfs_knob(NULL, &qid);
}

#else

void nvme_lost_irq_inject_init(void)
{
}

#endif /* CONFIG_FAULT_INJECTION */
