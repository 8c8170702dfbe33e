package cel

import (
	"context"
	"fmt"
	"sort"
	"sync"

	"github.com/kilnhq/kiln/admit"
	"github.com/kilnhq/kiln/manifest"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apiserver/pkg/authorization/authorizer"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/tools/cache"
)

// namespaceNameLabel is the label the API server puts on every Namespace.
const namespaceNameLabel = "kubernetes.io/metadata.name"

// namespaces answers the policy matcher's and the dispatcher's questions
// about namespaces: the Namespace objects from the input, else one
// synthesized with only the kubernetes.io/metadata.name label (what a fresh
// namespace of that name looks like in a cluster). It implements
// k8s.io/client-go/listers/core/v1.NamespaceLister.
type namespaces struct {
	byName      map[string]*corev1.Namespace
	synthesized sync.Map // name → *corev1.Namespace, made once per name
}

func newNamespaces(objs []*manifest.Object, admitted admit.Namespaces) *namespaces {
	n := &namespaces{byName: map[string]*corev1.Namespace{}}
	for _, o := range objs {
		if !admit.IsNamespace(o) {
			continue
		}
		ns := admitted[o]
		if ns == nil {
			if ns = admit.NamespaceOf(o); ns == nil {
				continue
			}
		}
		if ns.Labels[namespaceNameLabel] != ns.Name {
			c := *ns // admitted ones are shared: change a copy
			c.Labels = copyLabels(ns.Labels)
			c.Labels[namespaceNameLabel] = c.Name
			ns = &c
		}
		n.byName[o.Name] = ns
	}
	return n
}

func copyLabels(in map[string]string) map[string]string {
	out := make(map[string]string, len(in)+1)
	for k, v := range in {
		out[k] = v
	}
	return out
}

// Get returns the named namespace; every non-empty name exists.
func (n *namespaces) Get(name string) (*corev1.Namespace, error) {
	if ns := n.byName[name]; ns != nil {
		return ns, nil
	}
	if name == "" {
		return nil, apierrors.NewNotFound(corev1.Resource("namespaces"), name)
	}
	if ns, ok := n.synthesized.Load(name); ok {
		return ns.(*corev1.Namespace), nil
	}
	ns, _ := n.synthesized.LoadOrStore(name, synthesizeNamespace(name))
	return ns.(*corev1.Namespace), nil
}

func synthesizeNamespace(name string) *corev1.Namespace {
	ns := &corev1.Namespace{}
	ns.APIVersion, ns.Kind = "v1", "Namespace"
	ns.Name = name
	ns.Labels = map[string]string{namespaceNameLabel: name}
	return ns
}

// List lists the namespaces of the input that match selector.
func (n *namespaces) List(selector labels.Selector) ([]*corev1.Namespace, error) {
	var out []*corev1.Namespace
	for _, ns := range n.byName {
		if selector.Matches(labels.Set(ns.Labels)) {
			out = append(out, ns)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

// fixedAuthorizer answers every check the same way (--authorizer allow|deny).
type fixedAuthorizer struct{ allow bool }

func (a fixedAuthorizer) Authorize(context.Context, authorizer.Attributes) (authorizer.Decision, string, error) {
	if a.allow {
		return authorizer.DecisionAllow, "kiln: --authorizer allow", nil
	}
	return authorizer.DecisionDeny, "kiln: --authorizer deny (offline, no RBAC)", nil
}

// objectInterfaces is admission.ObjectInterfaces for unstructured objects
// and the kind table: conversion between versions of one kind (for
// matchPolicy Equivalent) copies the object and sets its apiVersion, as the
// API server does for a CRD with conversion strategy None.
type objectInterfaces struct {
	kinds       *manifest.Kinds
	equivalents sync.Map // GroupVersionResource → []GroupVersionResource
}

func (o *objectInterfaces) GetObjectCreater() runtime.ObjectCreater                       { return o }
func (o *objectInterfaces) GetObjectTyper() runtime.ObjectTyper                           { return nil }
func (o *objectInterfaces) GetObjectDefaulter() runtime.ObjectDefaulter                   { return nil }
func (o *objectInterfaces) GetObjectConvertor() runtime.ObjectConvertor                   { return o }
func (o *objectInterfaces) GetEquivalentResourceMapper() runtime.EquivalentResourceMapper { return o }

// New implements runtime.ObjectCreater.
func (o *objectInterfaces) New(gvk schema.GroupVersionKind) (runtime.Object, error) {
	u := &unstructured.Unstructured{Object: map[string]any{}}
	u.SetGroupVersionKind(gvk)
	return u, nil
}

// Convert implements runtime.ObjectConvertor: a deep copy with out's apiVersion and kind.
func (o *objectInterfaces) Convert(in, out, _ any) error {
	src, ok1 := in.(*unstructured.Unstructured)
	dst, ok2 := out.(*unstructured.Unstructured)
	if !ok1 || !ok2 {
		return fmt.Errorf("kiln converts only unstructured objects, not %T to %T", in, out)
	}
	gvk := dst.GroupVersionKind()
	dst.Object = runtime.DeepCopyJSON(src.Object)
	dst.SetGroupVersionKind(gvk)
	return nil
}

// ConvertToVersion implements runtime.ObjectConvertor.
func (o *objectInterfaces) ConvertToVersion(in runtime.Object, gv runtime.GroupVersioner) (runtime.Object, error) {
	src, ok := in.(*unstructured.Unstructured)
	if !ok {
		return nil, fmt.Errorf("kiln converts only unstructured objects, not %T", in)
	}
	target, ok := gv.KindForGroupVersionKinds([]schema.GroupVersionKind{src.GroupVersionKind()})
	if !ok {
		return nil, fmt.Errorf("cannot convert %s", src.GroupVersionKind())
	}
	out, _ := o.New(target)
	return out, o.Convert(in, out, nil)
}

// ConvertFieldLabel implements runtime.ObjectConvertor.
func (o *objectInterfaces) ConvertFieldLabel(_ schema.GroupVersionKind, label, value string) (string, string, error) {
	return label, value, nil
}

// EquivalentResourcesFor implements runtime.EquivalentResourceMapper.
func (o *objectInterfaces) EquivalentResourcesFor(resource schema.GroupVersionResource, subresource string) []schema.GroupVersionResource {
	var eq []schema.GroupVersionResource
	if v, ok := o.equivalents.Load(resource); ok {
		eq = v.([]schema.GroupVersionResource)
	} else {
		eq = o.kinds.Equivalents(resource)
		o.equivalents.Store(resource, eq)
	}
	if subresource == "" {
		return eq
	}
	var out []schema.GroupVersionResource
	for _, r := range eq {
		res, ok := o.kinds.Lookup(o.kindFor(r))
		if !ok || !contains(res.Subresources, subresource) {
			continue
		}
		out = append(out, r)
	}
	return out
}

// KindFor implements runtime.EquivalentResourceMapper.
func (o *objectInterfaces) KindFor(resource schema.GroupVersionResource, subresource string) schema.GroupVersionKind {
	if subresource != "" {
		return schema.GroupVersionKind{}
	}
	return o.kindFor(resource)
}

func (o *objectInterfaces) kindFor(resource schema.GroupVersionResource) schema.GroupVersionKind {
	gvk, _ := o.kinds.KindFor(resource)
	return gvk
}

func contains(ss []string, s string) bool {
	for _, x := range ss {
		if x == s {
			return true
		}
	}
	return false
}

// paramInformer is informers.GenericInformer over the param objects found
// in the input: the lister is a client-go indexer holding them, and the
// informer only answers HasSynced (true), which is all that
// generic.CollectParams asks of it.
type paramInformer struct {
	lister cache.GenericLister
}

var _ informers.GenericInformer = (*paramInformer)(nil)

func (p *paramInformer) Informer() cache.SharedIndexInformer { return syncedInformer{} }
func (p *paramInformer) Lister() cache.GenericLister         { return p.lister }

type syncedInformer struct{ cache.SharedIndexInformer }

func (syncedInformer) HasSynced() bool { return true }

// newParamInformer indexes the objects of one kind (by namespace and name).
func newParamInformer(gr schema.GroupResource, objs []*unstructured.Unstructured) *paramInformer {
	idx := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc})
	for _, o := range objs {
		_ = idx.Add(newParamObject(o))
	}
	return &paramInformer{lister: cache.NewGenericLister(idx, gr)}
}
