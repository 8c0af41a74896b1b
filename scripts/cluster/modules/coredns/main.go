// SPDX-License-Identifier: Apache-2.0

// Command coredns is the real node's cluster DNS (tests/cluster/node.sh): CoreDNS built from its
// Go module with only the plugins node.sh's Corefile uses, the way CoreDNS documents compiling a
// custom set (a main package of our own instead of core/plugin's list of all of them). The full
// set drags in the cloud providers' SDKs (route53, azure, clouddns), etcd and more, several
// minutes of a cold build on 2 cores that the tests never run.
package main

import (
	"github.com/coredns/coredns/coremain"

	// The Corefile's plugins; dnsserver.Directives keeps CoreDNS's own order.
	_ "github.com/coredns/coredns/plugin/bind"
	_ "github.com/coredns/coredns/plugin/cache"
	_ "github.com/coredns/coredns/plugin/errors"
	_ "github.com/coredns/coredns/plugin/health"
	_ "github.com/coredns/coredns/plugin/kubernetes"
	_ "github.com/coredns/coredns/plugin/template"
)

func main() {
	coremain.Run()
}
