package kueue

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	"sigs.k8s.io/yaml"

	"github.com/fabricmap/fabricmap/internal/testsupport/testenv"
)

// kueueModuleDir is the folder of the sigs.k8s.io/kueue module that bin/kueue is built from
// (hack/tools/kueue), in the module cache: its CRDs and webhook configurations come from there.
func kueueModuleDir(t *testing.T) string {
	t.Helper()
	cmd := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", "sigs.k8s.io/kueue")
	cmd.Dir = filepath.Join(testenv.RepoRoot(), "hack", "tools", "kueue")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	dir := strings.TrimSpace(string(out))
	if err != nil || dir == "" {
		t.Fatalf("finding the sigs.k8s.io/kueue module of hack/tools/kueue: %v %s", err, stderr.String())
	}
	return dir
}

// conversionWebhookPatch matches the kustomization lines that give a CRD Kueue's conversion webhook.
var conversionWebhookPatch = regexp.MustCompile(`(?m)^- path: patches/webhook_in_([a-z]+)\.yaml\s*$`)

// installKueueCRDs installs Kueue's CRDs from its module, those its kustomization converts through its webhook
// (v1beta1 stored, v1beta2 served) pointing at p's webhook server. Topology is left as the chart installed it:
// the test runs Kueue on the CRD fabricmap ships.
func installKueueCRDs(t *testing.T, mod string, p *kueueProcess) {
	t.Helper()
	crdDir := filepath.Join(mod, "config", "components", "crd")
	kustomization, err := os.ReadFile(filepath.Join(crdDir, "kustomization.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	converted := map[string]bool{}
	for _, m := range conversionWebhookPatch.FindAllStringSubmatch(string(kustomization), -1) {
		converted[m[1]] = true
	}
	if len(converted) == 0 {
		t.Fatalf("%s/kustomization.yaml names no conversion webhook patch: has Kueue's layout changed?", crdDir)
	}
	files, err := filepath.Glob(filepath.Join(crdDir, "bases", "*.yaml"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no CRDs in %s/bases: %v", crdDir, err)
	}
	url := p.webhookURL + "/convert"
	var crds []*apiextensionsv1.CustomResourceDefinition
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		crd := &apiextensionsv1.CustomResourceDefinition{}
		if err := yaml.UnmarshalStrict(b, crd); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		if crd.Spec.Names.Plural == "topologies" {
			continue
		}
		if converted[crd.Spec.Names.Plural] {
			crd.Spec.Conversion = &apiextensionsv1.CustomResourceConversion{
				Strategy: apiextensionsv1.WebhookConverter,
				Webhook: &apiextensionsv1.WebhookConversion{
					ClientConfig:             &apiextensionsv1.WebhookClientConfig{URL: &url, CABundle: p.caBundle},
					ConversionReviewVersions: []string{"v1"},
				},
			}
		}
		crds = append(crds, crd)
	}
	if _, err := envtest.InstallCRDs(testenv.Shared.Config, envtest.CRDInstallOptions{CRDs: crds}); err != nil {
		t.Fatalf("installing Kueue's CRDs: %v", err)
	}
}

// kueueWebhooks returns Kueue's admission webhook configurations from its module, reduced to the webhooks of
// Kueue's own kinds and of pods (the only job framework run here), each calling p's server on 127.0.0.1.
func kueueWebhooks(t *testing.T, mod string, p *kueueProcess) (*admissionregistrationv1.MutatingWebhookConfiguration, *admissionregistrationv1.ValidatingWebhookConfiguration) {
	t.Helper()
	path := filepath.Join(mod, "config", "components", "webhook", "manifests.yaml")
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var mutating *admissionregistrationv1.MutatingWebhookConfiguration
	var validating *admissionregistrationv1.ValidatingWebhookConfiguration
	reader := utilyaml.NewYAMLReader(bufio.NewReader(f))
	for {
		doc, err := reader.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		var head struct{ Kind string }
		if err := yaml.Unmarshal(doc, &head); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		switch head.Kind {
		case "MutatingWebhookConfiguration":
			mutating = &admissionregistrationv1.MutatingWebhookConfiguration{}
			err = yaml.UnmarshalStrict(doc, mutating)
		case "ValidatingWebhookConfiguration":
			validating = &admissionregistrationv1.ValidatingWebhookConfiguration{}
			err = yaml.UnmarshalStrict(doc, validating)
		}
		if err != nil {
			t.Fatalf("%s: %s: %v", path, head.Kind, err)
		}
	}
	if mutating == nil || validating == nil {
		t.Fatalf("%s: want a Mutating- and a ValidatingWebhookConfiguration", path)
	}
	mutating.Name, validating.Name = "kueue-mutating-webhook-configuration", "kueue-validating-webhook-configuration"
	mutating.Webhooks = slices.DeleteFunc(mutating.Webhooks, func(w admissionregistrationv1.MutatingWebhook) bool { return !kept(w.Rules) })
	validating.Webhooks = slices.DeleteFunc(validating.Webhooks, func(w admissionregistrationv1.ValidatingWebhook) bool { return !kept(w.Rules) })
	for i := range mutating.Webhooks {
		mutating.Webhooks[i].ClientConfig = p.clientConfig(t, mutating.Webhooks[i].ClientConfig)
	}
	for i := range validating.Webhooks {
		validating.Webhooks[i].ClientConfig = p.clientConfig(t, validating.Webhooks[i].ClientConfig)
	}
	if len(mutating.Webhooks) == 0 || len(validating.Webhooks) == 0 {
		t.Fatalf("%s: no webhook of Kueue's kinds or of pods left", path)
	}
	return mutating, validating
}

// kept says whether a webhook with these rules is one the test needs: one on Kueue's kinds or on pods.
func kept(rules []admissionregistrationv1.RuleWithOperations) bool {
	for _, r := range rules {
		if slices.Contains(r.APIGroups, "kueue.x-k8s.io") || (slices.Contains(r.APIGroups, "") && slices.Contains(r.Resources, "pods")) {
			return true
		}
	}
	return false
}

// clientConfig turns a webhook's in-cluster Service reference into p's address on 127.0.0.1, same path.
func (p *kueueProcess) clientConfig(t *testing.T, in admissionregistrationv1.WebhookClientConfig) admissionregistrationv1.WebhookClientConfig {
	t.Helper()
	if in.Service == nil || in.Service.Path == nil {
		t.Fatalf("webhook client config %+v has no Service path", in)
	}
	url := p.webhookURL + *in.Service.Path
	return admissionregistrationv1.WebhookClientConfig{URL: &url, CABundle: p.caBundle}
}
