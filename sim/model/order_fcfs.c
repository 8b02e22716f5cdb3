/* order_fcfs — first come, first served: arrival order, the linked-list
 * walk of sim/model/batch.c (no key, no sorting). */
#include "model/order.h"

const order_ops_t order_fcfs = {.name = "fcfs"};
