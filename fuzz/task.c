/* task.c — fuzz target: a task in the native format (docs/TASKS.md) through task_from_json,
 * and, when it is valid, the checks a verification makes before running it. */
#include "fuzz.h"
#include "judge/lang.h"
#include "judge/task.h"
#include "judge/verify.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const char *const langs[] = {"python", "cpp", "java", "go", "rust", "javascript"};
    struct errbuf err = {{0}};
    json_error_t je;
    struct task t;
    json_t *j = json_loadb((const char *)data, size, JSON_REJECT_DUPLICATES, &je);

    if (!j)
        return 0;
    memset(&t, 0, sizeof(t));
    if (task_from_json(j, &t, &err) == 0) {
        for (size_t i = 0; i < sizeof(langs) / sizeof(langs[0]); i++) {
            const struct lang *l = lang_find(langs[i]);
            if (verify_language_check(&t, l, &err) == 0)
                verify_memory_mb(&t, l);
        }
        for (int k = SOLUTION_PROGRAM; k <= SOLUTION_RESPONSE; k++) {
            char how[128];
            free(verify_program_text(&t, NULL, (enum solution_kind)k,
                                     "```python\ndef f():\n    return 1\n```\n", how, sizeof(how)));
        }
    }
    task_release(&t);
    json_decref(j);
    return 0;
}
