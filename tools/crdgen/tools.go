//go:build tools

// Package tools records what this module needs, so that go mod tidy keeps it: controller-gen, and
// Karmada's API types that it reads (from the Go module cache, never committed here).
package tools

import (
	_ "github.com/karmada-io/karmada/pkg/apis/cluster/v1alpha1"
	_ "github.com/karmada-io/karmada/pkg/apis/work/v1alpha2"
	_ "sigs.k8s.io/controller-tools/cmd/controller-gen"
)
