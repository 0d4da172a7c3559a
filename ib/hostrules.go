package ib

import (
	"fmt"
	"path"
	"regexp"
	"strings"

	"github.com/spf13/pflag"
)

// A CA's node description names its host only when the host set it: an adapter whose host never did carries
// the adapter's default description ("MT4129 ConnectX7 Mellanox Technologies"), whose first word names the
// model, and a host without a host name of its own calls itself "localhost" or after its distribution. Such
// names are the same on many hosts; taken as host names they would merge those hosts into one node. And a
// management host (a UFM server, a subnet manager) is cabled to the fabric without being a node to place.
// HostRules tell these apart, for the capture (sources/ibfabric) and UFM (sources/ufm) alike.

// DefaultGenericHostNames are the host names no real host is told apart by: what a host without a name of its
// own calls itself.
var DefaultGenericHostNames = []string{
	"localhost", "localhost.localdomain", "ubuntu", "debian", "rhel", "centos", "rocky", "fedora", "node", "host", "(none)",
}

// DefaultDescriptionRegexp matches the node description an NVIDIA/Mellanox adapter carries until its host sets
// one: "MT<device id> <model> Mellanox Technologies" (MT4115 ConnectX4, MT4123 ConnectX6, MT4129 ConnectX7,
// BlueField DPUs alike), or NVIDIA in place of Mellanox Technologies on newer firmware.
const DefaultDescriptionRegexp = `(?i)^MT\d{4,5}\s+\S+\s+(Mellanox Technologies|NVIDIA)\b`

// DefaultManagementHostRegexp matches the host names of management hosts as the fabric shows them: UFM servers
// and appliances ("ufm", "ufm-01", "ufm01") and subnet manager hosts ("sm-01", "sm1", "opensm", "opensm-02");
// names with a "ufm" or "cufm" (UFM Cyber-AI) part between dashes, dots or underscores, or followed by digits
// ("b11-p1-cufm-02", "site-ufm-3", "cufm01"); and names ending in "ufm" and digits ("mtlxufm03"). Compute
// names that merely contain the letters ("gpu-ufmtest", "smith-01", "dgx-b11-001") do not match.
const DefaultManagementHostRegexp = `(?i)^(ufm|opensm|sm)([-_.][a-z0-9.-]*|[0-9][a-z0-9.-]*)?$|(^|[-_.])c?ufm([-_.0-9]|$)|ufm[0-9]+$`

// HostVerdict is what HostRules make of a host name.
type HostVerdict int

const (
	// HostNamed is a host name that names one host.
	HostNamed HostVerdict = iota
	// HostDefaultDescription is an adapter's default description: the HCA is known only by its GUID, and never
	// merged with another host's.
	HostDefaultDescription
	// HostGeneric is a generic host name: it does not tell the host apart, so the host is left out unless a
	// node's report names it.
	HostGeneric
	// HostManagement is a management host (UFM, a subnet manager): left out unless a node's report names it.
	HostManagement
)

// HostRules decide which CA descriptions name a host. The zero HostRules take every name as it is.
type HostRules struct {
	// GenericNames are glob patterns (path.Match) of generic host names, matched against the lower-cased
	// first word of a description.
	GenericNames []string
	// DefaultDescription matches an adapter's default node description (the whole description); nil: none.
	DefaultDescription *regexp.Regexp
	// Management matches a management host's name (the lower-cased first word); nil: none.
	Management *regexp.Regexp
}

// DefaultHostRules are the rules the flags default to.
func DefaultHostRules() HostRules {
	return HostRules{
		GenericNames:       append([]string(nil), DefaultGenericHostNames...),
		DefaultDescription: regexp.MustCompile(DefaultDescriptionRegexp),
		Management:         regexp.MustCompile(DefaultManagementHostRegexp),
	}
}

// Judge says what the rules make of a CA whose description is desc and whose host name (HostDevice's, or one
// a node-name rule derived) is host, and why, in words a warning can quote; the reason is empty for HostNamed.
func (r HostRules) Judge(host, desc string) (HostVerdict, string) {
	desc = strings.TrimSpace(desc)
	if r.DefaultDescription != nil && desc != "" && r.DefaultDescription.MatchString(desc) {
		return HostDefaultDescription, fmt.Sprintf("%q is the adapter's default node description, which names no host", desc)
	}
	host = strings.ToLower(strings.TrimSpace(host))
	if host == "" {
		return HostNamed, ""
	}
	for _, p := range r.GenericNames {
		if ok, _ := path.Match(p, host); ok {
			return HostGeneric, fmt.Sprintf("%q is a generic host name (--generic-host-names), which tells no host apart", host)
		}
	}
	if r.Management != nil && r.Management.MatchString(host) {
		return HostManagement, fmt.Sprintf("%q is a management host (--management-host-regexp), not a node to place", host)
	}
	return HostNamed, ""
}

// GUIDNodeName is the node name of a host known only by an adapter's GUID: "guid-" and the 16 hex digits, a
// valid Kubernetes name that no other host shares.
func GUIDNodeName(g GUID) string { return "guid-" + string(g) }

// IsGUIDNodeName tells whether node is a name GUIDNodeName gives: an unidentified HCA (an adapter's default
// description that no node's report explains), which is no Kubernetes node and never a placement target.
func IsGUIDNodeName(node string) bool {
	g, ok := strings.CutPrefix(node, "guid-")
	if !ok || len(g) != 16 {
		return false
	}
	for i := 0; i < len(g); i++ {
		if c := g[i]; !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return false
		}
	}
	return true
}

// HostNote is a host whose name the rules did not take as it is: re-identified or left out.
type HostNote struct {
	// Host is the name its description (or a node-name rule) gave it.
	Host string
	// GUID identifies it: the adapter's system image GUID, or its node GUID (UFM: the system GUID).
	GUID GUID
	// Description is the description the name came from; empty when not known.
	Description string
	// Node is the node it became; empty when it was left out.
	Node string
	// Reason says why its name was not taken as it is.
	Reason string
}

// Unidentified tells whether the note is about an unidentified HCA: one that became a node named by its GUID
// (GUIDNodeName), because its description is the adapter's default and no node's report gives its GUID. Such a
// node is no Kubernetes node: it is listed, and never a placement target.
func (n HostNote) Unidentified() bool { return IsGUIDNodeName(n.Node) }

// String describes the host, what became of it and why.
func (n HostNote) String() string {
	what := "left out"
	switch {
	case n.Unidentified():
		what = fmt.Sprintf("unidentified: taken as node %q, never a placement target", n.Node)
	case n.Node != "":
		what = fmt.Sprintf("taken as node %q", n.Node)
	}
	return fmt.Sprintf("host %q (GUID %s): %s; %s", n.Host, n.GUID, n.Reason, what)
}

// HostRuleOptions are the flags that set HostRules, shared by the capture and UFM sources (registered once,
// with the capture's settings). Each field is nil until its flag is given: nil is the default, so the zero
// HostRuleOptions give DefaultHostRules.
type HostRuleOptions struct {
	// GenericHostNames are the generic host names, as globs (--generic-host-names); nil: DefaultGenericHostNames.
	GenericHostNames *[]string
	// DefaultDescriptionRegexp matches adapters' default descriptions (--default-hca-description-regexp);
	// nil: DefaultDescriptionRegexp.
	DefaultDescriptionRegexp *string
	// ManagementHostRegexp matches management hosts' names (--management-host-regexp); nil:
	// DefaultManagementHostRegexp.
	ManagementHostRegexp *string
}

// AddFlags registers --generic-host-names, --default-hca-description-regexp and --management-host-regexp on fs.
func (o *HostRuleOptions) AddFlags(fs *pflag.FlagSet) {
	fs.Var(&optionalStrings{p: &o.GenericHostNames, def: DefaultGenericHostNames}, "generic-host-names",
		"capture and UFM: host names (globs) that tell no host apart; such hosts are left out, with a warning, unless a node's report gives their GUID (empty: none)")
	fs.Var(&optionalString{p: &o.DefaultDescriptionRegexp, def: DefaultDescriptionRegexp}, "default-hca-description-regexp",
		"capture and UFM: regular expression matching an adapter's default node description; such HCAs are named after the node whose report gives their GUID, else guid-<GUID>, never merged (empty: none)")
	fs.Var(&optionalString{p: &o.ManagementHostRegexp, def: DefaultManagementHostRegexp}, "management-host-regexp",
		"capture and UFM: regular expression matching management hosts' names (UFM, subnet managers); they are left out, with a warning, unless a node's report gives their GUID (empty: none)")
}

// Rules checks the options and returns the rules they describe.
func (o HostRuleOptions) Rules() (HostRules, error) {
	generic := DefaultGenericHostNames
	if o.GenericHostNames != nil {
		generic = *o.GenericHostNames
	}
	descRE, mgmtRE := DefaultDescriptionRegexp, DefaultManagementHostRegexp
	if o.DefaultDescriptionRegexp != nil {
		descRE = *o.DefaultDescriptionRegexp
	}
	if o.ManagementHostRegexp != nil {
		mgmtRE = *o.ManagementHostRegexp
	}
	var r HostRules
	for _, p := range generic {
		p = strings.ToLower(strings.TrimSpace(p))
		if p == "" {
			continue
		}
		if _, err := path.Match(p, ""); err != nil {
			return HostRules{}, fmt.Errorf("--generic-host-names pattern %q: %w", p, err)
		}
		r.GenericNames = append(r.GenericNames, p)
	}
	var err error
	if r.DefaultDescription, err = compileOptional("--default-hca-description-regexp", descRE); err != nil {
		return HostRules{}, err
	}
	if r.Management, err = compileOptional("--management-host-regexp", mgmtRE); err != nil {
		return HostRules{}, err
	}
	return r, nil
}

// optionalString is a string flag that stays nil until given; its default is shown in --help.
type optionalString struct {
	p   **string
	def string
}

func (v *optionalString) String() string {
	if v.p == nil || *v.p == nil {
		return v.def
	}
	return **v.p
}

func (v *optionalString) Set(s string) error {
	*v.p = &s
	return nil
}

func (v *optionalString) Type() string { return "string" }

// optionalStrings is a comma-separated list flag that stays nil until given (given again, it adds to the list).
type optionalStrings struct {
	p   **[]string
	def []string
}

func (v *optionalStrings) String() string {
	if v.p == nil || *v.p == nil {
		return "[" + strings.Join(v.def, ",") + "]"
	}
	return "[" + strings.Join(**v.p, ",") + "]"
}

func (v *optionalStrings) Set(s string) error {
	var items []string
	for _, item := range strings.Split(s, ",") {
		if item = strings.TrimSpace(item); item != "" {
			items = append(items, item)
		}
	}
	if *v.p == nil {
		*v.p = &[]string{}
	}
	**v.p = append(**v.p, items...)
	return nil
}

func (v *optionalStrings) Type() string { return "strings" }

func compileOptional(flag, expr string) (*regexp.Regexp, error) {
	if expr == "" {
		return nil, nil
	}
	re, err := regexp.Compile(expr)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", flag, err)
	}
	return re, nil
}
