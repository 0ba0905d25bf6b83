// SPDX-License-Identifier: GPL-2.0
/*
 * What user space can read of a controller's queues, turned into the
 * samples nvme-pci's coalescing policy takes.
 *
 * The kernel counts, per queue, the completions its handler reaped and the
 * commands outstanding each time it ran.  User space sees less:
 *  - handler runs per vector: /proc/interrupts;
 *  - completions per namespace, not per queue: /sys/block/<ns>/stat;
 *  - commands outstanding per queue, at the instant it reads them: the
 *    block layer's debugfs, /sys/kernel/debug/block/<ns>/hctx<i>/busy (one
 *    line per request; hardware context i is I/O queue i + 1).
 * A queue's depth is the mean of the period's readings; its completions
 * are the controller's, shared in proportion to that depth (Little's law,
 * with the same latency on every queue), or to the handler runs when no
 * reading saw a command outstanding.
 */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "nvme-coal.h"

static int read_file(const char *path, char *buf, size_t len)
{
	ssize_t n;
	int fd = open(path, O_RDONLY);

	if (fd < 0)
		return -errno;
	n = read(fd, buf, len - 1);
	close(fd);
	if (n < 0)
		return -errno;
	buf[n] = '\0';
	return n;
}

/* Lines of a file, -errno if it cannot be read. */
static int count_lines(const char *path)
{
	char buf[4096];
	int fd = open(path, O_RDONLY), lines = 0;
	ssize_t n, i;

	if (fd < 0)
		return -errno;
	while ((n = read(fd, buf, sizeof(buf))) > 0)
		for (i = 0; i < n; i++)
			lines += buf[i] == '\n';
	close(fd);
	return n < 0 ? -errno : lines;
}

static void hctx_path(char *p, size_t len, const char *ns, unsigned int qid,
		      const char *file)
{
	snprintf(p, len, "/sys/kernel/debug/block/%s/hctx%u/%s", ns, qid - 1, file);
}

/*
 * The interrupt of I/O queue @qid of controller @name in a /proc/interrupts
 * line, or -1; *@shared if the admin queue's name is on the same line.
 */
static int irq_of_line(const char *line, const char *name, unsigned int *qid,
		       bool *shared)
{
	const char *p;
	size_t len = strlen(name);
	int irq;

	if (sscanf(line, " %d:", &irq) != 1)
		return -1;
	*shared = false;
	*qid = 0;
	for (p = strstr(line, name); p; p = strstr(p + 1, name)) {
		char *end;
		unsigned long v;

		if (p > line && !isspace((unsigned char)p[-1]) && p[-1] != ',')
			continue;
		if (p[len] != 'q' || !isdigit((unsigned char)p[len + 1]))
			continue;
		v = strtoul(p + len + 1, &end, 10);
		if (*end && !isspace((unsigned char)*end) && *end != ',')
			continue;
		if (!v)
			*shared = true;
		else if (!*qid)
			*qid = v;
	}
	return *qid ? irq : -1;
}

/**
 * coal_discover() - find a controller's namespaces and I/O queues
 * @c: filled in
 * @name: nvmeN
 * @why: the reason, if it cannot be driven
 * @len: its size
 *
 * Return: 0, or -1 with @why set.
 */
int coal_discover(struct coal_ctrl *c, const char *name, char *why, size_t len)
{
	char path[256], line[1024];
	struct dirent *de;
	unsigned int qid, i;
	bool shared;
	FILE *f;
	DIR *d;
	int irq;

	memset(c, 0, sizeof(*c));
	c->fd = -1;
	if (strncmp(name, "nvme", 4) || !name[4] ||
	    strspn(name + 4, "0123456789") != strlen(name + 4) ||
	    strlen(name) >= sizeof(c->name)) {
		snprintf(why, len, "not a controller name (nvmeN)");
		return -1;
	}
	snprintf(c->name, sizeof(c->name), "%s", name);
	snprintf(path, sizeof(path), "/sys/class/nvme/%s", name);
	d = opendir(path);
	if (!d) {
		snprintf(why, len, "%s: %s", path, strerror(errno));
		return -1;
	}
	while ((de = readdir(d)) && c->nr_ns < COAL_MAX_NS) {
		size_t n = strlen(name);

		/* nvmeNnM; nvmeNcKnM (native multipath) is not read */
		if (strncmp(de->d_name, name, n) || de->d_name[n] != 'n' ||
		    strspn(de->d_name + n + 1, "0123456789") != strlen(de->d_name + n + 1) ||
		    strlen(de->d_name) >= sizeof(c->ns[0]))
			continue;
		snprintf(c->ns[c->nr_ns++], sizeof(c->ns[0]), "%s", de->d_name);
	}
	closedir(d);
	if (!c->nr_ns) {
		snprintf(why, len, "no namespace nvmeNnM (multipath namespaces are not read)");
		return -1;
	}

	f = fopen("/proc/interrupts", "r");
	if (!f) {
		snprintf(why, len, "/proc/interrupts: %s", strerror(errno));
		return -1;
	}
	while (fgets(line, sizeof(line), f)) {
		struct coal_queue *q;

		irq = irq_of_line(line, name, &qid, &shared);
		if (irq < 0)
			continue;
		q = realloc(c->q, (c->nr_q + 1) * sizeof(*q));
		if (!q) {
			fclose(f);
			snprintf(why, len, "out of memory");
			return -1;
		}
		c->q = q;
		q = &c->q[c->nr_q++];
		memset(q, 0, sizeof(*q));
		q->qid = qid;
		q->irq = irq;
		/* nvme-pci: I/O queue N signals vector N, unless all share 0 */
		q->vector = shared ? 0 : qid;
		q->saved_us = -1;
	}
	fclose(f);
	if (!c->nr_q) {
		snprintf(why, len, "no I/O queue interrupt (%sqN) in /proc/interrupts", name);
		return -1;
	}
	/* the depth of each queue, for every namespace */
	for (i = 0; i < c->nr_q; i++) {
		char type[32];

		hctx_path(path, sizeof(path), c->ns[0], c->q[i].qid, "type");
		if (read_file(path, type, sizeof(type)) < 0 || strncmp(type, "default", 7)) {
			snprintf(why, len, "%s: not a default queue, or no debugfs (%s)",
				 path, strerror(errno));
			return -1;
		}
	}
	snprintf(path, sizeof(path), "/dev/%s", name);
	c->fd = open(path, O_RDONLY);
	if (c->fd < 0) {
		snprintf(why, len, "%s: %s", path, strerror(errno));
		return -1;
	}
	return 0;
}

/**
 * coal_read_depths() - read each queue's commands outstanding once
 * @c: the controller
 *
 * Return: 0, or -errno if a queue's file could not be read.
 */
int coal_read_depths(struct coal_ctrl *c)
{
	char path[256];
	unsigned int i, j;
	int n;

	for (i = 0; i < c->nr_q; i++) {
		struct coal_queue *q = &c->q[i];
		unsigned int depth = 0;

		for (j = 0; j < c->nr_ns; j++) {
			hctx_path(path, sizeof(path), c->ns[j], q->qid, "busy");
			n = count_lines(path);
			if (n < 0)
				return n;	/* the namespace is gone: stop */
			depth += n;
		}
		q->inflight = depth;
		q->inflight_sum += depth;
		q->inflight_n++;
	}
	return 0;
}

/*
 * Each interrupt's count, summed over the CPUs, into the queues.  -ENODEV
 * if a queue's interrupt is gone or serves another queue now (the
 * controller was reset or removed).
 */
static int read_runs(struct coal_ctrl *c)
{
	unsigned int seen = 0, qid;
	char *line = NULL;
	size_t cap = 0;
	int ncpu = 0;
	bool shared;
	FILE *f = fopen("/proc/interrupts", "r");

	if (!f)
		return -errno;
	while (getline(&line, &cap, f) > 0) {
		unsigned long long sum = 0;
		unsigned int i;
		char *p, *end;
		int irq, k;

		if (!ncpu) {
			/* the header: one column per CPU */
			for (p = strstr(line, "CPU"); p; p = strstr(p + 3, "CPU"))
				ncpu++;
			continue;
		}
		if (sscanf(line, " %d:", &irq) != 1)
			continue;
		for (i = 0; i < c->nr_q && c->q[i].irq != irq; i++)
			;
		if (i == c->nr_q)
			continue;
		if (irq_of_line(line, c->name, &qid, &shared) != irq || qid != c->q[i].qid)
			break;
		p = strchr(line, ':') + 1;
		for (k = 0; k < ncpu; k++, p = end)
			sum += strtoull(p, &end, 10);
		c->q[i].runs = sum;
		seen++;
	}
	free(line);
	fclose(f);
	return seen == c->nr_q ? 0 : -ENODEV;
}

/* Completions of every namespace: reads, writes, discards and flushes. */
static int read_completions(struct coal_ctrl *c, u64 *total)
{
	char path[256], buf[512], *p, *end;
	unsigned long long v[16];
	unsigned int i, n;

	*total = 0;
	for (i = 0; i < c->nr_ns; i++) {
		snprintf(path, sizeof(path), "/sys/block/%s/stat", c->ns[i]);
		if (read_file(path, buf, sizeof(buf)) < 0)
			return -errno;
		memset(v, 0, sizeof(v));
		/* 11 fields, 15 with discards (4.18), 17 with flushes (5.5) */
		for (n = 0, p = buf; n < 16; n++, p = end) {
			v[n] = strtoull(p, &end, 10);
			if (end == p)
				break;
		}
		if (n < 11)
			return -EINVAL;
		*total += v[0] + v[4] + v[11] + v[15];
	}
	return 0;
}

/**
 * coal_read_period() - end a period: each queue's load for the policy
 * @c: the controller
 * @now_ns: CLOCK_MONOTONIC now
 * @period_ms: the nominal period, which the loads are scaled to
 *
 * Return: 0, or -errno if a counter could not be read.
 */
int coal_read_period(struct coal_ctrl *c, u64 now_ns, unsigned int period_ms)
{
	u64 total, done, weight = 0, runs = 0, given = 0;
	u64 old_runs[c->nr_q], share[c->nr_q], w[c->nr_q];
	unsigned int i, top = 0;
	int ret;

	for (i = 0; i < c->nr_q; i++)
		old_runs[i] = c->q[i].runs;
	ret = read_runs(c);
	if (!ret)
		ret = read_completions(c, &total);
	if (ret)
		return ret;
	done = c->have_completions && total >= c->completions ? total - c->completions : 0;
	c->completions = total;
	c->have_completions = true;
	/* /proc/interrupts counts are unsigned int: deltas modulo 2^32 */
	for (i = 0; i < c->nr_q; i++) {
		weight += c->q[i].inflight_sum * 16 / (c->q[i].inflight_n ?: 1);
		runs += (u32)(c->q[i].runs - old_runs[i]);
	}
	/*
	 * The weights: the depths, or the handler runs where no reading saw a
	 * command (none: completions of no interrupt, polled, are nobody's).
	 * What rounding leaves goes to the heaviest queue.
	 */
	for (i = 0; i < c->nr_q; i++) {
		w[i] = weight ? c->q[i].inflight_sum * 16 / (c->q[i].inflight_n ?: 1) :
			(u32)(c->q[i].runs - old_runs[i]);
		share[i] = weight || runs ? done * w[i] / (weight ?: runs) : 0;
		given += share[i];
		if (w[i] > w[top])
			top = i;
	}
	if (weight || runs)
		share[top] += done - given;
	for (i = 0; i < c->nr_q; i++) {
		struct coal_queue *q = &c->q[i];
		u64 qd16 = q->inflight_sum * 16 / (q->inflight_n ?: 1);
		u64 dr = (u32)(q->runs - old_runs[i]);
		struct nvme_coal_sample s;

		q->completions += share[i];
		q->qd_sum += qd16 * dr / 16;
		q->inflight_sum = 0;
		q->inflight_n = 0;
		s = (struct nvme_coal_sample) {
			.now_ns = now_ns,
			.completions = (u32)q->completions,
			.qd_sum = (u32)q->qd_sum,
			.qd_runs = (u32)q->runs,
			.inflight = q->inflight,
		};
		q->valid = nvme_coal_measure(&q->pol, &s, period_ms, &q->load);
		q->load.engaged = nvme_coal_engaged(&q->pol);
	}
	return 0;
}
