// Copyright 2026 The draext Authors.
// SPDX-License-Identifier: Apache-2.0

package kindconfig

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

func TestParse(t *testing.T) {
	testCases := map[string]struct {
		config      string
		want        *Settings
		wantErr     string
		wantKubelet map[string]bool
	}{
		"gates, runtime config, a kubelet gate and containerd": {
			config: `kind: Cluster
apiVersion: kind.x-k8s.io/v1alpha4
runtimeConfig:
  resource.k8s.io/v1beta1: "true"
containerdConfigPatches:
  - |-
    [plugins."io.containerd.grpc.v1.cri"]
      enable_cdi = true
kubeadmConfigPatches:
  - |
    kind: ClusterConfiguration
    scheduler:
      extraArgs:
        v: "4"
  - |
    kind: KubeletConfiguration
    featureGates:
      KubeletPodResourcesDynamicResources: true
featureGates:
  DynamicResourceAllocation: true
  DRAExtendedResource: true
`,
			want: &Settings{
				FeatureGates:            map[string]bool{"DynamicResourceAllocation": true, "DRAExtendedResource": true},
				KubeletFeatureGates:     map[string]bool{"DynamicResourceAllocation": true, "DRAExtendedResource": true, "KubeletPodResourcesDynamicResources": true},
				RuntimeConfig:           map[string]string{"resource.k8s.io/v1beta1": "true"},
				ContainerdConfigPatches: []string{"[plugins.\"io.containerd.grpc.v1.cri\"]\n  enable_cdi = true"},
			},
		},
		"not a kind configuration": {
			config:  "kind: ClusterConfiguration\napiVersion: kubeadm.k8s.io/v1beta4\n",
			wantErr: `not a kind cluster configuration (kind "ClusterConfiguration"`,
		},
		"no gates": {
			config:  "kind: Cluster\napiVersion: kind.x-k8s.io/v1alpha4\n",
			wantErr: "sets no featureGates",
		},
		"a kubelet gate against the cluster's": {
			config: `kind: Cluster
apiVersion: kind.x-k8s.io/v1alpha4
kubeadmConfigPatches:
  - |
    kind: KubeletConfiguration
    featureGates:
      DRAExtendedResource: false
featureGates:
  DRAExtendedResource: true
`,
			wantErr: "kubeadmConfigPatches[0]: the KubeletConfiguration sets DRAExtendedResource=false, featureGates DRAExtendedResource=true",
		},
		"a patch that is not YAML": {
			config:  "kind: Cluster\napiVersion: kind.x-k8s.io/v1alpha4\nkubeadmConfigPatches:\n  - \"kind: [\"\nfeatureGates:\n  A: true\n",
			wantErr: "kubeadmConfigPatches[0]:",
		},
	}
	for name, tc := range testCases {
		t.Run(name, func(t *testing.T) {
			got, err := Parse([]byte(tc.config))
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("got %v, want an error containing %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("got %+v\nwant %+v", got, tc.want)
			}
		})
	}
}

// TestKubeadm checks the kubeadm configuration of each kind configuration
// of the repository: every component gets the cluster's gates, the
// apiserver the runtime config, the kubelets their own gates too.
func TestKubeadm(t *testing.T) {
	configs, err := filepath.Glob("../../../kind-configs/*.yaml")
	if err != nil || len(configs) == 0 {
		t.Fatalf("no kind configurations in kind-configs/ (%v)", err)
	}
	for _, path := range configs {
		t.Run(filepath.Base(path), func(t *testing.T) {
			data, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			s, err := Parse(data)
			if err != nil {
				t.Fatal(err)
			}
			if !s.FeatureGates["DRAExtendedResource"] || !s.FeatureGates["DynamicResourceAllocation"] {
				t.Errorf("the kind configuration does not turn on the KEP-5004 gates: %v", s.FeatureGates)
			}
			out, err := s.Kubeadm("v1.33.13-draext.1", "kind-configs/"+filepath.Base(path))
			if err != nil {
				t.Fatal(err)
			}
			docs := strings.Split(string(out), "\n---\n")
			if len(docs) != 3 {
				t.Fatalf("want 3 documents, got %d:\n%s", len(docs), out)
			}
			var cluster struct {
				Kind              string `json:"kind"`
				KubernetesVersion string `json:"kubernetesVersion"`
				APIServer         struct {
					ExtraArgs []arg `json:"extraArgs"`
				} `json:"apiServer"`
				ControllerManager, Scheduler struct {
					ExtraArgs []arg `json:"extraArgs"`
				}
			}
			var kubelet, proxy struct {
				Kind         string          `json:"kind"`
				FeatureGates map[string]bool `json:"featureGates"`
			}
			for i, into := range []any{&cluster, &kubelet, &proxy} {
				if err := yaml.Unmarshal([]byte(docs[i]), into); err != nil {
					t.Fatalf("document %d: %v", i, err)
				}
			}
			gates := arg{Name: "feature-gates", Value: gateFlag(s.FeatureGates)}
			wantAPIServer := []arg{gates}
			if len(s.RuntimeConfig) > 0 {
				wantAPIServer = append(wantAPIServer, arg{Name: "runtime-config", Value: runtimeConfigFlag(s.RuntimeConfig)})
			}
			if cluster.Kind != "ClusterConfiguration" || cluster.KubernetesVersion != "v1.33.13-draext.1" ||
				!reflect.DeepEqual(cluster.APIServer.ExtraArgs, wantAPIServer) ||
				!reflect.DeepEqual(cluster.ControllerManager.ExtraArgs, []arg{gates}) || !reflect.DeepEqual(cluster.Scheduler.ExtraArgs, []arg{gates}) {
				t.Errorf("ClusterConfiguration %+v, want apiServer %v, others %v", cluster, wantAPIServer, gates)
			}
			if kubelet.Kind != "KubeletConfiguration" || !reflect.DeepEqual(kubelet.FeatureGates, s.KubeletFeatureGates) {
				t.Errorf("KubeletConfiguration %+v, want gates %v", kubelet, s.KubeletFeatureGates)
			}
			if proxy.Kind != "KubeProxyConfiguration" || !reflect.DeepEqual(proxy.FeatureGates, s.FeatureGates) {
				t.Errorf("KubeProxyConfiguration %+v, want gates %v", proxy, s.FeatureGates)
			}
			if c := string(s.Containerd("x")); !strings.Contains(c, "enable_cdi = true") {
				t.Errorf("containerd settings without CDI:\n%s", c)
			}
		})
	}
}
