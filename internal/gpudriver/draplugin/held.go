// Copyright 2026 The draext Authors.
// SPDX-License-Identifier: Apache-2.0

package draplugin

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	"k8s.io/klog/v2"

	"github.com/draext/draext/internal/gpudriver/gpu"
)

// KubeletAnswer is one answer of the kubelet's PodResources List, reduced
// to what the driver needs.
type KubeletAnswer struct {
	// Pods are the pods in the answer, as namespace/name.
	Pods map[string]bool
	// Holders maps each device ID that a device plugin gave a container for
	// the resource to that container, as namespace/pod/container.
	Holders map[string]string
}

// heldGPUs is the one owner of what the driver knows about the GPUs that
// device-plugin containers hold, on a node moved from the device plugin to
// DRA with pods running. The publisher asks it which GPUs to leave out
// (withheld), Prepare which to refuse (refusal); run keeps it current.
// The rule is: publish and prepare only GPUs that no one may hold.
//
// A successful PodResources answer is not the truth by itself: a kubelet
// that has just started answers from its pod manager, which it fills one
// pod at a time once its sync loop runs, so its first answers may list
// none of the pods that hold GPUs (after a reboot, very likely). An answer
// is complete, and replaces what is held, only when it lists every pod that
// the API server says is bound to this node, not finished, and asks for the
// resource (expected): the pods that may hold device-plugin GPUs. An
// incomplete answer adds what it lists and takes nothing back. Until the
// first complete answer every GPU is withheld, and so is every GPU while a
// device-plugin ID in use maps to none of this node's GPUs (deviceIDs).
//
// The kubelet reads the device plugin's allocations from its checkpoint
// when it starts, before it adds any pod: a pod in the answer comes with
// its devices.
type heldGPUs struct {
	ids  *deviceIDs
	gpus []string // UUIDs of this node's GPUs
	// ask asks the kubelet; expected asks the API server (see Config).
	ask      func(context.Context) (KubeletAnswer, error)
	expected func(context.Context) (map[string]bool, error)

	mu sync.Mutex
	// complete: an answer has listed every expected pod.
	complete bool
	// held maps this node's GPUs that device-plugin containers hold to
	// one holder (the smallest name).
	held map[string]string
	// unmapped maps device-plugin IDs in use that map to none of this
	// node's GPUs to their holders; while there is one, every GPU is
	// withheld.
	unmapped map[string]string
	// incomplete says why the last answer was not complete ("" if it was);
	// incompleteSince and incompleteLogged bound how often it is logged.
	incomplete       string
	incompleteSince  time.Time
	incompleteLogged time.Time
}

// incompleteLogPeriod is how often an answer that stays incomplete is
// logged again, as an error.
const incompleteLogPeriod = 5 * time.Minute

// maxNamesLogged is how many pods or IDs a log line names at most.
const maxNamesLogged = 10

func newHeldGPUs(devices []gpu.Device, ids *deviceIDs, ask func(context.Context) (KubeletAnswer, error), expected func(context.Context) (map[string]bool, error)) *heldGPUs {
	h := &heldGPUs{ids: ids, ask: ask, expected: expected, held: map[string]string{}, unmapped: map[string]string{}}
	for _, d := range devices {
		h.gpus = append(h.gpus, d.UUID)
	}
	return h
}

// withheld returns the GPUs to leave out of the ResourceSlice, each with
// why (see refusal). A nil heldGPUs withholds nothing.
func (h *heldGPUs) withheld() map[string]string {
	if h == nil {
		return nil
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.withheldLocked()
}

// refusal tells why Prepare must refuse the GPU: a phrase that follows
// "GPU <uuid> ". ok is false for a GPU that no one may hold.
func (h *heldGPUs) refusal(uuid string) (why string, ok bool) {
	if h == nil {
		return "", false
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	why, ok = h.withheldLocked()[uuid]
	return why, ok
}

// isComplete reports whether an answer has listed every expected pod.
func (h *heldGPUs) isComplete() bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.complete
}

func (h *heldGPUs) withheldLocked() map[string]string {
	out := make(map[string]string, len(h.gpus))
	all := ""
	switch {
	case !h.complete:
		all = "is withheld: the kubelet has not yet listed every pod that may hold device-plugin GPUs"
	case len(h.unmapped) > 0:
		all = "is withheld: device-plugin IDs in use map to none of this node's GPUs: " + describeHolders(h.unmapped)
	}
	for _, uuid := range h.gpus {
		switch holder, held := h.held[uuid]; {
		case held:
			out[uuid] = "is still held by device-plugin container " + holder
		case all != "":
			out[uuid] = all
		}
	}
	return out
}

// describeHolders lists "id (holder)" pairs, sorted, at most maxNamesLogged.
func describeHolders(byID map[string]string) string {
	ids := slices.Sorted(maps.Keys(byID))
	parts := make([]string, 0, min(len(ids), maxNamesLogged)+1)
	for _, id := range ids[:min(len(ids), maxNamesLogged)] {
		parts = append(parts, fmt.Sprintf("%s (%s)", id, byID[id]))
	}
	if len(ids) > maxNamesLogged {
		parts = append(parts, fmt.Sprintf("and %d more", len(ids)-maxNamesLogged))
	}
	return strings.Join(parts, ", ")
}

// poll asks the kubelet and then the API server once, and applies the
// answer. It reports whether the set of withheld GPUs changed; an error
// means the kubelet did not answer, and nothing changed.
func (h *heldGPUs) poll(ctx context.Context) (bool, error) {
	answer, err := h.ask(ctx)
	if err != nil {
		return false, err
	}
	// Asked after the kubelet: a pod the API server knows and the answer
	// lacks is then at least as old as the answer.
	expected, expectedErr := h.expected(ctx)
	return h.observe(klog.FromContext(ctx), answer, expected, expectedErr, time.Now()), nil
}

// observe applies one answer of the kubelet, given the pods that may hold
// device-plugin GPUs (or why they are not known), and reports whether the
// set of withheld GPUs changed.
func (h *heldGPUs) observe(logger klog.Logger, answer KubeletAnswer, expected map[string]bool, expectedErr error, now time.Time) bool {
	held := map[string]string{}
	unmapped := map[string]string{}
	var mapErrs []error
	for _, id := range slices.Sorted(maps.Keys(answer.Holders)) {
		holder := answer.Holders[id]
		uuid, ok, err := h.ids.gpuOf(id)
		switch {
		case err != nil:
			unmapped[id] = holder
			mapErrs = append(mapErrs, err)
		case ok:
			addHolder(held, uuid, holder)
		}
	}
	incomplete := ""
	if expectedErr != nil {
		incomplete = "cannot tell which pods may hold device-plugin GPUs: " + expectedErr.Error()
	} else {
		var missing []string
		for pod := range expected {
			if !answer.Pods[pod] {
				missing = append(missing, pod)
			}
		}
		if len(missing) > 0 {
			slices.Sort(missing)
			more := ""
			if len(missing) > maxNamesLogged {
				more = fmt.Sprintf(" and %d more", len(missing)-maxNamesLogged)
			}
			incomplete = fmt.Sprintf("the kubelet's answer lacks pods bound to this node that may hold device-plugin GPUs: %s%s",
				strings.Join(missing[:min(len(missing), maxNamesLogged)], ", "), more)
		}
	}

	h.mu.Lock()
	defer h.mu.Unlock()
	before := h.withheldLocked()
	beforeHeld, beforeUnmapped, wasComplete := h.held, h.unmapped, h.complete
	if incomplete == "" {
		h.complete = true
		h.held, h.unmapped = held, unmapped
	} else {
		// What the answer lists is held; what it leaves out may be too.
		h.held, h.unmapped = maps.Clone(h.held), maps.Clone(h.unmapped)
		for uuid, holder := range held {
			addHolder(h.held, uuid, holder)
		}
		for id, holder := range unmapped {
			addHolder(h.unmapped, id, holder)
		}
	}
	h.logIncomplete(logger, incomplete, wasComplete, now)
	for _, uuid := range slices.Sorted(maps.Keys(beforeHeld)) {
		if _, still := h.held[uuid]; !still {
			logger.Info("GPU is no longer held by a device-plugin container", "gpu", uuid, "heldBy", beforeHeld[uuid])
		}
	}
	for _, uuid := range slices.Sorted(maps.Keys(h.held)) {
		if _, was := beforeHeld[uuid]; !was {
			logger.Info("GPU is held by a device-plugin container, leaving it out of the ResourceSlice", "gpu", uuid, "heldBy", h.held[uuid])
		}
	}
	if !maps.Equal(beforeUnmapped, h.unmapped) {
		if len(h.unmapped) > 0 {
			logger.Error(errors.Join(mapErrs...), "Device-plugin IDs in use map to none of this node's GPUs; withholding every GPU until they are given back",
				"ids", describeHolders(h.unmapped))
		} else {
			logger.Info("Every device-plugin ID in use maps to a GPU of this node again")
		}
	}
	after := h.withheldLocked()
	changed := len(before) != len(after)
	for uuid := range after {
		if _, ok := before[uuid]; !ok {
			changed = true
		}
	}
	return changed
}

// logIncomplete logs a change of why answers are incomplete, and an answer
// that stays incomplete every incompleteLogPeriod. h.mu must be held.
func (h *heldGPUs) logIncomplete(logger klog.Logger, incomplete string, wasComplete bool, now time.Time) {
	switch {
	case incomplete == "" && h.incomplete != "":
		logger.Info("The kubelet lists every pod that may hold device-plugin GPUs", "incompleteFor", now.Sub(h.incompleteSince).Round(time.Second))
	case incomplete == "" && !wasComplete:
		logger.Info("The kubelet lists every pod that may hold device-plugin GPUs")
	case incomplete != "" && h.incomplete == "":
		h.incompleteSince, h.incompleteLogged = now, now
		logger.Info("Not trusting the kubelet's answer; keeping every GPU withheld that may be held", "reason", incomplete)
	case incomplete != "" && now.Sub(h.incompleteLogged) >= incompleteLogPeriod:
		h.incompleteLogged = now
		logger.Error(errors.New(incomplete), "Not trusting the kubelet's answers for long; keeping every GPU withheld that may be held",
			"incompleteFor", now.Sub(h.incompleteSince).Round(time.Second))
	case incomplete != "" && incomplete != h.incomplete:
		logger.Info("Not trusting the kubelet's answer; keeping every GPU withheld that may be held", "reason", incomplete,
			"incompleteFor", now.Sub(h.incompleteSince).Round(time.Second))
	}
	h.incomplete = incomplete
}

// addHolder records holder for key, keeping the smallest name when there
// are several (replicas of one GPU): the same one every time.
func addHolder(m map[string]string, key, holder string) {
	if before, ok := m[key]; !ok || holder < before {
		m[key] = holder
	}
}

// run asks at once, then every heldRetry (or period, if shorter) until it
// has published, then every period, and calls publish after the first complete answer, after
// every change of the withheld GPUs, and again after a failed publish.
// When the kubelet does not answer it keeps what it knew.
func (h *heldGPUs) run(ctx context.Context, period time.Duration, publish func() error) {
	logger := klog.FromContext(ctx)
	published, owed := false, false
	for {
		changed, err := h.poll(ctx)
		switch {
		case err != nil && ctx.Err() != nil:
			return
		case err != nil && !published:
			logger.Error(err, "Cannot tell which GPUs device-plugin containers hold; publishing none until then", "retryAfter", heldRetry)
		case err != nil:
			logger.Error(err, "Cannot tell which GPUs device-plugin containers hold; keeping what was withheld")
		}
		if h.isComplete() && (changed || owed || !published) {
			if err := publish(); err != nil {
				if ctx.Err() != nil {
					return
				}
				logger.Error(err, "Publishing the GPUs failed, retrying")
				owed = true
			} else {
				published, owed = true, false
			}
		}
		wait := period
		if !published {
			wait = min(heldRetry, period)
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(wait):
		}
	}
}
