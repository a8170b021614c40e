// Copyright 2026 The draext Authors.
// SPDX-License-Identifier: Apache-2.0

// Command example is a small client of a draext cluster, built only against
// the patched k8s.io modules that `make staging` exports. It lists the
// DeviceClasses with the extended resource names that they serve and, given
// a pod, prints which device request of its extended resource claim serves
// which container resource.
//
//	go run . -kubeconfig ~/.kube/config
//	go run . -kubeconfig ~/.kube/config -pod default/gpu-pod
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"text/tabwriter"

	resourceapi "k8s.io/api/resource/v1beta1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
)

func main() {
	kubeconfig := flag.String("kubeconfig", os.Getenv("KUBECONFIG"), "kubeconfig of the cluster")
	pod := flag.String("pod", "", "NAMESPACE/NAME of a pod whose extended resource mapping to print")
	flag.Parse()
	config, err := clientcmd.BuildConfigFromFlags("", *kubeconfig)
	if err != nil {
		fmt.Fprintf(os.Stderr, "example: %v\n", err)
		os.Exit(1)
	}
	client, err := kubernetes.NewForConfig(config)
	if err != nil {
		fmt.Fprintf(os.Stderr, "example: %v\n", err)
		os.Exit(1)
	}
	if err := run(context.Background(), client, *pod, os.Stdout); err != nil {
		fmt.Fprintf(os.Stderr, "example: %v\n", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, client kubernetes.Interface, pod string, out io.Writer) error {
	if err := listClasses(ctx, client, out); err != nil {
		return err
	}
	if pod == "" {
		return nil
	}
	namespace, name, ok := strings.Cut(pod, "/")
	if !ok || namespace == "" || name == "" {
		return fmt.Errorf("-pod %q: want NAMESPACE/NAME", pod)
	}
	return printMapping(ctx, client, namespace, name, out)
}

// extendedResourceNames returns the names under which containers can ask for
// devices of class: its explicit spec.extendedResourceName, if set, and its
// implicit deviceclass.resource.kubernetes.io/<class> name, when that is a
// valid resource name.
func extendedResourceNames(class *resourceapi.DeviceClass) []string {
	var names []string
	if class.Spec.ExtendedResourceName != nil {
		names = append(names, *class.Spec.ExtendedResourceName)
	}
	if implicit := resourceapi.ResourceDeviceClassPrefix + class.Name; len(validation.IsQualifiedName(implicit)) == 0 {
		names = append(names, implicit)
	}
	return names
}

func listClasses(ctx context.Context, client kubernetes.Interface, out io.Writer) error {
	classes, err := client.ResourceV1beta1().DeviceClasses().List(ctx, metav1.ListOptions{})
	if err != nil {
		return fmt.Errorf("list DeviceClasses: %w", err)
	}
	w := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(w, "DEVICECLASS\tEXTENDED RESOURCE NAMES")
	for i := range classes.Items {
		fmt.Fprintf(w, "%s\t%s\n", classes.Items[i].Name, strings.Join(extendedResourceNames(&classes.Items[i]), ", "))
	}
	return w.Flush()
}

func printMapping(ctx context.Context, client kubernetes.Interface, namespace, name string, out io.Writer) error {
	pod, err := client.CoreV1().Pods(namespace).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return fmt.Errorf("get pod: %w", err)
	}
	status := pod.Status.ExtendedResourceClaimStatus
	if status == nil {
		fmt.Fprintf(out, "pod %s/%s: no extended resource is served through DRA\n", namespace, name)
		return nil
	}
	fmt.Fprintf(out, "pod %s/%s: extended resource claim %s\n", namespace, name, status.ResourceClaimName)
	w := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(w, "CONTAINER\tRESOURCE\tREQUEST")
	for _, m := range status.RequestMappings {
		fmt.Fprintf(w, "%s\t%s\t%s\n", m.ContainerName, m.ResourceName, m.RequestName)
	}
	return w.Flush()
}
