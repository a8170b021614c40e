// Copyright 2026 The draext Authors.
// SPDX-License-Identifier: Apache-2.0

package draplugin

import (
	"context"
	"errors"
	"maps"
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

	"github.com/draext/draext/internal/gpudriver/gpu"
)

// heldAnswers plays a kubelet and an API server: every call of holders
// takes the next answer (and then the last one again); pods gives the API
// server's view at the time of that answer.
type heldAnswers struct {
	mu      sync.Mutex
	answers []heldAnswer
	calls   int
	// current is the answer of the last call of holders.
	current heldAnswer
}

// heldAnswer is one answer of the kubelet, and what the API server says at
// that time.
type heldAnswer struct {
	// held maps device-plugin IDs to holders (namespace/pod/container);
	// their pods are in the answer.
	held map[string]string
	// lists are more pods in the answer (namespace/name).
	lists []string
	// lacksAll makes the answer list no pod at all, as a kubelet that has
	// just started: held must be empty.
	lacksAll bool
	// expected are the pods that the API server says may hold GPUs; nil:
	// those of the answer.
	expected []string
	// expectedErr: the API server cannot tell.
	expectedErr error
	// err: the kubelet does not answer.
	err error
}

func (a heldAnswer) pods() map[string]bool {
	pods := map[string]bool{}
	if a.lacksAll {
		return pods
	}
	for _, holder := range a.held {
		ns, rest, _ := strings.Cut(holder, "/")
		pod, _, _ := strings.Cut(rest, "/")
		pods[ns+"/"+pod] = true
	}
	for _, p := range a.lists {
		pods[p] = true
	}
	return pods
}

func (h *heldAnswers) holders(context.Context) (KubeletAnswer, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	a := h.answers[min(h.calls, len(h.answers)-1)]
	h.calls++
	h.current = a
	if a.err != nil {
		return KubeletAnswer{}, a.err
	}
	return KubeletAnswer{Pods: a.pods(), Holders: maps.Clone(a.held)}, nil
}

func (h *heldAnswers) expectedPods(context.Context) (map[string]bool, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	a := h.current
	switch {
	case a.expectedErr != nil:
		return nil, a.expectedErr
	case a.expected == nil:
		return a.pods(), nil
	}
	pods := map[string]bool{}
	for _, p := range a.expected {
		pods[p] = true
	}
	return pods, nil
}

// calledAtLeast reports whether holders was called n times or more.
func (h *heldAnswers) calledAtLeast(n int) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.calls >= n
}

// answered reports whether every answer has been given at least twice
// over: the driver has acted on all of them.
func (h *heldAnswers) answered() bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.calls >= len(h.answers)+2
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

// mockWithMIG is a mock NVML of node-a whose GPU 6 is in MIG mode with two
// MIG devices, and their UUIDs.
func mockWithMIG(t *testing.T) (func(string) (string, error), []string) {
	t.Helper()
	lib, err := gpu.NewMock("dgxa100", "node-a")
	if err != nil {
		t.Fatal(err)
	}
	migs, err := gpu.AddMockMIGDevices(lib, 6, 2)
	if err != nil {
		t.Fatal(err)
	}
	return func(id string) (string, error) { return gpu.MIGParent(lib, id) }, migs
}

// TestDevicePluginHolders: on a node that moves from the device plugin to
// DRA with pods running, the GPUs that device-plugin containers may still
// hold are never published, and a GPU is published once it is known to be
// free.
func TestDevicePluginHolders(t *testing.T) {
	devices := mockDevices(t, "dgxa100", "node-a")
	uuid := func(i int) string { return devices[i].UUID }
	migParent, migs := mockWithMIG(t)
	errKubelet := errors.New("kubelet PodResources socket does not answer")
	errAPI := errors.New("the watch of the node's pods has not synced yet")

	testCases := map[string]struct {
		answers []heldAnswer
		// ignoreForeign sets Config.IgnoreForeignGPUs.
		ignoreForeign bool
		// wantFirst is the device count of the first slice written,
		// wantLast that of the slice in the end.
		wantFirst, wantLast int
		// wantNever are device counts no slice may have had.
		wantNever []int
	}{
		"held GPUs are never published": {
			answers:   []heldAnswer{{held: map[string]string{uuid(0): "ns/dp/app", uuid(1): "ns/dp/app"}}},
			wantFirst: 6, wantLast: 6, wantNever: []int{7, 8},
		},
		"a GPU given back is published": {
			answers: []heldAnswer{
				{held: map[string]string{uuid(2): "ns/dp/app", uuid(3): "ns/dp2/app"}},
				{held: map[string]string{uuid(3): "ns/dp2/app"}},
			},
			wantFirst: 6, wantLast: 7, wantNever: []int{8},
		},
		"the start waits for the first answer": {
			answers: []heldAnswer{
				{err: errKubelet}, {err: errKubelet},
				{held: map[string]string{uuid(7): "ns/dp/app"}},
			},
			wantFirst: 7, wantLast: 7, wantNever: []int{8},
		},
		"a failing answer keeps the last one": {
			answers: []heldAnswer{
				{held: map[string]string{uuid(4): "ns/dp/app"}},
				{err: errKubelet},
			},
			wantFirst: 7, wantLast: 7, wantNever: []int{8},
		},
		"nothing held": {
			answers:   []heldAnswer{{held: map[string]string{}}},
			wantFirst: 8, wantLast: 8,
		},

		// Issue 40, 1: a kubelet that has just started answers before it
		// has added its pods.
		"a kubelet restart: held, an empty answer, held again": {
			answers: []heldAnswer{
				{held: map[string]string{uuid(1): "ns/dp/app"}},
				{lacksAll: true, expected: []string{"ns/dp"}},
				{lacksAll: true, expected: []string{"ns/dp"}},
				{held: map[string]string{uuid(1): "ns/dp/app"}},
			},
			wantFirst: 7, wantLast: 7, wantNever: []int{8},
		},
		"a reboot: the first answers are empty": {
			answers: []heldAnswer{
				{lacksAll: true, expected: []string{"ns/dp", "ns/dra"}},
				{lacksAll: true, expected: []string{"ns/dp", "ns/dra"}},
				{held: map[string]string{uuid(5): "ns/dp/app"}, lists: []string{"ns/dra"}, expected: []string{"ns/dp", "ns/dra"}},
			},
			wantFirst: 7, wantLast: 7, wantNever: []int{8},
		},
		"a kubelet that has added some pods": {
			answers: []heldAnswer{
				{held: map[string]string{uuid(1): "ns/dp1/app"}, expected: []string{"ns/dp1", "ns/dp2"}},
				{held: map[string]string{uuid(1): "ns/dp1/app", uuid(2): "ns/dp2/app"}},
			},
			wantFirst: 6, wantLast: 6, wantNever: []int{7, 8},
		},
		"an incomplete answer adds what it lists and takes nothing back": {
			answers: []heldAnswer{
				{held: map[string]string{uuid(1): "ns/dp1/app"}},
				{held: map[string]string{uuid(2): "ns/dp2/app"}, expected: []string{"ns/dp1", "ns/dp2"}},
			},
			wantFirst: 7, wantLast: 6, wantNever: []int{8},
		},
		"the API server cannot tell which pods may hold GPUs": {
			answers: []heldAnswer{
				{lacksAll: true, expectedErr: errAPI},
				{held: map[string]string{uuid(3): "ns/dp/app"}},
				{lacksAll: true, expectedErr: errAPI},
			},
			wantFirst: 7, wantLast: 7, wantNever: []int{8},
		},

		// Issue 40, 2: the device-plugin ID schemes of a real node.
		"index IDs": {
			answers:   []heldAnswer{{held: map[string]string{"0": "ns/dp/app", "3": "ns/dp/app"}}},
			wantFirst: 6, wantLast: 6, wantNever: []int{7, 8},
		},
		"replicas of time-sliced GPUs, by UUID and by index": {
			answers:   []heldAnswer{{held: map[string]string{uuid(2) + "::0": "ns/a/app", uuid(2) + "::3": "ns/b/app", "4::1": "ns/c/app"}}},
			wantFirst: 6, wantLast: 6, wantNever: []int{7, 8},
		},
		"a MIG device by index": {
			answers:   []heldAnswer{{held: map[string]string{"2:1": "ns/dp/app"}}},
			wantFirst: 7, wantLast: 7, wantNever: []int{8},
		},
		"MIG devices (strategy single) hold their GPU": {
			answers:   []heldAnswer{{held: map[string]string{migs[0]: "ns/dp/app", migs[1]: "ns/dp2/app"}}},
			wantFirst: 7, wantLast: 7, wantNever: []int{8},
		},
		"a MIG device of a driver before R470": {
			answers:   []heldAnswer{{held: map[string]string{"MIG-" + uuid(5) + "/1/0": "ns/dp/app"}}},
			wantFirst: 7, wantLast: 7, wantNever: []int{8},
		},
		"another plugin's IDs withhold every GPU until they are given back": {
			answers: []heldAnswer{
				{held: map[string]string{"nic-0": "ns/dp/app", uuid(1): "ns/dp/app"}},
				{held: map[string]string{uuid(1): "ns/dp/app"}},
			},
			wantFirst: 0, wantLast: 7, wantNever: []int{8},
		},
		"an index that no GPU has withholds every GPU": {
			answers:   []heldAnswer{{held: map[string]string{"8": "ns/dp/app"}}},
			wantFirst: 0, wantLast: 0,
		},
		"a MIG device that NVML does not know withholds every GPU": {
			answers:   []heldAnswer{{held: map[string]string{gpu.MockMIGUUID(uuid(6), 5): "ns/dp/app"}}},
			wantFirst: 0, wantLast: 0,
		},
		"another node's GPU withholds every GPU": {
			answers:   []heldAnswer{{held: map[string]string{gpu.DeterministicUUID("node-b", 0): "ns/dp/app"}}},
			wantFirst: 0, wantLast: 0,
		},
		"another node's GPU counts for nothing with IgnoreForeignGPUs": {
			answers:       []heldAnswer{{held: map[string]string{gpu.DeterministicUUID("node-b", 0): "ns/dp/app", "1": "ns/dp/app"}}},
			ignoreForeign: true,
			wantFirst:     7, wantLast: 7, wantNever: []int{8},
		},
		"IgnoreForeignGPUs does not ignore other IDs": {
			answers:       []heldAnswer{{held: map[string]string{"GPU": "ns/dp/app"}}},
			ignoreForeign: true,
			wantFirst:     0, wantLast: 0,
		},
	}
	for name, tc := range testCases {
		t.Run(name, func(t *testing.T) {
			// Each case has its own driver, client and sockets.
			t.Parallel()
			logger := ktesting.NewLogger(t, ktesting.NewConfig(ktesting.Verbosity(5), ktesting.BufferLogs(true)))
			ctx, cancel := context.WithCancel(klog.NewContext(context.Background(), logger))
			defer cancel()
			client := fake.NewClientset(&v1.Node{ObjectMeta: metav1.ObjectMeta{Name: "node-a", UID: "node-a-uid"}})
			generateNames(client)
			sizes := recordSliceSizes(client)
			answers := &heldAnswers{answers: tc.answers}
			td := startTestDriver(ctx, t, client, "held", func(cfg *Config) {
				cfg.DevicePluginHolders = answers.holders
				cfg.DevicePluginPods = answers.expectedPods
				cfg.MIGParent = migParent
				cfg.IgnoreForeignGPUs = tc.ignoreForeign
				cfg.HeldCheckPeriod = 50 * time.Millisecond
			})
			defer td.Stop()

			deadline := time.Now().Add(10 * time.Second)
			for !answers.answered() {
				if time.Now().After(deadline) {
					t.Fatal("the driver did not ask for every answer in 10 s")
				}
				time.Sleep(20 * time.Millisecond)
			}
			waitForOurSlice(ctx, t, client, tc.wantLast, 5*time.Second)
			got := sizes()
			if len(got) == 0 || got[0] != tc.wantFirst {
				t.Errorf("device counts of the slices written = %v, want the first to be %d", got, tc.wantFirst)
			}
			for _, never := range tc.wantNever {
				if slices.Contains(got, never) {
					t.Errorf("device counts of the slices written = %v, none may have %d", got, never)
				}
			}
		})
	}
}

// TestPrepareRefusesHeldGPU: a claim allocated a GPU that a device-plugin
// container may hold (allocated before the driver knew) is not prepared,
// and the error says why.
func TestPrepareRefusesHeldGPU(t *testing.T) {
	devices := mockDevices(t, "dgxa100", "node-a")
	held := heldAnswer{held: map[string]string{devices[1].UUID: "team-a/trainer/main"}}
	testCases := map[string]struct {
		answers []heldAnswer
		device  string
		wantErr string
	}{
		"a held GPU": {
			answers: []heldAnswer{held}, device: "gpu-1",
			wantErr: `request "gpu": GPU ` + devices[1].UUID + ` is still held by device-plugin container team-a/trainer/main`,
		},
		"a free GPU": {answers: []heldAnswer{held}, device: "gpu-2"},
		"before the kubelet has listed every pod": {
			answers: []heldAnswer{{lacksAll: true, expected: []string{"team-a/trainer"}}}, device: "gpu-2",
			wantErr: `request "gpu": GPU ` + devices[2].UUID + ` is withheld: the kubelet has not yet listed every pod that may hold device-plugin GPUs`,
		},
		"while an ID maps to no GPU": {
			answers: []heldAnswer{{held: map[string]string{"nic-7": "team-b/x/main"}}}, device: "gpu-2",
			wantErr: `request "gpu": GPU ` + devices[2].UUID + ` is withheld: device-plugin IDs in use map to none of this node's GPUs: nic-7 (team-b/x/main)`,
		},
	}
	for name, tc := range testCases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			logger := ktesting.NewLogger(t, ktesting.NewConfig(ktesting.BufferLogs(true)))
			ctx, cancel := context.WithCancel(klog.NewContext(context.Background(), logger))
			defer cancel()
			client := fake.NewClientset(&v1.Node{ObjectMeta: metav1.ObjectMeta{Name: "node-a", UID: "node-a-uid"}})
			generateNames(client)
			answers := &heldAnswers{answers: tc.answers}
			td := startTestDriver(ctx, t, client, "held", func(cfg *Config) {
				cfg.DevicePluginHolders = answers.holders
				cfg.DevicePluginPods = answers.expectedPods
				cfg.HeldCheckPeriod = 50 * time.Millisecond
			})
			defer td.Stop()
			// The second question comes after the first answer was applied.
			for !answers.calledAtLeast(2) {
				time.Sleep(10 * time.Millisecond)
			}
			claim := allocatedClaim("u1", "c1", result("gpu", DefaultDriverName, "node-a", tc.device))
			res, err := td.PrepareResourceClaims(ctx, []*resourceapi.ResourceClaim{claim})
			if err != nil {
				t.Fatal(err)
			}
			got := res[claim.UID]
			switch {
			case tc.wantErr == "" && got.Err != nil:
				t.Errorf("prepare: %v", got.Err)
			case tc.wantErr != "" && (got.Err == nil || !strings.Contains(got.Err.Error(), tc.wantErr)):
				t.Errorf("prepare error = %v, want one containing %q", got.Err, tc.wantErr)
			}
		})
	}
}

// TestKubeletRestartKeepsHeldGPU (issue 40): the device-plugin pod holds
// GPU 1, then the kubelet restarts and answers without its pods, then it
// lists them again. No slice with GPU 1 is ever written, and Prepare
// refuses GPU 1 throughout.
func TestKubeletRestartKeepsHeldGPU(t *testing.T) {
	devices := mockDevices(t, "dgxa100", "node-a")
	logger := ktesting.NewLogger(t, ktesting.NewConfig(ktesting.BufferLogs(true)))
	ctx, cancel := context.WithCancel(klog.NewContext(context.Background(), logger))
	defer cancel()
	client := fake.NewClientset(&v1.Node{ObjectMeta: metav1.ObjectMeta{Name: "node-a", UID: "node-a-uid"}})
	generateNames(client)
	var mu sync.Mutex
	var written [][]string // the device names of every slice written
	record := func(action k8stesting.Action) (bool, runtime.Object, error) {
		if s, ok := action.(k8stesting.CreateAction).GetObject().(*resourceapi.ResourceSlice); ok {
			var names []string
			for _, d := range s.Spec.Devices {
				names = append(names, d.Name)
			}
			mu.Lock()
			written = append(written, names)
			mu.Unlock()
		}
		return false, nil, nil
	}
	client.PrependReactor("create", "resourceslices", record)
	client.PrependReactor("update", "resourceslices", record)
	held := heldAnswer{held: map[string]string{devices[1].UUID: "ns/dp/app"}, lists: []string{"ns/other"}}
	restarted := heldAnswer{lacksAll: true, expected: []string{"ns/dp", "ns/other"}}
	someAdded := heldAnswer{lists: []string{"ns/other"}, expected: []string{"ns/dp", "ns/other"}}
	answers := &heldAnswers{answers: []heldAnswer{held, held, restarted, restarted, someAdded, someAdded, held, held}}
	td := startTestDriver(ctx, t, client, "held", func(cfg *Config) {
		cfg.DevicePluginHolders = answers.holders
		cfg.DevicePluginPods = answers.expectedPods
		cfg.HeldCheckPeriod = 30 * time.Millisecond
	})
	defer td.Stop()

	deadline := time.Now().Add(10 * time.Second)
	for i := 0; !answers.answered(); i++ {
		if time.Now().After(deadline) {
			t.Fatal("the driver did not ask for every answer in 10 s")
		}
		claim := allocatedClaim("u1", "c1", result("gpu", DefaultDriverName, "node-a", "gpu-1"))
		res, err := td.PrepareResourceClaims(ctx, []*resourceapi.ResourceClaim{claim})
		if err != nil {
			t.Fatal(err)
		}
		if res[claim.UID].Err == nil {
			t.Fatalf("Prepare of GPU 1 succeeded in round %d", i)
		}
		time.Sleep(5 * time.Millisecond)
	}
	waitForOurSlice(ctx, t, client, 7, 5*time.Second)
	mu.Lock()
	defer mu.Unlock()
	if len(written) == 0 {
		t.Fatal("no slice written")
	}
	for i, names := range written {
		if slices.Contains(names, "gpu-1") {
			t.Errorf("slice write %d of %d lists gpu-1, which the device-plugin pod holds: %v", i+1, len(written), names)
		}
	}
	logs := logger.GetSink().(ktesting.Underlier).GetBuffer().String()
	if !hasLine(logs, "Not trusting the kubelet's answer", "ns/dp") {
		t.Errorf("no log line says that the answer lacks pod ns/dp:\n%s", logs)
	}
}

// TestHeldRule checks heldGPUs.observe answer by answer: what is withheld,
// and whether a change is reported.
func TestHeldRule(t *testing.T) {
	devices := mockDevices(t, "dgxa100", "node-a")[:3]
	uuid := func(i int) string { return devices[i].UUID }
	type step struct {
		answer      heldAnswer
		wantHeld    []string // GPUs withheld, by UUID
		wantChanged bool
	}
	all := []string{uuid(0), uuid(1), uuid(2)}
	testCases := map[string][]step{
		"everything is withheld until an answer is complete": {
			{answer: heldAnswer{lacksAll: true, expected: []string{"ns/dp"}}, wantHeld: all},
			{answer: heldAnswer{held: map[string]string{uuid(0): "ns/dp/app"}}, wantHeld: []string{uuid(0)}, wantChanged: true},
		},
		"a complete answer replaces, an incomplete one adds": {
			{answer: heldAnswer{held: map[string]string{uuid(0): "ns/a/app"}}, wantHeld: []string{uuid(0)}, wantChanged: true},
			{answer: heldAnswer{held: map[string]string{uuid(1): "ns/b/app"}, expected: []string{"ns/a", "ns/b"}}, wantHeld: []string{uuid(0), uuid(1)}, wantChanged: true},
			{answer: heldAnswer{lacksAll: true, expected: []string{"ns/a", "ns/b"}}, wantHeld: []string{uuid(0), uuid(1)}},
			{answer: heldAnswer{held: map[string]string{uuid(1): "ns/b/app"}}, wantHeld: []string{uuid(1)}, wantChanged: true},
			{answer: heldAnswer{held: map[string]string{}}, wantChanged: true},
		},
		"pods the API server does not know do not matter": {
			{answer: heldAnswer{held: map[string]string{uuid(2): "ns/new/app"}, expected: []string{}}, wantHeld: []string{uuid(2)}, wantChanged: true},
		},
		"an unmappable ID withholds everything while it is in use": {
			{answer: heldAnswer{held: map[string]string{"x": "ns/a/app"}}, wantHeld: all},
			{answer: heldAnswer{held: map[string]string{uuid(2): "ns/a/app"}}, wantHeld: []string{uuid(2)}, wantChanged: true},
			{answer: heldAnswer{held: map[string]string{"y": "ns/a/app"}, expected: []string{"ns/a", "ns/b"}}, wantHeld: all, wantChanged: true},
			{answer: heldAnswer{lists: []string{"ns/a", "ns/b"}}, wantChanged: true},
		},
	}
	for name, steps := range testCases {
		t.Run(name, func(t *testing.T) {
			logger, _ := ktesting.NewTestContext(t)
			h := newHeldGPUs(devices, newDeviceIDs(devices, nil, false), nil, nil)
			now := time.Now()
			for i, s := range steps {
				answers := &heldAnswers{answers: []heldAnswer{s.answer}}
				answer, _ := answers.holders(context.Background())
				expected, expectedErr := answers.expectedPods(context.Background())
				changed := h.observe(logger, answer, expected, expectedErr, now.Add(time.Duration(i)*time.Second))
				got := slices.Sorted(maps.Keys(h.withheld()))
				want := slices.Sorted(slices.Values(s.wantHeld))
				if !slices.Equal(got, want) || changed != s.wantChanged {
					t.Errorf("answer %d: withheld %v, changed %v; want %v, %v", i+1, got, changed, want, s.wantChanged)
				}
			}
		})
	}
}

func TestDeviceIDs(t *testing.T) {
	devices := mockDevices(t, "dgxa100", "node-a")
	uuid := func(i int) string { return devices[i].UUID }
	migParent, migs := mockWithMIG(t)
	foreign := gpu.DeterministicUUID("node-b", 0)
	testCases := map[string]struct {
		id            string
		ignoreForeign bool
		noMIG         bool
		want          string // "" with wantErr "": ignored
		wantErr       string
	}{
		"GPU UUID":                       {id: uuid(3), want: uuid(3)},
		"replica of a GPU":               {id: uuid(3) + "::7", want: uuid(3)},
		"index":                          {id: "0", want: uuid(0)},
		"index 7":                        {id: "7", want: uuid(7)},
		"replica of an index":            {id: "5::0", want: uuid(5)},
		"MIG device by index":            {id: "4:2", want: uuid(4)},
		"MIG device":                     {id: migs[1], want: uuid(6)},
		"replica of a MIG device":        {id: migs[0] + "::2", want: uuid(6)},
		"MIG device before R470":         {id: "MIG-" + uuid(2) + "/7/0", want: uuid(2)},
		"index out of range":             {id: "8", wantErr: "no GPU has index 8"},
		"index with a leading zero":      {id: "01", wantErr: `"01" is none of the device ID schemes`},
		"negative index":                 {id: "-1", wantErr: `"-1" is none of the device ID schemes`},
		"another plugin's ID":            {id: "nic-0", wantErr: `"nic-0" is none of the device ID schemes`},
		"empty ID":                       {id: "", wantErr: `"" is none of the device ID schemes`},
		"MIG device NVML does not know":  {id: gpu.MockMIGUUID(uuid(6), 9), wantErr: "MIG device " + gpu.MockMIGUUID(uuid(6), 9) + ": NVML DeviceGetHandleByUUID"},
		"MIG device without NVML":        {id: migs[0], noMIG: true, wantErr: "MIG device " + migs[0] + ": its GPU cannot be looked up"},
		"another node's GPU":             {id: foreign, wantErr: "GPU " + foreign + " is not one of this node's GPUs"},
		"another node's GPU, ignored":    {id: foreign, ignoreForeign: true},
		"another node's MIG before R470": {id: "MIG-" + foreign + "/1/0", wantErr: "the GPU of MIG device MIG-" + foreign + "/1/0 is not one of this node's GPUs"},
	}
	for name, tc := range testCases {
		t.Run(name, func(t *testing.T) {
			mp := migParent
			if tc.noMIG {
				mp = nil
			}
			got, ok, err := newDeviceIDs(devices, mp, tc.ignoreForeign).gpuOf(tc.id)
			switch {
			case tc.wantErr != "":
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Errorf("gpuOf(%q) = %q, %v, %v; want an error containing %q", tc.id, got, ok, err, tc.wantErr)
				}
			case err != nil || got != tc.want || ok != (tc.want != ""):
				t.Errorf("gpuOf(%q) = %q, %v, %v; want %q", tc.id, got, ok, err, tc.want)
			}
		})
	}
}

// TestDeviceIDsAskNVMLOnce: the GPU of a MIG device is asked of NVML once;
// a failed lookup is asked again.
func TestDeviceIDsAskNVMLOnce(t *testing.T) {
	devices := mockDevices(t, "dgxa100", "node-a")
	calls := map[string]int{}
	failing := true
	ids := newDeviceIDs(devices, func(id string) (string, error) {
		calls[id]++
		if id == "MIG-flaky" && failing {
			return "", errors.New("NVML is busy")
		}
		return devices[2].UUID, nil
	}, false)
	for range 3 {
		if got, ok, err := ids.gpuOf("MIG-a"); !ok || err != nil || got != devices[2].UUID {
			t.Fatalf("gpuOf(MIG-a) = %q, %v, %v", got, ok, err)
		}
	}
	if _, _, err := ids.gpuOf("MIG-flaky"); err == nil {
		t.Fatal("gpuOf(MIG-flaky) while NVML fails: no error")
	}
	failing = false
	if got, _, err := ids.gpuOf("MIG-flaky::1"); err != nil || got != devices[2].UUID {
		t.Fatalf("gpuOf(MIG-flaky::1) = %q, %v", got, err)
	}
	if calls["MIG-a"] != 1 || calls["MIG-flaky"] != 2 {
		t.Errorf("NVML lookups = %v, want MIG-a once and MIG-flaky twice", calls)
	}
}
