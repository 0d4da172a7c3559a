// Package chartsurface is how a source, an output or a probe states, beside its code, what it needs of the Helm
// chart: the RBAC rules of the aggregator's service account, the values keys that configure it and the
// admission policies it relies on. hack/tools/chartsurface renders the chart's generated fragments from the
// registries' declarations (make docs) and test/chart holds the rendered chart to them. It imports nothing.
package chartsurface

// Scope says where a rule is granted.
type Scope int

const (
	// Cluster rules go in the aggregator's ClusterRole.
	Cluster Scope = iota
	// Namespace rules go in the aggregator's Role of the release's namespace.
	Namespace
)

// Rule is one RBAC rule the aggregator's service account needs.
type Rule struct {
	// Scope is the role that grants it.
	Scope Scope
	// APIGroups, Resources and Verbs are the rule's, as in an rbac.authorization.k8s.io/v1 PolicyRule.
	APIGroups, Resources, Verbs []string
	// When lists the values (dotted paths below .Values, e.g. "aggregator.outputs.kueueTopology") of which one
	// must be set (true, or not empty) for the rule to be granted; empty: always.
	When []string
	// NamesFrom, when set, lists the values that name the only objects the rule grants (resourceNames);
	// the rule is granted when one of them is set.
	NamesFrom []string
	// Why is the comment above the rule in the chart: what the verbs are for, when it is not plain.
	Why string
}

// Surface is what one source, output or probe needs of the chart.
type Surface struct {
	// Values are the values keys (dotted paths below .Values) that configure it.
	Values []string
	// Rules are the RBAC rules of the aggregator's service account it needs.
	Rules []Rule
	// Policies are the names, after "<release>-aggregator-", of the aggregator's ValidatingAdmissionPolicies
	// that narrow what its rules allow (what RBAC cannot name), enabled by aggregator.admissionPolicy.enabled.
	Policies []string
}

// Read is the verbs that read a kind and watch it.
var Read = []string{"get", "list", "watch"}
