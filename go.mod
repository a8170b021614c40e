module github.com/draext/draext

go 1.24.0

require (
	github.com/NVIDIA/go-nvml v0.13.4-1
	k8s.io/klog/v2 v2.130.1
)

require (
	github.com/go-logr/logr v1.4.1 // indirect
	github.com/google/uuid v1.6.0 // indirect
)
