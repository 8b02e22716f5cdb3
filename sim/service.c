/* PLACEHOLDER — replaced by the service module's owner. */
#include "service.h"
#include <string.h>
service_t *service_create(const hw_card_t *hw, const llm_card_t *model, int precision,
                          const char *calibration, double overhead_s, err_t *err)
{
    (void)hw; (void)model; (void)precision; (void)calibration; (void)overhead_s;
    err_set(err, ERR_RUNTIME, "service model not implemented yet");
    return NULL;
}
void service_free(service_t *sv) { (void)sv; }
const char *service_source(const service_t *sv) { (void)sv; return "none"; }
double service_iter_time(const service_t *sv, const service_job_t *j, int n) { (void)sv; (void)j; (void)n; return 0; }
double service_draft_time(const service_t *sv, int c) { (void)sv; (void)c; return 0; }
double service_prefill_time(const service_t *sv, int n) { (void)sv; (void)n; return 0; }
void service_terms(const service_t *sv, const service_job_t *j, int n, service_terms_t *o) { (void)sv; (void)j; (void)n; memset(o, 0, sizeof *o); }
double service_iter_time_datasheet(const service_t *sv, const service_job_t *j, int n) { (void)sv; (void)j; (void)n; return 0; }
double service_weight_bytes(const service_t *sv) { (void)sv; return 0; }
double service_kv_bytes_per_token(const service_t *sv) { (void)sv; return 0; }
