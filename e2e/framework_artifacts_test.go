// Copyright 2026 The draext Authors.
// SPDX-License-Identifier: Apache-2.0

package e2e

import (
	"context"
	"os"
	"path/filepath"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/yaml"
)

// collect saves pods, claims, slices and events of a failed spec.
func collect(ctx context.Context, ns string) {
	dir := filepath.Join(*artifacts, strings.NewReplacer(" ", "_", "/", "_").Replace(CurrentSpecReport().FullText()))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		GinkgoWriter.Printf("cannot save artifacts: %v\n", err)
		return
	}
	save := func(name string, obj any, err error) {
		if err != nil {
			obj = map[string]string{"error": err.Error()}
		}
		if list, err := meta.ExtractList(asObject(obj)); err == nil {
			for _, o := range list {
				if m, err := meta.Accessor(o); err == nil {
					m.SetManagedFields(nil)
				}
			}
		}
		data, _ := yaml.Marshal(obj)
		_ = os.WriteFile(filepath.Join(dir, name+".yaml"), data, 0o644)
	}
	pods, err := cluster.client.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{})
	save("pods", pods, err)
	events, err := cluster.client.CoreV1().Events(ns).List(ctx, metav1.ListOptions{})
	save("events", events, err)
	claims, err := cluster.client.ResourceV1beta1().ResourceClaims(ns).List(ctx, metav1.ListOptions{})
	save("resourceclaims", claims, err)
	slices, err := cluster.client.ResourceV1beta1().ResourceSlices().List(ctx, metav1.ListOptions{})
	save("resourceslices", slices, err)
	if pods != nil {
		for _, p := range pods.Items {
			for _, c := range p.Spec.Containers {
				logs, err := cluster.client.CoreV1().Pods(ns).GetLogs(p.Name, &v1.PodLogOptions{Container: c.Name}).DoRaw(ctx)
				if err != nil {
					logs = []byte(err.Error())
				}
				_ = os.WriteFile(filepath.Join(dir, p.Name+"-"+c.Name+".log"), logs, 0o644)
			}
		}
	}
	GinkgoWriter.Printf("artifacts of the failed spec: %s\n", dir)
}

// asObject returns obj as a runtime.Object, or nil.
func asObject(obj any) runtime.Object {
	o, _ := obj.(runtime.Object)
	return o
}
