/* The build that measured a calibration table is recorded in it:
 * caltable_write puts provenance.specsim_version = version_string() (the
 * line `calibrate --version` prints), the reader gives it back, and tables
 * written before the field existed (the committed ones under
 * results/calibration/, which lack it) still load, with the field empty.
 */
#include <glob.h>
#include <stdlib.h>
#include <unistd.h>

#include "model/caltable.h"
#include "check.h"
#include "base/version.h"

static void test_written_and_read_back(void)
{
    caltable_t t = {0};
    snprintf(t.command, sizeof t.command, "build/calibrate --device cpu");
    snprintf(t.device_kind, sizeof t.device_kind, "cpu");
    snprintf(t.model, sizeof t.model, "llama-2-7b");
    snprintf(t.quant, sizeof t.quant, "w4a16");
    caltable_row_t row = {.op = CAL_TOKEN, .m = 1, .q = 1, .batch = 1, .time_s = 0.01};
    t.rows = &row;
    t.nrows = 1;
    char path[64];
    FILE *f = check_tmp_open(path, sizeof path, "w+");
    if (!f) return;
    CHECK(caltable_write(&t, f) == 0);
    /* The line as written, found in the text itself. */
    rewind(f);
    char line[512], want[300];
    snprintf(want, sizeof want, "  specsim_version: \"%s\"\n", version_string());
    int found = 0;
    while (fgets(line, sizeof line, f)) found += strcmp(line, want) == 0;
    CHECK(found == 1);
    CHECK(fclose(f) == 0);

    caltable_t r;
    err_t e = {0, ""};
    int rc = caltable_load(path, &r, &e);
    CHECK(rc == 0);
    if (rc == 0) {
        CHECK_STR(r.specsim_version, version_string());
        caltable_fini(&r);
    } else {
        printf("  %s\n", e.msg);
    }
    unlink(path);
}

static void test_old_tables_load(void)
{
    glob_t g;
    CHECK(glob(SPECSIM_ROOT "/results/calibration/*.yaml", 0, NULL, &g) == 0);
    int old = 0;
    for (size_t i = 0; i < g.gl_pathc; i++) {
        caltable_t t;
        err_t e = {0, ""};
        int rc = caltable_load(g.gl_pathv[i], &t, &e);
        CHECK(rc == 0);
        if (rc != 0) { printf("  %s\n", e.msg); continue; }
        old += t.specsim_version[0] == '\0';
        caltable_fini(&t);
    }
    CHECK(old >= 1);   /* else this test tests nothing */
    globfree(&g);
}

int main(void)
{
    RUN(test_written_and_read_back);
    RUN(test_old_tables_load);
    return check_done();
}
