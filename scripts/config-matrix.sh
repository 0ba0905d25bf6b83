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
# the base configuration, made and prepared (host tools, objtool) once in
# one folder; each variant builds in a copy of it (lib.sh: seed_kbuild),
# all at once with a quarter of the cores each: a variant's configuration and kbuild's
# start-up are serial, and one variant at a time with -j2 kept 1.3 of the
# 2 cores busy (ccache keeps each variant's objects from one run to the
# next: the copies are at the same depth, so their objects hash alike)
out=$(kbuild_dir matrix)
mkdir -p "$out"
# a quarter of the cores for each of the four
jobs=$((($(nproc) + 3) / 4))
# kmake OUT JOBS ARGS...
kmake() {
	make -C "$SRC" O="$1" ARCH=x86_64 CC="$KCC" HOSTCC="ccache gcc" \
		-j"$2" "${@:3}"
}
# the test configuration without its debug options: tinyconfig and the
# selftest fragment, made once (tinyconfig alone takes 15 s)
frag=$TOP/tools/testing/selftests/nvme_irq/config
if ! cmp -s "$frag" "$out/.fragment" || [ ! -f "$out/.config.base" ]; then
	kmake "$out" "$(nproc)" -s tinyconfig > /dev/null 2>&1
	(cd "$SRC" && ARCH=x86_64 KCONFIG_CONFIG="$out/.config" \
		scripts/kconfig/merge_config.sh -m -O "$out" "$out/.config" \
		"$frag" > /dev/null 2>&1)
	kmake "$out" "$(nproc)" -s olddefconfig > /dev/null 2>&1
	cp "$out/.config" "$out/.config.base"
	cp "$frag" "$out/.fragment"
fi
cmp -s "$out/.config.base" "$out/.config" || cp "$out/.config.base" "$out/.config"
if ! kmake "$out" "$(nproc)" -s prepare > "$out/prepare.log" 2>&1; then
	# every variant would fail the same way, from a half-made folder
	echo "fail static: config matrix: the base configuration does not prepare (see $out/prepare.log)"
	exit 0
fi

# variant NAME OPTIONS: one variant in its own folder; its verdict in
# that folder's verdict file
variant() {
	local name=$1 opts=$2 vout on opt rc warn
	vout=$(kbuild_dir "matrix-$name")

	rm -f "$vout/verdict"
	seed_kbuild "$out" "$vout"
	cp "$out/.config.base" "$vout/.config"
	for opt in $opts; do
		case $opt in
		+*)	"$SRC/scripts/config" --file "$vout/.config" -e "${opt#+CONFIG_}" ;;
		*)	"$SRC/scripts/config" --file "$vout/.config" -d "${opt#CONFIG_}" ;;
		esac
	done
	kmake "$vout" "$jobs" -s olddefconfig > /dev/null 2>&1
	on=$(for opt in $opts; do
		case $opt in
		+*)	grep -q "^${opt#+}=y" "$vout/.config" || echo "${opt#+} (not on)" ;;
		*)	grep -q "^$opt=y" "$vout/.config" && echo "$opt" ;;
		esac
	done)
	if [ -n "$on" ]; then
		echo "fail static: config matrix $name: $on stayed as it was" > "$vout/verdict"
		return
	fi
	# the series' objects are built again, so that their warnings are seen
	find "$vout/drivers/nvme/host" "$vout/kernel/irq" -name '*.o' -delete 2> /dev/null
	kmake "$vout" "$jobs" W=1 "${dirs[@]}" > "$vout/build.log" 2>&1
	rc=$?
	warn=$(grep -cE 'warning:|error:' "$vout/build.log")
	if [ $rc -eq 0 ] && [ "$warn" -eq 0 ]; then
		echo "pass static: config matrix $name: drivers/nvme/host, kernel/irq build W=1 clean"
	else
		echo "fail static: config matrix $name: exit $rc, $warn warning(s) (see $vout/build.log)"
		grep -E 'warning:|error:' "$vout/build.log" | head -5 | sed 's/^/    /'
	fi > "$vout/verdict"
}

for v in "${variants[@]}"; do
	variant "${v%%:*}" "${v#*:}" &
done
wait
for v in "${variants[@]}"; do
	f=$(kbuild_dir "matrix-${v%%:*}")/verdict
	if grep -qE '^(pass|fail) static: ' "$f" 2> /dev/null; then
		grep -v '^    ' "$f"
		grep '^    ' "$f" >&2
	else
		echo "fail static: config matrix ${v%%:*}: no verdict"
	fi
done
exit 0
