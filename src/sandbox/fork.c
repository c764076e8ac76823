/*
 * fork.c — sandbox_fork (see sandbox.h). Placeholder while the module is written.
 */
#include <errno.h>
#include <stddef.h>

#include "sandbox/sandbox.h"

struct sandbox *sandbox_fork(struct sandbox *parent, struct errbuf *err)
{
    (void)parent;
    errbuf_set(err, "not implemented");
    return NULL;
}
