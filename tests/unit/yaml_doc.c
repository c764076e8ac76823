/* Unit tests for src/library/yaml_doc.c: nested mappings, name maps, lists, PyYAML's scalar
 * types, aliases, line numbers, and the errors a package author must be told about. */
#include <math.h>

#include "library/yaml_doc.h"
#include "tap.h"

/* parse(d, text) — parses text (NUL-terminated); the return value of yaml_doc_parse. */
static int parse(struct yaml_doc *d, const char *text, struct errbuf *err)
{
    err->msg[0] = '\0';
    return yaml_doc_parse(d, text, strlen(text), err);
}

static const char *str_at(const struct yaml_doc *d, const char *path)
{
    return json_string_value(yaml_doc_get(d, path));
}

static void test_problem_yaml(void)
{
    static const char text[] = "# a 2023-07 problem.yaml\n"
                               "problem_format_version: 2023-07-draft\n"
                               "uuid: 5ca6ba5b-36d5-4eff-8aa7-d967cbc4375e\n"
                               "type: [scoring, interactive]\n"
                               "name:\n"
                               "  en: Guess the Number   # trailing comment\n"
                               "  sv: 'Gissa talet'\n"
                               "limits:\n"
                               "  time_multipliers:\n"
                               "    ac_to_time_limit: 2.5\n"
                               "    time_limit_to_tle: 4\n"
                               "  memory: 512\n"
                               "keywords:\n"
                               "  - easy\n"
                               "  - \"interactive\"\n";
    struct yaml_doc d = {0};
    struct errbuf err;
    json_t *v;

    is_int(parse(&d, text, &err), 0, "problem.yaml parses");
    is_str(str_at(&d, "problem_format_version"), "2023-07-draft",
           "2023-07-draft stays a string (not a date)");
    is_str(str_at(&d, "name.en"), "Guess the Number", "name map: en, comment removed");
    is_str(str_at(&d, "name.sv"), "Gissa talet", "name map: quoted sv");
    v = yaml_doc_get(&d, "limits.time_multipliers.ac_to_time_limit");
    ok(json_is_real(v) && json_real_value(v) == 2.5, "two levels deep: a real");
    v = yaml_doc_get(&d, "limits.time_multipliers.time_limit_to_tle");
    ok(json_is_integer(v) && json_integer_value(v) == 4, "two levels deep: an integer");
    v = yaml_doc_get(&d, "type");
    ok(json_is_array(v) && json_array_size(v) == 2 &&
           strcmp(json_string_value(json_array_get(v, 1)), "interactive") == 0,
       "a flow list");
    v = yaml_doc_get(&d, "keywords");
    ok(json_is_array(v) && json_array_size(v) == 2 &&
           strcmp(json_string_value(json_array_get(v, 1)), "interactive") == 0,
       "a block list");
    ok(yaml_doc_get(&d, "limits.time_limit") == NULL, "absent key: NULL");
    ok(yaml_doc_get(&d, "name.en.x") == NULL, "a path through a scalar: NULL");
    ok(json_is_object(yaml_doc_get(&d, "")), "the root");
    is_int(yaml_doc_line(&d, "limits.time_multipliers.ac_to_time_limit"), 10,
           "line of a nested value");
    is_int(yaml_doc_line(&d, "type.1"), 4, "line of a list element");
    is_int(yaml_doc_line(&d, "keywords.1"), 15, "line of a block list element");
    is_int(yaml_doc_line(&d, "nope"), 0, "unknown path: line 0");
    yaml_doc_release(&d);
    yaml_doc_release(&d);
}

/* scalar(text) — the type and value of "k: TEXT" as a string "TYPE:VALUE". */
static const char *scalar(const char *text)
{
    static char out[128];
    char doc[128];
    struct yaml_doc d = {0};
    struct errbuf err;
    json_t *v;

    snprintf(doc, sizeof(doc), "k: %s\n", text);
    if (parse(&d, doc, &err) < 0) {
        snprintf(out, sizeof(out), "error:%s", err.msg);
        yaml_doc_release(&d);
        return out;
    }
    v = yaml_doc_get(&d, "k");
    if (json_is_null(v))
        snprintf(out, sizeof(out), "null");
    else if (json_is_boolean(v))
        snprintf(out, sizeof(out), "bool:%s", json_is_true(v) ? "true" : "false");
    else if (json_is_integer(v))
        snprintf(out, sizeof(out), "int:%lld", (long long)json_integer_value(v));
    else if (json_is_real(v))
        snprintf(out, sizeof(out), "real:%g", json_real_value(v));
    else if (json_is_string(v))
        snprintf(out, sizeof(out), "str:%s", json_string_value(v));
    else
        snprintf(out, sizeof(out), "other");
    yaml_doc_release(&d);
    return out;
}

static void test_scalars(void)
{
    static const struct {
        const char *text, *want;
    } cases[] = {
        {"", "null"},
        {"~", "null"},
        {"Null", "null"},
        {"yes", "bool:true"},
        {"Off", "bool:false"},
        {"TRUE", "bool:true"},
        {"tRue", "str:tRue"},
        {"512", "int:512"},
        {"-7", "int:-7"},
        {"1_000", "int:1000"},
        {"0x1f", "int:31"},
        {"017", "int:15"},
        {"0b101", "int:5"},
        {"1:30", "int:90"},
        {"09", "str:09"},
        {"2.5", "real:2.5"},
        {"1.", "real:1"},
        {".5", "real:0.5"},
        {"1.0e-6", "real:1e-06"},
        {"1e-6", "str:1e-6"},
        {"1.0e6", "str:1.0e6"},
        {"-.5", "str:-.5"},
        {".inf", "str:.inf"},
        {"0 100", "str:0 100"},
        {"float_tolerance 1e-6", "str:float_tolerance 1e-6"},
        {"\"512\"", "str:512"},
        {"'yes'", "str:yes"},
        {"!!str 3", "str:3"},
        {"!!int 3", "int:3"},
        {"2023-07", "str:2023-07"},
        {"99999999999999999999", "str:99999999999999999999"},
    };

    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        const char *got = scalar(cases[i].text);
        if (!ok(strcmp(got, cases[i].want) == 0, "scalar '%s' is %s", cases[i].text, cases[i].want))
            diag("  got %s", got);
    }
}

static void test_structure(void)
{
    struct yaml_doc d = {0};
    struct errbuf err;
    json_t *v;

    is_int(parse(&d, "", &err), 0, "an empty document parses");
    ok(json_is_null(d.root), "... to null");
    ok(yaml_doc_get(&d, "limits") == NULL, "... with no keys");
    yaml_doc_release(&d);

    is_int(parse(&d, "base: &b {memory: 256}\nlimits: *b\n", &err), 0, "an alias");
    v = yaml_doc_get(&d, "limits.memory");
    ok(json_integer_value(v) == 256, "... shares its anchor's value");
    yaml_doc_release(&d);

    is_int(parse(&d, "a: 1\na: 2\n", &err), 0, "a duplicate key");
    is_int(json_integer_value(yaml_doc_get(&d, "a")), 2, "... the later wins (as PyYAML)");
    yaml_doc_release(&d);

    is_int(parse(&d, "1: one\ntrue: yes\n", &err), 0, "number and boolean keys");
    is_str(str_at(&d, "1"), "one", "... are looked up by their text");
    ok(json_is_true(yaml_doc_get(&d, "true")), "... the value still typed");
    yaml_doc_release(&d);

    is_int(parse(&d, "text: |\n  two\n  lines\n", &err), 0, "a block scalar");
    is_str(str_at(&d, "text"), "two\nlines\n", "... is a string");
    yaml_doc_release(&d);
}

static void test_errors(void)
{
    struct yaml_doc d = {0};
    struct errbuf err;

    is_int(parse(&d, "name: x\nlimits:\n  memory: 1\n bad: 2\n", &err), -EINVAL,
           "bad indentation is an error");
    ok(strstr(err.msg, "line 4") != NULL, "... naming the line (%s)", err.msg);
    yaml_doc_release(&d);

    is_int(parse(&d, "name: 'unterminated\n", &err), -EINVAL, "an unterminated quote");
    ok(strncmp(err.msg, "line ", 5) == 0, "... names a line (%s)", err.msg);
    yaml_doc_release(&d);

    is_int(parse(&d, "a: 1\n---\nb: 2\n", &err), -EINVAL, "two documents are an error");
    ok(strstr(err.msg, "more than one YAML document") && strstr(err.msg, "line 2"),
       "... saying so, with the line (%s)", err.msg);
    yaml_doc_release(&d);

    is_int(parse(&d, "? [a, b]\n: c\n", &err), -EINVAL, "a sequence as a key");
    ok(strstr(err.msg, "as a mapping key") != NULL, "... is named (%s)", err.msg);
    yaml_doc_release(&d);

    is_int(parse(&d, "a: *nope\n", &err), -EINVAL, "an unknown alias");
    ok(strstr(err.msg, "unknown alias '*nope'") != NULL, "... is named (%s)", err.msg);
    yaml_doc_release(&d);

    is_int(parse(&d, "a: &x [1, *x]\n", &err), -EINVAL, "a recursive alias");
    ok(strstr(err.msg, "contains it") != NULL, "... is refused (%s)", err.msg);
    yaml_doc_release(&d);

    {
        char deep[400];
        size_t n = 0;
        for (int i = 0; i < 100; i++)
            deep[n++] = '[';
        for (int i = 0; i < 100; i++)
            deep[n++] = ']';
        deep[n] = '\0';
        is_int(parse(&d, deep, &err), -EINVAL, "100 nested lists");
        ok(strstr(err.msg, "deeper than 64") != NULL, "... are refused (%s)", err.msg);
        yaml_doc_release(&d);
    }

    is_int(yaml_doc_parse(&d, "a: \xff\n", 6, &err), -EINVAL, "invalid UTF-8 is an error");
    ok(err.msg[0] != '\0', "... with a message (%s)", err.msg);
    yaml_doc_release(&d);
}

int main(void)
{
    test_problem_yaml();
    test_scalars();
    test_structure();
    test_errors();
    return done_testing();
}
