/*
 * version.h — the release crucible's binary reports (`crucible --version`, the
 * crucible_build_info metric). The commit it was built from is build/gen/commit.h
 * (CRUCIBLE_COMMIT, "" outside a git checkout), written by the Makefile.
 */
#ifndef CRUCIBLE_VERSION_H
#define CRUCIBLE_VERSION_H

#define CRUCIBLE_VERSION "0.1.0"

#endif
