// Copyright 2026 The draext Authors.
// SPDX-License-Identifier: Apache-2.0

package e2e

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
)

// lagProxy stands between a component and kube-apiserver and holds back
// every byte of the watch streams that lagged selects by lag, while all other
// requests, the component's writes among them, pass at once: the
// component's informers then see its own writes late, as after a relist of
// a large cluster or with a slow watch cache.
type lagProxy struct {
	server *httptest.Server
	// watches counts the watch streams held back so far.
	watches atomic.Int32
}

// startLagProxy starts a lagProxy to the API server of the kubeconfig, which
// authenticates upstream with that kubeconfig's credentials, and returns it
// with the path of a kubeconfig for the component: the proxy's address,
// whose self-signed certificate it does not check, and no credentials of
// its own. The proxy stops when the spec ends.
func startLagProxy(kubeconfig string, lag time.Duration, lagged func(*http.Request) bool) (*lagProxy, string) {
	GinkgoHelper()
	config, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	Expect(err).NotTo(HaveOccurred(), "kubeconfig %s", kubeconfig)
	upstream, err := url.Parse(config.Host)
	Expect(err).NotTo(HaveOccurred(), "server of kubeconfig %s", kubeconfig)
	tlsConfig, err := rest.TLSConfigFor(config)
	Expect(err).NotTo(HaveOccurred(), "TLS configuration of kubeconfig %s", kubeconfig)

	p := &lagProxy{}
	proxy := &httputil.ReverseProxy{
		Rewrite: func(r *httputil.ProxyRequest) {
			r.SetURL(upstream)
			r.Out.Host = upstream.Host
		},
		Transport:     &http.Transport{TLSClientConfig: tlsConfig, ForceAttemptHTTP2: true, Proxy: nil},
		FlushInterval: -1,
		ModifyResponse: func(resp *http.Response) error {
			if resp.StatusCode == http.StatusOK && lagged(resp.Request) {
				p.watches.Add(1)
				resp.Body = newLagBody(resp.Body, lag)
			}
			return nil
		},
	}
	p.server = httptest.NewUnstartedServer(proxy)
	p.server.EnableHTTP2 = true
	p.server.StartTLS()
	DeferCleanup(p.server.Close)

	path := filepath.Join(GinkgoT().TempDir(), "lagged.kubeconfig")
	Expect(os.WriteFile(path, []byte(fmt.Sprintf(`apiVersion: v1
kind: Config
clusters:
- name: lagged
  cluster:
    server: %s
    insecure-skip-tls-verify: true
users:
- name: lagged
  user: {}
contexts:
- name: lagged
  context:
    cluster: lagged
    user: lagged
current-context: lagged
`, p.server.URL)), 0o600)).To(Succeed())
	return p, path
}

// watchOf selects the watch requests for a resource, in any API group and
// namespace.
func watchOf(resource string) func(*http.Request) bool {
	return func(r *http.Request) bool {
		return r.Method == http.MethodGet && r.URL.Query().Get("watch") == "true" &&
			strings.HasSuffix(strings.TrimSuffix(r.URL.Path, "/"), "/"+resource)
	}
}

// lagBody hands out what it reads from body, each piece lag after it
// arrived.
type lagBody struct {
	body   io.ReadCloser
	lag    time.Duration
	pieces chan lagPiece
	done   chan struct{}
	closed atomic.Bool
	rest   []byte
	err    error
}

type lagPiece struct {
	data []byte
	err  error
	at   time.Time
}

func newLagBody(body io.ReadCloser, lag time.Duration) *lagBody {
	b := &lagBody{body: body, lag: lag, pieces: make(chan lagPiece, 1024), done: make(chan struct{})}
	go func() {
		for {
			buf := make([]byte, 32*1024)
			n, err := body.Read(buf)
			piece := lagPiece{data: buf[:n], err: err, at: time.Now()}
			select {
			case b.pieces <- piece:
			case <-b.done:
				return
			}
			if err != nil {
				return
			}
		}
	}()
	return b
}

func (b *lagBody) Read(p []byte) (int, error) {
	for len(b.rest) == 0 {
		if b.err != nil {
			return 0, b.err
		}
		var piece lagPiece
		select {
		case piece = <-b.pieces:
		case <-b.done:
			return 0, io.ErrClosedPipe
		}
		select {
		case <-time.After(time.Until(piece.at.Add(b.lag))):
		case <-b.done:
			return 0, io.ErrClosedPipe
		}
		b.rest, b.err = piece.data, piece.err
	}
	n := copy(p, b.rest)
	b.rest = b.rest[n:]
	return n, nil
}

func (b *lagBody) Close() error {
	if b.closed.CompareAndSwap(false, true) {
		close(b.done)
	}
	return b.body.Close()
}

// withArg returns args with the value of the flag (--name=value) replaced.
func withArg(args []string, name, value string) []string {
	GinkgoHelper()
	out := make([]string, 0, len(args))
	found := false
	for _, arg := range args {
		if strings.HasPrefix(arg, name+"=") {
			arg, found = name+"="+value, true
		}
		out = append(out, arg)
	}
	Expect(found).To(BeTrue(), "%s in the command line %q", name, args)
	return out
}

// argValue is the value of the flag (--name=value) in args.
func argValue(args []string, name string) string {
	GinkgoHelper()
	for _, arg := range args {
		if v, ok := strings.CutPrefix(arg, name+"="); ok {
			return v
		}
	}
	Fail(fmt.Sprintf("%s in the command line %q", name, args))
	return ""
}

// restartBehindLagProxy restarts kube-scheduler with its API connection
// through a lagProxy that holds back its ResourceClaim watch by lag, and
// restarts it as it was when the spec ends (before the proxy stops).
func restartBehindLagProxy(ctx context.Context, lag time.Duration) *lagProxy {
	GinkgoHelper()
	before := componentArgs(ctx, "kube-scheduler")
	proxy, kubeconfig := startLagProxy(argValue(before, "--kubeconfig"), lag, watchOf("resourceclaims"))
	restartComponent(ctx, "kube-scheduler", withArg(before, "--kubeconfig", kubeconfig))
	DeferCleanup(func(ctx context.Context) {
		By("restarting kube-scheduler as it was")
		restartComponent(ctx, "kube-scheduler", before)
	})
	Eventually(ctx, proxy.watches.Load).WithTimeout(time.Minute).Should(BeNumerically(">", 0), "kube-scheduler's ResourceClaim watch through the proxy")
	return proxy
}
