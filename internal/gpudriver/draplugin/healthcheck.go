// Copyright 2026 The draext Authors.
// SPDX-License-Identifier: Apache-2.0

package draplugin

import (
	"context"
	"fmt"
	"net"
	"path/filepath"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/status"
	"k8s.io/klog/v2"
	drapb "k8s.io/kubelet/pkg/apis/dra/v1beta1"
	registerapi "k8s.io/kubelet/pkg/apis/pluginregistration/v1"
)

// Healthcheck is a gRPC health service (grpc.health.v1, what a Pod's grpc
// liveness probe calls) that answers SERVING only when the plugin's own
// sockets answer the way the kubelet calls them: registration GetInfo
// names this driver, and an empty NodePrepareResources succeeds.
type Healthcheck struct {
	grpc_health_v1.UnimplementedHealthServer
	driverName      string
	registrarSocket string
	draSocket       string
	server          *grpc.Server
	listener        net.Listener
}

// StartHealthcheck listens on addr (host:port) and serves health checks for
// the plugin whose sockets are in registrarDir and pluginDir.
func StartHealthcheck(ctx context.Context, addr, driverName, registrarDir, pluginDir string) (*Healthcheck, error) {
	lis, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("healthcheck: %w", err)
	}
	h := &Healthcheck{
		driverName:      driverName,
		registrarSocket: filepath.Join(registrarDir, driverName+"-reg.sock"),
		draSocket:       filepath.Join(pluginDir, "dra.sock"),
		server:          grpc.NewServer(),
		listener:        lis,
	}
	grpc_health_v1.RegisterHealthServer(h.server, h)
	logger := klog.FromContext(ctx)
	go func() {
		if err := h.server.Serve(lis); err != nil {
			logger.Error(err, "Healthcheck server stopped")
		}
	}()
	logger.Info("Healthcheck serving", "address", lis.Addr().String())
	return h, nil
}

// Addr is the address the health service listens on.
func (h *Healthcheck) Addr() string { return h.listener.Addr().String() }

// Stop stops the health service.
func (h *Healthcheck) Stop() { h.server.Stop() }

// Check implements grpc_health_v1.HealthServer.
func (h *Healthcheck) Check(ctx context.Context, _ *grpc_health_v1.HealthCheckRequest) (*grpc_health_v1.HealthCheckResponse, error) {
	logger := klog.FromContext(ctx)
	if err := h.probe(ctx); err != nil {
		logger.Error(err, "Health check failed")
		return &grpc_health_v1.HealthCheckResponse{Status: grpc_health_v1.HealthCheckResponse_NOT_SERVING}, nil
	}
	return &grpc_health_v1.HealthCheckResponse{Status: grpc_health_v1.HealthCheckResponse_SERVING}, nil
}

func (h *Healthcheck) probe(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()

	reg, err := dialUnix(h.registrarSocket)
	if err != nil {
		return err
	}
	defer func() { _ = reg.Close() }()
	info, err := registerapi.NewRegistrationClient(reg).GetInfo(ctx, &registerapi.InfoRequest{})
	if err != nil {
		return fmt.Errorf("registration socket %s: GetInfo: %w", h.registrarSocket, err)
	}
	if info.Name != h.driverName {
		return fmt.Errorf("registration socket %s belongs to %q, not %q", h.registrarSocket, info.Name, h.driverName)
	}

	dra, err := dialUnix(h.draSocket)
	if err != nil {
		return err
	}
	defer func() { _ = dra.Close() }()
	if _, err := drapb.NewDRAPluginClient(dra).NodePrepareResources(ctx, &drapb.NodePrepareResourcesRequest{}); err != nil {
		return fmt.Errorf("DRA socket %s: NodePrepareResources: %s", h.draSocket, status.Convert(err).Message())
	}
	return nil
}

func dialUnix(path string) (*grpc.ClientConn, error) {
	conn, err := grpc.NewClient("unix://"+path, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		return nil, fmt.Errorf("dial %s: %w", path, err)
	}
	return conn, nil
}
