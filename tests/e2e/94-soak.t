#!/usr/bin/env bash
# The soak test's short version (bench/soak): a few hundred mixed honest and hostile
# requests against one `crucible serve` with --token-file and --db, then the server's fds,
# threads, child processes, cgroups, mounts, scratch files and RSS must be back at their
# baseline. Polled until equal, with a generous ceiling (60 s; no time is asserted). The
# load ends with 32 clients that send part of a body and close at once: before the fix in
# src/service/http.c (on_upload_gone) the server held each such connection until
# libmicrohttpd's 120 s connection timeout, so the fds did not come back within the ceiling.
# The long version is run by hand (docs/BENCHMARKS.md, "Soak"). CRUCIBLE= selects the binary.
set -u
cd "$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")/../.."
# Under AddressSanitizer RSS is the quarantine's, not the heap's: its bound is not asserted
# there (fds, threads, processes, cgroups, mounts and scratch still are).
slack=64
if grep -q __asan_init "${CRUCIBLE:-build/crucible}"; then
    slack=1000000
fi
exec python3 bench/soak --tap --requests "${SOAK_REQUESTS:-200}" --concurrency 6 --seed 10 --settle 60 \
    --rss-slack-mb "$slack"
