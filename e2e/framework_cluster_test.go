// Copyright 2026 The draext Authors.
// SPDX-License-Identifier: Apache-2.0

package e2e

import (
	"bufio"
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	authorizationv1 "k8s.io/api/authorization/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

// The cluster: the feature gates of its apiserver, clients and what the
// suite's user may do.

// apiserverGates reads kubernetes_feature_enabled{name=...} from the
// apiserver's /metrics.
func apiserverGates(ctx context.Context) map[string]bool {
	GinkgoHelper()
	gates, err := readGates(ctx)
	Expect(err).NotTo(HaveOccurred(), "read the apiserver's /metrics")
	return gates
}

// readGates is apiserverGates for polling: an error is returned.
func readGates(ctx context.Context) (map[string]bool, error) {
	raw, err := cluster.client.CoreV1().RESTClient().Get().AbsPath("/metrics").Timeout(30 * time.Second).DoRaw(ctx)
	if err != nil {
		return nil, err
	}
	gates := map[string]bool{}
	sc := bufio.NewScanner(strings.NewReader(string(raw)))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if !strings.HasPrefix(line, "kubernetes_feature_enabled{") {
			continue
		}
		i := strings.Index(line, `name="`)
		if i < 0 {
			continue
		}
		name := line[i+6:]
		name = name[:strings.Index(name, `"`)]
		gates[name] = strings.HasSuffix(line, " 1")
	}
	return gates, nil
}

// requireGate skips the spec unless the apiserver has the gate on.
func requireGate(name string) {
	if !cluster.gates[name] {
		skipOrFail("gates", "feature gate "+name+" is off (or unknown) in the kube-apiserver")
	}
}

func clientFor(config *rest.Config) kubernetes.Interface {
	GinkgoHelper()
	client, err := kubernetes.NewForConfig(config)
	Expect(err).NotTo(HaveOccurred())
	return client
}

// requireAllowed skips the spec unless the suite's user may do all of it.
func requireAllowed(ctx context.Context, attrs ...authorizationv1.ResourceAttributes) {
	GinkgoHelper()
	for _, a := range attrs {
		review, err := cluster.client.AuthorizationV1().SelfSubjectAccessReviews().Create(ctx, &authorizationv1.SelfSubjectAccessReview{
			Spec: authorizationv1.SelfSubjectAccessReviewSpec{ResourceAttributes: &a},
		}, metav1.CreateOptions{})
		Expect(err).NotTo(HaveOccurred())
		if !review.Status.Allowed {
			skipOrFail("admin", fmt.Sprintf("the suite's user may not %s %s/%s %s: the spec needs a cluster admin", a.Verb, a.Resource, a.Subresource, a.Name))
		}
	}
}

// warningRecorder keeps the warnings that the apiserver returns.
type warningRecorder struct {
	mu       sync.Mutex
	warnings []string
}

func (w *warningRecorder) HandleWarningHeader(code int, _ string, text string) {
	if code != 299 || text == "" {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	w.warnings = append(w.warnings, text)
}

func (w *warningRecorder) list() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]string(nil), w.warnings...)
}
