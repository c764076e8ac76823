/*
 * dashboard.h — the dashboard's static files, embedded in the binary at build time
 * (src/service/ui/, and Chart.js from Debian's libjs-chart.js when the build machine has it):
 * GET / is the page, GET /ui/NAME its script, style and chart library. They hold no data:
 * the page reads GET /v1/stats (and the task library's routes) with the token it asks for,
 * so they are served without one.
 */
#ifndef CRUCIBLE_DASHBOARD_H
#define CRUCIBLE_DASHBOARD_H

#include <stddef.h>

struct dashboard_asset {
    const char *path, *content_type, *data;
    size_t len;
};

/* dashboard_asset(path) — the file served at path ("/", "/ui/app.js", ...), or NULL. */
const struct dashboard_asset *dashboard_asset(const char *path);

/* dashboard_has_charts() — true when Chart.js was embedded (the page draws charts). */
int dashboard_has_charts(void);

#endif
