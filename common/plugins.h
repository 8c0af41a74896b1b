/* common/plugins.h - the built-in plugins (one file each, common/plugin_<name>.c).
 *
 * framework.c lists them in the fixed order documented in framework.h. */
#ifndef KT_PLUGINS_H
#define KT_PLUGINS_H

#include "framework.h"

extern const struct kt_plugin kt_plugin_torch;
extern const struct kt_plugin kt_plugin_plainml;
extern const struct kt_plugin kt_plugin_jobset;

#endif
