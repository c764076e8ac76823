/*
 * progress.c — the progress line (progress.h).
 */
#include "cli/progress.h"
#include "util.h"

void progress_draw(FILE *f, size_t done, size_t total, double t0, const char *label, size_t count)
{
    double el = util_now() - t0, rate = el > 0 ? (double)done / el : 0;
    double eta = rate > 0 ? (double)(total - done) / rate : 0;
    int width = 30, fill = total ? (int)((double)width * (double)done / (double)total) : 0;

    fprintf(f, "\r[%.*s%*s] %zu/%zu  %.1f/s  ETA %d:%02d  %s %zu ", fill,
            "##############################", width - fill, "", done, total, rate, (int)eta / 60,
            (int)eta % 60, label, count);
    fflush(f);
}
