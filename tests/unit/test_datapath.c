/* Tests of data-file lookup (sim/base/datapath.c): the scenario's directory first,
 * then the working directory and the source root; absolute paths as given. */
#include <unistd.h>

#include "check.h"
#include "base/datapath.h"

static void test_lookup_order(void)
{
    char dir[] = "/tmp/specsim_test_dp_XXXXXX";
    CHECK(mkdtemp(dir) != NULL);
    char file[128], out[256];
    snprintf(file, sizeof file, "%s/README.md", dir);
    FILE *f = fopen(file, "w");
    CHECK(f != NULL);
    if (f) fclose(f);
    /* Next to the scenario wins over the source root's README.md. */
    CHECK(datapath_resolve(dir, "README.md", out, sizeof out) == 0);
    CHECK_STR(out, file);
    /* Without a directory: the source root (the tests run from it, or it is
     * SPECSIM_ROOT) has a README.md, and a path that exists as given is
     * taken as given. */
    CHECK(datapath_resolve(NULL, "README.md", out, sizeof out) == 0);
    CHECK(access(out, R_OK) == 0);
    CHECK(datapath_resolve("", file, out, sizeof out) == 0);
    CHECK_STR(out, file);
    /* Missing everywhere: -1, out names the reference. */
    CHECK(datapath_resolve(dir, "no-such-file.yaml", out, sizeof out) == -1);
    CHECK_STR(out, "no-such-file.yaml");
    /* An absolute path is never looked up elsewhere. */
    CHECK(datapath_resolve(dir, "/no/such/README.md", out, sizeof out) == -1);
    unlink(file);
    rmdir(dir);
}

int main(void)
{
    RUN(test_lookup_order);
    return check_done();
}
