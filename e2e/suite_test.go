// Copyright 2026 The draext Authors.
// SPDX-License-Identifier: Apache-2.0

// Package e2e is draext's end-to-end suite. It runs against any cluster
// (KUBECONFIG) and skips, with the reason, what the cluster cannot show: no
// example driver, a feature gate that is off, no device-plugin node. What
// E2E_REQUIRE names (see capabilities) fails instead of skipping. Each
// spec works in its own namespace, which is deleted afterwards; on failure
// the namespace's objects and events are saved under E2E_ARTIFACTS.
//
// The specs are in files named after their area (api_, driver_,
// deviceplugin_, kep5004_, policy_), the helpers they share in
// framework_*_test.go by concern: cluster (gates, clients), spec (namespace,
// setup of the KEP-5004 specs), pods, claims, classes, driver, podresources
// (the kubelets' PodResources API), processes (restarts of the local
// cluster's components) and artifacts.
//
// Besides the flags below (and the variables that set their defaults), the
// suite reads KUBECONFIG, E2E_REQUIRE, E2E_GPUS_PER_NODE and E2E_CDI_DIR
// (what the example driver publishes and writes), E2E_PODRESOURCES and
// E2E_PODRESOURCES_SOCKETS (framework_podresources_test.go),
// E2E_CLUSTER_CTL (framework_processes_test.go), E2E_CLUSTER_MIGRATE
// (migration_test.go) and E2E_SCHEDULER_METRICS (framework_cluster_test.go);
// scripts/test/e2e.sh sets them for the local cluster. E2E_KUBECTL_DRAEXT
// (kubectl_draext_test.go) names the plugin binary, which make e2e builds
// for any cluster.
package e2e

import (
	"context"
	"flag"
	"os"
	"testing"

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
