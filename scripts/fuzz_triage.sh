#!/usr/bin/env bash
# Whose bug is each finding of a fuzz target? (make fuzz; README.md, "Fuzzing")
#   scripts/fuzz_triage.sh TARGET_BINARY FINDINGS_DIR [LIBFUZZER_FLAGS...]   (the limits of the run)
# Runs the target again on every input libFuzzer saved (crash-*, leak-*, oom-*, timeout-*) and reads
# the sanitizer's or libFuzzer's stack: the first frame that is neither the sanitizer and fuzzer
# runtime nor libc names the culprit, nhbench (a source file of this tree) or a library (HDF5,
# libconfig). A memory error on a block that nhbench allocated counts as nhbench's, wherever it
# happened. Prints one line per finding; exits 1 if any finding is nhbench's or cannot be placed,
# 0 if every one is a library's (known upstream bugs on damaged input, listed but not failing).
# A finding that gives no report on replay is replayed three times more; if it never gives one,
# it is listed as not reproduced and does not fail: the input alone does not crash (the run died
# of state left by earlier inputs, or of a hang inside the crash handler itself), so there is
# nothing to place or fix. It is kept in FINDINGS_DIR for a look by hand.
set -u
target=$1 dir=$2
shift 2
src=$(cd "$(dirname "$0")/.." && pwd)
status=0
# A replay gave a report: a stack frame, a sanitizer's or libFuzzer's ERROR line, or UBSan's.
has_report() { printf '%s\n' "$1" | grep -qE '^ *#[0-9]+ 0x|ERROR: |runtime error: '; }
for input in "$dir"/crash-* "$dir"/leak-* "$dir"/oom-* "$dir"/timeout-*; do
  [ -e "$input" ] || continue
  report=$("$target" "$@" "$input" 2>&1)
  replays=1
  while ! has_report "$report" && [ $replays -lt 4 ]; do
    report=$("$target" "$@" "$input" 2>&1)
    replays=$((replays + 1))
  done
  if ! has_report "$report"; then
    echo "fuzz: $(basename "$input"): not reproduced: no report in $replays replays (kept, not failing)"
    continue
  fi
  # Frames "#N 0xADDR in FUNC FILE:LINE" or "#N 0xADDR (MODULE+0xOFF)", of the first stack and of
  # the "allocated by" stack; runtime frames are those without a file of this tree in the binary.
  culprit=$(printf '%s\n' "$report" | awk -v src="$src/" '
    /^ *#[0-9]+ 0x/ {
      if (done[section]) next
      if (index($0, " " src) && $0 ~ /\/(core|systems|integrators|studies|results|bench)\/[a-z_]+\.c:/) who = "nhbench"
      else if ($0 ~ /libhdf5/) who = "HDF5"
      else if ($0 ~ /libconfig/) who = "libconfig"
      else next
      first[section] = who; done[section] = 1; next
    }
    /allocated by thread|freed by thread/ { section = "alloc" }
    END {
      if (first["alloc"] == "nhbench" || first[""] == "nhbench") print "nhbench"
      else if (first[""] != "") print first[""]
      else print "unknown"
    }')
  kind=$(printf '%s\n' "$report" | grep -m1 -oE 'ERROR: (AddressSanitizer|LeakSanitizer|libFuzzer|UndefinedBehaviorSanitizer): [A-Za-z-]+|runtime error: .*' || true)
  echo "fuzz: $(basename "$input"): $culprit: ${kind:-a report without an error line}"
  case $culprit in nhbench | unknown) status=1 ;; esac
done
exit $status
