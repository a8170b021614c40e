// Copyright 2026 The draext Authors.
// SPDX-License-Identifier: Apache-2.0

package e2e

import (
	"context"
	"fmt"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	resourceapi "k8s.io/api/resource/v1beta1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

// createDeviceClass creates a DeviceClass of the example driver's GPUs, with
// a generated name (draext-e2e-...), that serves extendedResourceName as its
// explicit extended resource name, and deletes it after the spec. It returns
// what the apiserver returned: the specs of the API check the error, the
// others expect none.
func createDeviceClass(ctx context.Context, extendedResourceName string) (*resourceapi.DeviceClass, error) {
	return createDriverDeviceClass(ctx, *driverName, extendedResourceName)
}

// createDriverDeviceClass is createDeviceClass for the devices of another
// driver, such as one whose ResourceSlices a spec publishes itself.
func createDriverDeviceClass(ctx context.Context, driver, extendedResourceName string) (*resourceapi.DeviceClass, error) {
	return createSelectorDeviceClass(ctx, fmt.Sprintf("device.driver == %q", driver), extendedResourceName)
}

// createSelectorDeviceClass is createDeviceClass for the devices that a CEL
// expression selects.
func createSelectorDeviceClass(ctx context.Context, expression, extendedResourceName string) (*resourceapi.DeviceClass, error) {
	class, err := cluster.client.ResourceV1beta1().DeviceClasses().Create(ctx, &resourceapi.DeviceClass{
		ObjectMeta: metav1.ObjectMeta{GenerateName: "draext-e2e-"},
		Spec: resourceapi.DeviceClassSpec{
			Selectors:            []resourceapi.DeviceSelector{{CEL: &resourceapi.CELDeviceSelector{Expression: expression}}},
			ExtendedResourceName: ptr.To(extendedResourceName),
		},
	}, metav1.CreateOptions{})
	if err == nil {
		DeferCleanup(func(ctx context.Context) {
			Expect(cluster.client.ResourceV1beta1().DeviceClasses().Delete(ctx, class.Name, metav1.DeleteOptions{})).To(Succeed())
		})
	}
	return class, err
}
