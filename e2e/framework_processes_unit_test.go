// Copyright 2026 The draext Authors.
// SPDX-License-Identifier: Apache-2.0

package e2e

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestRunClusterCtlUnit runs without a cluster, beside the Ginkgo suite: a
// stand-in for E2E_CLUSTER_CTL shows what runClusterCtl passes and returns.
func TestRunClusterCtlUnit(t *testing.T) {
	ctl := filepath.Join(t.TempDir(), "ctl.sh")
	script := `#!/bin/sh
case $1 in
args) printf '%s\n' /usr/bin/kubelet "--config=/a b.yaml" "";;
find) echo "no $2 with $3" >&2; exit 1;;
*) echo "$*"; echo "unknown command $1" >&2; exit 2;;
esac
`
	if err := os.WriteFile(ctl, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("E2E_CLUSTER_CTL", ctl)
	ctx := context.Background()

	out, err := runClusterCtl(ctx, "args", "kubelet1")
	if err != nil {
		t.Fatalf("args: %v", err)
	}
	if want := "/usr/bin/kubelet\n--config=/a b.yaml\n\n"; out != want {
		t.Errorf("args printed %q, want %q", out, want)
	}

	out, err = runClusterCtl(ctx, "find", "kubelet*", "--hostname-override=x")
	var exit *exec.ExitError
	if out != "" || !errors.As(err, &exit) || exit.ExitCode() != 1 {
		t.Errorf("find: out %q, err %v: want nothing and exit status 1", out, err)
	}
	if err == nil || !strings.Contains(err.Error(), "no kubelet* with --hostname-override=x") {
		t.Errorf("find: error %v does not carry the command's stderr", err)
	}

	out, err = runClusterCtl(ctx, "restart", "kube-scheduler", "--", "a b")
	if out != "restart kube-scheduler -- a b\n" {
		t.Errorf("restart printed %q: the arguments did not pass as they were", out)
	}
	if err == nil || !strings.Contains(err.Error(), ctl+" restart kube-scheduler -- a b: exit status 2: unknown command restart") {
		t.Errorf("restart: error %v, want one with the command line, its status and its stderr", err)
	}
}
