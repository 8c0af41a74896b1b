// SPDX-License-Identifier: Apache-2.0

//go:build tools

// Package tools pins containerd's two commands for the real node (scripts/cluster/build.sh
// builds them from this module).
package tools

import (
	_ "github.com/containerd/containerd/cmd/containerd"
	_ "github.com/containerd/containerd/cmd/containerd-shim-runc-v2"
)
