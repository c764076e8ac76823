/*
 * yaml_lazy.c — libyaml (Kattis problem.yaml, library/yaml_doc.c), loaded on first use
 * (lazy.h). The entry point, yaml_parser_initialize, fails (returns 0, as when out of
 * memory) when the library cannot be loaded.
 */
#include <stddef.h>
#include <yaml.h>

#include "lazy.h"

#define YAML_ENTRIES(F) F(int, yaml_parser_initialize, , )
#define YAML_FNS(F, V)                                                                             \
    V(yaml_parser_delete, (yaml_parser_t * p), (p))                                                \
    V(yaml_parser_set_input_string, (yaml_parser_t * p, const unsigned char *in, size_t n),        \
      (p, in, n))                                                                                  \
    F(int, yaml_parser_parse, (yaml_parser_t * p, yaml_event_t * e), (p, e))                       \
    V(yaml_event_delete, (yaml_event_t * e), (e))

#define NAME_V(name, params, args) #name,
#define ENUM_V(name, params, args) LAZY_I_##name,
enum { YAML_ENTRIES(LAZY_ENUM_) YAML_FNS(LAZY_ENUM_, ENUM_V) YAML_NFNS };
static const char *const names[] = {YAML_ENTRIES(LAZY_NAME_) YAML_FNS(LAZY_NAME_, NAME_V) NULL};
static void *fns[YAML_NFNS];
static struct lazy_lib lib = LAZY_LIB_INIT("libyaml-0.so.2", "libyaml-0-2", names, fns);

int yaml_parser_initialize(yaml_parser_t *p)
{
    if (!lazy_load(&lib))
        return 0;
    return ((int (*)(yaml_parser_t *))fns[LAZY_I_yaml_parser_initialize])(p);
}

/* The others, each reached only through a parser yaml_parser_initialize made. */
#define DEF(ret, name, params, args) LAZY_DEF_(lib, ret, name, params, args)
#define DEF_V(name, params, args)    LAZY_DEF_VOID_(lib, name, params, args)
YAML_FNS(DEF, DEF_V)
