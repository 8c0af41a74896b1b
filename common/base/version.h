/* SPDX-License-Identifier: Apache-2.0 */
/* common/base/version.h - kt's release and the upstream release whose API and behaviour it
 * implements. One place for every binary: ktctl --version, both daemons' --version, the
 * git_version of kubeflow_trainer_build_info (unless built with -DKT_BUILD_VERSION=...) and the
 * tag `make image` gives kt's image (the Helm chart's version). No allocation, no state. */
#ifndef KT_VERSION_H
#define KT_VERSION_H

#define KT_RELEASE "0.1.0"
#define KT_UPSTREAM_RELEASE "v2.3.0"

#endif
