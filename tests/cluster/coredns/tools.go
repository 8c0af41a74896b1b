//go:build tools

// Package tools pins CoreDNS for tests/cluster/build.sh (the real node's cluster DNS).
package tools

import _ "github.com/coredns/coredns"
