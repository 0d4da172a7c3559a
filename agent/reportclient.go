package agent

import (
	"context"
	"encoding/json"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"

	"github.com/fabricmap/fabricmap/api/v1alpha1"
	"github.com/fabricmap/fabricmap/internal/applyconfig"
)

// ReportClient is all the agent asks of the API server: its own report, its Node's UID, server-side apply of
// the report and its status, and a JSON merge patch for what apply cannot remove. The writes return the
// report as stored. Errors from the API server keep their type, so that apierrors.IsNotFound and friends
// work on them.
type ReportClient interface {
	// GetReport reads the report called name.
	GetReport(ctx context.Context, name string) (*v1alpha1.NodeFabricReport, error)
	// NodeUID reads the UID of the Node called name.
	NodeUID(ctx context.Context, name string) (types.UID, error)
	// ApplyReport server-side-applies r's metadata and spec as fieldManager, forcing ownership.
	ApplyReport(ctx context.Context, r *v1alpha1.NodeFabricReport, fieldManager string) (*v1alpha1.NodeFabricReport, error)
	// ApplyReportStatus server-side-applies r's status as fieldManager, forcing ownership.
	ApplyReportStatus(ctx context.Context, r *v1alpha1.NodeFabricReport, fieldManager string) (*v1alpha1.NodeFabricReport, error)
	// MergePatchReport sends the JSON merge patch (RFC 7386) patch to the report called name as fieldManager.
	MergePatchReport(ctx context.Context, name string, patch []byte, fieldManager string) (*v1alpha1.NodeFabricReport, error)
	// MergePatchReportStatus sends the JSON merge patch patch to the status of the report called name.
	MergePatchReportStatus(ctx context.Context, name string, patch []byte, fieldManager string) (*v1alpha1.NodeFabricReport, error)
}

// RESTReportClient is a ReportClient on client-go's plain REST client. It knows one resource, so the agent
// links neither the typed clientsets nor a controller framework: that keeps its memory small on every node.
type RESTReportClient struct {
	rest rest.Interface
}

// NewReportClient returns a client of NodeFabricReports (and Node UIDs) for cfg.
func NewReportClient(cfg *rest.Config) (*RESTReportClient, error) {
	scheme := runtime.NewScheme()
	if err := v1alpha1.AddToScheme(scheme); err != nil {
		return nil, fmt.Errorf("registering the report type: %w", err)
	}
	metav1.AddToGroupVersion(scheme, schema.GroupVersion{Version: "v1"})
	c := rest.CopyConfig(cfg)
	c.GroupVersion = &v1alpha1.GroupVersion
	c.APIPath = "/apis"
	c.ContentType = runtime.ContentTypeJSON
	c.NegotiatedSerializer = serializer.NewCodecFactory(scheme).WithoutConversion()
	rc, err := rest.RESTClientFor(c)
	if err != nil {
		return nil, fmt.Errorf("creating the REST client: %w", err)
	}
	return &RESTReportClient{rest: rc}, nil
}

// GetReport implements ReportClient.
func (c *RESTReportClient) GetReport(ctx context.Context, name string) (*v1alpha1.NodeFabricReport, error) {
	r := &v1alpha1.NodeFabricReport{}
	if err := c.rest.Get().Resource(v1alpha1.NodeFabricReportResource).Name(name).Do(ctx).Into(r); err != nil {
		return nil, fmt.Errorf("reading report %q: %w", name, err)
	}
	return r, nil
}

// NodeUID implements ReportClient. It decodes only the Node's metadata.
func (c *RESTReportClient) NodeUID(ctx context.Context, name string) (types.UID, error) {
	raw, err := c.rest.Get().AbsPath("/api/v1/nodes", name).Do(ctx).Raw()
	if err != nil {
		return "", fmt.Errorf("reading node %q: %w", name, err)
	}
	var node struct {
		Metadata struct {
			UID types.UID `json:"uid"`
		} `json:"metadata"`
	}
	if err := json.Unmarshal(raw, &node); err != nil {
		return "", fmt.Errorf("decoding node %q: %w", name, err)
	}
	return node.Metadata.UID, nil
}

// ApplyReport implements ReportClient.
func (c *RESTReportClient) ApplyReport(ctx context.Context, r *v1alpha1.NodeFabricReport, fieldManager string) (*v1alpha1.NodeFabricReport, error) {
	u, err := applyconfig.Object(r)
	if err != nil {
		return nil, err
	}
	stored := &v1alpha1.NodeFabricReport{}
	req := c.rest.Patch(types.ApplyPatchType).Resource(v1alpha1.NodeFabricReportResource).Name(r.Name)
	if err := c.apply(ctx, req, u, fieldManager, "report", stored); err != nil {
		return nil, err
	}
	return stored, nil
}

// ApplyReportStatus implements ReportClient.
func (c *RESTReportClient) ApplyReportStatus(ctx context.Context, r *v1alpha1.NodeFabricReport, fieldManager string) (*v1alpha1.NodeFabricReport, error) {
	u, err := applyconfig.Status(r)
	if err != nil {
		return nil, err
	}
	stored := &v1alpha1.NodeFabricReport{}
	req := c.rest.Patch(types.ApplyPatchType).Resource(v1alpha1.NodeFabricReportResource).Name(r.Name).SubResource("status")
	if err := c.apply(ctx, req, u, fieldManager, "status of report", stored); err != nil {
		return nil, err
	}
	return stored, nil
}

// MergePatchReport implements ReportClient.
func (c *RESTReportClient) MergePatchReport(ctx context.Context, name string, patch []byte, fieldManager string) (*v1alpha1.NodeFabricReport, error) {
	return c.mergePatch(ctx, name, "", patch, fieldManager)
}

// MergePatchReportStatus implements ReportClient.
func (c *RESTReportClient) MergePatchReportStatus(ctx context.Context, name string, patch []byte, fieldManager string) (*v1alpha1.NodeFabricReport, error) {
	return c.mergePatch(ctx, name, "status", patch, fieldManager)
}

func (c *RESTReportClient) mergePatch(ctx context.Context, name, subresource string, patch []byte, fieldManager string) (*v1alpha1.NodeFabricReport, error) {
	req := c.rest.Patch(types.MergePatchType).Resource(v1alpha1.NodeFabricReportResource).Name(name)
	what := fmt.Sprintf("patching report %q", name)
	if subresource != "" {
		req = req.SubResource(subresource)
		what = fmt.Sprintf("patching the %s of report %q", subresource, name)
	}
	stored := &v1alpha1.NodeFabricReport{}
	if err := send(ctx, req, patch, fieldManager, what, stored); err != nil {
		return nil, err
	}
	return stored, nil
}

// apply sends a forced server-side apply of u as fieldManager and decodes what the API server stored into
// into, when it is not nil.
func (c *RESTReportClient) apply(ctx context.Context, req *rest.Request, u *unstructured.Unstructured, fieldManager, what string, into runtime.Object) error {
	data, err := u.MarshalJSON()
	if err != nil {
		return fmt.Errorf("encoding %s %q: %w", what, u.GetName(), err)
	}
	return send(ctx, req.Param("force", "true"), data, fieldManager, fmt.Sprintf("applying %s %q", what, u.GetName()), into)
}

// send sends one write as fieldManager (what names it in the error) and decodes the stored object into into
// when it is not nil.
func send(ctx context.Context, req *rest.Request, body []byte, fieldManager, what string, into runtime.Object) error {
	res := req.Param("fieldManager", fieldManager).Body(body).Do(ctx)
	err := res.Error()
	if err == nil && into != nil {
		err = res.Into(into)
	}
	if err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	return nil
}
