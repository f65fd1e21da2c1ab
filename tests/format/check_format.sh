#!/usr/bin/env bash
# Fails when a tracked C, C++ or CUDA source differs from what clang-format makes of it with the
# committed .clang-format. The style is pinned to one clang-format major version (formatting
# changes between versions): where that version is missing the check is skipped (77).
#   tests/format/check_format.sh [--fix]
set -uo pipefail
cd "$(dirname "$0")/../.."
major=14
tool=$(command -v clang-format-$major || true)
if [ -z "$tool" ] && command -v clang-format >/dev/null &&
    clang-format --version | grep -q "version $major\."; then
  tool=clang-format
fi
if [ -z "$tool" ]; then
  echo "check_format: clang-format $major not found (apt-get install clang-format-$major): skipped"
  exit 77
fi
mapfile -t files < <(git ls-files '*.c' '*.cc' '*.cpp' '*.h' '*.hpp' '*.cu' '*.cuh')
if [ "${1:-}" = --fix ]; then
  "$tool" -i "${files[@]}"
  exit
fi
bad=()
for f in "${files[@]}"; do
  "$tool" --dry-run --Werror "$f" >/dev/null 2>&1 || bad+=("$f")
done
if [ ${#bad[@]} -gt 0 ]; then
  printf 'not formatted: %s\n' "${bad[@]}"
  echo "check_format: ${#bad[@]} of ${#files[@]} files differ from clang-format $major (fix: $0 --fix)"
  exit 1
fi
echo "check_format: ${#files[@]} files formatted"
