/* PLACEHOLDER — replaced by the simulation module's owner. */
#include "sim.h"
int sim_run(const scenario_t *s, const sim_options_t *opt, metrics_summary_t *out, err_t *err)
{
    (void)s; (void)opt; (void)out;
    return err_set(err, ERR_RUNTIME, "simulation not implemented yet");
}
int sim_service_sources(const scenario_t *s, sim_sources_t *out, err_t *err)
{
    (void)s; (void)out;
    return err_set(err, ERR_RUNTIME, "not implemented yet");
}
