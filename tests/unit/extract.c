/*
 * Unit tests for src/extract.c on model-response shapes: one block, several blocks of mixed
 * languages, aliases, ~~~ fences, longer fences, indented fences, backticks inside code, closing
 * fence rules, CRLF, unterminated blocks, and responses with no fence at all.
 */
#include "judge/extract.h"
#include "tap.h"

/* check(response, language, want_code, want_how, name) — extracts and compares both. */
static void check(const char *response, const char *language, const char *want_code,
                  const char *want_how, const char *name)
{
    char how[128] = "unset";
    char *code = extract_code(response, language, how, sizeof(how));

    if (!ok(code && strcmp(code, want_code) == 0 && strstr(how, want_how), "%s", name))
        diag("  got code '%s' how '%s'; want code '%s' how containing '%s'", code ? code : "(null)",
             how, want_code, want_how);
    free(code);
}

static void test_single(void)
{
    check("Here is my solution:\n```python\nprint(1)\n```\nIt prints 1.", "python", "print(1)\n",
          "```python block", "one python block");
    check("```python\ndef f():\n    return 1\n```", "python", "def f():\n    return 1\n",
          "```python block", "a block closing at the end without a newline");
    check("```python\n```\n", "python", "", "```python block", "an empty block");
    check("```python title=\"sol.py\"\nx = 1\n```\n", "python", "x = 1\n", "```python block",
          "an info string with more words");
    check("```  python  \nx = 1\n```\n", "python", "x = 1\n", "```python block",
          "spaces around the info string");
}

static const char mixed[] = "First a helper:\n"
                            "```python\nA = 1\n```\n"
                            "Run it with:\n"
                            "```bash\npython3 a.py\n```\n"
                            "Final version:\n"
                            "```python\nA = 2\nprint(A)\n```\n"
                            "Output:\n"
                            "```text\n2\n```\n";

static void test_mixed(void)
{
    check(mixed, "python", "A = 2\nprint(A)\n", "last ```python block (of 2)",
          "several blocks: the last python one");
    check(mixed, "bash", "python3 a.py\n", "```bash block", "several blocks: the bash one");
    check(mixed, "sh", "python3 a.py\n", "```bash block", "language given as an alias");
    check(mixed, "js", "2\n", "last ```text block (of 4; none tagged js)",
          "no block of the language: the last of any");
    check(mixed, NULL, "2\n", "last ```text block (of 4", "no language given");
    check("```\xc3\xa9\x01\nx\n```\n", "h\xc3\xa9", "x\n",
          "last ```??? block (of 1; none tagged h?\?)",
          "how stays ASCII whatever the tags and language");
    check("```java\nclass A {}\n```\n```\nx = 1\n```\n```text\nout\n```\n", "python", "x = 1\n",
          "fenced block (no language tag)", "an untagged block beats other languages");
    check("```\na\n```\n```\nb\n```\n", "python", "b\n",
          "last fenced block (no language tag, of 2)", "the last of several untagged blocks");
    check("```\nuntagged\n```\n```py\ntagged\n```\n```\nlater\n```\n", "python", "tagged\n",
          "```py block", "a tagged block beats a later untagged one");
    check("```haskell\nmain = pure ()\n```\n```\nx\n```\n", "haskell", "main = pure ()\n",
          "```haskell block", "a language outside the table, by its own name");
}

static void test_aliases(void)
{
    static const struct {
        const char *tag, *language;
    } same[] = {
        {"py", "python"},  {"python3", "python"}, {"Python", "python"},
        {"python", "PY"},  {"c++", "cpp"},        {"cc", "cpp"},
        {"cxx", "c++"},    {"CPP", "cxx"},        {"c", "c"},
        {"C", "c"},        {"java", "java"},      {"js", "javascript"},
        {"node", "js"},    {"nodejs", "node"},    {"javascript", "js"},
        {"golang", "go"},  {"go", "golang"},      {"rs", "rust"},
        {"rust", "rs"},    {"sh", "bash"},        {"shell", "bash"},
        {"bash", "shell"},
    };
    char response[128];

    for (size_t i = 0; i < sizeof(same) / sizeof(same[0]); i++) {
        char name[64];
        snprintf(response, sizeof(response), "```\nother\n```\n```%s\ncode\n```\n```\nlast\n```\n",
                 same[i].tag);
        snprintf(name, sizeof(name), "```%s is %s", same[i].tag, same[i].language);
        check(response, same[i].language, "code\n", same[i].tag, name);
    }
    check("```c\nA\n```\n```cpp\nB\n```\n", "cpp", "B\n", "```cpp block", "c is not cpp");
    check("```cpp\nB\n```\n```c\nA\n```\n", "c", "A\n", "```c block", "cpp is not c");
    check("```java\nJ\n```\n```javascript\nS\n```\n", "java", "J\n", "```java block",
          "javascript is not java");
    check("```pyth\nx\n```\n```\ny\n```\n", "python", "y\n", "no language tag",
          "a prefix of an alias is not the alias");
}

static void test_fences(void)
{
    check("~~~python\nprint(1)\n~~~\n", "python", "print(1)\n", "~~~python block", "a ~~~ fence");
    check("~~~\n```python\ninner\n```\n~~~\n", "python", "```python\ninner\n```\n",
          "fenced block (no language tag)", "blocks do not nest: ``` lines in a ~~~ block");
    check("~~~markdown\n```python\nx\n```\n~~~\n", "markdown", "```python\nx\n```\n",
          "~~~markdown block", "a ~~~ block keeps the ``` lines it contains");
    check("````python\nprint('''\n```\n''')\n````\n", "python", "print('''\n```\n''')\n",
          "```python block", "a ``` line does not close a ```` block");
    check("```python\ns = \"```\"\nprint(s)  # ``` here\n```\n", "python",
          "s = \"```\"\nprint(s)  # ``` here\n", "```python block",
          "``` inside a line is not a fence");
    check("```python\na\n```python\nb\n```\n", "python", "a\n```python\nb\n", "```python block",
          "a fence with an info string does not close");
    check("```python\na\n~~~\nb\n```\n", "python", "a\n~~~\nb\n", "```python block",
          "~~~ does not close a ``` block");
    check("```python\na\n`````   \nrest\n", "python", "a\n", "```python block",
          "a longer closing fence with trailing spaces closes");
    check("```python\na\n``\n```\n", "python", "a\n``\n", "```python block",
          "two backticks are not a fence");
    check("Use ```python``` blocks.\n```python\nx\n```\n", "python", "x\n", "```python block",
          "an info string with backticks is not a fence");
    check("x ```python\ny\n", "python", "x ```python\ny", "whole response",
          "a fence must start its line");
}

static void test_indent(void)
{
    check("1. Write:\n   ```python\n   def f():\n       return 1\n   ```\n", "python",
          "def f():\n    return 1\n", "```python block", "a fence indented 3: content unindented");
    check("  ```python\n  if x:\n      y()\n z()\nw()\n  ```\n", "python",
          "if x:\n    y()\nz()\nw()\n", "```python block",
          "up to the fence's indentation is removed from each line");
    check("```python\n    indented\n```\n", "python", "    indented\n", "```python block",
          "content of an unindented fence keeps its indentation");
    check("```python\nx\n   ```\n", "python", "x\n", "```python block",
          "an indented closing fence closes");
    check("    ```python\n    x = 1\n    ```\n", "python", "```python\n    x = 1\n    ```",
          "whole response", "a fence indented 4 is not a fence");
    check("\t```python\nx\n\t```\n", "python", "```python\nx\n\t```", "whole response",
          "a tab-indented fence is not a fence");
}

static void test_crlf(void)
{
    check("Code:\r\n```python\r\nprint(1)\r\nprint(2)\r\n```\r\nDone\r\n", "python",
          "print(1)\r\nprint(2)\r\n", "```python block", "CRLF: fences found, content kept");
    check("```\r\nx\r\n```\r\n```java\r\ny\r\n```\r\n", "python", "x\r\n",
          "fenced block (no language tag)", "CRLF: an untagged block");
}

static void test_fallbacks(void)
{
    check("Sure!\n```python\nimport sys\nprint(sys.argv)", "python", "import sys\nprint(sys.argv)",
          "unterminated ```python block", "an unterminated block to the end");
    check("```python\nx = 1\n", "python", "x = 1\n", "unterminated ```python block",
          "an unterminated block with a final newline");
    check("```\nx", "python", "x", "unterminated ``` block", "an unterminated untagged block");
    check("print(1)\n```\n \n", "python", "print(1)\n```", "whole response",
          "a blank unterminated block is ignored");
    check("```python\nA\n```\nand then\n```python\nB", "python", "A\n", "```python block",
          "a closed block beats an unterminated one");
    check("  \n\tprint(1)\nprint(2)  \n\n", "python", "print(1)\nprint(2)",
          "whole response (no fenced block)", "no fences: the trimmed whole response");
    check("def f():\n    return '``'\n", "python", "def f():\n    return '``'", "whole response",
          "no fences: backticks inside");
    check("", "python", "", "whole response", "an empty response");
    check(" \n\t \n", "python", "", "whole response", "a blank response");
    check(NULL, "python", "", "whole response", "a NULL response");

    char *code = extract_code("```python\nx\n```\n", "python", NULL, 0);
    ok(code && strcmp(code, "x\n") == 0, "how may be NULL");
    free(code);
    char tiny[8];
    code = extract_code("no fence", "python", tiny, sizeof(tiny));
    ok(code && strlen(tiny) == 7, "how is cut to how_size ('%s')", tiny);
    free(code);
}

int main(void)
{
    test_single();
    test_mixed();
    test_aliases();
    test_fences();
    test_indent();
    test_crlf();
    test_fallbacks();
    return done_testing();
}
