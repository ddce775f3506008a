"""The real control plane (kube-apiserver + etcd from their Go modules), Karmada's scheduler, the audit log."""
