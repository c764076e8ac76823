/*
 * expat_lazy.c — expat (JUnit XML reports, judge/junit.c), loaded on first use (lazy.h).
 * The entry point, XML_ParserCreate, returns NULL (as when out of memory) when the library
 * cannot be loaded.
 */
#include <expat.h>
#include <stddef.h>

#include "lazy.h"

#define EXPAT_ENTRIES(F) F(XML_Parser, XML_ParserCreate, , )
#define EXPAT_FNS(F, V)                                                                            \
    V(XML_ParserFree, (XML_Parser p), (p))                                                         \
    V(XML_SetUserData, (XML_Parser p, void *data), (p, data))                                      \
    V(XML_SetElementHandler, (XML_Parser p, XML_StartElementHandler s, XML_EndElementHandler e),   \
      (p, s, e))                                                                                   \
    V(XML_SetCharacterDataHandler, (XML_Parser p, XML_CharacterDataHandler h), (p, h))             \
    V(XML_SetStartDoctypeDeclHandler, (XML_Parser p, XML_StartDoctypeDeclHandler h), (p, h))       \
    F(enum XML_Status, XML_Parse, (XML_Parser p, const char *s, int len, int final),               \
      (p, s, len, final))                                                                          \
    F(enum XML_Status, XML_StopParser, (XML_Parser p, XML_Bool resumable), (p, resumable))         \
    F(enum XML_Error, XML_GetErrorCode, (XML_Parser p), (p))                                       \
    F(XML_Size, XML_GetCurrentLineNumber, (XML_Parser p), (p))                                     \
    F(const XML_LChar *, XML_ErrorString, (enum XML_Error code), (code))

#define NAME_V(name, params, args) #name,
#define ENUM_V(name, params, args) LAZY_I_##name,
enum { EXPAT_ENTRIES(LAZY_ENUM_) EXPAT_FNS(LAZY_ENUM_, ENUM_V) EXPAT_NFNS };
static const char *const names[] = {EXPAT_ENTRIES(LAZY_NAME_) EXPAT_FNS(LAZY_NAME_, NAME_V) NULL};
static void *fns[EXPAT_NFNS];
static struct lazy_lib lib = LAZY_LIB_INIT("libexpat.so.1", "libexpat1", names, fns);

XML_Parser XML_ParserCreate(const XML_Char *encoding)
{
    if (!lazy_load(&lib))
        return NULL;
    return ((XML_Parser(*)(const XML_Char *))fns[LAZY_I_XML_ParserCreate])(encoding);
}

/* The others, each reached only through a parser XML_ParserCreate made (XML_ErrorString
 * with the code one of them gave). */
#define DEF(ret, name, params, args) LAZY_DEF_(lib, ret, name, params, args)
#define DEF_V(name, params, args)    LAZY_DEF_VOID_(lib, name, params, args)
EXPAT_FNS(DEF, DEF_V)
