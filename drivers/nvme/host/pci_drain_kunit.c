// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit tests of the bounded drain's hand-back: a queue that irq_poll owns
 * has its vector disabled, and the poll that ends gives the vector back.
 * When the vector's only CPU went offline meanwhile, genirq shut the
 * managed vector down and irq_poll_cpu_dead() moved the poll to another
 * CPU; the vector must run again once the CPU comes back, whatever genirq
 * does with the disable depth across the shutdown.  A managed interrupt of
 * a fake chip stands for the queue's vector; CPU 1 goes offline and back.
 * Each poll run is bounded by the handler's budget and reports to irq_poll
 * only the work it did.
 */
#include <kunit/test.h>
#include <linux/completion.h>
#include <linux/cpu.h>
#include <linux/cpumask.h>
#include <linux/interrupt.h>
#include <linux/irq.h>
#include <linux/irq_poll.h>
#include <linux/module.h>

#include "pci_drain.h"

static void drain_test_noop(struct irq_data *d) { }

static unsigned int drain_test_startup(struct irq_data *d)
{
	return 0;
}

static int drain_test_set_affinity(struct irq_data *d,
				   const struct cpumask *dest, bool force)
{
	irq_data_update_effective_affinity(d, dest);
	return IRQ_SET_MASK_OK;
}

static struct irq_chip drain_test_chip = {
	.name			= "nvme-drain-test",
	.irq_startup		= drain_test_startup,
	.irq_shutdown		= drain_test_noop,
	.irq_enable		= drain_test_noop,
	.irq_disable		= drain_test_noop,
	.irq_mask		= drain_test_noop,
	.irq_unmask		= drain_test_noop,
	.irq_set_affinity	= drain_test_set_affinity,
	.flags			= IRQCHIP_SKIP_SET_WAKE,
};

static irqreturn_t drain_test_handler(int irq, void *data)
{
	return IRQ_HANDLED;
}

static void drain_test_free_desc(void *irq)
{
	irq_free_descs((unsigned long)irq, 1);
}

static void drain_test_free_irq(void *irq)
{
	free_irq((unsigned long)irq, NULL);
}

static void drain_test_cpu_up(void *cpu)
{
	add_cpu((unsigned long)cpu);
}

/*
 * A requested managed interrupt whose affinity is CPU 1 alone, freed when
 * the test ends, whether it passes or not.
 */
static int drain_test_vector(struct kunit *test)
{
	struct irq_affinity_desc affd = { .is_managed = 1 };
	int irq;

	cpumask_copy(&affd.mask, cpumask_of(1));
	irq = __irq_alloc_descs(-1, 1, 1, NUMA_NO_NODE, THIS_MODULE, &affd);
	KUNIT_ASSERT_GT(test, irq, 0);
	KUNIT_ASSERT_EQ(test, kunit_add_action_or_reset(test, drain_test_free_desc,
							(void *)(unsigned long)irq), 0);
	irq_set_chip_and_handler(irq, &drain_test_chip, handle_simple_irq);
	irq_clear_status_flags(irq, IRQ_NOREQUEST);
	KUNIT_ASSERT_EQ(test, request_irq(irq, drain_test_handler, 0,
					  "nvme-drain-test", NULL), 0);
	KUNIT_ASSERT_EQ(test, kunit_add_action_or_reset(test, drain_test_free_irq,
							(void *)(unsigned long)irq), 0);
	KUNIT_ASSERT_TRUE(test, irqd_affinity_is_managed(irq_get_irq_data(irq)));
	return irq;
}

/* No hotplug: the hand-back enables the vector the handler disabled. */
static void drain_gives_vector_back(struct kunit *test)
{
	struct nvme_drain d = { };
	struct irq_data *data;
	int irq;

	if (!cpu_online(1))
		kunit_skip(test, "CPU 1 is not online");
	irq = drain_test_vector(test);
	data = irq_get_irq_data(irq);
	disable_irq_nosync(irq);
	nvme_drain_enable(&d, irq);
	KUNIT_EXPECT_FALSE(test, irqd_irq_disabled(data));
	KUNIT_EXPECT_TRUE(test, irqd_is_started(data));
	KUNIT_EXPECT_EQ(test, d.shutdown_skips, 0);
}

/*
 * The poll ends while the vector's CPU is offline: genirq has shut the
 * vector down.  Once the CPU is back, the vector must be started and
 * enabled: a hand-back that leaves a disable behind (or forces a start on
 * no online CPU, which WARNs) leaves the queue without interrupts.
 */
static void drain_hotplug_vector_runs_again(struct kunit *test)
{
	struct nvme_drain d = { };
	struct irq_data *data;
	int irq;

	if (!IS_ENABLED(CONFIG_HOTPLUG_CPU) || !get_cpu_device(1) ||
	    !cpu_is_hotpluggable(1) || !cpu_online(1))
		kunit_skip(test, "CPU 1 cannot go offline here");
	irq = drain_test_vector(test);
	data = irq_get_irq_data(irq);
	disable_irq_nosync(irq);	/* the handler hands the queue over */
	KUNIT_ASSERT_EQ(test, remove_cpu(1), 0);
	KUNIT_ASSERT_EQ(test, kunit_add_action_or_reset(test, drain_test_cpu_up,
							(void *)1UL), 0);
	KUNIT_EXPECT_TRUE(test, irqd_is_managed_and_shutdown(data));
	nvme_drain_enable(&d, irq);	/* the poll, moved to CPU 0, ends */
	KUNIT_EXPECT_EQ(test, d.shutdown_skips, 1);
	/* CPU 1 comes back (a second add_cpu() at the end finds it online) */
	KUNIT_EXPECT_EQ(test, add_cpu(1), 0);
	KUNIT_EXPECT_TRUE(test, irqd_is_started(data));
	KUNIT_EXPECT_FALSE(test, irqd_irq_disabled(data));
}

/* The irq_poll callback of the weight test: what it was asked, what it did */
static int drain_test_weights[2];
static int drain_test_returns[2];
static int drain_test_runs;
/* the poll gave the vector back */
static DECLARE_COMPLETION(drain_test_done);

/*
 * Reaps its whole weight on the first run (the queue is still busy), half
 * of it on the second (the queue ran empty).
 */
static int drain_test_poll(struct irq_poll *iop, int weight)
{
	struct nvme_drain *d = container_of(iop, struct nvme_drain, iop);
	int run = drain_test_runs++;
	int ret;

	if (run >= ARRAY_SIZE(drain_test_weights)) {
		ret = nvme_drain_polled(d, 0, weight);
	} else {
		drain_test_weights[run] = weight;
		ret = nvme_drain_polled(d, run ? weight / 2 : weight, weight);
		drain_test_returns[run] = ret;
	}
	if (ret < weight)
		complete(&drain_test_done);
	return ret;
}

static void drain_test_stop(void *d)
{
	nvme_drain_stop(d);
}

static void drain_test_budget_restore(void *budget)
{
	WRITE_ONCE(nvme_irq_budget, (unsigned long)budget);
}

/*
 * The handler reaped its budget of 32 and hands over; meanwhile the budget
 * knob was written to 0 (no bound).  Every poll run is bounded by what the
 * handler was allowed, not by the knob read again (INT_MAX), and a run
 * reports to irq_poll only the work it did: a short run gives the vector
 * back.
 */
static void drain_weight_is_the_handlers_budget(struct kunit *test)
{
	void *budget = (void *)(unsigned long)READ_ONCE(nvme_irq_budget);
	struct nvme_drain *d;
	int irq;

	if (!cpu_online(1))
		kunit_skip(test, "CPU 1 is not online");
	irq = drain_test_vector(test);
	/* not on the stack: the stop action runs once this function is gone */
	d = kunit_kzalloc(test, sizeof(*d), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, d);
	drain_test_runs = 0;
	reinit_completion(&drain_test_done);
	nvme_drain_start(d, irq, 1, drain_test_poll);
	KUNIT_ASSERT_EQ(test, kunit_add_action_or_reset(test, drain_test_stop, d), 0);
	KUNIT_ASSERT_EQ(test, kunit_add_action_or_reset(test, drain_test_budget_restore,
							budget), 0);
	WRITE_ONCE(nvme_irq_budget, 0);

	/* as in the handler; the poll runs when bottom halves are enabled */
	local_bh_disable();
	local_irq_disable();
	nvme_drain_defer(d, 32);
	local_irq_enable();
	local_bh_enable();
	/*
	 * A run may be left to ksoftirqd (irq_poll's softirq ran out of
	 * time), on another CPU than this one.  Stopping first would end the
	 * poll after its full run: irq_poll completes a disabled instance
	 * that did its whole weight without running it again.
	 */
	KUNIT_ASSERT_NE(test, wait_for_completion_timeout(&drain_test_done, 2 * HZ), 0);
	nvme_drain_stop(d);

	KUNIT_EXPECT_EQ(test, drain_test_runs, 2);
	KUNIT_EXPECT_EQ(test, drain_test_weights[0], 32);
	KUNIT_EXPECT_EQ(test, drain_test_returns[0], 32);
	KUNIT_EXPECT_EQ(test, drain_test_weights[1], 32);
	KUNIT_EXPECT_EQ(test, drain_test_returns[1], 16);
	KUNIT_EXPECT_EQ(test, d->poll_completions, 48);
	KUNIT_EXPECT_EQ(test, d->fallbacks, 1);
	KUNIT_EXPECT_FALSE(test, d->deferred);
	KUNIT_EXPECT_FALSE(test, irqd_irq_disabled(irq_get_irq_data(irq)));
}

static struct kunit_case nvme_drain_cases[] = {
	KUNIT_CASE(drain_gives_vector_back),
	KUNIT_CASE(drain_hotplug_vector_runs_again),
	KUNIT_CASE(drain_weight_is_the_handlers_budget),
	{}
};

static struct kunit_suite nvme_drain_suite = {
	.name = "nvme_pci_drain",
	.test_cases = nvme_drain_cases,
};

kunit_test_suite(nvme_drain_suite);

MODULE_DESCRIPTION("KUnit tests for the nvme-pci bounded drain's hand-back");
MODULE_LICENSE("GPL");
MODULE_IMPORT_NS("EXPORTED_FOR_KUNIT_TESTING");
