#!/usr/bin/env bash
# The repository stands alone: no file names material a user of it does not have (the texts it was
# designed from, notes kept beside the repository, the folder next to it). Fails naming each line.
# usage: self_contained_test.sh SOURCE_DIR
set -uo pipefail
cd "$1" || exit 1
# The patterns are built from pieces, so that this file does not match itself.
s="see""d"
patterns=("\\b${s} [0-9]{3}" "\\b${s}s'" "\\.\\./sha""red" "the bri""ef" "DESI""GN\\.md")
exact=("\\bFIND""INGS\\b")  # in capitals: the notes file, not the word
files=$(git ls-files 2>/dev/null || find . -path ./build -prune -o -path './build-*' -prune -o -type f -print)
status=0
for p in "${patterns[@]}" "${exact[@]}"; do
  case_flag=-i
  [[ " ${exact[*]} " == *" $p "* ]] && case_flag=
  hits=$(grep -n -I $case_flag -E "$p" $files 2>/dev/null || true)
  if [ -n "$hits" ]; then
    echo "FAIL: a reference to something outside the repository ($p):"
    echo "$hits" | head -20
    status=1
  fi
done
[ $status -eq 0 ] && echo "no reference outside the repository in $(echo "$files" | wc -l) files"
exit $status
