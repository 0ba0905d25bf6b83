# SPDX-License-Identifier: GPL-2.0
# Host tooling of the NVMe interrupt series.  Every target is idempotent and
# incremental; run 'make help' for the list.

SHELL := /bin/bash
# one target at a time: the kernels share build/linux (scripts/lib.sh: at_base).
# BASE=6.12 (passed on to the scripts) works on the 6.12 backport instead.
.NOTPARALLEL:
S := scripts

.PHONY: help deps qemu qemu-series tree refresh kernel kernel-bench kernel-stock kernel-sanitize series check check-bisect check-rt bench demo clean

help:
	@echo "make demo          build what is missing, boot the patched kernel, report what the series does"
	@echo "make check         the test suite: KUnit + kselftests in QEMU + static checks of the series"
	@echo "make bench         side-by-side benchmark, stock vs series (QUICK=1: a smoke run); out/bench/"
	@echo "make check-bisect  build every patch of the series in order (slow)"
	@echo "make check-rt      build a PREEMPT_RT kernel (lockdep) and boot its KUnit suites"
	@echo "make deps          install the Debian packages needed (as root)"
	@echo "make qemu          build the project's QEMU (Debian's source + qemu/patches), cached in /var/cache/nvme-irq"
	@echo "make qemu-series   export the QEMU patches for qemu-devel to out/qemu-series/"
	@echo "make tree          materialise build/linux: pristine 7.3.4 + one commit per patch"
	@echo "                   (BASE=6.12 with tree, kernel*, series, check-bisect, scripts/vm:"
	@echo "                   the 6.12 LTS backport, in build/6.12/)"
	@echo "make kernel        build the test kernel (series + debug options + KCSAN on the interrupt paths)"
	@echo "make kernel-bench  build the benchmark kernel (series, no debug options)"
	@echo "make kernel-stock  build the stock kernel (same configuration, no series)"
	@echo "make kernel-sanitize  build the sanitizer kernel (test options + KASAN, kmemleak; nvme as modules)"
	@echo "make refresh       write the commits of build/linux back into patches/ and the overlay"
	@echo "make series        export the series to out/series/, one per maintainer tree (BASE=6.12: out/series-6.12/)"
	@echo "scripts/vm -- CMD  boot a kernel with emulated NVMe drives and run CMD (scripts/vm --help)"

deps:
	@$(S)/deps.sh

qemu: deps
	@$(S)/qemu.sh

qemu-series: qemu
	@$(S)/qemu-series.sh

tree: deps
	@$(S)/tree.sh

refresh:
	@$(S)/refresh.py

kernel: tree
	@$(S)/kernel.sh test

kernel-bench: tree
	@$(S)/kernel.sh bench

# built from the bench kernel's build folder (scripts/kernel.sh)
kernel-stock: kernel-bench
	@$(S)/kernel.sh stock

kernel-sanitize: tree
	@$(S)/kernel.sh sanitize

series: tree
	@$(S)/series.sh

# check.sh builds what it needs itself, timing each phase
check:
	@$(S)/check.sh

# nvme-coal (tools/nvme) for the userspace scenario's daemon modes
bench: qemu kernel-bench kernel-stock
	@bash -c '. $(S)/lib.sh && build_nvme_coal'
	@$(S)/bench.py

check-bisect: kernel
	@$(S)/check-bisect.sh

check-rt: tree
	@$(S)/check-rt.sh

demo: qemu kernel
	@$(S)/demo.sh

clean:
	rm -rf build/kbuild build/6.12/kbuild build/tools build/6.12/tools out
