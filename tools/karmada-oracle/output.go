package main

// The output of `binding-scheduler simulate -o json` (operator/binding_scheduler/cli/simulate.py), byte for
// byte: {"results": [...]} as Python's json.dumps(indent=2) writes it (ASCII only, 2-space indent).

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	workv1alpha2 "github.com/karmada-io/karmada/pkg/apis/work/v1alpha2"
)

type targetCluster struct {
	Name     string `json:"name"`
	Replicas int32  `json:"replicas,omitempty"` // simulate leaves out a zero count (TargetCluster.to_dict)
}

type result struct {
	Kind      string          `json:"kind"`
	Namespace string          `json:"namespace"`
	Name      string          `json:"name"`
	Scheduled bool            `json:"scheduled"`
	Reason    string          `json:"reason"`
	Message   string          `json:"message"`
	Clusters  []targetCluster `json:"clusters"`
}

// resultOf reads one binding as Karmada left it: spec.clusters and the Scheduled condition.
func resultOf(obj runtime.Object) result {
	var r result
	var spec workv1alpha2.ResourceBindingSpec
	var conditions []metav1.Condition
	switch o := obj.(type) {
	case *workv1alpha2.ResourceBinding:
		r.Kind, r.Namespace, r.Name = "ResourceBinding", o.Namespace, o.Name
		spec, conditions = o.Spec, o.Status.Conditions
	case *workv1alpha2.ClusterResourceBinding:
		r.Kind, r.Name = "ClusterResourceBinding", o.Name
		spec, conditions = o.Spec, o.Status.Conditions
	}
	if condition := meta.FindStatusCondition(conditions, workv1alpha2.Scheduled); condition != nil {
		r.Scheduled = condition.Status == metav1.ConditionTrue
		r.Reason, r.Message = condition.Reason, condition.Message
	}
	r.Clusters = make([]targetCluster, 0, len(spec.Clusters))
	for _, target := range spec.Clusters {
		r.Clusters = append(r.Clusters, targetCluster{Name: target.Name, Replicas: target.Replicas})
	}
	return r
}

func writeResults(w io.Writer, results []result) error {
	var buf bytes.Buffer
	encoder := json.NewEncoder(&buf)
	encoder.SetEscapeHTML(false) // Python leaves <, > and & as they are
	encoder.SetIndent("", "  ")
	if err := encoder.Encode(map[string][]result{"results": results}); err != nil {
		return err
	}
	_, err := io.WriteString(w, asciiOnly(buf.String()))
	return err
}

// asciiOnly escapes what Python's json.dumps (ensure_ascii) escapes and Go's encoder writes as is: DEL and
// every non-ASCII character (as UTF-16 \u escapes, lower-case hex). Outside strings the JSON text is ASCII.
func asciiOnly(text string) string {
	var out bytes.Buffer
	for _, r := range text {
		switch {
		case r < 0x7f:
			out.WriteRune(r)
		case r <= 0xffff:
			fmt.Fprintf(&out, `\u%04x`, r)
		default:
			r -= 0x10000
			fmt.Fprintf(&out, `\u%04x\u%04x`, 0xd800+(r>>10), 0xdc00+(r&0x3ff))
		}
	}
	return out.String()
}
