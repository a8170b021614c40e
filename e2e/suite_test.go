// Copyright 2026 The draext Authors.
// SPDX-License-Identifier: Apache-2.0

// Package e2e is draext's end-to-end suite. It runs against any cluster
// (KUBECONFIG) and skips, with the reason, what the cluster cannot show: no
// example driver, a feature gate that is off, no device-plugin node. What
// E2E_REQUIRE names (see capabilities) fails instead of skipping. Each
// spec works in its own namespace, which is deleted afterwards; on failure
// the namespace's objects and events are saved under E2E_ARTIFACTS.
package e2e

import (
	"bufio"
	"context"
	"flag"
	"os"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
)

var (
	driverName = flag.String("driver", envOr("DRAEXT_DRIVER", "gpu.draext.dev"), "DRA driver name of the example driver")
	className  = flag.String("device-class", envOr("DRAEXT_DEVICE_CLASS", "gpu.draext.dev"), "DeviceClass of the example driver")
	image      = flag.String("image", envOr("E2E_IMAGE", "localhost/draext/busybox:1.35"), "image with a POSIX shell for test pods")
	artifacts  = flag.String("artifacts", envOr("E2E_ARTIFACTS", "../_output/e2e-artifacts"), "where objects and events of failed specs are saved")
)

// cluster is what every spec uses.
var cluster struct {
	config *rest.Config
	client kubernetes.Interface
	// gates are the feature gates of the kube-apiserver, from its
	// kubernetes_feature_enabled metric.
	gates map[string]bool
}

func envOr(name, def string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return def
}

func TestE2E(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "draext e2e")
}

var _ = BeforeSuite(func(ctx context.Context) {
	Expect(requiredErr).NotTo(HaveOccurred())
	path := os.Getenv("KUBECONFIG")
	if path == "" {
		skipOrFail("cluster", "KUBECONFIG is not set: point it at a cluster (make up writes _output/cluster/kubeconfig)")
	}
	config, err := clientcmd.BuildConfigFromFlags("", path)
	Expect(err).NotTo(HaveOccurred(), "kubeconfig %s", path)
	config.QPS, config.Burst = 50, 100
	cluster.config = config
	cluster.client, err = kubernetes.NewForConfig(config)
	Expect(err).NotTo(HaveOccurred())
	version, err := cluster.client.Discovery().ServerVersion()
	Expect(err).NotTo(HaveOccurred(), "the cluster in %s does not answer", path)
	GinkgoWriter.Printf("cluster %s, Kubernetes %s\n", config.Host, version.GitVersion)
	cluster.gates = apiserverGates(ctx)
})

// apiserverGates reads kubernetes_feature_enabled{name=...} from the
// apiserver's /metrics.
func apiserverGates(ctx context.Context) map[string]bool {
	raw, err := cluster.client.CoreV1().RESTClient().Get().AbsPath("/metrics").Timeout(30 * time.Second).DoRaw(ctx)
	Expect(err).NotTo(HaveOccurred(), "read the apiserver's /metrics")
	gates := map[string]bool{}
	sc := bufio.NewScanner(strings.NewReader(string(raw)))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if !strings.HasPrefix(line, "kubernetes_feature_enabled{") {
			continue
		}
		i := strings.Index(line, `name="`)
		if i < 0 {
			continue
		}
		name := line[i+6:]
		name = name[:strings.Index(name, `"`)]
		gates[name] = strings.HasSuffix(line, " 1")
	}
	return gates
}

// requireGate skips the spec unless the apiserver has the gate on.
func requireGate(name string) {
	if !cluster.gates[name] {
		skipOrFail("gates", "feature gate "+name+" is off (or unknown) in the kube-apiserver")
	}
}
