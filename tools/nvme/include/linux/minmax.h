/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What nvme-pci's coalescing policy takes from the kernel's minmax.h (and
 * the limits its kernel.h gives) that tools/include does not have.
 */
#ifndef _TOOLS_NVME_LINUX_MINMAX_H
#define _TOOLS_NVME_LINUX_MINMAX_H

#include <linux/kernel.h>

#ifndef U32_MAX
#define U32_MAX		((u32)~0U)
#endif

#ifndef clamp_t
#define clamp_t(type, val, lo, hi)	min_t(type, max_t(type, val, lo), hi)
#endif

#ifndef abs_diff
#define abs_diff(a, b) ({			\
	typeof(a) __a = (a);			\
	typeof(b) __b = (b);			\
	__a > __b ? __a - __b : __b - __a;	\
})
#endif

#endif
