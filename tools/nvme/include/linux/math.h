/* SPDX-License-Identifier: GPL-2.0 */
/* tools/include's math.h, and the rounding the policy takes from the kernel's. */
#ifndef _TOOLS_NVME_LINUX_MATH_H
#define _TOOLS_NVME_LINUX_MATH_H

#include_next <linux/math.h>

/* the policy rounds unsigned values only */
#ifndef DIV_ROUND_CLOSEST
#define DIV_ROUND_CLOSEST(x, divisor) ({	\
	typeof(divisor) __d = (divisor);	\
	((x) + __d / 2) / __d;			\
})
#endif

#endif
