// SPDX-License-Identifier: Apache-2.0

// kt-certgen DIR - writes the test control plane's key material into DIR: a CA (ca.crt, ca.key),
// the API server's serving certificate (apiserver.*, SANs 127.0.0.1, localhost, the in-cluster
// names of the kubernetes Service and its IP 10.0.0.1, and the node IP when given), the
// service-account signing key pair (sa.key, sa.pub) and client certificates for the admin
// (admin.*, group system:masters) and the two daemon identities (webhook.*,
// controller-manager.*, as system:serviceaccount:kubeflow-system:<sa>). It exists because
// openssl refuses common names longer than 64 bytes, and those usernames are 71 and 73 bytes.
//
// With KT_CERTGEN_NODE_IP and KT_CERTGEN_NODE_NAME set (up.sh --real-node) it also writes the real
// node's identities: kubelet.* (the kubelet's serving certificate for the node IP and name),
// node.* (the kubelet's client identity system:node:NAME in group system:nodes, for the Node
// authorizer), kube-proxy.* (system:kube-proxy, bound by the default system:node-proxier role)
// and kubelet-client.* (the API server's identity towards kubelets, for logs and exec).
package main

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"time"
)

type issuer struct {
	cert *x509.Certificate
	key  crypto.Signer
}

func writePEM(path, typ string, der []byte, mode os.FileMode) error {
	return os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der}), mode)
}

func writeKey(path string, key any) error {
	der, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return err
	}
	return writePEM(path, "PRIVATE KEY", der, 0o600)
}

func serial() *big.Int {
	n, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 120))
	if err != nil {
		panic(err)
	}
	return n
}

// issue writes DIR/NAME.crt and DIR/NAME.key; a nil ca makes a self-signed CA.
func issue(dir, name string, tmpl *x509.Certificate, ca *issuer) (*issuer, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	now := time.Now()
	tmpl.SerialNumber = serial()
	tmpl.NotBefore = now.Add(-time.Hour)
	tmpl.NotAfter = now.Add(7 * 24 * time.Hour)
	parent, signer := tmpl, crypto.Signer(key)
	if ca != nil {
		parent, signer = ca.cert, ca.key
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, parent, &key.PublicKey, signer)
	if err != nil {
		return nil, err
	}
	if err := writePEM(filepath.Join(dir, name+".crt"), "CERTIFICATE", der, 0o644); err != nil {
		return nil, err
	}
	if err := writeKey(filepath.Join(dir, name+".key"), key); err != nil {
		return nil, err
	}
	cert, err := x509.ParseCertificate(der)
	return &issuer{cert: cert, key: key}, err
}

func client(cn string, orgs ...string) *x509.Certificate {
	return &x509.Certificate{
		Subject:     pkix.Name{CommonName: cn, Organization: orgs},
		KeyUsage:    x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
	}
}

func saKeys(dir string) error {
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		return err
	}
	if err := writeKey(filepath.Join(dir, "sa.key"), key); err != nil {
		return err
	}
	der, err := x509.MarshalPKIXPublicKey(&key.PublicKey)
	if err != nil {
		return err
	}
	return writePEM(filepath.Join(dir, "sa.pub"), "PUBLIC KEY", der, 0o644)
}

func run(dir string) error {
	ca, err := issue(dir, "ca", &x509.Certificate{
		Subject:               pkix.Name{CommonName: "kt-test-ca"},
		IsCA:                  true,
		BasicConstraintsValid: true,
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
	}, nil)
	if err != nil {
		return err
	}
	nodeIP := net.ParseIP(os.Getenv("KT_CERTGEN_NODE_IP"))
	ips := []net.IP{net.IPv4(127, 0, 0, 1), net.IPv4(10, 0, 0, 1)}
	if nodeIP != nil {
		ips = append(ips, nodeIP)
	}
	if _, err := issue(dir, "apiserver", &x509.Certificate{
		Subject: pkix.Name{CommonName: "kube-apiserver"},
		DNSNames: []string{"localhost", "kubernetes", "kubernetes.default", "kubernetes.default.svc",
			"kubernetes.default.svc.cluster.local"},
		IPAddresses: ips,
		KeyUsage:    x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}, ca); err != nil {
		return err
	}
	if nodeIP != nil {
		if err := nodeCerts(dir, ca, nodeIP, os.Getenv("KT_CERTGEN_NODE_NAME")); err != nil {
			return err
		}
	}
	if _, err := issue(dir, "admin", client("admin", "system:masters"), ca); err != nil {
		return err
	}
	for _, sa := range []string{"webhook", "controller-manager"} {
		cn := "system:serviceaccount:kubeflow-system:kubeflow-trainer-" + sa
		tmpl := client(cn, "system:serviceaccounts", "system:serviceaccounts:kubeflow-system")
		if _, err := issue(dir, sa, tmpl, ca); err != nil {
			return err
		}
	}
	return saKeys(dir)
}

// nodeCerts writes the real node's identities (see the file comment).
func nodeCerts(dir string, ca *issuer, ip net.IP, name string) error {
	if name == "" {
		return fmt.Errorf("KT_CERTGEN_NODE_NAME is empty")
	}
	if _, err := issue(dir, "kubelet", &x509.Certificate{
		Subject:     pkix.Name{CommonName: name},
		DNSNames:    []string{name, "localhost"},
		IPAddresses: []net.IP{ip, net.IPv4(127, 0, 0, 1)},
		KeyUsage:    x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}, ca); err != nil {
		return err
	}
	ids := map[string]*x509.Certificate{
		"node":           client("system:node:"+name, "system:nodes"),
		"kube-proxy":     client("system:kube-proxy"),
		"kubelet-client": client("kube-apiserver-kubelet-client", "system:masters"),
	}
	for n, tmpl := range ids {
		if _, err := issue(dir, n, tmpl, ca); err != nil {
			return err
		}
	}
	return nil
}

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: kt-certgen DIR")
		os.Exit(2)
	}
	if err := run(os.Args[1]); err != nil {
		fmt.Fprintln(os.Stderr, "kt-certgen:", err)
		os.Exit(1)
	}
}
