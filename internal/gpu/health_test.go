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

func TestWatchHealth(t *testing.T) {
	t.Parallel()
	type xid struct {
		index int
		code  uint64
	}
	testCases := map[string]struct {
		// setup changes the mock before the watch starts.
		setup func(srv *server.Server)
		// inject lists XID errors sent in this order once GPU 0 is watched.
		inject []xid
		// want lists the indexes (-1: no device) and codes of the expected
		// events, in order.
		want    []xid
		wantErr string
	}{
		"critical XID marks its GPU": {
			inject: []xid{{2, 79}},
			want:   []xid{{2, 79}},
		},
		"application XIDs are ignored": {
			inject: []xid{{1, 13}, {1, 31}, {1, 43}, {1, 45}, {1, 68}, {1, 109}, {1, 48}},
			want:   []xid{{1, 48}},
		},
		"GPU without XID events is not watched": {
			setup: func(srv *server.Server) {
				srv.Devices[3].(*server.Device).GetSupportedEventTypesFunc = func() (uint64, nvml.Return) {
					return 0, nvml.ERROR_NOT_SUPPORTED
				}
			},
			inject: []xid{{4, 94}},
			want:   []xid{{4, 94}},
		},
		"event without device affects all GPUs": {
			setup: func(srv *server.Server) {
				create := srv.EventSetCreateFunc
				srv.EventSetCreateFunc = func() (nvml.EventSet, nvml.Return) {
					set, ret := create()
					wait := set.(*mock.EventSet).WaitFunc
					set.(*mock.EventSet).WaitFunc = func(ms uint32) (nvml.EventData, nvml.Return) {
						e, ret := wait(ms)
						e.Device = nil
						return e, ret
					}
					return set, ret
				}
			},
			inject: []xid{{0, 62}},
			want:   []xid{{-1, 62}},
		},
		"EventSetCreate fails": {
			setup: func(srv *server.Server) {
				srv.EventSetCreateFunc = func() (nvml.EventSet, nvml.Return) { return nil, nvml.ERROR_UNKNOWN }
			},
			wantErr: "NVML EventSetCreate: ERROR_UNKNOWN",
		},
		"RegisterEvents fails": {
			setup: func(srv *server.Server) {
				srv.Devices[5].(*server.Device).RegisterEventsFunc = func(uint64, nvml.EventSet) nvml.Return { return nvml.ERROR_GPU_IS_LOST }
			},
			wantErr: "NVML DeviceRegisterEvents(" + DeterministicUUID("node-a", 5) + "): ERROR_GPU_IS_LOST",
		},
		"EventSetWait fails": {
			setup: func(srv *server.Server) {
				create := srv.EventSetCreateFunc
				srv.EventSetCreateFunc = func() (nvml.EventSet, nvml.Return) {
					set, ret := create()
					set.(*mock.EventSet).WaitFunc = func(uint32) (nvml.EventData, nvml.Return) { return nvml.EventData{}, nvml.ERROR_UNINITIALIZED }
					return set, ret
				}
			},
			wantErr: "NVML EventSetWait: ERROR_UNINITIALIZED",
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
					if e.UUID != wantUUID || e.XID != w.code {
						t.Fatalf("got event %+v, want GPU %q XID %d", e, wantUUID, w.code)
					}
				case err := <-done:
					t.Fatalf("WatchHealth ended early: %v", err)
				case <-time.After(10 * time.Second):
					t.Fatalf("no event for XID %d of GPU %d", w.code, w.index)
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
