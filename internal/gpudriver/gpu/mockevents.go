// Copyright 2026 The draext Authors.
// SPDX-License-Identifier: Apache-2.0

package gpu

import (
	"fmt"
	"sync"
	"time"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock/server"
)

// mockEvents gives a mock server the NVML event API that go-nvml's mock
// profiles leave out, so that the health watcher runs unchanged against a
// mock and tests can inject XID errors with InjectXID.
type mockEvents struct {
	mu         sync.Mutex
	registered map[nvml.Device]bool
	queue      chan nvml.EventData
}

var mockEventsByServer sync.Map // *server.Server -> *mockEvents

func addMockEvents(srv *server.Server) {
	ev := &mockEvents{registered: map[nvml.Device]bool{}, queue: make(chan nvml.EventData, 64)}
	mockEventsByServer.Store(srv, ev)
	srv.EventSetCreateFunc = func() (nvml.EventSet, nvml.Return) {
		return &mock.EventSet{
			WaitFunc: func(timeoutMs uint32) (nvml.EventData, nvml.Return) {
				timer := time.NewTimer(time.Duration(timeoutMs) * time.Millisecond)
				defer timer.Stop()
				select {
				case e := <-ev.queue:
					return e, nvml.SUCCESS
				case <-timer.C:
					return nvml.EventData{}, nvml.ERROR_TIMEOUT
				}
			},
			FreeFunc: func() nvml.Return { return nvml.SUCCESS },
		}, nvml.SUCCESS
	}
	for _, d := range srv.Devices {
		dev := d.(*server.Device)
		dev.GetSupportedEventTypesFunc = func() (uint64, nvml.Return) {
			return nvml.EventTypeXidCriticalError | nvml.EventTypeSingleBitEccError | nvml.EventTypeDoubleBitEccError, nvml.SUCCESS
		}
		dev.RegisterEventsFunc = func(types uint64, _ nvml.EventSet) nvml.Return {
			ev.mu.Lock()
			defer ev.mu.Unlock()
			ev.registered[dev] = types&nvml.EventTypeXidCriticalError != 0
			return nvml.SUCCESS
		}
	}
}

// InjectXID makes a mock NVML server (from NewMock or Open with a mock
// spec) report XID error xid for the GPU at index, as a real GPU would
// through nvmlEventSetWait. It fails for a real library, an index out of
// range, or a GPU whose XID events nobody registered for.
func InjectXID(lib nvml.Interface, index int, xid uint64) error {
	srv, ok := lib.(*server.Server)
	if !ok {
		return fmt.Errorf("XID errors can only be injected into a mock NVML, not %T", lib)
	}
	v, ok := mockEventsByServer.Load(srv)
	if !ok {
		return fmt.Errorf("mock NVML server was not created by NewMock")
	}
	ev := v.(*mockEvents)
	if index < 0 || index >= len(srv.Devices) {
		return fmt.Errorf("mock GPU index %d out of range [0, %d)", index, len(srv.Devices))
	}
	dev := srv.Devices[index]
	ev.mu.Lock()
	registered := ev.registered[dev]
	ev.mu.Unlock()
	if !registered {
		return fmt.Errorf("nobody watches XID events of mock GPU %d", index)
	}
	ev.queue <- nvml.EventData{Device: dev, EventType: nvml.EventTypeXidCriticalError, EventData: xid}
	return nil
}
