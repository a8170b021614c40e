// Copyright 2026 The draext Authors.
// SPDX-License-Identifier: Apache-2.0

package e2e

import (
	"context"
	"flag"
	"fmt"
	"os"
	"slices"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	v1 "k8s.io/api/core/v1"
	resourcev1 "k8s.io/api/resource/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

// The mock-GPU driver built only on stock published modules
// (compat/stockdriver, started by scripts/cluster/phases/stockdriver.sh):
// what it publishes, and what it hands a container through CDI.
var stockDriverName = flag.String("stock-driver", envOr("DRAEXT_STOCK_DRIVER", "mock-gpu.stock.draext.dev"),
	"DRA driver name of the mock-GPU driver built on stock libraries (compat/stockdriver)")

const (
	// stockEnvPrefix starts the variables the stock driver's CDI devices
	// set: MOCK_GPU_<DEVICE>=<device> per mock GPU, and stockDriverEnv.
	stockEnvPrefix = "MOCK_GPU_"
	stockDriverEnv = "MOCK_GPU_DRIVER"
	// stockEnvEnd ends what the pod prints (the variables come before it).
	stockEnvEnd = "STOCK-ENV-END"
)

// stockSliceWait bounds the wait for the stock driver's slices. A kubelet
// that starts deletes every ResourceSlice of its node, and a driver on the
// stock k8s.io/dynamic-resource-allocation publishes again only after its
// resourceslice controller's sync delay (DefaultSyncDelay, 30 s in v0.34;
// about 57 s measured after a kubelet restart on make up): a spec that runs
// after one that restarted a kubelet finds that node without them for that
// long.
const stockSliceWait = 2 * time.Minute

// stockDriverSlices are the stock driver's ResourceSlices, read through
// resource.k8s.io/v1 once at least one exists (waiting up to
// stockSliceWait). The spec is skipped (failed with E2E_REQUIRE naming
// stock-driver) at once when v1 is not served or no DeviceClass selects the
// driver (phases/stockdriver.sh creates one with the driver), and after the
// wait when the driver publishes nothing.
func stockDriverSlices(ctx context.Context) []resourcev1.ResourceSlice {
	GinkgoHelper()
	classes, err := cluster.client.ResourceV1().DeviceClasses().List(ctx, metav1.ListOptions{})
	if apierrors.IsNotFound(err) {
		skipOrFail("stock-driver", "kube-apiserver does not serve resource.k8s.io/v1 (--runtime-config=resource.k8s.io/v1=true)")
	}
	Expect(err).NotTo(HaveOccurred())
	selects := fmt.Sprintf("%q", *stockDriverName)
	deployed := slices.ContainsFunc(classes.Items, func(c resourcev1.DeviceClass) bool {
		return slices.ContainsFunc(c.Spec.Selectors, func(s resourcev1.DeviceSelector) bool {
			return s.CEL != nil && strings.Contains(s.CEL.Expression, selects)
		})
	})
	if !deployed {
		skipOrFail("stock-driver", fmt.Sprintf("no DeviceClass selects driver %s: the driver built on stock libraries is not deployed in this cluster (scripts/cluster/phases/stockdriver.sh deploys it)", *stockDriverName))
	}
	var out []resourcev1.ResourceSlice
	Eventually(ctx, func() (int, error) {
		list, err := cluster.client.ResourceV1().ResourceSlices().List(ctx, metav1.ListOptions{})
		if err != nil {
			return 0, err
		}
		out = slices.DeleteFunc(list.Items, func(s resourcev1.ResourceSlice) bool { return s.Spec.Driver != *stockDriverName })
		return len(out), nil
	}).WithTimeout(stockSliceWait).WithPolling(2*time.Second).ShouldNot(BeZero(),
		"ResourceSlices of driver %s, whose DeviceClass exists (scripts/cluster/phases/stockdriver.sh starts the driver)", *stockDriverName)
	return out
}

// stockNodeDevices are the names of the devices that the stock driver
// publishes for the node, once its slice exists again (see stockSliceWait).
func stockNodeDevices(ctx context.Context, node string) []string {
	GinkgoHelper()
	var devices []string
	Eventually(ctx, func() ([]string, error) {
		list, err := cluster.client.ResourceV1().ResourceSlices().List(ctx, metav1.ListOptions{})
		if err != nil {
			return nil, err
		}
		devices = nil
		for _, s := range list.Items {
			if s.Spec.Driver == *stockDriverName && ptr.Deref(s.Spec.NodeName, "") == node {
				for _, d := range s.Spec.Devices {
					devices = append(devices, d.Name)
				}
			}
		}
		return devices, nil
	}).WithTimeout(stockSliceWait).WithPolling(2*time.Second).ShouldNot(BeEmpty(), "devices of driver %s on node %s", *stockDriverName, node)
	return devices
}

// createV1DeviceClass creates, through resource.k8s.io/v1 with strict field
// validation, a DeviceClass of the driver's devices that serves
// extendedResourceName, and deletes it after the spec.
func createV1DeviceClass(ctx context.Context, driver string, extendedResourceName v1.ResourceName) string {
	GinkgoHelper()
	class := &resourcev1.DeviceClass{
		ObjectMeta: metav1.ObjectMeta{GenerateName: "draext-e2e-"},
		Spec: resourcev1.DeviceClassSpec{
			Selectors:            []resourcev1.DeviceSelector{{CEL: &resourcev1.CELDeviceSelector{Expression: fmt.Sprintf("device.driver == %q", driver)}}},
			ExtendedResourceName: ptr.To(string(extendedResourceName)),
		},
	}
	created, err := cluster.client.ResourceV1().DeviceClasses().Create(ctx, class, metav1.CreateOptions{FieldValidation: metav1.FieldValidationStrict})
	Expect(err).NotTo(HaveOccurred(), "creating a DeviceClass through resource.k8s.io/v1")
	DeferCleanup(func(ctx context.Context) {
		Expect(cluster.client.ResourceV1().DeviceClasses().Delete(ctx, created.Name, metav1.DeleteOptions{})).To(Succeed())
	})
	Expect(ptr.Deref(created.Spec.ExtendedResourceName, "")).To(Equal(string(extendedResourceName)), "spec.extendedResourceName of the DeviceClass %s as resource.k8s.io/v1 returned it", created.Name)
	return created.Name
}

// stockEnv is what the pod's container printed: its MOCK_GPU_* variables.
func stockEnv(ctx context.Context, ns, pod string) map[string]string {
	GinkgoHelper()
	env := map[string]string{}
	Eventually(ctx, func() (bool, error) {
		logs, err := cluster.client.CoreV1().Pods(ns).GetLogs(pod, &v1.PodLogOptions{}).DoRaw(ctx)
		if err != nil {
			return false, err
		}
		lines := strings.Split(string(logs), "\n")
		clear(env)
		for _, line := range lines {
			if name, value, ok := strings.Cut(line, "="); ok && strings.HasPrefix(name, stockEnvPrefix) {
				env[name] = value
			}
		}
		return slices.Contains(lines, stockEnvEnd), nil
	}).WithTimeout(30*time.Second).Should(BeTrue(), "pod %s/%s printed no %s line", ns, pod, stockEnvEnd)
	return env
}

var _ = Describe("A DRA driver built only on stock published libraries", Label("stock-driver"), func() {
	It("serves an unchanged pod the extended resource of a DeviceClass created through resource.k8s.io/v1", Label("row:v1"), func(ctx context.Context) {
		requireGate("DRAExtendedResource")
		stockSlices := stockDriverSlices(ctx)
		for _, s := range stockSlices {
			library := "unknown"
			if len(s.Spec.Devices) > 0 {
				if v := s.Spec.Devices[0].Attributes["library"].StringValue; v != nil {
					library = *v
				}
			}
			GinkgoWriter.Printf("node %s: %d devices of %s, k8s.io/dynamic-resource-allocation %s\n", ptr.Deref(s.Spec.NodeName, ""), len(s.Spec.Devices), *stockDriverName, library)
		}
		ns := newNamespace(ctx)
		// Its own name: the class of phases/stockdriver.sh serves mock.draext.dev/gpu.
		name := v1.ResourceName("mock.draext.dev/" + ns)
		class := createV1DeviceClass(ctx, *stockDriverName, name)

		By(fmt.Sprintf("an unchanged pod asking for %s: 1 (class %s)", name, class))
		pod := shellPod("stock")
		pod.Spec.Containers[0].Command = []string{"sh", "-c", "env | grep '^" + stockEnvPrefix + "'; echo " + stockEnvEnd + "; sleep 3600"}
		one := v1.ResourceList{name: resource.MustParse("1")}
		pod.Spec.Containers[0].Resources = v1.ResourceRequirements{Requests: one, Limits: one}
		pod = runPod(ctx, ns, pod)

		By("the pod's status names its extended resource claim")
		pod, err := cluster.client.CoreV1().Pods(ns).Get(ctx, pod.Name, metav1.GetOptions{})
		Expect(err).NotTo(HaveOccurred())
		status := pod.Status.ExtendedResourceClaimStatus
		Expect(status).NotTo(BeNil(), "pod %s has no extendedResourceClaimStatus", pod.Name)
		Expect(status.ResourceClaimName).NotTo(BeEmpty())
		var request string
		for _, m := range status.RequestMappings {
			if m.ContainerName == "app" && m.ResourceName == string(name) {
				request = m.RequestName
			}
		}
		Expect(request).NotTo(BeEmpty(), "no request mapping for container app, resource %s: %+v", name, status.RequestMappings)

		By("the claim " + status.ResourceClaimName + ", read through resource.k8s.io/v1, holds one mock GPU of the pod's node")
		claim, err := cluster.client.ResourceV1().ResourceClaims(ns).Get(ctx, status.ResourceClaimName, metav1.GetOptions{})
		Expect(err).NotTo(HaveOccurred())
		Expect(claim.Annotations).To(HaveKeyWithValue(resourcev1.ExtendedResourceClaimAnnotation, "true"))
		Expect(metav1.IsControlledBy(claim, pod)).To(BeTrue(), "claim %s is controlled by pod %s", claim.Name, pod.Name)
		Expect(claim.Status.Allocation).NotTo(BeNil(), "claim %s is not allocated", claim.Name)
		results := claim.Status.Allocation.Devices.Results
		Expect(results).To(HaveLen(1))
		Expect(results[0].Driver).To(Equal(*stockDriverName))
		Expect(results[0].Request).To(Equal(request), "the request of the status mapping")
		Expect(results[0].Pool).To(Equal(pod.Spec.NodeName), "allocated from the pod's node")
		// Read again: the slices listed first may lack a node whose
		// kubelet restarted a moment before (see stockSliceWait).
		Expect(stockNodeDevices(ctx, pod.Spec.NodeName)).To(ContainElement(results[0].Device), "a device of the stock driver's slice of node %s", pod.Spec.NodeName)

		By("the container got that mock GPU, and only it, from the stock driver's CDI spec")
		env := stockEnv(ctx, ns, pod.Name)
		Expect(env).To(HaveKeyWithValue(stockDriverEnv, *stockDriverName))
		delete(env, stockDriverEnv)
		Expect(env).To(HaveLen(1), "one MOCK_GPU_<DEVICE> variable")
		Expect(env).To(ContainElement(results[0].Device))

		cdiDir := os.Getenv("E2E_CDI_DIR")
		if cdiDir != "" {
			Expect(cdiSpecs(cdiDir, string(claim.UID))).NotTo(BeEmpty(), "the stock driver's CDI spec of claim %s", claim.Name)
		}
		By("deleting the pod removes its claim" + map[bool]string{true: " and the CDI spec", false: ""}[cdiDir != ""])
		Expect(cluster.client.CoreV1().Pods(ns).Delete(ctx, pod.Name, metav1.DeleteOptions{})).To(Succeed())
		Eventually(ctx, func() error {
			_, err := cluster.client.ResourceV1().ResourceClaims(ns).Get(ctx, claim.Name, metav1.GetOptions{})
			return err
		}).WithTimeout(time.Minute).Should(Satisfy(apierrors.IsNotFound), "claim %s is not deleted", claim.Name)
		if cdiDir != "" {
			Eventually(func() []string { return cdiSpecs(cdiDir, string(claim.UID)) }).WithTimeout(30*time.Second).Should(BeEmpty(), "the stock driver's CDI spec of claim %s", claim.Name)
		}
	})
})
