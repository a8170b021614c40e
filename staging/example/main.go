// Copyright 2026 The draext Authors.
// SPDX-License-Identifier: Apache-2.0

// Command kubectl-draext is a kubectl plugin (`kubectl draext`) that shows
// who serves extended resources on each node, a device plugin or DRA
// (KEP-5004, DRA extended resources), how full they are, and which devices
// a pod got through its extended resource claim. It is built against the
// patched k8s.io modules that `make staging` exports, and reads
// resource.k8s.io v1, v1beta2 or v1beta1, whichever the server offers
// first, so it works against draext, kind and stock Kubernetes 1.34+.
//
//	kubectl draext nodes [NODE...] [-o json|yaml|wide]
//	kubectl draext pod NAME [-n NAMESPACE] [-o json|yaml|wide]
//	kubectl draext classes [-o json|yaml|wide]
//
// docs/kubectl-draext.md describes the columns and the rules.
package main

import (
	"context"
	"fmt"
	"os"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

func main() {
	streams := genericiooptions.IOStreams{In: os.Stdin, Out: os.Stdout, ErrOut: os.Stderr}
	cmd := newRootCommand(newOptions(streams))
	if err := cmd.ExecuteContext(context.Background()); err != nil {
		fmt.Fprintf(os.Stderr, "error: %v\n", err)
		os.Exit(1)
	}
}

// options are the flags shared by the commands and how to reach the
// cluster.
type options struct {
	configFlags *genericclioptions.ConfigFlags
	streams     genericiooptions.IOStreams
	output      string
	// newClients returns a clientset and a REST client of the server's
	// root (for /metrics and resource.k8s.io/v1); tests replace it.
	newClients func() (kubernetes.Interface, rest.Interface, error)
	// namespace is the namespace of -n or of the kubeconfig context.
	namespace func() (string, error)
}

func newOptions(streams genericiooptions.IOStreams) *options {
	o := &options{configFlags: genericclioptions.NewConfigFlags(true), streams: streams}
	o.newClients = func() (kubernetes.Interface, rest.Interface, error) {
		config, err := o.configFlags.ToRESTConfig()
		if err != nil {
			return nil, nil, fmt.Errorf("load the kubeconfig: %w", err)
		}
		client, err := kubernetes.NewForConfig(config)
		if err != nil {
			return nil, nil, fmt.Errorf("create a client for %s: %w", config.Host, err)
		}
		return client, client.Discovery().RESTClient(), nil
	}
	o.namespace = func() (string, error) {
		ns, _, err := o.configFlags.ToRawKubeConfigLoader().Namespace()
		if err != nil {
			return "", fmt.Errorf("the namespace of the kubeconfig context: %w", err)
		}
		return ns, nil
	}
	return o
}

func newRootCommand(o *options) *cobra.Command {
	root := &cobra.Command{
		Use:   "kubectl-draext",
		Short: "Show who serves extended resources, a device plugin or DRA (KEP-5004), and the devices of pods",
		Long: `kubectl draext shows, per node and extended resource name, whether a device plugin or DRA
serves it, through which DeviceClass and driver, and how much is allocated and free; and, for a pod,
the devices that its extended resource claim gave each container. See docs/kubectl-draext.md.`,
		Annotations:   map[string]string{cobra.CommandDisplayNameAnnotation: "kubectl draext"},
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.CompletionOptions.DisableDefaultCmd = true
	root.SetOut(o.streams.Out)
	root.SetErr(o.streams.ErrOut)
	o.configFlags.AddFlags(root.PersistentFlags())
	root.PersistentFlags().StringVarP(&o.output, "output", "o", "", "Output format: json, yaml or wide (default: a table)")
	root.PersistentPreRunE = func(*cobra.Command, []string) error { return checkOutput(o.output) }
	root.AddCommand(newNodesCommand(o), newPodCommand(o), newClassesCommand(o))
	return root
}

func newNodesCommand(o *options) *cobra.Command {
	return &cobra.Command{
		Use:   "nodes [NODE...]",
		Short: "Per node and extended resource name: who serves it, through which class and driver, capacity, allocated and free",
		Example: `  kubectl draext nodes
  kubectl draext nodes node-1 -o wide
  kubectl draext nodes -o json`,
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := o.connect()
			if err != nil {
				return err
			}
			c.gate = readGate(cmd.Context(), c.raw, gateName)
			in, err := readNodesInput(cmd.Context(), c, args)
			if err != nil {
				return err
			}
			list := buildNodesReport(cmd.Context(), in)
			if done, err := printObject(o.streams.Out, o.output, list); done {
				return err
			}
			return printNodesTable(o.streams.Out, o.streams.ErrOut, list, o.output == outputWide)
		},
	}
}

func newPodCommand(o *options) *cobra.Command {
	return &cobra.Command{
		Use:   "pod NAME",
		Short: "The extended resource claim of a pod and the devices (driver, pool, device, UUID) of each container",
		Example: `  kubectl draext pod gpu-pod
  kubectl draext pod gpu-pod -n team-a -o json`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			namespace, err := o.namespace()
			if err != nil {
				return err
			}
			c, err := o.connect()
			if err != nil {
				return err
			}
			report, err := readPodReport(cmd.Context(), c, namespace, args[0])
			if err != nil {
				return err
			}
			if done, err := printObject(o.streams.Out, o.output, report); done {
				return err
			}
			return printPodTable(o.streams.Out, o.streams.ErrOut, report, o.output == outputWide)
		},
	}
}

func newClassesCommand(o *options) *cobra.Command {
	return &cobra.Command{
		Use:   "classes",
		Short: "DeviceClasses with the extended resource names they serve and the classes they conflict with",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			c, err := o.connect()
			if err != nil {
				return err
			}
			classes, err := c.api.DeviceClasses(cmd.Context())
			if err != nil {
				return err
			}
			list := buildClassList(c.api.GroupVersion(), classes)
			if done, err := printObject(o.streams.Out, o.output, list); done {
				return err
			}
			return printClassTable(o.streams.Out, list, o.output == outputWide)
		},
	}
}

// connection is a cluster with the version of resource.k8s.io to read.
type connection struct {
	kube          kubernetes.Interface
	raw           rest.Interface
	serverVersion string
	api           resourceAPI
	gate          gateState
}

// connect builds the clients, asks for the server version and picks the
// version of resource.k8s.io.
func (o *options) connect() (*connection, error) {
	kube, raw, err := o.newClients()
	if err != nil {
		return nil, err
	}
	info, err := kube.Discovery().ServerVersion()
	if err != nil {
		return nil, fmt.Errorf("get the server version: %w", err)
	}
	version, err := pickResourceVersion(kube.Discovery())
	if err != nil {
		return nil, err
	}
	api, err := newResourceAPI(version, kube, raw)
	if err != nil {
		return nil, err
	}
	return &connection{kube: kube, raw: raw, serverVersion: info.GitVersion, api: api}, nil
}
