package main

// How the oracle runs Karmada's scheduler.
//
// Everything that decides is Karmada's: scheduler.NewScheduler builds the real Scheduler (its informers, its
// cache, core.NewGenericScheduler with the in-tree filter/score plugins filtered by --plugins, the general
// estimator; no accurate estimator), and Scheduler.Run runs its real worker: doScheduleBinding ->
// scheduleResourceBinding -> the ClusterAffinity or ClusterAffinities path (term progression included) ->
// Algorithm.Schedule (filter, score, spread-constraint selection, replica assignment) -> the spec patch
// (spec.clusters and the applied-placement annotation) -> getConditionByError -> the status patch with the
// Scheduled condition. The per-binding entry points are unexported, so the thinnest exported path is this one:
// NewScheduler over fake clientsets and Run, with each binding created in the fake API server so that Karmada's
// own event handler queues it, exactly as a new binding is queued in a real control plane.
//
// What is faked: the API server (karmada's generated fake clientset, holding the Clusters from the start and
// receiving the bindings one by one, in input order; every write gives the object a new resourceVersion, as an
// API server does, see versioned), the Kubernetes clientset (it only receives events) and the dynamic client
// (unused by the scheduler). The result is read back from the fake API server: each binding
// as it stood right after Karmada wrote its Scheduled condition (spec.clusters, the condition).
//
// The question is simulate's: "what would the scheduler decide if it scheduled this binding now?". Karmada
// only starts a scheduling when its event filter and doScheduleBinding's triggers say so, so each binding is
// prepared to pass them, touching only fields that nothing but those checks reads (see prepare): the
// applied-placement annotation is dropped (placementChanged is then true), the scheduler name, scheduling
// suspension and deletion timestamp are cleared, a managed-by label is added when no policy label is there,
// and an existing Scheduled condition is dropped so that the condition write of this pass is always a change
// (patchBindingStatusCondition writes nothing when the status is unchanged, and the write is what the oracle
// waits for). The placement gets the defaults every stored binding carries in a real control plane: the CRD's
// replicaSchedulingType default, which the API server applies. The PropagationPolicy webhook's defaults
// (minGroups 0 -> 1, an empty spreadByField -> cluster, Divided without a preference -> Weighted) are only in a
// binding made from a policy (the detector copies the defaulted placement); a binding created directly does
// not get them, and Karmada's scheduler does not apply them. So they are applied only when asked
// (--policy-defaults, or "policyDefaults" in a case), with Karmada's own helpers.

import (
	"context"
	"fmt"
	"strconv"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	dynamicfake "k8s.io/client-go/dynamic/fake"
	kubefake "k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"

	policyv1alpha1 "github.com/karmada-io/karmada/pkg/apis/policy/v1alpha1"
	workv1alpha2 "github.com/karmada-io/karmada/pkg/apis/work/v1alpha2"
	karmadafake "github.com/karmada-io/karmada/pkg/generated/clientset/versioned/fake"
	"github.com/karmada-io/karmada/pkg/scheduler"
	"github.com/karmada-io/karmada/pkg/util"
	"github.com/karmada-io/karmada/pkg/util/helper"
)

// managedByOracle marks a binding that carries no policy label: Karmada's event filter only queues bindings
// with a (Cluster)PropagationPolicy permanent-id label or a managed-by label.
const managedByOracle = "karmada-oracle"

var (
	rbResource  = workv1alpha2.SchemeGroupVersion.WithResource("resourcebindings")
	crbResource = workv1alpha2.SchemeGroupVersion.WithResource("clusterresourcebindings")
)

// versioned is the fake clientset's object tracker with one thing an API server does and the tracker does not:
// each create, update and patch gives the object the next resourceVersion (a decimal counter). Karmada's
// workload affinity filters (gate WorkloadAffinity) compare a binding's informer copy with the copy its spec
// patch returned by resourceVersion, and fail every cluster when the two cannot be compared: with the tracker's
// empty versions, every binding Karmada had placed in a group would do that.
type versioned struct {
	k8stesting.ObjectTracker
	mu   sync.Mutex
	last uint64
}

func (v *versioned) stamp(obj runtime.Object) {
	accessor, err := meta.Accessor(obj)
	if err != nil {
		return
	}
	v.mu.Lock()
	defer v.mu.Unlock()
	v.last++
	accessor.SetResourceVersion(strconv.FormatUint(v.last, 10))
}

func (v *versioned) Create(gvr schema.GroupVersionResource, obj runtime.Object, ns string, opts ...metav1.CreateOptions) error {
	v.stamp(obj)
	return v.ObjectTracker.Create(gvr, obj, ns, opts...)
}

func (v *versioned) Update(gvr schema.GroupVersionResource, obj runtime.Object, ns string, opts ...metav1.UpdateOptions) error {
	v.stamp(obj)
	return v.ObjectTracker.Update(gvr, obj, ns, opts...)
}

func (v *versioned) Patch(gvr schema.GroupVersionResource, obj runtime.Object, ns string, opts ...metav1.PatchOptions) error {
	v.stamp(obj)
	return v.ObjectTracker.Patch(gvr, obj, ns, opts...)
}

// written remembers, per binding, the object as it stood right after the first status write that carried a
// Scheduled condition: the end of one scheduling pass (scheduleResourceBinding's deferred condition patch).
type written struct {
	mu      sync.Mutex
	objects map[string]runtime.Object
	done    map[string]chan struct{}
}

func (w *written) expect(key string) <-chan struct{} {
	w.mu.Lock()
	defer w.mu.Unlock()
	ch := make(chan struct{})
	w.done[key] = ch
	return ch
}

func (w *written) observe(obj runtime.Object) {
	var key string
	var conditions []metav1.Condition
	switch o := obj.(type) {
	case *workv1alpha2.ResourceBinding:
		key, conditions = "ResourceBinding "+o.Namespace+"/"+o.Name, o.Status.Conditions
	case *workv1alpha2.ClusterResourceBinding:
		key, conditions = "ClusterResourceBinding "+o.Name, o.Status.Conditions
	default:
		return
	}
	if meta.FindStatusCondition(conditions, workv1alpha2.Scheduled) == nil {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if _, seen := w.objects[key]; seen {
		return
	}
	w.objects[key] = obj.DeepCopyObject()
	if ch, ok := w.done[key]; ok {
		close(ch)
	}
}

func (w *written) get(key string) runtime.Object {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.objects[key]
}

// schedule runs Karmada's scheduler over the inputs and returns one result per binding, in input order.
func schedule(ctx context.Context, in *inputs, opts *options) ([]result, error) {
	objects := make([]runtime.Object, 0, len(in.clusters))
	for _, cluster := range in.clusters {
		objects = append(objects, cluster.DeepCopy())
	}
	karmadaClient := karmadafake.NewSimpleClientset(objects...)
	tracker := &versioned{ObjectTracker: karmadaClient.Tracker()}
	apply := k8stesting.ObjectReaction(tracker)
	karmadaClient.PrependReactor("*", "*", apply) // every request through the versioned tracker

	// Observe every status write as the fake API server applies it.
	seen := &written{objects: map[string]runtime.Object{}, done: map[string]chan struct{}{}}
	for _, resource := range []string{rbResource.Resource, crbResource.Resource} {
		karmadaClient.PrependReactor("patch", resource, func(action k8stesting.Action) (bool, runtime.Object, error) {
			handled, obj, err := apply(action)
			if err == nil && obj != nil && action.GetSubresource() == "status" {
				seen.observe(obj)
			}
			return handled, obj, err
		})
	}

	// Know when the scheduler's informers watch the bindings: a binding created before its informer's watch
	// is registered (between its list and its watch) would never reach the scheduler's queue.
	watching := map[schema.GroupVersionResource]chan struct{}{
		rbResource: make(chan struct{}), crbResource: make(chan struct{}),
	}
	var watchOnce sync.Map
	karmadaClient.PrependWatchReactor("*", func(action k8stesting.Action) (bool, watch.Interface, error) {
		var listOptions metav1.ListOptions
		if watchAction, ok := action.(k8stesting.WatchActionImpl); ok {
			listOptions = watchAction.ListOptions
		}
		w, err := tracker.Watch(action.GetResource(), action.GetNamespace(), listOptions)
		if err != nil {
			return false, nil, err
		}
		if ch, ok := watching[action.GetResource()]; ok {
			if _, already := watchOnce.LoadOrStore(action.GetResource(), true); !already {
				close(ch)
			}
		}
		return true, w, nil
	})

	sched, err := scheduler.NewScheduler(
		dynamicfake.NewSimpleDynamicClient(runtime.NewScheme()),
		karmadaClient,
		kubefake.NewSimpleClientset(),
		scheduler.WithEnableEmptyWorkloadPropagation(opts.enableEmptyWorkloadPropagation),
		scheduler.WithEnableSchedulerPlugin(opts.plugins),
		scheduler.WithSchedulerName(scheduler.DefaultScheduler),
	)
	if err != nil {
		return nil, fmt.Errorf("karmada's scheduler could not be created: %w", err)
	}
	runCtx, stop := context.WithCancel(ctx)
	defer stop()
	stopped := make(chan struct{})
	go func() {
		defer close(stopped)
		sched.Run(runCtx)
	}()
	defer func() {
		stop()
		<-stopped
	}()

	for resource, ch := range watching {
		select {
		case <-ch:
		case <-time.After(opts.timeout):
			return nil, fmt.Errorf("karmada's scheduler did not watch %s within %s", resource.Resource, opts.timeout)
		}
	}

	for _, b := range in.bindings {
		key := b.kind() + " " + b.key()
		var done <-chan struct{}
		var err error
		if b.rb != nil {
			rb := b.rb.DeepCopy()
			prepare(&rb.ObjectMeta, &rb.Spec, &rb.Status, opts.policyDefaults)
			if rb.Spec.Placement != nil {
				done = seen.expect(key)
			}
			_, err = karmadaClient.WorkV1alpha2().ResourceBindings(rb.Namespace).Create(ctx, rb, metav1.CreateOptions{})
		} else {
			crb := b.crb.DeepCopy()
			prepare(&crb.ObjectMeta, &crb.Spec, &crb.Status, opts.policyDefaults)
			if crb.Spec.Placement != nil {
				done = seen.expect(key)
			}
			_, err = karmadaClient.WorkV1alpha2().ClusterResourceBindings().Create(ctx, crb, metav1.CreateOptions{})
		}
		if err != nil {
			return nil, fmt.Errorf("%s: could not be created in the fake API server: %w", key, err)
		}
		// Without a placement Karmada's doScheduleBinding/doScheduleClusterBinding stop with "failed to get
		// placement" before writing anything (and retry with backoff): there is no write to wait for, and
		// what Karmada leaves is the binding as it is.
		if done == nil {
			continue
		}
		select {
		case <-done:
		case <-time.After(opts.timeout):
			return nil, fmt.Errorf("%s: karmada's scheduler wrote no Scheduled condition within %s", key, opts.timeout)
		}
	}

	results := make([]result, 0, len(in.bindings))
	for _, b := range in.bindings {
		key := b.kind() + " " + b.key()
		obj := seen.get(key)
		if obj == nil {
			var err error
			if b.rb != nil {
				obj, err = tracker.Get(rbResource, b.rb.Namespace, b.rb.Name)
			} else {
				obj, err = tracker.Get(crbResource, "", b.crb.Name)
			}
			if err != nil {
				return nil, fmt.Errorf("%s: could not be read back: %w", key, err)
			}
		}
		results = append(results, resultOf(obj))
	}
	return results, nil
}

// prepare makes one binding reach Karmada's scheduling (see the package comment): only fields read by the
// event filter and by doScheduleBinding's triggers change, plus the defaults every stored binding carries.
func prepare(objectMeta *metav1.ObjectMeta, spec *workv1alpha2.ResourceBindingSpec, status *workv1alpha2.ResourceBindingStatus,
	policyDefaults bool) {
	objectMeta.ResourceVersion = ""
	objectMeta.DeletionTimestamp = nil
	delete(objectMeta.Annotations, util.PolicyPlacementAnnotation)
	labels := objectMeta.Labels
	if labels[policyv1alpha1.PropagationPolicyPermanentIDLabel] == "" &&
		labels[policyv1alpha1.ClusterPropagationPolicyPermanentIDLabel] == "" &&
		labels[workv1alpha2.BindingManagedByLabel] == "" {
		if objectMeta.Labels == nil {
			objectMeta.Labels = map[string]string{}
		}
		objectMeta.Labels[workv1alpha2.BindingManagedByLabel] = managedByOracle
	}
	spec.SchedulerName = ""
	if spec.Suspension != nil {
		spec.Suspension.Scheduling = nil
	}
	meta.RemoveStatusCondition(&status.Conditions, workv1alpha2.Scheduled)

	if placement := spec.Placement; placement != nil {
		// The CRD default (+kubebuilder:default=Divided on ReplicaSchedulingStrategy.ReplicaSchedulingType),
		// which the API server applies to every stored binding; it is the only default the binding and
		// cluster CRDs declare on a field the scheduler reads.
		if placement.ReplicaScheduling != nil && placement.ReplicaScheduling.ReplicaSchedulingType == "" {
			placement.ReplicaScheduling.ReplicaSchedulingType = policyv1alpha1.ReplicaSchedulingTypeDivided
		}
		// The (Cluster)PropagationPolicy mutating webhook's defaults, which a binding inherits from its policy.
		if policyDefaults {
			helper.SetDefaultSpreadConstraints(placement.SpreadConstraints)
			helper.SetReplicaDivisionPreferenceWeighted(placement)
		}
	}
}
