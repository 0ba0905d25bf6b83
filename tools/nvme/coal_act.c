// SPDX-License-Identifier: GPL-2.0
/*
 * What user space can set: the controller's interrupt coalescing (Set
 * Features 08h, and 09h Coalescing Disable per vector) through the admin
 * passthrough ioctl, or genirq's per-vector moderation through
 * /proc/irq/<N>/moderation_us where nvme-pci allows it.  Every value is
 * read before it is first changed, and written back at exit.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>
#include <linux/nvme_ioctl.h>

#include "nvme-coal.h"

#define NVME_ADMIN_SET_FEATURES	0x09
#define NVME_ADMIN_GET_FEATURES	0x0a
#define NVME_FEAT_IRQ_COALESCE	0x08
#define NVME_FEAT_IRQ_CONFIG	0x09
#define NVME_FEAT_SEL_SUPPORTED	3
#define NVME_FEAT_CHANGEABLE	BIT(2)
#define NVME_FEAT_CD		BIT(16)

/**
 * coal_admin_features() - Get or Set Features on the controller
 * @c: the controller
 * @set: Set Features, else Get Features
 * @fid: the feature
 * @sel: Get Features' select field (0: current)
 * @dw11: command dword 11
 * @result: completion dword 0, if not NULL
 *
 * Return: 0, the NVMe status of a refusal (> 0), or -errno.
 */
int coal_admin_features(struct coal_ctrl *c, bool set, unsigned int fid,
			unsigned int sel, u32 dw11, u32 *result)
{
	struct nvme_passthru_cmd cmd = {
		.opcode = set ? NVME_ADMIN_SET_FEATURES : NVME_ADMIN_GET_FEATURES,
		.cdw10 = fid | (set ? 0 : sel << 8),
		.cdw11 = dw11,
	};
	int ret = ioctl(c->fd, NVME_IOCTL_ADMIN_CMD, &cmd);

	if (ret < 0)
		return -errno;
	if (set)
		c->admin_cmds++;
	if (result)
		*result = cmd.result;
	return ret;
}

static int irq_path(char *p, size_t len, int irq)
{
	return snprintf(p, len, "/proc/irq/%d/moderation_us", irq);
}

/* Read a vector's genirq delay: its value, or -errno. */
static int irq_get_us(int irq)
{
	char path[64], buf[32];
	ssize_t n;
	int fd;

	irq_path(path, sizeof(path), irq);
	fd = open(path, O_RDONLY);
	if (fd < 0)
		return -errno;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return n < 0 ? -errno : -EINVAL;
	buf[n] = '\0';
	return atoi(buf);
}

/* Set a vector's genirq delay: 0 or -errno. */
static int irq_set_us(int irq, unsigned int us)
{
	char path[64], buf[32];
	int fd, n, ret = 0;

	irq_path(path, sizeof(path), irq);
	fd = open(path, O_WRONLY);
	if (fd < 0)
		return -errno;
	n = snprintf(buf, sizeof(buf), "%u\n", us);
	if (write(fd, buf, n) != n)
		ret = -errno;
	close(fd);
	return ret;
}

/*
 * The controller can carry the policy: Feature 08h changeable, and 09h
 * readable on every I/O vector (the exemptions).  Saves what it finds.
 */
static bool device_possible(struct coal_ctrl *c, char *why, size_t len)
{
	unsigned int i;
	u32 cap = 0;
	int ret;

	ret = coal_admin_features(c, false, NVME_FEAT_IRQ_COALESCE,
				  NVME_FEAT_SEL_SUPPORTED, 0, &cap);
	if (ret || !(cap & NVME_FEAT_CHANGEABLE)) {
		snprintf(why, len,
			 "Feature 08h is not changeable (Get Features 08h: %s%d, capabilities %#x)",
			 ret < 0 ? "errno " : "status ", ret < 0 ? -ret : ret, cap);
		return false;
	}
	ret = coal_admin_features(c, false, NVME_FEAT_IRQ_COALESCE, 0, 0, &c->saved_08h);
	if (ret) {
		snprintf(why, len, "Get Features 08h failed (%d)", ret);
		return false;
	}
	/* nvme-pci releases its own within a period of being switched off */
	if (c->saved_08h) {
		snprintf(why, len,
			 "Feature 08h is %#x: something else coalesces this controller",
			 c->saved_08h);
		return false;
	}
	c->cur_08h = c->saved_08h;
	for (i = 0; i < c->nr_q; i++) {
		struct coal_queue *q = &c->q[i];

		if (!q->vector) {
			snprintf(why, len,
				 "queue %u signals vector 0 with the admin queue, which is never coalesced",
				 q->qid);
			return false;
		}
		ret = coal_admin_features(c, false, NVME_FEAT_IRQ_CONFIG, 0, q->vector,
					  &q->saved_09h);
		if (ret) {
			snprintf(why, len, "Get Features 09h of vector %u failed (%d)",
				 q->vector, ret);
			return false;
		}
		q->have_09h = true;
		q->exempt = q->saved_09h & NVME_FEAT_CD;
	}
	return true;
}

/*
 * The vectors genirq can moderate for us: nvme-pci allows it, and nobody
 * (nvme.irq_moderation_us, root) has set a delay already.
 */
static unsigned int genirq_possible(struct coal_ctrl *c, char *why, size_t len)
{
	unsigned int i, n = 0;
	int us, ret = 0;

	for (i = 0; i < c->nr_q; i++) {
		struct coal_queue *q = &c->q[i];

		us = irq_get_us(q->irq);
		if (us < 0) {
			ret = us;
			continue;
		}
		if (us > 0)
			continue;	/* somebody else's */
		/* writable: the driver allows it (EPERM otherwise) */
		ret = irq_set_us(q->irq, 0);
		if (ret)
			continue;
		q->saved_us = 0;
		q->set_us = 0;
		n++;
	}
	if (!n)
		snprintf(why, len, "genirq moderates none of its vectors from user space (%s)",
			 ret ? strerror(-ret) : "each has a delay set already");
	return n;
}

/**
 * coal_act_prepare() - choose the actuator, save what it will change
 * @c: the controller
 * @want: COAL_ACT_AUTO, COAL_ACT_DEVICE or COAL_ACT_GENIRQ
 * @why: the reason, if the controller cannot be driven
 * @len: its size
 *
 * Return: 0, or -1 with @why set.
 */
int coal_act_prepare(struct coal_ctrl *c, enum coal_actuator want,
		     char *why, size_t len)
{
	char dev_why[160] = "", irq_why[160] = "";

	if (want != COAL_ACT_GENIRQ && device_possible(c, dev_why, sizeof(dev_why))) {
		c->act = COAL_ACT_DEVICE;
		return 0;
	}
	if (want != COAL_ACT_DEVICE && genirq_possible(c, irq_why, sizeof(irq_why))) {
		c->act = COAL_ACT_GENIRQ;
		return 0;
	}
	snprintf(why, len, "%s%s%s", dev_why, *dev_why && *irq_why ? "; " : "", irq_why);
	return -1;
}

/*
 * Set each vector's delay if it is still ours: a value somebody else wrote
 * meanwhile (root, nvme.irq_moderation_us) is theirs from then on, and not
 * written back at exit.
 */
static void apply_genirq(struct coal_ctrl *c)
{
	unsigned int i;
	int ret, cur;

	for (i = 0; i < c->nr_q; i++) {
		struct coal_queue *q = &c->q[i];
		unsigned int want = nvme_coal_engaged(&q->pol) ? q->pol.delay_us : 0;

		if (q->saved_us < 0 || q->refused || want == q->set_us)
			continue;
		cur = irq_get_us(q->irq);
		if (cur != (int)q->set_us) {
			fprintf(stderr,
				"nvme-coal: %s: irq %d: moderation_us is %d, not %u: not ours now\n",
				c->name, q->irq, cur, q->set_us);
			q->saved_us = -1;
			continue;
		}
		ret = irq_set_us(q->irq, want);
		c->irq_writes++;
		if (ret) {
			fprintf(stderr, "nvme-coal: %s: irq %d: moderation_us %u: %s\n",
				c->name, q->irq, want, strerror(-ret));
			q->refused = true;
			continue;
		}
		q->set_us = want;
	}
}

static void restore_device(struct coal_ctrl *c);

/*
 * The controller refused a value: as nvme-pci does, give the controller its
 * values back and moderate with genirq from then on, if it can.
 */
static void device_refused(struct coal_ctrl *c)
{
	char why[160];

	restore_device(c);
	c->act = COAL_ACT_GENIRQ;
	if (genirq_possible(c, why, sizeof(why))) {
		fprintf(stderr, "nvme-coal: %s: using genirq moderation\n", c->name);
		return;
	}
	fprintf(stderr, "nvme-coal: %s: %s: moderating nothing\n", c->name, why);
}

/*
 * The controller coalesces every vector that is not exempt: a moderated
 * queue's vector is not, every other is, before 08h goes on.  One 08h value
 * for the controller: the longest delay and the largest batch of the
 * moderated queues.  Exemptions stay when 08h goes back to 0.
 */
static void apply_device(struct coal_ctrl *c)
{
	u32 delay = 0, batch = 0, want;
	unsigned int i;
	int ret;

	for (i = 0; i < c->nr_q; i++) {
		if (nvme_coal_engaged(&c->q[i].pol)) {
			delay = c->q[i].pol.delay_us > delay ? c->q[i].pol.delay_us : delay;
			batch = c->q[i].pol.batch > batch ? c->q[i].pol.batch : batch;
		}
	}
	want = delay ? nvme_coal_feat_coalesce(delay, batch) : 0;
	/* a reset clears Coalescing Disable: read it again before 08h goes on */
	for (i = 0; want && !c->cur_08h && i < c->nr_q; i++) {
		u32 dw0 = 0;

		if (!coal_admin_features(c, false, NVME_FEAT_IRQ_CONFIG, 0, c->q[i].vector, &dw0))
			c->q[i].exempt = dw0 & NVME_FEAT_CD;
	}
	for (i = 0; want && i < c->nr_q; i++) {
		struct coal_queue *q = &c->q[i];
		bool exempt = !nvme_coal_engaged(&q->pol);

		if (q->exempt == exempt)
			continue;
		ret = coal_admin_features(c, true, NVME_FEAT_IRQ_CONFIG, 0,
					  nvme_coal_feat_vector(q->vector, exempt), NULL);
		if (ret) {
			fprintf(stderr, "nvme-coal: %s: Set Features 09h vector %u: %d\n",
				c->name, q->vector, ret);
			device_refused(c);
			return;
		}
		q->exempt = exempt;
	}
	if (want == c->cur_08h || (want && c->cur_08h && nvme_coal_feat_close(c->cur_08h, want)))
		return;
	ret = coal_admin_features(c, true, NVME_FEAT_IRQ_COALESCE, 0, want, NULL);
	c->touched_08h = true;
	if (ret) {
		fprintf(stderr, "nvme-coal: %s: Set Features 08h %#x: %d\n", c->name, want, ret);
		device_refused(c);
		return;
	}
	c->cur_08h = want;
}

/**
 * coal_act_apply() - set what the policy decided for each queue
 * @c: the controller
 */
void coal_act_apply(struct coal_ctrl *c)
{
	if (c->act == COAL_ACT_DEVICE)
		apply_device(c);
	else
		apply_genirq(c);
}

/**
 * coal_act_restore() - write back every value changed
 * @c: the controller
 */
/* 08h first: with it back at its value, no exemption matters any more */
static void restore_device(struct coal_ctrl *c)
{
	unsigned int i;
	int ret;

	if (c->touched_08h) {
		ret = coal_admin_features(c, true, NVME_FEAT_IRQ_COALESCE, 0,
					  c->saved_08h, NULL);
		if (ret) {
			/* a vector given its coalescing back would wait */
			fprintf(stderr, "nvme-coal: %s: restoring Feature 08h %#x: %d\n",
				c->name, c->saved_08h, ret);
			return;
		}
		c->cur_08h = c->saved_08h;
		c->touched_08h = false;
	}
	for (i = 0; i < c->nr_q; i++) {
		struct coal_queue *q = &c->q[i];
		bool cd = q->saved_09h & NVME_FEAT_CD;

		if (!q->have_09h || q->exempt == cd)
			continue;
		ret = coal_admin_features(c, true, NVME_FEAT_IRQ_CONFIG, 0,
					  nvme_coal_feat_vector(q->vector, cd), NULL);
		if (ret)
			fprintf(stderr, "nvme-coal: %s: restoring Feature 09h %#x: %d\n",
				c->name, q->saved_09h, ret);
		else
			q->exempt = cd;
	}
}

void coal_act_restore(struct coal_ctrl *c)
{
	unsigned int i;
	int ret;

	restore_device(c);
	for (i = 0; i < c->nr_q; i++) {
		struct coal_queue *q = &c->q[i];

		/* only a value that is still ours */
		if (q->saved_us >= 0 && q->set_us != (unsigned int)q->saved_us &&
		    irq_get_us(q->irq) == (int)q->set_us) {
			ret = irq_set_us(q->irq, q->saved_us);
			if (ret)
				fprintf(stderr,
					"nvme-coal: %s: restoring irq %d moderation_us %d: %s\n",
					c->name, q->irq, q->saved_us, strerror(-ret));
		}
	}
}
