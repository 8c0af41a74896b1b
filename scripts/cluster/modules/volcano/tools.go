// SPDX-License-Identifier: Apache-2.0

// Package tools only pins volcano.sh/apis: scripts/cluster/build.sh runs controller-gen over its
// scheduling/v1beta1 package in this module to produce the Volcano PodGroup CRD offline.
package tools

import _ "volcano.sh/apis/pkg/apis/scheduling/v1beta1"
