package e2e

import (
	. "github.com/onsi/ginkgo/v2"
)

// The KEP-5004 cases of ../shared/spec/kep-5004.md §8. They need the
// scheduler, kubelet and controller patches of the series; each becomes a
// real spec (It instead of PIt) in the patch that makes it pass.
var _ = Describe("Extended resources served by DRA (KEP-5004)", func() {
	for _, c := range []string{
		"one container asking for nvidia.com/gpu gets a DRA device",
		"several extended resources in one container",
		"several containers of one pod",
		"init and sidecar containers",
		"explicit (nvidia.com/gpu) and implicit (deviceclass.resource.kubernetes.io/<class>) names",
		"together with a user ResourceClaim",
		"mixed device-plugin and DRA nodes",
		"device plugin removed, then DRA takes over",
		"the extended resource claim is deleted after success and after failure",
		"quota counts the extended resource",
		"gate off, on, off",
		"restarts of the scheduler, the kubelet and the driver",
	} {
		PIt(c + " [needs the scheduler and kubelet patches]")
	}
})
