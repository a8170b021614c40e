// Copyright 2026 The draext Authors.
// SPDX-License-Identifier: Apache-2.0

package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"

	. "github.com/onsi/gomega"
	v1 "k8s.io/api/core/v1"
)

// What the specs ask the kubelets of the local cluster directly: their
// PodResources API, through cmd/draext-podresources (E2E_PODRESOURCES) on
// the sockets that E2E_PODRESOURCES_SOCKETS matches. Against another cluster
// these specs are skipped (scripts/test/e2e.sh sets the variables for the
// local one).

// podResourcesContainer is one container as cmd/draext-podresources prints it
// (its type Container); the e2e module cannot import the main module's
// packages, so this is the suite's one definition of that JSON.
type podResourcesContainer struct {
	Namespace string `json:"namespace"`
	Pod       string `json:"pod"`
	Container string `json:"container"`
	Devices   []struct {
		Resource string   `json:"resource"`
		IDs      []string `json:"ids"`
	} `json:"devices"`
	Dynamic []struct {
		Claim          string   `json:"claim"`
		ClaimNamespace string   `json:"claimNamespace"`
		Driver         string   `json:"driver"`
		Pool           string   `json:"pool"`
		Device         string   `json:"device"`
		CDI            []string `json:"cdi"`
	} `json:"dynamic"`
}

// dynamicDevices lists the container's DRA devices as claim:driver/pool/device.
func (c podResourcesContainer) dynamicDevices() []string {
	var out []string
	for _, d := range c.Dynamic {
		out = append(out, d.Claim+":"+d.Driver+"/"+d.Pool+"/"+d.Device)
	}
	return out
}

// requirePodResources skips the spec unless the suite can ask the kubelets.
func requirePodResources() {
	if os.Getenv("E2E_PODRESOURCES") == "" || os.Getenv("E2E_PODRESOURCES_SOCKETS") == "" {
		skipOrFail("podresources", "E2E_PODRESOURCES and E2E_PODRESOURCES_SOCKETS are not set: the kubelets' PodResources sockets are not on this host (make e2e sets them for the local cluster)")
	}
}

// podResources asks every kubelet of the local cluster what it reports for
// the pod and returns its containers by name.
func podResources(ctx context.Context, pod *v1.Pod) map[string]podResourcesContainer {
	sockets, err := filepath.Glob(os.Getenv("E2E_PODRESOURCES_SOCKETS"))
	Expect(err).NotTo(HaveOccurred())
	Expect(sockets).NotTo(BeEmpty(), "no kubelet PodResources socket matches %s", os.Getenv("E2E_PODRESOURCES_SOCKETS"))
	out := map[string]podResourcesContainer{}
	for _, socket := range sockets {
		cmd := exec.CommandContext(ctx, os.Getenv("E2E_PODRESOURCES"), "--socket", socket, "--namespace", pod.Namespace, "--pod", pod.Name)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		data, err := cmd.Output()
		Expect(err).NotTo(HaveOccurred(), "draext-podresources: %s", stderr.String())
		var containers []podResourcesContainer
		Expect(json.Unmarshal(data, &containers)).To(Succeed())
		for _, c := range containers {
			out[c.Container] = c
		}
	}
	return out
}
