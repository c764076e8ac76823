#!/usr/bin/env bash
# The soak test's short version (bench/soak): a few hundred mixed honest and hostile
# requests against one `crucible serve` with --token-file and --db, then the server's fds,
# threads, child processes, cgroups, mounts, scratch files and RSS must be back at their
# baseline. Polled until equal; the ceiling is generous (and above libmicrohttpd's 120 s
# connection timeout, which today is what frees a connection whose client left mid-body
# unnoticed under concurrency); no time is asserted. The long version is run by hand
# (docs/BENCHMARKS.md, "Soak"). CRUCIBLE= selects the binary under test.
set -u
cd "$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")/../.."
exec python3 bench/soak --tap --requests "${SOAK_REQUESTS:-200}" --concurrency 6 --seed 10 --settle 150
