// Copyright 2026 The draext Authors.
// SPDX-License-Identifier: Apache-2.0

package draplugin

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	resourceapi "k8s.io/api/resource/v1beta1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
	"k8s.io/klog/v2"
	"k8s.io/klog/v2/ktesting"
)

// heldAnswers is a DevicePluginHolders that returns the answers in turn and
// then the last one again; an answer with err set fails.
type heldAnswers struct {
	mu      sync.Mutex
	answers []heldAnswer
	calls   int
}

type heldAnswer struct {
	held map[string]string
	err  error
}

func (h *heldAnswers) holders(context.Context) (map[string]string, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	a := h.answers[min(h.calls, len(h.answers)-1)]
	h.calls++
	return a.held, a.err
}

// recordSliceSizes records the device count of every ResourceSlice the
// driver creates or updates, in order.
func recordSliceSizes(client *fake.Clientset) func() []int {
	var mu sync.Mutex
	var sizes []int
	record := func(action k8stesting.Action) (bool, runtime.Object, error) {
		// Creates and updates both carry the object.
		a, ok := action.(k8stesting.CreateAction)
		if !ok {
			return false, nil, nil
		}
		if s, ok := a.GetObject().(*resourceapi.ResourceSlice); ok {
			mu.Lock()
			sizes = append(sizes, len(s.Spec.Devices))
			mu.Unlock()
		}
		return false, nil, nil
	}
	client.PrependReactor("create", "resourceslices", record)
	client.PrependReactor("update", "resourceslices", record)
	return func() []int {
		mu.Lock()
		defer mu.Unlock()
		return slices.Clone(sizes)
	}
}

// TestDevicePluginHolders: on a node that moves from the device plugin to
// DRA with pods running, the GPUs that device-plugin containers still hold
// are never published, and prepared only once they are free.
func TestDevicePluginHolders(t *testing.T) {
	devices := mockDevices(t, "dgxa100", "node-a")
	uuid := func(i int) string { return devices[i].UUID }
	errKubelet := errors.New("kubelet PodResources socket does not answer")

	testCases := map[string]struct {
		answers []heldAnswer
		// wantFirst is the device count of the first slice written,
		// wantLast that of the slice in the end.
		wantFirst, wantLast int
		// wantNever is a device count no slice may have had.
		wantNever int
	}{
		"held GPUs are never published": {
			answers:   []heldAnswer{{held: map[string]string{uuid(0): "ns/dp/app", uuid(1): "ns/dp/app"}}},
			wantFirst: 6, wantLast: 6, wantNever: 8,
		},
		"a GPU given back is published": {
			answers: []heldAnswer{
				{held: map[string]string{uuid(2): "ns/dp/app", uuid(3): "ns/dp2/app"}},
				{held: map[string]string{uuid(3): "ns/dp2/app"}},
			},
			wantFirst: 6, wantLast: 7, wantNever: 8,
		},
		"the start waits for the first answer": {
			answers: []heldAnswer{
				{err: errKubelet}, {err: errKubelet},
				{held: map[string]string{uuid(7): "ns/dp/app"}},
			},
			wantFirst: 7, wantLast: 7, wantNever: 8,
		},
		"a failing answer keeps the last one": {
			answers: []heldAnswer{
				{held: map[string]string{uuid(4): "ns/dp/app"}},
				{err: errKubelet},
			},
			wantFirst: 7, wantLast: 7, wantNever: 8,
		},
		"IDs of other devices are ignored": {
			answers:   []heldAnswer{{held: map[string]string{"GPU-of-another-node": "ns/dp/app"}}},
			wantFirst: 8, wantLast: 8,
		},
		"nothing held": {
			answers:   []heldAnswer{{held: map[string]string{}}},
			wantFirst: 8, wantLast: 8,
		},
	}
	for name, tc := range testCases {
		t.Run(name, func(t *testing.T) {
			logger := ktesting.NewLogger(t, ktesting.NewConfig(ktesting.Verbosity(5), ktesting.BufferLogs(true)))
			ctx, cancel := context.WithCancel(klog.NewContext(context.Background(), logger))
			defer cancel()
			client := fake.NewClientset(&v1.Node{ObjectMeta: metav1.ObjectMeta{Name: "node-a", UID: "node-a-uid"}})
			generateNames(client)
			sizes := recordSliceSizes(client)
			answers := &heldAnswers{answers: tc.answers}
			// Start retries every heldRetry (2 s): the case that fails twice
			// takes about 4 s.
			td := startTestDriver(ctx, t, client, "held", func(cfg *Config) {
				cfg.DevicePluginHolders = answers.holders
				cfg.HeldCheckPeriod = 50 * time.Millisecond
			})
			defer td.Stop()

			waitForOurSlice(ctx, t, client, tc.wantLast, 10*time.Second)
			// Let the watch of held GPUs run a few more times.
			time.Sleep(300 * time.Millisecond)
			waitForOurSlice(ctx, t, client, tc.wantLast, time.Second)
			got := sizes()
			if len(got) == 0 || got[0] != tc.wantFirst {
				t.Errorf("device counts of the slices written = %v, want the first to be %d", got, tc.wantFirst)
			}
			if tc.wantNever != 0 && slices.Contains(got, tc.wantNever) {
				t.Errorf("device counts of the slices written = %v, none may have %d", got, tc.wantNever)
			}
		})
	}
}

// TestPrepareRefusesHeldGPU: a claim allocated a GPU that a device-plugin
// container holds (allocated before the driver knew) is not prepared, and
// the error names the GPU and the container.
func TestPrepareRefusesHeldGPU(t *testing.T) {
	devices := mockDevices(t, "dgxa100", "node-a")
	logger := ktesting.NewLogger(t, ktesting.NewConfig(ktesting.BufferLogs(true)))
	ctx, cancel := context.WithCancel(klog.NewContext(context.Background(), logger))
	defer cancel()
	client := fake.NewClientset(&v1.Node{ObjectMeta: metav1.ObjectMeta{Name: "node-a", UID: "node-a-uid"}})
	generateNames(client)
	answers := &heldAnswers{answers: []heldAnswer{{held: map[string]string{devices[1].UUID: "team-a/trainer/main"}}}}
	td := startTestDriver(ctx, t, client, "held", func(cfg *Config) { cfg.DevicePluginHolders = answers.holders })
	defer td.Stop()

	testCases := map[string]struct {
		claim   *resourceapi.ResourceClaim
		wantErr string
	}{
		"a held GPU": {
			claim:   allocatedClaim("u1", "c1", result("gpu", DefaultDriverName, "node-a", "gpu-1")),
			wantErr: `request "gpu": GPU ` + devices[1].UUID + ` is still held by device-plugin container team-a/trainer/main`,
		},
		"a free GPU": {
			claim: allocatedClaim("u2", "c2", result("gpu", DefaultDriverName, "node-a", "gpu-2")),
		},
	}
	for name, tc := range testCases {
		t.Run(name, func(t *testing.T) {
			res, err := td.PrepareResourceClaims(ctx, []*resourceapi.ResourceClaim{tc.claim})
			if err != nil {
				t.Fatal(err)
			}
			got := res[tc.claim.UID]
			switch {
			case tc.wantErr == "" && got.Err != nil:
				t.Errorf("prepare: %v", got.Err)
			case tc.wantErr != "" && (got.Err == nil || !strings.Contains(got.Err.Error(), tc.wantErr)):
				t.Errorf("prepare error = %v, want one containing %q", got.Err, tc.wantErr)
			}
		})
	}
}
