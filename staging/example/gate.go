// Copyright 2026 The draext Authors.
// SPDX-License-Identifier: Apache-2.0

package main

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/client-go/rest"
)

// gateName is the feature gate of KEP-5004.
const gateName = "DRAExtendedResource"

// Gate states.
const (
	gateOn      = "on"
	gateOff     = "off"
	gateUnknown = "unknown"
)

// featureMetric is the kube-apiserver metric with one series per feature
// gate: kubernetes_feature_enabled{name="...",stage="..."} 1 or 0.
const featureMetric = "kubernetes_feature_enabled"

// gateState is the state of a feature gate of the kube-apiserver, as its
// /metrics tell.
type gateState struct {
	Name string `json:"name"`
	// State is "on", "off" or "unknown".
	State string `json:"state"`
	// Stage is the gate's stage (ALPHA, BETA, "" for GA), when known.
	Stage string `json:"stage,omitempty"`
	// Reason says why the state is unknown.
	Reason string `json:"reason,omitempty"`
}

func (g gateState) String() string {
	switch {
	case g.State == gateUnknown:
		return g.State + " (" + g.Reason + ")"
	case g.Stage != "":
		return g.State + " (" + g.Stage + ")"
	}
	return g.State
}

// readGate reads the kube-apiserver's /metrics through raw (a REST client of
// the server's root) and returns the state of the gate name. A server whose
// /metrics cannot be read (forbidden, an error) gives "unknown", with why.
func readGate(ctx context.Context, raw rest.Interface, name string) gateState {
	if raw == nil {
		return gateState{Name: name, State: gateUnknown, Reason: "no client for the kube-apiserver's /metrics"}
	}
	body, err := raw.Get().AbsPath("/metrics").DoRaw(ctx)
	if err != nil {
		reason := "reading the kube-apiserver's /metrics failed: " + err.Error()
		if apierrors.IsForbidden(err) {
			reason = "the kube-apiserver's /metrics are forbidden to this user"
		}
		return gateState{Name: name, State: gateUnknown, Reason: reason}
	}
	return parseGate(body, name)
}

// parseGate finds the gate in a Prometheus text exposition of the
// kube-apiserver's metrics.
func parseGate(metrics []byte, name string) gateState {
	scanner := bufio.NewScanner(bytes.NewReader(metrics))
	scanner.Buffer(make([]byte, 0, 64*1024), 1024*1024)
	for scanner.Scan() {
		line := strings.TrimSpace(scanner.Text())
		rest, ok := strings.CutPrefix(line, featureMetric+"{")
		if !ok {
			continue
		}
		labelText, valueText, ok := strings.Cut(rest, "}")
		if !ok {
			continue
		}
		labels := parseLabels(labelText)
		if labels["name"] != name {
			continue
		}
		value := strings.Fields(valueText)
		switch {
		case len(value) == 0:
			return gateState{Name: name, State: gateUnknown, Reason: fmt.Sprintf("metric %s for %s has no value", featureMetric, name)}
		case value[0] == "1":
			return gateState{Name: name, State: gateOn, Stage: labels["stage"]}
		case value[0] == "0":
			return gateState{Name: name, State: gateOff, Stage: labels["stage"]}
		default:
			return gateState{Name: name, State: gateUnknown, Reason: fmt.Sprintf("metric %s for %s has the value %q, not 0 or 1", featureMetric, name, value[0])}
		}
	}
	if err := scanner.Err(); err != nil {
		return gateState{Name: name, State: gateUnknown, Reason: "reading the kube-apiserver's /metrics: " + err.Error()}
	}
	return gateState{Name: name, State: gateUnknown, Reason: fmt.Sprintf("the kube-apiserver's /metrics do not list the gate (no %s series for it)", featureMetric)}
}

// parseLabels parses the label set of a metric line without its braces:
// name="value",... Values may hold escaped quotes.
func parseLabels(text string) map[string]string {
	labels := map[string]string{}
	for text != "" {
		key, rest, ok := strings.Cut(text, "=\"")
		if !ok {
			break
		}
		var value strings.Builder
		i := 0
		for ; i < len(rest) && rest[i] != '"'; i++ {
			if rest[i] == '\\' && i+1 < len(rest) {
				i++
			}
			value.WriteByte(rest[i])
		}
		labels[strings.TrimSpace(key)] = value.String()
		if i >= len(rest) {
			break
		}
		text = strings.TrimPrefix(strings.TrimSpace(rest[i+1:]), ",")
	}
	return labels
}
