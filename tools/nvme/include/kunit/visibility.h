/* SPDX-License-Identifier: GPL-2.0 */
/*
 * nvme-coal builds nvme-pci's coalescing policy as it is, without KUnit:
 * what the kernel's header defines when CONFIG_KUNIT is off.
 */
#ifndef _TOOLS_NVME_KUNIT_VISIBILITY_H
#define _TOOLS_NVME_KUNIT_VISIBILITY_H

#define VISIBLE_IF_KUNIT static
/* a declaration, to take the semicolon after it */
#define NVME_COAL_NOT_EXPORTED(symbol)	static_assert(1, #symbol)
#define EXPORT_SYMBOL_IF_KUNIT NVME_COAL_NOT_EXPORTED

#endif
