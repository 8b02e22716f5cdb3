/* Hand-built cloud queues for the batching and ordering tests: jobs in
 * arrival order, linked as sim/entity/cloud.c links them (next for the queue, tnext
 * from a tenant's job to its next). Header-only. */
#ifndef TEST_BATCHTEST_H
#define TEST_BATCHTEST_H

#include "model/batch.h"

#define MAXJ 16
#define NTEN 8

typedef struct hq {
    cloud_job_t jobs[MAXJ];
    int n;
    batch_queue_t q;
} hq_t;

/* Appends job j (its links are set here); returns its handle. */
static inline int hq_append(hq_t *h, cloud_job_t j)
{
    int i = h->n++;
    j.prev = i - 1;
    j.next = j.tnext = -1;
    h->jobs[i] = j;
    if (i > 0) h->jobs[i - 1].next = i;
    for (int k = i - 1; k >= 0; k--)
        if (h->jobs[k].tenant == j.tenant) {
            h->jobs[k].tnext = i;
            break;
        }
    h->q = (batch_queue_t){.jobs = h->jobs, .head = 0, .nqueue = h->n};
    return i;
}

#endif
