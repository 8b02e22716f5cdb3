/* cloud_job — one unit of work queued at a cloud replica: a prefill, a
 * verify block, a decode step or (cloud-side speculation) a draft step of
 * one tenant. Its own header so that the
 * cloud (sim/entity/cloud.c), which owns the queues, and the batching policies
 * (sim/model/batch.h), which read them, share it without depending on each other.
 */
#ifndef SPECSIM_CLOUD_JOB_H
#define SPECSIM_CLOUD_JOB_H

#include <stdint.h>

/* CLOUD_DRAFT: one token drafted by the cloud's draft model (or draft
 * heads) next to the target; it costs the draft's time, not the target's
 * (sim/entity/cloud.c). */
enum cloud_job_kind { CLOUD_PREFILL = 0, CLOUD_VERIFY, CLOUD_DECODE, CLOUD_DRAFT };

typedef struct cloud_job {
    int tenant;
    int kind;          /* enum cloud_job_kind */
    int tokens;        /* prefill: tokens still to process; else the job's */
    int context;       /* KV tokens cached before this job's tokens */
    uint32_t epoch;    /* model tags, carried untouched */
    uint32_t block;
    double deadline;   /* s, when the ordering wants it done (its request's
                          SLO, set by the submitter); 0 = none */
    int priority;      /* its tenant group's priority (higher first) */
    double arrive;     /* entered the queue */
    int started;       /* has been in an iteration */
    int prev, next;    /* replica queue links, -1 = none */
    int tnext;         /* next queued job of the same tenant, -1 = none */
} cloud_job_t;

#endif
