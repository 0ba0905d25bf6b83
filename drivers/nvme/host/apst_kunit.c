// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit tests for the APST table computation.
 *
 * The power states are those a Samsung 990 EVO Plus 4TB (firmware 2B2QKXG7)
 * advertises: ps0-ps2 operational, ps3 non-operational with a 4.6 ms exit
 * latency, ps4 non-operational with 43 ms.  Its entry latencies are not in
 * our field report; the values below are of that drive family's order.
 */
#include <kunit/test.h>
#include <linux/module.h>

#include "apst.h"

/* Idle Transition Power State in bits 7:3, idle time in ms in bits 31:8 */
#define ENTRY(ps, ms)	((u64)(ps) << 3 | (u64)(ms) << 8)

static const struct nvme_id_power_state evo_plus[] = {
	[0] = { .flags = 0 },
	[1] = { .flags = 0 },
	[2] = { .flags = 0 },
	[3] = { .flags = NVME_PS_FLAGS_NON_OP_STATE,
		.entry_lat = cpu_to_le32(2000), .exit_lat = cpu_to_le32(4600) },
	[4] = { .flags = NVME_PS_FLAGS_NON_OP_STATE,
		.entry_lat = cpu_to_le32(3000), .exit_lat = cpu_to_le32(43000) },
};

/* the module parameter defaults of nvme-core */
static struct nvme_apst_params params(u64 max_latency_us)
{
	return (struct nvme_apst_params) {
		.max_latency_us = max_latency_us,
		.primary_timeout_ms = 100,
		.primary_tol_us = 15000,
		.secondary_timeout_ms = 2000,
		.secondary_tol_us = 100000,
	};
}

static struct nvme_feat_auto_pst table;

static u64 entry(int ps)
{
	return le64_to_cpu(table.entries[ps]);
}

static void expect_empty_from(struct kunit *test, int from)
{
	int i;

	for (i = from; i < ARRAY_SIZE(table.entries); i++)
		KUNIT_EXPECT_EQ_MSG(test, entry(i), 0ULL,
				    "entry %d", i);
}

static void apst_25ms_selects_ps3(struct kunit *test)
{
	struct nvme_apst_params p = params(25000);
	struct nvme_apst_summary sum;
	int i;

	KUNIT_ASSERT_TRUE(test, nvme_apst_build_table(&p, evo_plus, 4, &table, &sum));
	KUNIT_EXPECT_EQ(test, sum.deepest, 3);
	KUNIT_EXPECT_EQ(test, sum.max_lat_us, 6600ULL);
	for (i = 0; i <= 2; i++)
		KUNIT_EXPECT_EQ(test, entry(i), ENTRY(3, 100));
	expect_empty_from(test, 3);
}

static void apst_100ms_selects_ps4(struct kunit *test)
{
	struct nvme_apst_params p = params(100000);
	struct nvme_apst_summary sum;
	int i;

	KUNIT_ASSERT_TRUE(test, nvme_apst_build_table(&p, evo_plus, 4, &table, &sum));
	KUNIT_EXPECT_EQ(test, sum.deepest, 4);
	KUNIT_EXPECT_EQ(test, sum.max_lat_us, 46000ULL);
	/* ps0-2 go to ps3 after the primary timeout, ps3 to ps4 after the secondary */
	for (i = 0; i <= 2; i++)
		KUNIT_EXPECT_EQ(test, entry(i), ENTRY(3, 100));
	KUNIT_EXPECT_EQ(test, entry(3), ENTRY(4, 2000));
	expect_empty_from(test, 4);
}

static void apst_no_non_operational_states(struct kunit *test)
{
	static const struct nvme_id_power_state ops[3] = {};
	struct nvme_apst_params p = params(25000);
	struct nvme_apst_summary sum;

	/* APST stays enabled, with nothing to transition to */
	KUNIT_EXPECT_TRUE(test, nvme_apst_build_table(&p, ops, 2, &table, &sum));
	KUNIT_EXPECT_EQ(test, sum.deepest, -1);
	expect_empty_from(test, 0);
}

static void apst_all_states_above_bound(struct kunit *test)
{
	struct nvme_apst_params p = params(4599);
	struct nvme_apst_summary sum;

	KUNIT_EXPECT_TRUE(test, nvme_apst_build_table(&p, evo_plus, 4, &table, &sum));
	KUNIT_EXPECT_EQ(test, sum.deepest, -1);
	KUNIT_EXPECT_EQ(test, sum.max_lat_us, 0ULL);
	expect_empty_from(test, 0);
}

static void apst_exit_latency_at_bound(struct kunit *test)
{
	struct nvme_apst_params p = params(4600);
	struct nvme_apst_summary sum;

	KUNIT_EXPECT_TRUE(test, nvme_apst_build_table(&p, evo_plus, 4, &table, &sum));
	KUNIT_EXPECT_EQ(test, sum.deepest, 3);
	KUNIT_EXPECT_EQ(test, entry(0), ENTRY(3, 100));

	p = params(43000);
	KUNIT_EXPECT_TRUE(test, nvme_apst_build_table(&p, evo_plus, 4, &table, &sum));
	KUNIT_EXPECT_EQ(test, sum.deepest, 4);
}

static void apst_zero_bound_turns_apst_off(struct kunit *test)
{
	struct nvme_apst_params p = params(0);
	struct nvme_apst_summary sum;

	memset(&table, 0xff, sizeof(table));
	KUNIT_EXPECT_FALSE(test, nvme_apst_build_table(&p, evo_plus, 4, &table, &sum));
	KUNIT_EXPECT_EQ(test, sum.deepest, -1);
	expect_empty_from(test, 0);
}

static void apst_heuristic_without_tolerances(struct kunit *test)
{
	struct nvme_apst_params p = params(100000);
	struct nvme_apst_summary sum;

	/* no explicit timeouts: idle 50 * (entry + exit) us, rounded up to ms */
	p.primary_timeout_ms = 0;
	KUNIT_EXPECT_TRUE(test, nvme_apst_build_table(&p, evo_plus, 4, &table, &sum));
	KUNIT_EXPECT_EQ(test, entry(0), ENTRY(3, 330));
	KUNIT_EXPECT_EQ(test, entry(3), ENTRY(4, 2300));
}

static void apst_quirked_deepest_state(struct kunit *test)
{
	struct nvme_apst_params p = params(100000);
	struct nvme_apst_summary sum;

	p.skip_deepest = true;
	KUNIT_EXPECT_TRUE(test, nvme_apst_build_table(&p, evo_plus, 4, &table, &sum));
	KUNIT_EXPECT_EQ(test, sum.deepest, 3);
	expect_empty_from(test, 3);
}

static void apst_npss_out_of_range(struct kunit *test)
{
	struct nvme_apst_params p = params(25000);
	struct nvme_apst_summary sum;

	KUNIT_EXPECT_FALSE(test, nvme_apst_build_table(&p, evo_plus, 32, &table, &sum));
	expect_empty_from(test, 0);
}

static struct kunit_case nvme_apst_cases[] = {
	KUNIT_CASE(apst_25ms_selects_ps3),
	KUNIT_CASE(apst_100ms_selects_ps4),
	KUNIT_CASE(apst_no_non_operational_states),
	KUNIT_CASE(apst_all_states_above_bound),
	KUNIT_CASE(apst_exit_latency_at_bound),
	KUNIT_CASE(apst_zero_bound_turns_apst_off),
	KUNIT_CASE(apst_heuristic_without_tolerances),
	KUNIT_CASE(apst_quirked_deepest_state),
	KUNIT_CASE(apst_npss_out_of_range),
	{}
};

static struct kunit_suite nvme_apst_suite = {
	.name = "nvme_apst",
	.test_cases = nvme_apst_cases,
};

kunit_test_suite(nvme_apst_suite);

MODULE_DESCRIPTION("KUnit tests for the NVMe APST table computation");
MODULE_LICENSE("GPL");
MODULE_IMPORT_NS("EXPORTED_FOR_KUNIT_TESTING");
