#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Build a kernel out of tree: scripts/kernel.sh test|bench|stock|stock-test|sanitize|rt
#   test   the series, tinyconfig + the nvme_irq selftest fragment + debug
#          options (lockdep, atomic-sleep, timer objects, lockup detectors)
#          + KCSAN (with the interrupt watcher) on the code whose
#          concurrency the series changes: the interrupt core, PCI MSI,
#          irq_poll and nvme-pci (lib.sh: TEST_KCSAN_FILES) + suspend to
#          idle and pm_test (scripts/config/suspend.config, for suspend.sh)
#          + what no guest uses, off (scripts/config/lean.config)
#   bench  the series, tinyconfig + the selftest fragment, no debug options
#   stock  the pristine base, same configuration as bench, built in the
#          series' tree checked out at base for the build (below)
#   stock-test  the pristine base in the test kernel's configuration, seeded
#          from its folder: make check's stock boots, without the bench
#          kernel
#   sanitize  the series, test options + KASAN and kmemleak, nvme as modules
#          (installed under the build folder's modules/), lean.config; KCSAN
#          excludes KASAN, so this one has no KCSAN
#   rt     the series, test options without KCSAN + PREEMPT_RT
#          (scripts/config/rt.config), for make check-rt
# After configuring, every option of the fragments must have taken effect.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

flavour=${1:-test}
frags=("$TOP/tools/testing/selftests/nvme_irq/config")
kflags=()
case $flavour in
test)	src=$SRC
	frags+=("$TOP/scripts/config/debug.config" "$TOP/scripts/config/kcsan.config"
		"$TOP/scripts/config/suspend.config" "$TOP/scripts/config/lean.config")
	kflags+=($(test_kflags)) ;;
bench)	src=$SRC ;;
stock)	src=$SRC ;;
stock-test) src=$SRC
	frags+=("$TOP/scripts/config/debug.config" "$TOP/scripts/config/kcsan.config"
		"$TOP/scripts/config/suspend.config" "$TOP/scripts/config/lean.config")
	kflags+=($(test_kflags)) ;;
sanitize) src=$SRC
	frags+=("$TOP/scripts/config/debug.config" "$TOP/scripts/config/sanitize.config"
		"$TOP/scripts/config/lean.config") ;;
rt)	src=$SRC
	frags+=("$TOP/scripts/config/debug.config" "$TOP/scripts/config/rt.config"
		"$TOP/scripts/config/lean.config") ;;
*)	die "unknown kernel flavour '$flavour' (test, bench, stock, stock-test, sanitize or rt)" ;;
esac
[ -f "$src/Makefile" ] || die "no kernel tree at $src: run 'make tree'"
lock_tree
out=$(kbuild_dir "$flavour")

# The stock kernel is built from build/linux checked out at base (lib.sh:
# at_base), in a build folder seeded with the bench kernel's (the same
# configuration; stock-test: the test kernel's): about 70 objects compiled
# instead of 1300.
if [ "$flavour" = stock ] || [ "$flavour" = stock-test ]; then
	at_base || die "cannot build the stock kernel"
	seed=$(kbuild_dir bench)
	[ "$flavour" = stock ] || seed=$(kbuild_dir test)
	if [ "$(cat "$out/.source" 2> /dev/null)" != "$SRC" ] && [ -f "$seed/vmlinux" ]; then
		note "seeding the $flavour kernel's build folder with $(basename "$seed")'s"
		seed_kbuild "$seed" "$out"
		rm -f "$out/.fragments"		# configured again, at base
	fi
fi
# A clean clone's tree is newer than anything built before it: the test,
# sanitizer and bench kernels' folders are kept in $KBUILD_CACHE after each
# build and an empty one is seeded from there, the objects given back to
# the files they were built from (kbuild-cache.py says when it refuses)
cached=
case $flavour in test|sanitize|bench) cached=$KBUILD_CACHE/$BASE-$flavour ;; esac
if [ -n "$cached" ] && [ ! -f "$out/vmlinux" ] && [ -d "$cached" ]; then
	rc=0
	python3 "$TOP/scripts/kbuild-cache.py" restore "$cached" "$out" "$SRC" "$TOP" "$BASE_BUILD" ||
		rc=$?
	if [ $rc -ne 0 ] && [ $rc -ne 2 ]; then
		note "the cached $flavour build folder could not be used: building it afresh"
		rm -rf "$out" "$out.new"
	fi
fi
mkdir -p "$out"
echo "$SRC" > "$out/.source"
rm -f "$out/.manifest"		# written again once the build succeeds

export CCACHE_BASEDIR=$BASE_BUILD CCACHE_NOHASHDIR=1 CCACHE_COMPILERCHECK=content
kmake() {
	make -C "$src" O="$out" ARCH=x86_64 CC="$KCC" HOSTCC="ccache gcc" \
		-j"$(nproc)" "$@"
}

# Merge the fragments into one file, a later line for the same option winning.
merged=$out/.fragments
cat "${frags[@]}" | awk '
	/^CONFIG_[A-Za-z0-9_]+=/ { n = $0; sub(/=.*/, "", n) }
	/^# CONFIG_[A-Za-z0-9_]+ is not set/ { n = $2 }
	n != "" { if (!(n in v)) o[++k] = n; v[n] = $0; n = "" }
	END { for (i = 1; i <= k; i++) print v[o[i]] }' > "$merged.new"

# A folder configured by other steps (this script or lib.sh changed since,
# e.g. one restored from the cache) is configured again: a few seconds, and
# make then compiles what the configuration changed, nothing if nothing
configured_by=$(cat "$TOP/scripts/kernel.sh" "$TOP/scripts/lib.sh" | sha1sum)
configured_by=${configured_by%% *}
if ! cmp -s "$merged.new" "$merged" || [ ! -f "$out/.config" ] ||
   [ "$(cat "$out/.configured-by" 2> /dev/null)" != "$configured_by" ]; then
	note "configuring the $flavour kernel in $out"
	kmake -s tinyconfig > /dev/null
	(cd "$src" && ARCH=x86_64 KCONFIG_CONFIG="$out/.config" \
		scripts/kconfig/merge_config.sh -m -O "$out" "$out/.config" "$merged.new" > /dev/null)
	kmake -s olddefconfig > /dev/null
	mv "$merged.new" "$merged"
	echo "$configured_by" > "$out/.configured-by"
else
	rm -f "$merged.new"
fi

# Every option of the fragments took effect?  Options the stock tree does not
# define (added by the series) are skipped there.
bad=0
while IFS= read -r line; do
	if [[ $line == "# CONFIG_"* ]]; then
		opt=${line#\# }; opt=${opt%% *}
		want="# $opt is not set"
	else
		opt=${line%%=*}; want=$line
	fi
	if [[ $flavour == stock* ]] &&
	   ! grep -rqs --include='Kconfig*' "^config ${opt#CONFIG_}\$" "$src"; then
		continue
	fi
	got=$(grep -E "^$opt=|^# $opt is not set" "$out/.config" || true)
	# an option whose dependencies are off is not even listed: not set
	[ -z "$got" ] && [[ $want == "# "* ]] && got=$want
	if [ "$got" != "$want" ]; then
		[ -n "$got" ] || got="(absent: a dependency is missing)"
		echo "config: $want did not take effect, got: $got" >&2
		bad=1
	fi
done < "$merged"
if [ $bad -ne 0 ]; then
	rm -f "$merged"
	die "the $flavour kernel configuration lacks options of the fragments"
fi

note "building the $flavour kernel (log: $out/build.log)"
start=$(date +%s)
touch "$out/.build-start"
set +e +o pipefail
targets=(bzImage)
[ "$flavour" = sanitize ] && targets+=(modules)
kmake "${kflags[@]}" "${targets[@]}" 2>&1 | tee "$out/build.log" | grep --line-buffered -E '^  (CC|LD|AR)|error:|warning:'
rc=${PIPESTATUS[0]}
if [ "$rc" -eq 0 ] && [ "$flavour" = sanitize ]; then
	# modules_install into the build folder: the guest's modprobe -d finds it
	rm -rf "$out/modules"
	kmake -s INSTALL_MOD_PATH="$out/modules" INSTALL_MOD_STRIP=1 \
		DEPMOD=/sbin/depmod modules_install > "$out/modules.log" 2>&1 || rc=$?
fi
set -e -o pipefail
if [ "$rc" -ne 0 ]; then
	grep -E 'error|Error' "$out/build.log" | tail -20 >&2
	die "the $flavour kernel failed to build; see $out/build.log"
fi
note "$flavour kernel built in $(( $(date +%s) - start )) s: $(bzimage_of "$flavour")"
# what it was built from (kbuild-cache.py); kept when make compiled anything
if [ -n "$cached" ] && { [ ! -d "$cached" ] ||
			 [ -n "$(find "$out" -name '*.o' -newer "$out/.build-start" -print -quit)" ]; }; then
	mkdir -p "$KBUILD_CACHE" 2> /dev/null &&
		python3 "$TOP/scripts/kbuild-cache.py" save "$cached" "$out" "$SRC" "$TOP" "$BASE_BUILD" ||
		note "the $flavour build folder was not cached"
else
	python3 "$TOP/scripts/kbuild-cache.py" manifest "$out" "$SRC" || true
fi
