// Copyright 2026 The draext Authors.
// SPDX-License-Identifier: Apache-2.0

package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"sort"
	"strings"

	"k8s.io/dynamic-resource-allocation/kubeletplugin"
	"k8s.io/klog/v2"

	"github.com/draext/draext/internal/gpudriver/draplugin"
)

// flagEnvPrefix starts the environment variable behind each flag (see
// flagEnvName). It is neither a prefix of cdi.GPUEnvPrefix ("DRAEXT_GPU_",
// the variables the driver hands to containers) nor has it as a prefix, and
// it leaves the scripts' DRAEXT_ROOT and the e2e suite's DRAEXT_DRIVER alone.
const flagEnvPrefix = "DRAEXT_FLAG_"

// flagEnvName is the environment variable that gives the flag its default:
// DRAEXT_FLAG_ followed by the flag's name in upper case, with '-', '.' and
// '_' as '_' (--node-name: DRAEXT_FLAG_NODE_NAME; klog's -v: DRAEXT_FLAG_V).
func flagEnvName(flagName string) string {
	return flagEnvPrefix + strings.Map(func(r rune) rune {
		switch r {
		case '-', '.':
			return '_'
		}
		return r
	}, strings.ToUpper(flagName))
}

// newFlagSet defines the driver's flags and klog's on a new flag set; env
// (name to value) gives --node-name its fallback $NODE_NAME.
func newFlagSet(env map[string]string) (*flag.FlagSet, *options) {
	o := &options{}
	fs := flag.NewFlagSet("draext-gpu", flag.ContinueOnError)
	klog.InitFlags(fs)
	fs.StringVar(&o.mode, "mode", "dra", "dra (DRA kubelet plugin) or device-plugin (classic device plugin)")
	fs.StringVar(&o.nodeName, "node-name", env["NODE_NAME"], "name of this node (if neither the flag nor its variable is set: $NODE_NAME); also seeds mock GPU UUIDs")
	fs.StringVar(&o.nvml, "nvml", "real", "NVML implementation: real (libnvidia-ml.so.1) or mock:<profile> ("+joinProfiles()+")")
	fs.StringVar(&o.driverRoot, "driver-root", "/", "root of the NVIDIA driver installation, where libnvidia-ml.so.1 is searched")
	fs.StringVar(&o.devRoot, "dev-root", "/", "root under which /dev/nvidia* device nodes are looked up")
	fs.StringVar(&o.stateDir, "state-dir", "/var/lib/draext-gpu", "directory for the checkpoint of prepared claims and the lock that keeps the two modes apart")
	fs.StringVar(&o.cdiRoot, "cdi-root", "/var/run/cdi", "directory for the CDI specs of prepared claims (DRA mode)")
	fs.StringVar(&o.driverName, "driver-name", draplugin.DefaultDriverName, "DRA driver name (DRA mode)")
	fs.StringVar(&o.pluginsDir, "kubelet-plugins-dir", kubeletplugin.KubeletPluginsDir, "kubelet plugin directory; the driver's socket goes to <dir>/<driver-name>/dra.sock (DRA mode)")
	fs.StringVar(&o.registrarDir, "kubelet-registrar-dir", kubeletplugin.KubeletRegistryDir, "kubelet plugin registration directory (DRA mode)")
	fs.StringVar(&o.devicePluginDir, "device-plugin-dir", "/var/lib/kubelet/device-plugins", "kubelet device plugin directory (device-plugin mode)")
	fs.StringVar(&o.resourceName, "resource-name", "nvidia.com/gpu", "extended resource advertised (device-plugin mode); in DRA mode the name whose device-plugin GPUs --kubelet-podresources-socket reports")
	fs.DurationVar(&o.sliceCheckPeriod, "slice-check-period", draplugin.DefaultSliceCheckPeriod, "how often the driver asks the API server whether its ResourceSlice still exists, besides watching for deletes (DRA mode)")
	fs.StringVar(&o.podResourcesSocket, "kubelet-podresources-socket", "", "the kubelet's PodResources socket (<kubelet root dir>/pod-resources/kubelet.sock): in DRA mode GPUs that device-plugin containers still hold for --resource-name are left out of the ResourceSlice until they are free, for a node moved from the device plugin with pods running; empty disables it (DRA mode)")
	fs.BoolVar(&o.ignoreForeignGPUs, "ignore-foreign-gpu-uuids", false, "with --kubelet-podresources-socket: device-plugin IDs that are UUIDs of GPUs this node does not have count for nothing, instead of withholding every GPU (IDs that map to none of the node's GPUs do that); only for hosts whose kubelets share one device-plugin socket, like draext's local cluster (DRA mode)")
	fs.StringVar(&o.healthAddress, "healthcheck-address", "", "host:port of a gRPC health service that checks the plugin's own sockets (DRA mode); empty disables it")
	fs.StringVar(&o.kubeconfig, "kubeconfig", "", "kubeconfig for running as a host process; in a pod the in-cluster config is used (DRA mode)")
	fs.BoolVar(&o.discoverOnly, "discover", false, "print the discovered GPUs and the CDI spec of a claim for all of them, then exit")
	fs.VisitAll(func(f *flag.Flag) {
		f.Usage += " [$" + flagEnvName(f.Name) + "]"
	})
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "Usage of draext-gpu:\n"+
			"Each flag also takes its value from the variable in brackets, %s<NAME>\n"+
			"(the name in upper case, '-' as '_'); a flag on the command line wins.\n", flagEnvPrefix)
		fs.PrintDefaults()
	}
	return fs, o
}

// reportedError is an error of the command line that the flag set has
// already printed, with the usage.
type reportedError struct{ error }

func (e reportedError) Unwrap() error { return e.error }

// parseFlags parses the command line (without the program name) and then
// sets every flag that it did not name from the flag's variable in environ
// ("NAME=value" entries, as os.Environ returns them). A variable with the
// flag prefix that no flag has, a value the flag refuses, and a positional
// argument are errors; --help prints the usage to out and returns
// flag.ErrHelp. An error of the command line itself is a reportedError.
func parseFlags(args, environ []string, out io.Writer) (options, error) {
	env := make(map[string]string, len(environ))
	for _, kv := range environ {
		if name, value, ok := strings.Cut(kv, "="); ok {
			env[name] = value
		}
	}
	fs, o := newFlagSet(env)
	fs.SetOutput(out)
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return options{}, err
		}
		return options{}, reportedError{err}
	}
	if fs.NArg() > 0 {
		return options{}, fmt.Errorf("unexpected argument %q: draext-gpu takes flags only", fs.Arg(0))
	}
	explicit := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { explicit[f.Name] = true })
	byEnv := map[string]*flag.Flag{}
	fs.VisitAll(func(f *flag.Flag) { byEnv[flagEnvName(f.Name)] = f })

	names := make([]string, 0, len(env))
	for name := range env {
		if strings.HasPrefix(name, flagEnvPrefix) {
			names = append(names, name)
		}
	}
	sort.Strings(names)
	for _, name := range names {
		f, ok := byEnv[name]
		if !ok {
			return options{}, fmt.Errorf("$%s is set, but draext-gpu has no flag for it (see --help)", name)
		}
		if explicit[f.Name] {
			continue
		}
		if err := fs.Set(f.Name, env[name]); err != nil {
			// The flag package says only "parse error" for a bool.
			if b, ok := f.Value.(interface{ IsBoolFlag() bool }); ok && b.IsBoolFlag() {
				err = errors.New("not a boolean, use true or false")
			}
			return options{}, fmt.Errorf("$%s=%q (--%s): %w", name, env[name], f.Name, err)
		}
	}
	return *o, nil
}
