/* SPDX-License-Identifier: Apache-2.0 */
/* common/plugins/plugins.h - the built-in plugins (one file each, plugin_<name>.c).
 *
 * plugins.c lists them in the fixed order documented in framework/framework.h. */
#ifndef KT_PLUGINS_H
#define KT_PLUGINS_H

#include "common/framework/framework.h"

extern const struct kt_plugin kt_plugin_torch;
extern const struct kt_plugin kt_plugin_plainml;
extern const struct kt_plugin kt_plugin_jobset;
extern const struct kt_plugin kt_plugin_mpi;
extern const struct kt_plugin kt_plugin_jax;
extern const struct kt_plugin kt_plugin_xgboost;
extern const struct kt_plugin kt_plugin_flux;
extern const struct kt_plugin kt_plugin_coscheduling;
extern const struct kt_plugin kt_plugin_volcano;
extern const struct kt_plugin kt_plugin_trainjobstatus;

/* The built-in table (file-scope constant in plugins.c), in the fixed order of framework.h.
 * fw borrows the table; it is valid forever. */
void kt_framework_default(struct kt_framework *fw);

/* Shared by the PodGroup plugins (plugin_coscheduling.c): minMember = the sum of PodSet
 * counts, *min_resources = sum of SinglePodRequests x count (canonical quantities, keys
 * sorted; caller owns it, json_decref). -1 + err on an unparsable or too large quantity. */
KT_MUST_CHECK int kt_podgroup_totals(const struct kt_info *info, int64_t *min_member,
                                     json_t **min_resources, struct kt_err *err);
/* True when the PodGroup <trainjob> of api_version exists in the view and the TrainJob is
 * not suspended (the plugin then returns nothing). */
bool kt_podgroup_skip(const struct kt_build *b, const char *api_version);

/* Internal to the built-in plugins (plugin_plainml.c): the trainer PodSet's node container
 * after applying trainer.numNodes to the PodSet's count. NULL when there is no trainer
 * PodSet, no node container or the TrainJob has no trainer. *ps (when ps is not NULL) gets
 * the trainer PodSet or NULL. Both are borrowed from b->info. */
json_t *kt__trainer_node(struct kt_build *b, struct kt_podset **ps);

/* Internal to the built-in plugins (plugin_torch.c): adds the upstream Invalid error on
 * spec.trainer.env listing (sorted, once each) the env names of tj's trainer that are among
 * the n_reserved names in reserved. Borrows everything; retains nothing. */
void kt__validate_reserved_envs(const struct kt_trainjob *tj, const char *const *reserved,
                                size_t n_reserved, struct kt_ferrs *errs);

#endif
