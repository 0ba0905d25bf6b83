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
# one folder for all of them: the host tools, objtool and the kconfig
# programs are built once; a variant's configuration rebuilds what depends
# on it (ccache keeps each variant's objects from one run to the next)
out=$(kbuild_dir matrix)
mkdir -p "$out"
kmake() {
	make -C "$SRC" O="$out" ARCH=x86_64 CC="$KCC" HOSTCC="ccache gcc" \
		-j"$(nproc)" "$@"
}
# the test configuration without its debug options: tinyconfig and the
# selftest fragment, made once (tinyconfig alone takes 15 s)
frag=$TOP/tools/testing/selftests/nvme_irq/config
if ! cmp -s "$frag" "$out/.fragment" || [ ! -f "$out/.config.base" ]; then
	kmake -s tinyconfig > /dev/null 2>&1
	(cd "$SRC" && ARCH=x86_64 KCONFIG_CONFIG="$out/.config" \
		scripts/kconfig/merge_config.sh -m -O "$out" "$out/.config" \
		"$frag" > /dev/null 2>&1)
	kmake -s olddefconfig > /dev/null 2>&1
	cp "$out/.config" "$out/.config.base"
	cp "$frag" "$out/.fragment"
fi
for v in "${variants[@]}"; do
	name=${v%%:*} opts=${v#*:}
	cp "$out/.config.base" "$out/.config"
	for opt in $opts; do
		case $opt in
		+*)	"$SRC/scripts/config" --file "$out/.config" -e "${opt#+CONFIG_}" ;;
		*)	"$SRC/scripts/config" --file "$out/.config" -d "${opt#CONFIG_}" ;;
		esac
	done
	kmake -s olddefconfig > /dev/null 2>&1
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
	kmake W=1 "${dirs[@]}" > "$out/build-$name.log" 2>&1
	rc=$?
	warn=$(grep -cE 'warning:|error:' "$out/build-$name.log")
	if [ $rc -eq 0 ] && [ "$warn" -eq 0 ]; then
		echo "pass static: config matrix $name: drivers/nvme/host, kernel/irq build W=1 clean"
	else
		echo "fail static: config matrix $name: exit $rc, $warn warning(s) (see $out/build-$name.log)"
		grep -E 'warning:|error:' "$out/build-$name.log" | head -5 | sed 's/^/    /' >&2
	fi
done
exit 0
