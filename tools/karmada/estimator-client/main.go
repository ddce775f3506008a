// Command estimator-client asks a karmada-scheduler-estimator through Karmada's own client
// (pkg/estimator/client: the request building and gRPC calls karmada-scheduler and karmada-descheduler make),
// so the tests can compare its answers with our client's. It dials the estimator the way Karmada does
// (pkg/util/grpcconnection, plaintext), then reads a JSON list of requests on stdin and prints a JSON list of
// answers, one per request, in order:
//
//	request: {"cluster": "member", "object": "kind=Deployment, name=ns/web",   // object: optional metadata
//	          "maxAvailableReplicas": {"replicaRequirements": <work.karmada.io/v1alpha2 ReplicaRequirements>}}
//	      or {"cluster": ..., "maxAvailableComponentSets": {"namespace": "ns", "components": [<Component>...]}}
//	      or {"cluster": ..., "getUnschedulableReplicas": {"resource": <ObjectReference>, "threshold": "30s"}}
//	answer:  {"maxReplicas": N} | {"maxSets": N} | {"unschedulableReplicas": N} | {"error": "<Karmada's text>"}
//
// Usage: estimator-client --address HOST:PORT [--timeout 5s] < requests.json
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	clusterv1alpha1 "github.com/karmada-io/karmada/pkg/apis/cluster/v1alpha1"
	workv1alpha2 "github.com/karmada-io/karmada/pkg/apis/work/v1alpha2"
	estimatorclient "github.com/karmada-io/karmada/pkg/estimator/client"
	estimatorservice "github.com/karmada-io/karmada/pkg/estimator/service"
	"github.com/karmada-io/karmada/pkg/util"
	"github.com/karmada-io/karmada/pkg/util/grpcconnection"
)

type request struct {
	Cluster              string                `json:"cluster"`
	Object               string                `json:"object,omitempty"`
	MaxAvailableReplicas *replicasRequest      `json:"maxAvailableReplicas,omitempty"`
	MaxAvailableSets     *componentSetsRequest `json:"maxAvailableComponentSets,omitempty"`
	Unschedulable        *unschedulableRequest `json:"getUnschedulableReplicas,omitempty"`
}

type replicasRequest struct {
	ReplicaRequirements *workv1alpha2.ReplicaRequirements `json:"replicaRequirements"`
}

type componentSetsRequest struct {
	Namespace  string                   `json:"namespace"`
	Components []workv1alpha2.Component `json:"components"`
}

type unschedulableRequest struct {
	Resource  workv1alpha2.ObjectReference `json:"resource"`
	Threshold metav1.Duration              `json:"threshold"`
}

type answer struct {
	MaxReplicas           *int32 `json:"maxReplicas,omitempty"`
	MaxSets               *int32 `json:"maxSets,omitempty"`
	UnschedulableReplicas *int32 `json:"unschedulableReplicas,omitempty"`
	Error                 string `json:"error,omitempty"`
}

func main() {
	address := flag.String("address", "", "the estimator's gRPC address, HOST:PORT (plaintext)")
	timeout := flag.Duration("timeout", 5*time.Second, "Karmada's --scheduler-estimator-timeout for each request")
	flag.Parse()
	if *address == "" {
		fail("--address is required")
	}
	decoder := json.NewDecoder(os.Stdin)
	decoder.DisallowUnknownFields()
	var requests []request
	if err := decoder.Decode(&requests); err != nil {
		fail("reading the requests: %v", err)
	}

	config := &grpcconnection.ClientConfig{}
	connection, err := config.DialWithTimeOut([]string{*address}, 5*time.Second)
	if err != nil {
		fail("dialing %s: %v", *address, err)
	}
	defer connection.Close()
	cache := estimatorclient.NewSchedulerEstimatorCache()
	estimator := estimatorclient.NewSchedulerEstimator(cache, *timeout)

	answers := make([]answer, 0, len(requests))
	for i, req := range requests {
		// The cache is keyed by cluster name; every request goes to the one estimator at --address.
		if !cache.IsEstimatorExist(req.Cluster) {
			cache.AddCluster(req.Cluster, connection, estimatorservice.NewEstimatorClient(connection))
		}
		got, err := ask(estimator, req)
		if err != nil {
			got = answer{Error: err.Error()}
		}
		if got == (answer{}) {
			fail("request %d names no call", i)
		}
		answers = append(answers, got)
	}
	out := json.NewEncoder(os.Stdout)
	if err := out.Encode(answers); err != nil {
		fail("writing the answers: %v", err)
	}
}

func ask(estimator *estimatorclient.SchedulerEstimator, req request) (answer, error) {
	ctx := context.Background()
	if req.Object != "" {
		ctx = context.WithValue(ctx, util.ContextKeyObject, req.Object)
	}
	clusters := []*clusterv1alpha1.Cluster{{ObjectMeta: metav1.ObjectMeta{Name: req.Cluster}}}
	switch {
	case req.MaxAvailableReplicas != nil:
		result, err := estimator.MaxAvailableReplicas(ctx, estimatorclient.ReplicaEstimationRequest{
			Clusters: clusters, ReplicaRequirements: req.MaxAvailableReplicas.ReplicaRequirements,
		})
		if err != nil {
			return answer{}, err
		}
		return answer{MaxReplicas: &result[0].Replicas}, nil
	case req.MaxAvailableSets != nil:
		result, err := estimator.MaxAvailableComponentSets(ctx, estimatorclient.ComponentSetEstimationRequest{
			Clusters: clusters, Namespace: req.MaxAvailableSets.Namespace, Components: req.MaxAvailableSets.Components,
		})
		if err != nil {
			return answer{}, err
		}
		return answer{MaxSets: &result[0].Sets}, nil
	case req.Unschedulable != nil:
		result, err := estimator.GetUnschedulableReplicas(ctx, []string{req.Cluster},
			&req.Unschedulable.Resource, req.Unschedulable.Threshold.Duration)
		if err != nil {
			return answer{}, err
		}
		return answer{UnschedulableReplicas: &result[0].Replicas}, nil
	}
	return answer{}, nil
}

func fail(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "estimator-client: "+format+"\n", args...)
	os.Exit(2)
}
