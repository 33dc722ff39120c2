#!/usr/bin/env bash
# Call 4 (the review's form of the replay: its key is built only where it is
# used): the runtime GPU gtests, then both op-level scoreboards
# (bench/scoreboard_both.sh; gnn-run's timed reps now replay).
set -u
xz -dc .carry/bin/GNNRuntimeTests.xz > /tmp/rt; chmod +x /tmp/rt
mkdir -p "$OUT"
timeout 120 /tmp/rt --gtest_filter='Gpu*' > "$OUT/gtest.txt" 2>&1; echo "rc=$?" >> "$OUT/gtest.txt"
bash bench/scoreboard_both.sh .carry "$OUT"
