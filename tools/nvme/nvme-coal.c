// SPDX-License-Identifier: GPL-2.0
/*
 * nvme-coal - nvme-pci's adaptive interrupt coalescing, from user space
 *
 * The same policy as the kernel's (drivers/nvme/host/pci_coalesce_policy.c,
 * built here unchanged), run once a period on what user space can read
 * (coal_sample.c) and driving what user space can set (coal_act.c): the
 * controller's Feature 08h and 09h through the admin passthrough ioctl, or
 * genirq's per-vector moderation through /proc/irq/<N>/moderation_us.  It
 * is the measurement behind the question "could the policy live in user
 * space?", not a replacement for the kernel's: see
 * Documentation/admin-guide/nvme/adaptive-coalescing.rst.
 *
 * Every value it changes is read first and written back when it exits, on
 * SIGINT, SIGTERM or SIGHUP too (not on SIGKILL).  It refuses to run while
 * nvme-pci's own policy is on, and a controller it cannot drive.
 */
#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "nvme-coal.h"

#define KERNEL_POLICY	"/sys/module/nvme/parameters/adaptive_coalescing"

/* the signals that stop it are blocked, and waited for between readings */
static sigset_t stop_signals;
static bool stop, failed;
/* when it started: -v stamps each decision with the time since */
static u64 start_ns;

static void print_usage(FILE *f)
{
	fprintf(f,
		"usage: nvme-coal [options] nvmeN [nvmeN...]\n"
		"  -p MS   sample period, 10-1000 (default 50)\n"
		"  -s N    depth readings per period, 1-100 (default 5)\n"
		"  -H N    completions per period a controller needs, 1-100000000 (default 10000)\n"
		"  -q N    a queue this deep or less is never moderated, 0-65536 (default 8)\n"
		"  -i N    commands outstanding a controller needs, 0-16777216 (default 32)\n"
		"  -d US   longest delay set, 1-10000 (default 1000)\n"
		"  -a ACT  auto, device (Feature 08h/09h) or genirq (default auto)\n"
		"  -t S    stop after S seconds, 0-86400, 0 = at a signal (default 0)\n"
		"  -v      a line per decision, the seconds since the start first\n"
		"          (a line before them: the start's CLOCK_MONOTONIC time)\n"
		"The thresholds are the kernel policy's (debugfs nvme_pci/): see\n"
		"Documentation/admin-guide/nvme/adaptive-coalescing.rst.\n");
}

/* A whole decimal number within [min, max], or exit with status 2. */
static unsigned long parse_number(int opt, const char *s, unsigned long min,
				  unsigned long max)
{
	unsigned long v;
	char *end;

	errno = 0;
	v = strtoul(s, &end, 10);
	if (!isdigit((unsigned char)s[0]) || *end) {
		fprintf(stderr, "nvme-coal: -%c %s: not a number\n", opt, s);
		exit(2);
	}
	if (errno == ERANGE || v < min || v > max) {
		fprintf(stderr, "nvme-coal: -%c %s: out of range (%lu-%lu)\n",
			opt, s, min, max);
		exit(2);
	}
	return v;
}

static u64 now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (u64)ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

/* Wait until @t (CLOCK_MONOTONIC, ns); false if a stop signal came. */
static bool sleep_until(u64 t)
{
	struct timespec ts;
	u64 now;

	while (!stop && (now = now_ns()) < t) {
		ts.tv_sec = (t - now) / 1000000000ULL;
		ts.tv_nsec = (t - now) % 1000000000ULL;
		if (sigtimedwait(&stop_signals, NULL, &ts) > 0)
			stop = true;
	}
	return !stop;
}

static bool kernel_policy_on(void)
{
	FILE *f = fopen(KERNEL_POLICY, "r");
	int on = 0;

	if (!f)
		return false;
	if (fscanf(f, "%d", &on) != 1)
		on = 0;
	fclose(f);
	return on;
}

/* One period of one controller: decide for every queue, then set. */
static void period(struct coal_ctrl *c, const struct nvme_coal_params *p,
		   u64 t, bool verbose)
{
	struct nvme_coal_load total = { };
	unsigned int i;
	int ret;

	ret = coal_read_period(c, t, p->period_ms);
	if (ret) {
		fprintf(stderr, "nvme-coal: %s: reading its counters: %s\n",
			c->name, strerror(-ret));
		stop = true;
		failed = true;
		return;
	}
	c->periods++;
	for (i = 0; i < c->nr_q; i++)
		if (c->q[i].valid)
			nvme_coal_add_load(&total, &c->q[i].load);
	for (i = 0; i < c->nr_q; i++) {
		struct coal_queue *q = &c->q[i];
		bool was = nvme_coal_engaged(&q->pol);

		if (!q->valid || !nvme_coal_decide(&q->pol, p, &q->load, &total))
			continue;
		c->decisions++;
		if (!verbose)
			continue;
		printf("%.3f %s q%u: %s -> %s %u us; %u completions, %u runs, depth %u.%02u\n",
		       (t - start_ns) / 1e9, c->name, q->qid, was ? "on" : "off",
		       nvme_coal_engaged(&q->pol) ? "on" : "off", q->pol.delay_us,
		       q->load.completions, q->load.runs, q->load.avg_qd16 / 16,
		       q->load.avg_qd16 % 16 * 100 / 16);
	}
	coal_act_apply(c);
}

int main(int argc, char **argv)
{
	struct nvme_coal_params p = {
		.enabled = true, .period_ms = 50, .high_io_delta = 10000,
		.avg_qd_threshold = 8, .total_inflight_io_threshold = 32,
		.max_delay_us = 1000,
	};
	enum coal_actuator act = COAL_ACT_AUTO;
	unsigned int samples = 5, secs = 0, nr = 0, i, k;
	struct coal_ctrl *ctrls;
	bool verbose = false;
	struct rusage ru;
	u64 t, end;
	char why[512];
	int opt, ret;

	while ((opt = getopt(argc, argv, "p:s:H:q:i:d:a:t:vh")) != -1) {
		switch (opt) {
		case 'p':
			p.period_ms = parse_number(opt, optarg, 10, 1000);
			break;
		case 's':
			samples = parse_number(opt, optarg, 1, 100);
			break;
		case 'H':
			p.high_io_delta = parse_number(opt, optarg, 1, 100000000);
			break;
		case 'q':
			p.avg_qd_threshold = parse_number(opt, optarg, 0, 65536);
			break;
		case 'i':
			p.total_inflight_io_threshold = parse_number(opt, optarg, 0, 16777216);
			break;
		case 'd':
			p.max_delay_us = parse_number(opt, optarg, 1, 10000);
			break;
		case 'a':
			if (!strcmp(optarg, "auto")) {
				act = COAL_ACT_AUTO;
			} else if (!strcmp(optarg, "device")) {
				act = COAL_ACT_DEVICE;
			} else if (!strcmp(optarg, "genirq")) {
				act = COAL_ACT_GENIRQ;
			} else {
				fprintf(stderr, "nvme-coal: -a %s: not auto, device or genirq\n",
					optarg);
				return 2;
			}
			break;
		case 't':
			secs = parse_number(opt, optarg, 0, 86400);
			break;
		case 'v':
			verbose = true;
			break;
		case 'h':
			print_usage(stdout);
			return 0;
		default:
			print_usage(stderr);
			return 2;
		}
	}
	if (optind == argc) {
		print_usage(stderr);
		return 2;
	}
	if (kernel_policy_on()) {
		fprintf(stderr,
			"nvme-coal: nvme-pci's own adaptive coalescing is on (%s is 1): the two would fight; write 0 there first\n",
			KERNEL_POLICY);
		return 1;
	}
	ctrls = calloc(argc - optind, sizeof(*ctrls));
	if (!ctrls)
		return 1;
	for (; optind < argc; optind++) {
		struct coal_ctrl *c = &ctrls[nr];

		for (i = 0; i < nr && strcmp(ctrls[i].name, argv[optind]); i++)
			;
		if (i < nr)
			continue;	/* named twice */
		if (coal_discover(c, argv[optind], why, sizeof(why)) ||
		    coal_act_prepare(c, act, why, sizeof(why))) {
			fprintf(stderr, "nvme-coal: %s: cannot drive it: %s\n", argv[optind], why);
			if (c->fd >= 0)
				close(c->fd);
			free(c->q);
			continue;
		}
		printf("nvme-coal: %s: %u I/O queues, %u namespaces, %s\n", c->name,
		       c->nr_q, c->nr_ns,
		       c->act == COAL_ACT_DEVICE ? "Feature 08h/09h" : "genirq moderation");
		nr++;
	}
	if (!nr)
		return 1;
	fflush(stdout);

	sigemptyset(&stop_signals);
	sigaddset(&stop_signals, SIGINT);
	sigaddset(&stop_signals, SIGTERM);
	sigaddset(&stop_signals, SIGHUP);
	sigaddset(&stop_signals, SIGQUIT);
	sigprocmask(SIG_BLOCK, &stop_signals, NULL);
	/* a closed output (nvme-coal -v | head) must not skip the restore */
	signal(SIGPIPE, SIG_IGN);
	t = now_ns();
	start_ns = t;
	/* the times of -v are from here: where they are on the system's clock */
	if (verbose) {
		printf("nvme-coal: started at %.3f s (CLOCK_MONOTONIC)\n", t / 1e9);
		fflush(stdout);
	}
	end = secs ? t + secs * 1000000000ULL : 0;
	while (!stop && (!end || t < end)) {
		for (k = 1; k <= samples && !stop; k++) {
			if (!sleep_until(t + (u64)p.period_ms * 1000000ULL * k / samples))
				break;
			for (i = 0; i < nr && !stop; i++) {
				ret = coal_read_depths(&ctrls[i]);
				if (ret) {
					fprintf(stderr, "nvme-coal: %s: reading its queues: %s\n",
						ctrls[i].name, strerror(-ret));
					stop = true;
					failed = true;
				}
			}
		}
		if (stop)
			break;
		if (kernel_policy_on()) {
			fprintf(stderr,
				"nvme-coal: nvme-pci's own adaptive coalescing was switched on: stopping\n");
			failed = true;
			break;
		}
		t = now_ns();
		for (i = 0; i < nr && !stop; i++)
			period(&ctrls[i], &p, t, verbose);
		fflush(stdout);
	}
	for (i = 0; i < nr; i++)
		coal_act_restore(&ctrls[i]);
	getrusage(RUSAGE_SELF, &ru);
	for (i = 0; i < nr; i++) {
		printf("nvme-coal: %s: %lu periods, %lu decisions, ", ctrls[i].name,
		       ctrls[i].periods, ctrls[i].decisions);
		printf("%lu admin commands, %lu moderation writes\n", ctrls[i].admin_cmds,
		       ctrls[i].irq_writes);
	}
	printf("nvme-coal: CPU time %ld.%03ld s user, %ld.%03ld s system\n",
	       (long)ru.ru_utime.tv_sec, (long)ru.ru_utime.tv_usec / 1000,
	       (long)ru.ru_stime.tv_sec, (long)ru.ru_stime.tv_usec / 1000);
	return failed ? 1 : 0;
}
