/* SPDX-License-Identifier: GPL-2.0 */
/*
 * tools/include's math64.h, and the divisions the policy takes from the
 * kernel's (7.3's tools/include has div_u64(), 6.12's does not, and
 * neither has div64_u64()): plain C division, which user space has for
 * 64 bits.
 */
#ifndef _TOOLS_NVME_LINUX_MATH64_H
#define _TOOLS_NVME_LINUX_MATH64_H

#include_next <linux/math64.h>

#define div_u64(dividend, divisor)	((u64)(dividend) / (u32)(divisor))
#define div64_u64(dividend, divisor)	((u64)(dividend) / (u64)(divisor))
#define DIV64_U64_ROUND_UP(ll, d)	\
	({ u64 _tmp = (d); div64_u64((ll) + _tmp - 1, _tmp); })

#endif
