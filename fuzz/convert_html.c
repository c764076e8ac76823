/* convert_html.c — fuzz target: a statement page (the Code Jam archive's problem
 * statements are HTML) through convert_html_text. */
#include "fuzz.h"
#include "library/convert.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *html = fuzz_strndup(data, size);

    free(convert_html_text(html, size));
    free(html);
    return 0;
}
