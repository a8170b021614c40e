// Copyright 2026 The draext Authors.
// SPDX-License-Identifier: Apache-2.0

package e2e

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"strconv"
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

// schedulerMetric reads one sample of kube-scheduler's /metrics, which
// E2E_SCHEDULER_METRICS names (make e2e sets it for the local cluster), as
// the suite's user (the scheduler delegates authentication and authorization
// to the apiserver), and returns 0 when the sample is not there. series is
// the metric name with its labels as /metrics prints them.
func schedulerMetric(ctx context.Context, series string) (float64, error) {
	body, err := schedulerMetrics(ctx)
	if err != nil {
		return 0, err
	}
	for _, line := range strings.Split(body, "\n") {
		if value, ok := strings.CutPrefix(line, series+" "); ok {
			return strconv.ParseFloat(value, 64)
		}
	}
	return 0, nil
}

// schedulerMetrics is kube-scheduler's /metrics, which E2E_SCHEDULER_METRICS
// names, read as the suite's user.
func schedulerMetrics(ctx context.Context) (string, error) {
	url := os.Getenv("E2E_SCHEDULER_METRICS")
	if url == "" {
		return "", fmt.Errorf("E2E_SCHEDULER_METRICS is not set")
	}
	config := rest.CopyConfig(cluster.config)
	// The scheduler serves a self-signed certificate.
	config.Insecure = true
	config.CAFile, config.CAData = "", nil
	client, err := rest.HTTPClientFor(config)
	if err != nil {
		return "", err
	}
	request, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return "", err
	}
	response, err := client.Do(request)
	if err != nil {
		return "", err
	}
	defer func() { _ = response.Body.Close() }()
	body, err := io.ReadAll(response.Body)
	if err != nil {
		return "", err
	}
	if response.StatusCode != http.StatusOK {
		return "", fmt.Errorf("GET %s: %s: %s", url, response.Status, body)
	}
	return string(body), nil
}

// requireSchedulerMetrics skips the spec unless the suite can read
// kube-scheduler's /metrics.
func requireSchedulerMetrics() {
	GinkgoHelper()
	if os.Getenv("E2E_SCHEDULER_METRICS") == "" {
		skipOrFail("scheduler-metrics", "E2E_SCHEDULER_METRICS is not set: the suite cannot read kube-scheduler's /metrics (make e2e sets it for the local cluster)")
	}
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
