#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The series builds warning-free (W=1) in configurations the test kernels do
# not cover: one option off at a time from the test configuration, object
# builds of the directories the series touches.  nvme as a module is the
# sanitizer kernel's configuration.  One "pass|fail static: ..." line each.
set -uo pipefail
. "$(dirname "$0")/lib.sh"

lock_tree
export CCACHE_BASEDIR=$BASE_BUILD CCACHE_NOHASHDIR=1 CCACHE_COMPILERCHECK=content
dirs=(drivers/nvme/host/ kernel/irq/)
# NAME:OPTION...: the options turned off together, or on where written
# +OPTION.  Fault injection and tracing share a build: no code of the
# series depends on both (debugfs does, through FAULT_INJECTION_DEBUG_FS:
# it has a build of its own).  PREEMPT_RT: every spinlock_t sleeps and
# every handler is a thread; the series' hardirq paths use raw locks only.
variants=(
	"irq-moderation-off:CONFIG_IRQ_MODERATION"
	"fault-injection-tracing-off:CONFIG_FAULT_INJECTION CONFIG_FTRACE"
	"debugfs-off:CONFIG_DEBUG_FS"
	"preempt-rt:+CONFIG_EXPERT +CONFIG_PREEMPT_RT"
)
for v in "${variants[@]}"; do
	name=${v%%:*} opts=${v#*:}
	out=$(kbuild_dir "matrix-$name")
	mkdir -p "$out"
	{
		grep -vE "^($(echo $opts | tr -d + | tr ' ' '|'))=" "$TOP/tools/testing/selftests/nvme_irq/config"
		for opt in $opts; do
			case $opt in
			+*)	echo "${opt#+}=y" ;;
			*)	echo "# $opt is not set" ;;
			esac
		done
	} > "$out/.fragment.new"
	kmake() {
		make -C "$SRC" O="$out" ARCH=x86_64 CC="ccache gcc" HOSTCC="ccache gcc" \
			-j"$(nproc)" "$@"
	}
	if ! cmp -s "$out/.fragment.new" "$out/.fragment" || [ ! -f "$out/.config" ]; then
		kmake -s tinyconfig > /dev/null 2>&1
		(cd "$SRC" && ARCH=x86_64 KCONFIG_CONFIG="$out/.config" \
			scripts/kconfig/merge_config.sh -m -O "$out" "$out/.config" \
			"$out/.fragment.new" > /dev/null 2>&1)
		kmake -s olddefconfig > /dev/null 2>&1
		mv "$out/.fragment.new" "$out/.fragment"
	fi
	on=$(for opt in $opts; do
		case $opt in
		+*)	grep -q "^${opt#+}=y" "$out/.config" || echo "${opt#+} (not on)" ;;
		*)	grep -q "^$opt=y" "$out/.config" && echo "$opt" ;;
		esac
	done)
	if [ -n "$on" ]; then
		echo "fail static: config matrix $name: $on stayed as it was"
		continue
	fi
	# rebuild the series' objects so that their warnings are seen again
	find "$out/drivers/nvme/host" "$out/kernel/irq" -name '*.o' -delete 2> /dev/null
	kmake W=1 "${dirs[@]}" > "$out/build.log" 2>&1
	rc=$?
	warn=$(grep -cE 'warning:|error:' "$out/build.log")
	if [ $rc -eq 0 ] && [ "$warn" -eq 0 ]; then
		echo "pass static: config matrix $name: drivers/nvme/host, kernel/irq build W=1 clean"
	else
		echo "fail static: config matrix $name: exit $rc, $warn warning(s) (see $out/build.log)"
		grep -E 'warning:|error:' "$out/build.log" | head -5 | sed 's/^/    /' >&2
	fi
done
exit 0
