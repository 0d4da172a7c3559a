package ctl

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/rest"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	topologyv1alpha1 "volcano.sh/apis/pkg/apis/topology/v1alpha1"

	"github.com/fabricmap/fabricmap/hypernodegen"
	"github.com/fabricmap/fabricmap/internal/kube"
)

// watchSettle is how long a burst of changes is let settle before printing again.
const watchSettle = 300 * time.Millisecond

// syncTimeout bounds the wait for the first full list of HyperNodes and Nodes.
const syncTimeout = time.Minute

// watch keeps a cache of the HyperNodes and Nodes (metadata only) and prints render's output at start and
// again whenever it changes, until ctx ends (Ctrl-C).
func watch(ctx context.Context, cfg *rest.Config, o getOptions, render renderFunc, w, errw io.Writer) error {
	// Without the HyperNode CRD the cache cannot watch HyperNodes: a command that needs them says so, one that
	// does without (get nodes) watches the Nodes alone.
	direct, err := newClient(cfg)
	if err != nil {
		return err
	}
	_, err = listHyperNodes(ctx, direct, o.all)
	noCRD := errors.Is(err, errNoHyperNodeCRD)
	if err != nil && !(noCRD && o.hyperNodesOptional) {
		return err
	}
	opts := cache.Options{Scheme: kube.Scheme()}
	if !o.all && !noCRD {
		opts.ByObject = map[client.Object]cache.ByObject{
			&topologyv1alpha1.HyperNode{}: {Label: labels.SelectorFromSet(hypernodegen.OwnedSelector())},
		}
	}
	c, err := cache.New(cfg, opts)
	if err != nil {
		return fmt.Errorf("creating the watch cache: %w", err)
	}
	changes := make(chan struct{}, 1)
	notify := func() {
		select {
		case changes <- struct{}{}:
		default:
		}
	}
	handler := toolscache.ResourceEventHandlerFuncs{
		AddFunc:    func(any) { notify() },
		UpdateFunc: func(any, any) { notify() },
		DeleteFunc: func(any) { notify() },
	}
	node := &metav1.PartialObjectMetadata{}
	node.SetGroupVersionKind(nodeListGVK.GroupVersion().WithKind("Node"))
	watched := []client.Object{&topologyv1alpha1.HyperNode{}, node}
	var reader client.Reader = c
	if noCRD {
		watched, reader = watched[1:], noHyperNodes{c}
	}
	for _, obj := range watched {
		inf, err := c.GetInformer(ctx, obj)
		if err != nil {
			return fmt.Errorf("watching %T: %w", obj, err)
		}
		if _, err := inf.AddEventHandler(handler); err != nil {
			return fmt.Errorf("watching %T: %w", obj, err)
		}
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	go func() {
		if err := c.Start(ctx); err != nil {
			fmt.Fprintln(errw, "error: watch stopped:", err)
		}
	}()
	syncCtx, stop := context.WithTimeout(ctx, syncTimeout)
	defer stop()
	if !c.WaitForCacheSync(syncCtx) {
		if ctx.Err() != nil {
			return nil
		}
		return fmt.Errorf("watching HyperNodes and Nodes: no full list within %s (the command needs list and watch on both)", syncTimeout)
	}
	notify()
	return printOnChange(ctx, changes, func(out, warn io.Writer) error { return render(ctx, reader, out, warn) }, o.output.value, w, errw)
}

// noHyperNodes reads a cluster without the HyperNode CRD: listing HyperNodes fails as it does from the API
// server (listHyperNodes: errNoHyperNodeCRD), instead of starting an informer that can never sync.
type noHyperNodes struct{ client.Reader }

// List lists from the Reader, except HyperNodes.
func (r noHyperNodes) List(ctx context.Context, list client.ObjectList, opts ...client.ListOption) error {
	if _, ok := list.(*topologyv1alpha1.HyperNodeList); ok {
		gvk := topologyv1alpha1.SchemeGroupVersion.WithKind("HyperNode")
		return &meta.NoKindMatchError{GroupKind: gvk.GroupKind(), SearchedVersions: []string{gvk.Version}}
	}
	return r.Reader.List(ctx, list, opts...)
}

// printOnChange renders on every signal on changes (after letting a burst settle) and prints the result when it
// differs from the last one printed, with a separator that suits the format. It returns nil when ctx ends.
func printOnChange(ctx context.Context, changes <-chan struct{}, render func(out, warn io.Writer) error, output string, w, errw io.Writer) error {
	var last []byte
	printed := false
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-changes:
		}
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(watchSettle):
		}
		var out, warn bytes.Buffer
		if err := render(&out, &warn); err != nil {
			fmt.Fprintln(errw, "error:", err) // a failed read is retried on the next change
			continue
		}
		if printed && bytes.Equal(out.Bytes(), last) {
			continue
		}
		if printed {
			fmt.Fprint(w, separator(output, time.Now()))
		}
		if _, err := errw.Write(warn.Bytes()); err != nil {
			return err
		}
		if _, err := w.Write(out.Bytes()); err != nil {
			return err
		}
		last, printed = out.Bytes(), true
	}
}

// separator goes between two printouts of a watch: a YAML document marker, a dated comment line for the tree,
// nothing for JSON and DOT (a stream of objects, of graphs).
func separator(output string, now time.Time) string {
	switch output {
	case "yaml":
		return "---\n"
	case "tree":
		return "\n# " + now.UTC().Format(time.RFC3339) + "\n"
	default:
		return ""
	}
}
