// Copyright 2026 The draext Authors.
// SPDX-License-Identifier: Apache-2.0

package gpu

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock/server"
	"k8s.io/klog/v2/ktesting"
)

type waitFunc = func(ms uint32) (nvml.EventData, nvml.Return)

// wrapWait replaces nvmlEventSetWait of every event set that srv creates by
// what wrap makes of the mock's own.
func wrapWait(srv *server.Server, wrap func(waitFunc) waitFunc) {
	create := srv.EventSetCreateFunc
	srv.EventSetCreateFunc = func() (nvml.EventSet, nvml.Return) {
		set, ret := create()
		if es, ok := set.(*mock.EventSet); ok {
			es.WaitFunc = wrap(es.WaitFunc)
		}
		return set, ret
	}
}

func TestWatchHealth(t *testing.T) {
	t.Parallel()
	type xid struct {
		index int
		code  uint64
		// reason, if set, must be contained in the event's Reason.
		reason string
	}
	testCases := map[string]struct {
		// setup changes the mock before the watch starts.
		setup func(srv *server.Server)
		// inject lists XID errors sent in this order once GPU 0 is watched.
		inject []xid
		// want lists the indexes (-1: no device) and codes of the expected
		// events, in order.
		want []xid
		// unregistered lists GPUs that must not be watched.
		unregistered []int
		// wantErr: WatchHealth returns this error after the events in want.
		wantErr string
	}{
		"critical XID marks its GPU": {
			inject: []xid{{2, 79, ""}},
			want:   []xid{{2, 79, ""}},
		},
		"application XIDs are ignored": {
			inject: []xid{{1, 13, ""}, {1, 31, ""}, {1, 43, ""}, {1, 45, ""}, {1, 68, ""}, {1, 109, ""}, {1, 48, ""}},
			want:   []xid{{1, 48, ""}},
		},
		"GPU without XID events is unmonitored, the others are watched": {
			setup: func(srv *server.Server) {
				srv.Devices[3].(*server.Device).GetSupportedEventTypesFunc = func() (uint64, nvml.Return) {
					return 0, nvml.ERROR_NOT_SUPPORTED
				}
			},
			unregistered: []int{3},
			inject:       []xid{{4, 94, ""}},
			want:         []xid{{4, 94, ""}},
		},
		"event without device affects all GPUs": {
			setup: func(srv *server.Server) {
				wrapWait(srv, func(wait waitFunc) waitFunc {
					return func(ms uint32) (nvml.EventData, nvml.Return) {
						e, ret := wait(ms)
						e.Device = nil
						return e, ret
					}
				})
			},
			inject: []xid{{0, 62, ""}},
			want:   []xid{{-1, 62, ""}},
		},
		"EventSetCreate fails: every GPU is reported, then the error": {
			setup: func(srv *server.Server) {
				srv.EventSetCreateFunc = func() (nvml.EventSet, nvml.Return) { return nil, nvml.ERROR_UNKNOWN }
			},
			want:    []xid{{-1, 0, "health cannot be watched: NVML EventSetCreate: ERROR_UNKNOWN"}},
			wantErr: "NVML EventSetCreate: ERROR_UNKNOWN",
		},
		"RegisterEvents fails for one GPU: it is reported, the others are watched": {
			setup: func(srv *server.Server) {
				srv.Devices[5].(*server.Device).RegisterEventsFunc = func(uint64, nvml.EventSet) nvml.Return { return nvml.ERROR_UNKNOWN }
			},
			unregistered: []int{5},
			inject:       []xid{{0, 79, ""}},
			want: []xid{
				{5, 0, "health cannot be watched: NVML DeviceRegisterEvents(" + DeterministicUUID("node-a", 5) + "): ERROR_UNKNOWN"},
				{0, 79, ""},
			},
		},
		"handle of one GPU fails: it is reported, the others are watched": {
			setup: func(srv *server.Server) {
				get := srv.DeviceGetHandleByUUIDFunc
				srv.DeviceGetHandleByUUIDFunc = func(uuid string) (nvml.Device, nvml.Return) {
					if uuid == DeterministicUUID("node-a", 6) {
						return nil, nvml.ERROR_UNKNOWN
					}
					return get(uuid)
				}
			},
			unregistered: []int{6},
			inject:       []xid{{7, 48, ""}},
			want: []xid{
				{6, 0, "health cannot be watched: NVML DeviceGetHandleByUUID(" + DeterministicUUID("node-a", 6) + "): ERROR_UNKNOWN"},
				{7, 48, ""},
			},
		},
		"EventSetWait fails for a while: the watch retries": {
			setup: func(srv *server.Server) {
				wrapWait(srv, func(wait waitFunc) waitFunc {
					failures := 3
					return func(ms uint32) (nvml.EventData, nvml.Return) {
						if failures > 0 {
							failures--
							return nvml.EventData{}, nvml.ERROR_UNKNOWN
						}
						return wait(ms)
					}
				})
			},
			inject: []xid{{1, 79, ""}},
			want:   []xid{{1, 79, ""}},
		},
		"GPU lost while waiting: every GPU is reported": {
			setup: func(srv *server.Server) {
				wrapWait(srv, func(waitFunc) waitFunc {
					return func(uint32) (nvml.EventData, nvml.Return) { return nvml.EventData{}, nvml.ERROR_GPU_IS_LOST }
				})
			},
			want: []xid{{-1, 0, "a GPU is lost: NVML EventSetWait: ERROR_GPU_IS_LOST"}},
		},
	}
	for name, tc := range testCases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			_, ctx := ktesting.NewTestContext(t)
			ctx, cancel := context.WithCancel(ctx)
			defer cancel()
			srv := mockServer(t, "dgxa100")
			if tc.setup != nil {
				tc.setup(srv)
			}
			var uuids []string
			for i := range srv.Devices {
				uuids = append(uuids, DeterministicUUID("node-a", i))
			}
			events := make(chan HealthEvent, 16)
			done := make(chan error, 1)
			go func() { done <- WatchHealth(ctx, srv, uuids, func(e HealthEvent) { events <- e }) }()

			for _, x := range tc.inject {
				deadline := time.Now().Add(10 * time.Second)
				for {
					err := InjectXID(srv, x.index, x.code)
					if err == nil {
						break
					}
					if time.Now().After(deadline) {
						t.Fatalf("inject XID %d into GPU %d: %v", x.code, x.index, err)
					}
					time.Sleep(10 * time.Millisecond)
				}
			}
			for _, w := range tc.want {
				wantUUID := ""
				if w.index >= 0 {
					wantUUID = DeterministicUUID("node-a", w.index)
				}
				select {
				case e := <-events:
					if e.UUID != wantUUID || e.XID != w.code || !strings.Contains(e.Reason, w.reason) || (w.reason == "" && e.Reason != "") {
						t.Fatalf("got event %+v, want GPU %q XID %d reason %q", e, wantUUID, w.code, w.reason)
					}
				case <-time.After(10 * time.Second):
					t.Fatalf("no event for XID %d of GPU %d", w.code, w.index)
				}
			}
			if tc.wantErr != "" {
				select {
				case err := <-done:
					var nvmlErr *NVMLError
					if err == nil || !errors.As(err, &nvmlErr) || err.Error() != tc.wantErr {
						t.Fatalf("got error %v, want NVMLError %q", err, tc.wantErr)
					}
				case <-time.After(10 * time.Second):
					t.Fatal("WatchHealth did not fail")
				}
				return
			}
			for _, index := range tc.unregistered {
				if err := InjectXID(srv, index, 79); err == nil || !strings.Contains(err.Error(), "nobody watches") {
					t.Errorf("GPU %d: InjectXID = %v, want it not watched", index, err)
				}
			}
			select {
			case e := <-events:
				t.Fatalf("unexpected event %+v", e)
			default:
			}
			cancel()
			if err := <-done; err != nil {
				t.Fatalf("WatchHealth after cancel: %v", err)
			}
		})
	}
}

func TestInjectXIDErrors(t *testing.T) {
	t.Parallel()
	srv := mockServer(t, "dgxh100")
	testCases := map[string]struct {
		lib   nvml.Interface
		index int
		want  string
	}{
		"real library":      {lib: nvml.New(), index: 0, want: "XID errors can only be injected into a mock NVML"},
		"index too large":   {lib: srv, index: 8, want: "mock GPU index 8 out of range [0, 8)"},
		"nobody registered": {lib: srv, index: 0, want: "nobody watches XID events of mock GPU 0"},
	}
	for name, tc := range testCases {
		t.Run(name, func(t *testing.T) {
			err := InjectXID(tc.lib, tc.index, 79)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("got %v, want an error containing %q", err, tc.want)
			}
		})
	}
}
