/* SPDX-License-Identifier: Apache-2.0 */
/* cli/status_view.h - the pure part of `ktctl status`: one view of a TrainJob built from the
 * objects read (TrainJob, JobSet, Jobs, pods, events), the line that says what it waits for,
 * and the text rendering. No I/O but the FILE written to; the clock is a parameter. */
#ifndef KT_CLI_STATUS_VIEW_H
#define KT_CLI_STATUS_VIEW_H

#include <jansson.h>
#include <stdio.h>
#include <time.h>

/* The objects read for one TrainJob. Every member is borrowed for the call; jobset NULL =
 * none (absent or unreadable), jobs/pods/events arrays of items (NULL = none read). notes: an
 * array of strings about what could not be read (NULL = none). */
struct cli_status_input {
    const json_t *trainjob;
    const json_t *jobset;
    const json_t *jobs;
    const json_t *pods;
    const json_t *events;
    const json_t *notes;
};

#define CLI_STATUS_EVENTS_MAX 10

/* The view (the document `-o json|yaml` prints): trainJob {namespace, name, uid, created,
 * runtime {kind, name}, suspend}, conditions, startTime, completionTime, waitingFor, jobSet
 * (null or {name, suspended, conditions}), replicatedJobs [{name, jobs [{name, active,
 * succeeded, failed}], pods {Pending, Running, Succeeded, Failed, Unknown}, pending [{pod,
 * reason, message}]}], events (the last CLI_STATUS_EVENTS_MAX, oldest first), notes. Caller
 * owns the result; free with json_decref(). */
json_t *cli_status_view(const struct cli_status_input *in);

/* The one line saying what the TrainJob waits for (see docs/metrics.md), from a view.
 * Borrowed from view. */
const char *cli_status_waiting(const json_t *view);

/* Human-readable rendering of view at time now (for ages). Does not retain view. */
void cli_status_print(FILE *f, const json_t *view, time_t now);

#endif
