// Copyright 2026 The draext Authors.
// SPDX-License-Identifier: Apache-2.0

package draplugin

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	resourceapi "k8s.io/api/resource/v1beta1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	resourceinformers "k8s.io/client-go/informers/resource/v1beta1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
	"k8s.io/dynamic-resource-allocation/resourceslice"
	"k8s.io/klog/v2"
)

// publisher keeps the node's pool published in ResourceSlices through the
// resourceslice controller of k8s.io/dynamic-resource-allocation, and
// replaces that controller with a fresh one when the pool's last slice is
// deleted by someone else.
//
// The v1.33 kubelet deletes all ResourceSlices of its node when it starts.
// The v0.33 controller reacts to a delete only 30 s later, and not at all when
// the delete comes before its first sync after its own create or update: its
// mutation cache still holds the slice it wrote for a minute, the re-check it
// queues after a create is merged into that earlier sync, and the next one is
// the informer's resync 10 minutes later. A fresh controller lists the slices
// from the API server and creates the missing one at once.
//
// A watch is only a trigger: the kubelet may wipe the slices while kube-apiserver
// restarts, and the gate cycle and make upgrade-test saw deletes that no
// handler reported. So whether the pool still has a slice is always asked of
// the API server (a LIST limited to this driver's slices of this node), on a
// delete the watch reports and every checkPeriod; a failed LIST is retried
// sooner, with backoff.
type publisher struct {
	client     kubernetes.Interface
	driverName string
	nodeName   string
	selector   string // field selector of this driver's slices of this node
	// checkPeriod is how often run asks the API server for the slices.
	checkPeriod time.Duration

	// gone holds one pending signal that the pool may have no slice left.
	gone chan struct{}

	mu         sync.Mutex
	ctx        context.Context // the publisher's lifetime; controllers run in it
	resources  *resourceslice.DriverResources
	controller *resourceslice.Controller // nil while it cannot be started

	cancel context.CancelCauseFunc
	wg     sync.WaitGroup
}

// startPublisher starts publishing resources for driverName on nodeName. It
// returns once its watch of the node's slices has synced and the controller
// runs; the slices are written in the background.
func startPublisher(ctx context.Context, client kubernetes.Interface, driverName, nodeName string, checkPeriod time.Duration, resources resourceslice.DriverResources) (*publisher, error) {
	logger := klog.LoggerWithName(klog.FromContext(ctx), "publisher")
	ctx, cancel := context.WithCancelCause(klog.NewContext(ctx, logger))
	p := &publisher{
		client:     client,
		driverName: driverName,
		nodeName:   nodeName,
		selector: fields.Set{
			resourceapi.ResourceSliceSelectorDriver:   driverName,
			resourceapi.ResourceSliceSelectorNodeName: nodeName,
		}.String(),
		checkPeriod: checkPeriod,
		gone:        make(chan struct{}, 1),
		ctx:         ctx,
		resources:   resources.DeepCopy(),
		cancel:      cancel,
	}

	informer := resourceinformers.NewFilteredResourceSliceInformer(client, 0, cache.Indexers{}, func(options *metav1.ListOptions) {
		options.FieldSelector = p.selector
	})
	handler, err := informer.AddEventHandler(cache.ResourceEventHandlerFuncs{
		DeleteFunc: func(obj any) {
			if tombstone, ok := obj.(cache.DeletedFinalStateUnknown); ok {
				obj = tombstone.Obj
			}
			if slice, ok := obj.(*resourceapi.ResourceSlice); ok {
				logger.V(4).Info("ResourceSlice deleted", "slice", klog.KObj(slice))
			}
			p.signalGone()
		},
	})
	if err != nil {
		cancel(err)
		return nil, fmt.Errorf("watch ResourceSlices: %w", err)
	}
	p.wg.Add(1)
	go func() {
		defer p.wg.Done()
		informer.Run(ctx.Done())
	}()
	if !cache.WaitForCacheSync(ctx.Done(), handler.HasSynced) {
		p.stop(errors.New("ResourceSlice watch did not sync"))
		return nil, fmt.Errorf("watch ResourceSlices: %w", context.Cause(ctx))
	}

	p.mu.Lock()
	err = p.startController()
	p.mu.Unlock()
	if err != nil {
		p.stop(err)
		return nil, err
	}

	p.wg.Add(1)
	go func() {
		defer p.wg.Done()
		p.run()
	}()
	return p, nil
}

// restartRetry is how long run waits before it tries again to start a
// controller that failed to start.
const restartRetry = 5 * time.Second

// startGrace is how long after starting a controller a periodic check that
// finds no slice lets it be: the controller's first create may be in flight.
// A delete the watch reports is acted on at once.
const startGrace = 2 * time.Second

// listRetryMin is the first wait after a failed LIST; it doubles up to
// checkPeriod.
const listRetryMin = time.Second

// listFailuresLogged is how many LIST failures in a row are logged at V(2)
// before they are logged as errors.
const listFailuresLogged = 3

// signalGone asks run to check whether the pool has a slice left.
func (p *publisher) signalGone() {
	select {
	case p.gone <- struct{}{}:
	default: // A check is pending already.
	}
}

// run starts a fresh controller whenever the API server has no slice of the
// pool: checked when the watch reports a delete, and every checkPeriod.
func (p *publisher) run() {
	logger := klog.FromContext(p.ctx)
	timer := time.NewTimer(p.checkPeriod)
	defer timer.Stop()
	failures := 0
	startedAt := time.Now()
	for {
		periodic := false
		select {
		case <-p.ctx.Done():
			return
		case <-p.gone:
		case <-timer.C:
			periodic = true
		}
		present, err := p.apiHasSlice()
		if err != nil {
			if p.ctx.Err() != nil {
				return
			}
			failures++
			retry := min(listRetryMin<<min(failures-1, 10), p.checkPeriod)
			if failures > listFailuresLogged {
				logger.Error(err, "Checking for the node's ResourceSlice failed", "failures", failures, "retryAfter", retry)
			} else {
				logger.V(2).Info("Checking for the node's ResourceSlice failed", "err", err, "failures", failures, "retryAfter", retry)
			}
			resetTimer(timer, retry)
			continue
		}
		failures = 0
		resetTimer(timer, p.checkPeriod)
		p.mu.Lock()
		running := p.controller != nil
		p.mu.Unlock()
		switch {
		case present && running:
			continue
		case !present && running && periodic && time.Since(startedAt) < startGrace:
			continue
		case present:
			logger.Info("No ResourceSlice controller runs, starting one", "node", p.nodeName)
		default:
			logger.Info("The node's ResourceSlice is gone, publishing it again", "node", p.nodeName)
		}
		p.mu.Lock()
		p.controller.Stop()
		p.controller = nil
		if err := p.startController(); err != nil && p.ctx.Err() == nil {
			logger.Error(err, "Publishing ResourceSlices again failed, retrying", "after", restartRetry)
			time.AfterFunc(restartRetry, p.signalGone)
		}
		startedAt = time.Now()
		p.mu.Unlock()
	}
}

// resetTimer makes a timer whose channel has been drained or never fired
// fire after d.
func resetTimer(t *time.Timer, d time.Duration) {
	t.Stop()
	select {
	case <-t.C:
	default:
	}
	t.Reset(d)
}

// apiHasSlice asks the API server whether the pool has a slice on this node.
func (p *publisher) apiHasSlice() (bool, error) {
	ctx, cancel := context.WithTimeout(p.ctx, p.checkPeriod)
	defer cancel()
	list, err := p.client.ResourceV1beta1().ResourceSlices().List(ctx, metav1.ListOptions{FieldSelector: p.selector})
	if err != nil {
		return false, err
	}
	for _, s := range list.Items {
		if s.Spec.Driver == p.driverName && s.Spec.NodeName == p.nodeName && s.Spec.Pool.Name == p.nodeName {
			return true, nil
		}
	}
	return false, nil
}

// startController starts a controller for p.resources. p.mu must be held.
func (p *publisher) startController() error {
	ctx := klog.NewContext(p.ctx, klog.LoggerWithName(klog.FromContext(p.ctx), "ResourceSlice controller"))
	c, err := resourceslice.StartController(ctx, resourceslice.Options{
		DriverName: p.driverName,
		KubeClient: p.client,
		// The node owns the slices: they are garbage collected with it.
		// The controller looks up its UID.
		Owner:     &resourceslice.Owner{APIVersion: "v1", Kind: "Node", Name: p.nodeName},
		Resources: p.resources,
	})
	if err != nil {
		return fmt.Errorf("start ResourceSlice controller: %w", err)
	}
	p.controller = c
	return nil
}

// update publishes what resources returns instead of the previous
// resources. It is called under the publisher's lock, so that concurrent
// updates are published in the order in which they read their state.
func (p *publisher) update(resources func() resourceslice.DriverResources) {
	p.mu.Lock()
	defer p.mu.Unlock()
	r := resources()
	p.resources = r.DeepCopy()
	switch {
	case p.controller != nil:
		p.controller.Update(p.resources)
	case p.ctx.Err() == nil:
		// Starting one after a deleted slice failed: try again.
		if err := p.startController(); err != nil {
			klog.FromContext(p.ctx).Error(err, "Publishing ResourceSlices failed")
		}
	}
}

// stop ends the watch and the controller. The slices stay.
func (p *publisher) stop(cause error) {
	p.cancel(cause)
	p.wg.Wait()
	p.mu.Lock()
	defer p.mu.Unlock()
	p.controller.Stop()
	p.controller = nil
}
