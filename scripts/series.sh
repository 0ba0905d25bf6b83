#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Export the series from build/linux as git format-patch files with a cover
# letter (subject and text from patches/cover-letter) into out/series/.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

bash "$TOP/scripts/tree.sh"
dest=$OUT/series
rm -rf "$dest"
mkdir -p "$dest"
git -C "$SRC" format-patch -q --cover-letter --thread=shallow \
	--from="$SERIES_AUTHOR" -o "$dest" base..series

cover=$(ls "$dest"/0000-cover-letter.patch)
subject=$(head -n 1 "$TOP/patches/cover-letter")
python3 - "$cover" "$subject" "$TOP/patches/cover-letter" <<'PY'
import sys
path, subject, blurb = sys.argv[1], sys.argv[2], sys.argv[3]
text = open(path).read()
body = open(blurb).read().split('\n', 1)[1].strip('\n')
text = text.replace('*** SUBJECT HERE ***', subject)
text = text.replace('*** BLURB HERE ***', body)
open(path, 'w').write(text)
PY
note "series exported: $(ls "$dest" | wc -l) files in $dest"
