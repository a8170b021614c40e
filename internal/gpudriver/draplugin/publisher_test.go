// Copyright 2026 The draext Authors.
// SPDX-License-Identifier: Apache-2.0

package draplugin

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	resourceapi "k8s.io/api/resource/v1beta1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
	"k8s.io/klog/v2"
	"k8s.io/klog/v2/ktesting"

	"github.com/draext/draext/internal/gpudriver/cdi"
	"github.com/draext/draext/internal/gpudriver/gpu"
	"github.com/draext/draext/internal/gpudriver/state"
	"github.com/draext/draext/internal/gpudriver/testutil"
)

// republishWithin is how soon a deleted slice must be back. The v0.33
// resourceslice controller alone needs 30 s at best, and 10 minutes (its
// informer's resync) when the delete comes soon after its own write.
const republishWithin = 10 * time.Second

// TestRepublishDeletedSlice deletes the driver's ResourceSlice the way the
// v1.33 kubelet does when it starts (DeleteCollection of all slices of its
// node) or the way an admin might, and requires it back.
func TestRepublishDeletedSlice(t *testing.T) {
	wipeNode := func(ctx context.Context, t *testing.T, client *fake.Clientset) {
		t.Helper()
		selector := fields.Set{resourceapi.ResourceSliceSelectorNodeName: "node-a"}.String()
		if err := client.ResourceV1beta1().ResourceSlices().DeleteCollection(ctx, metav1.DeleteOptions{}, metav1.ListOptions{FieldSelector: selector}); err != nil {
			t.Fatal(err)
		}
	}
	deleteOurs := func(ctx context.Context, t *testing.T, client *fake.Clientset) {
		t.Helper()
		deleted := 0
		for _, s := range ourSlices(ctx, t, client) {
			if err := client.ResourceV1beta1().ResourceSlices().Delete(ctx, s.Name, metav1.DeleteOptions{}); err != nil {
				t.Fatal(err)
			}
			deleted++
		}
		if deleted == 0 {
			t.Fatal("no slice to delete")
		}
	}
	otherDriver := &resourceapi.ResourceSlice{
		ObjectMeta: metav1.ObjectMeta{Name: "node-a-nic"},
		Spec: resourceapi.ResourceSliceSpec{
			Driver: "nic.example.com", NodeName: "node-a",
			Pool:    resourceapi.ResourcePool{Name: "node-a", ResourceSliceCount: 1},
			Devices: []resourceapi.Device{{Name: "eth0"}},
		},
	}

	testCases := map[string]struct {
		objects []runtime.Object
		// unhealthy GPUs (by index) before the deletes
		unhealthy []int
		// deletes run one after the other, each once the slice is back
		deletes []func(ctx context.Context, t *testing.T, client *fake.Clientset)
		// dropDeletes makes every watch lose its delete events, as a
		// watch does that reconnects across an apiserver restart while
		// the slices are deleted and whose relist is served stale.
		dropDeletes bool
		// failLists makes that many LISTs of ResourceSlices fail once the
		// driver runs (together with dropDeletes: the periodic check
		// retries).
		failLists   int
		wantDevices int
	}{
		"kubelet wipes the node's slices right after publishing": {
			deletes:     []func(context.Context, *testing.T, *fake.Clientset){wipeNode},
			wantDevices: 8,
		},
		"kubelet wipes the node's slices, another driver's slice too": {
			objects:     []runtime.Object{otherDriver},
			deletes:     []func(context.Context, *testing.T, *fake.Clientset){wipeNode},
			wantDevices: 8,
		},
		"slice deleted right after a GPU became unhealthy": {
			unhealthy:   []int{3},
			deletes:     []func(context.Context, *testing.T, *fake.Clientset){deleteOurs},
			wantDevices: 7,
		},
		"watches miss the delete": {
			deletes:     []func(context.Context, *testing.T, *fake.Clientset){wipeNode},
			dropDeletes: true,
			wantDevices: 8,
		},
		"watches miss the delete of a slice with an unhealthy GPU": {
			unhealthy:   []int{5},
			deletes:     []func(context.Context, *testing.T, *fake.Clientset){deleteOurs},
			dropDeletes: true,
			wantDevices: 7,
		},
		"watches miss the deletes, again and again": {
			deletes:     []func(context.Context, *testing.T, *fake.Clientset){wipeNode, deleteOurs, wipeNode},
			dropDeletes: true,
			wantDevices: 8,
		},
		"watches miss the delete and the API server fails two LISTs": {
			deletes:     []func(context.Context, *testing.T, *fake.Clientset){wipeNode},
			dropDeletes: true,
			failLists:   2,
			wantDevices: 8,
		},
		"deleted again and again": {
			deletes:     []func(context.Context, *testing.T, *fake.Clientset){deleteOurs, wipeNode, deleteOurs},
			wantDevices: 8,
		},
	}
	for name, tc := range testCases {
		t.Run(name, func(t *testing.T) {
			logger := ktesting.NewLogger(t, ktesting.NewConfig(ktesting.Verbosity(5), ktesting.BufferLogs(true)))
			ctx, cancel := context.WithCancel(klog.NewContext(context.Background(), logger))
			defer cancel()
			objects := append([]runtime.Object{&v1.Node{ObjectMeta: metav1.ObjectMeta{Name: "node-a", UID: "node-a-uid"}}}, tc.objects...)
			client := fake.NewClientset(objects...)
			generateNames(client)
			deleteCollections(client)
			if tc.dropDeletes {
				dropDeleteEvents(client)
			}
			// Without dropped deletes the watch must do it alone: the
			// periodic check comes too late to help.
			checkPeriod := time.Hour
			if tc.dropDeletes {
				checkPeriod = republishWithin / 4
			}
			lists := recordLists(client)
			td := startTestDriver(ctx, t, client, "pub", func(cfg *Config) { cfg.SliceCheckPeriod = checkPeriod })
			drv, devices := td.Driver, td.devices
			defer drv.Stop()

			waitForOurSlice(ctx, t, client, len(devices), 30*time.Second)
			for _, i := range tc.unhealthy {
				if err := drv.MarkUnhealthy(ctx, gpu.HealthEvent{UUID: devices[i].UUID, XID: 79}); err != nil {
					t.Fatal(err)
				}
			}
			waitForOurSlice(ctx, t, client, tc.wantDevices, 30*time.Second)

			lists.fail(tc.failLists)
			for i, del := range tc.deletes {
				del(ctx, t, client)
				start := time.Now()
				waitForOurSlice(ctx, t, client, tc.wantDevices, republishWithin)
				t.Logf("delete %d: slice back after %v", i, time.Since(start).Round(time.Millisecond))
			}
			if tc.dropDeletes {
				// The check asks only for this driver's slices of this node.
				want := fields.Set{resourceapi.ResourceSliceSelectorDriver: DefaultDriverName, resourceapi.ResourceSliceSelectorNodeName: "node-a"}.String()
				if got := lists.selectors(); !slices.Contains(got, want) {
					t.Errorf("field selectors of the LISTs = %q, want one to be %q", got, want)
				}
			}
		})
	}
}

// listRecorder records the field selectors of the LISTs of ResourceSlices
// and fails the next ones that ask for one node's slices when asked.
type listRecorder struct {
	mu      sync.Mutex
	seen    []string
	failing int
}

func recordLists(client *fake.Clientset) *listRecorder {
	r := &listRecorder{}
	client.PrependReactor("list", "resourceslices", func(action k8stesting.Action) (bool, runtime.Object, error) {
		r.mu.Lock()
		defer r.mu.Unlock()
		f := action.(k8stesting.ListAction).GetListRestrictions().Fields
		if f == nil {
			return false, nil, nil
		}
		r.seen = append(r.seen, f.String())
		if _, node := f.RequiresExactMatch(resourceapi.ResourceSliceSelectorNodeName); node && r.failing > 0 {
			r.failing--
			return true, nil, errors.New("the API server is restarting")
		}
		return false, nil, nil
	})
	return r
}

func (r *listRecorder) fail(n int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.failing = n
}

func (r *listRecorder) selectors() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.seen)
}

// testDriver is a driver started by startTestDriver with mock GPUs of
// node-a, and the socket directories it listens in.
type testDriver struct {
	*Driver
	devices                 []gpu.Device
	pluginDir, registrarDir string
	writer                  *cdi.Writer
}

// startTestDriver starts the driver on node-a with 8 mock A100s, its
// sockets and state in a fresh directory named after prefix.
// The options change the driver's configuration before it starts.
func startTestDriver(ctx context.Context, t *testing.T, client *fake.Clientset, prefix string, opts ...func(*Config)) testDriver {
	t.Helper()
	dir := testutil.SocketDir(t, prefix)
	pluginDir, registrarDir := filepath.Join(dir, "plugin"), filepath.Join(dir, "registry")
	for _, d := range []string{pluginDir, registrarDir} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	devices := mockDevices(t, "dgxa100", "node-a")
	writer := &cdi.Writer{Root: filepath.Join(dir, "cdi"), DevRoot: dir}
	st, err := state.New(ctx, devices, writer, filepath.Join(dir, "checkpoint.json"))
	if err != nil {
		t.Fatal(err)
	}
	cfg := Config{
		DriverName: DefaultDriverName, NodeName: "node-a", Client: client,
		Devices: devices, State: st, PluginDir: pluginDir, RegistrarDir: registrarDir,
	}
	for _, opt := range opts {
		opt(&cfg)
	}
	drv, err := Start(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	return testDriver{Driver: drv, devices: devices, pluginDir: pluginDir, registrarDir: registrarDir, writer: writer}
}

// deleteCollections makes the fake clientset delete ResourceSlices by
// field selector, one watch event per slice, as the apiserver does; the
// fake ignores DeleteCollection.
func deleteCollections(client *fake.Clientset) {
	client.PrependReactor("delete-collection", "resourceslices", func(action k8stesting.Action) (bool, runtime.Object, error) {
		selector := action.(k8stesting.DeleteCollectionAction).GetListRestrictions().Fields
		gvr := resourceapi.SchemeGroupVersion.WithResource("resourceslices")
		list, err := client.Tracker().List(gvr, resourceapi.SchemeGroupVersion.WithKind("ResourceSlice"), "")
		if err != nil {
			return true, nil, err
		}
		for _, s := range list.(*resourceapi.ResourceSliceList).Items {
			if selector != nil && !selector.Matches(fields.Set{
				resourceapi.ResourceSliceSelectorNodeName: s.Spec.NodeName,
				resourceapi.ResourceSliceSelectorDriver:   s.Spec.Driver,
			}) {
				continue
			}
			if err := client.Tracker().Delete(gvr, "", s.Name); err != nil {
				return true, nil, err
			}
		}
		return true, nil, nil
	})
}

// dropDeleteEvents makes every watch of ResourceSlices on the fake
// clientset pass on all events but deletes.
func dropDeleteEvents(client *fake.Clientset) {
	client.PrependWatchReactor("resourceslices", func(action k8stesting.Action) (bool, watch.Interface, error) {
		gvr := action.GetResource()
		w, err := client.Tracker().Watch(gvr, action.GetNamespace())
		if err != nil {
			return true, nil, err
		}
		return true, watch.Filter(w, func(e watch.Event) (watch.Event, bool) {
			return e, e.Type != watch.Deleted
		}), nil
	})
}

// ourSlices are the driver's slices of node-a.
func ourSlices(ctx context.Context, t *testing.T, client *fake.Clientset) []resourceapi.ResourceSlice {
	t.Helper()
	list, err := client.ResourceV1beta1().ResourceSlices().List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var ours []resourceapi.ResourceSlice
	for _, s := range list.Items {
		if s.Spec.Driver == DefaultDriverName && s.Spec.NodeName == "node-a" {
			ours = append(ours, s)
		}
	}
	return ours
}

// waitForOurSlice polls until the driver has exactly one slice of node-a,
// in pool node-a, with want devices, and fails after within.
func waitForOurSlice(ctx context.Context, t *testing.T, client *fake.Clientset, want int, within time.Duration) {
	t.Helper()
	deadline := time.Now().Add(within)
	for {
		ours := ourSlices(ctx, t, client)
		if len(ours) == 1 && ours[0].Spec.Pool.Name == "node-a" && len(ours[0].Spec.Devices) == want {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("want one ResourceSlice of node-a with %d devices within %v, got %d: %+v", want, within, len(ours), ours)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
