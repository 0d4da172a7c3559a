package rdma

import (
	"fmt"
	"path"
	"strings"

	"github.com/fabricmap/fabricmap/api/v1alpha1"
)

// ClassRule gives a class to the ports it matches. Every non-empty matcher must match (they are ANDed); a
// rule needs at least one. Matchers are shell globs (path.Match syntax: *, ?, [...]).
type ClassRule struct {
	// Class is the class the rule gives.
	Class v1alpha1.PortClass
	// Device matches the RDMA device name (mlx5_8, mlx5_1*).
	Device string
	// NetDev matches the port's network interface (ens2*). A port without one never matches.
	NetDev string
	// PCIAddress matches the device's PCI address in "dddd:bb:dd.f" form (0000:a8:00.0, 0000:a8:*).
	PCIAddress string
}

// Validate checks that the rule has a known class, at least one matcher, and well-formed globs.
func (r ClassRule) Validate() error {
	if r.Class != v1alpha1.PortClassCompute && r.Class != v1alpha1.PortClassStorage {
		return fmt.Errorf("class rule: class %q is neither %q nor %q", r.Class,
			v1alpha1.PortClassCompute, v1alpha1.PortClassStorage)
	}
	if r.Device == "" && r.NetDev == "" && r.PCIAddress == "" {
		return fmt.Errorf("class rule for %q: no matcher (set device, netdev or pci)", r.Class)
	}
	for _, g := range []string{r.Device, r.NetDev, r.PCIAddress} {
		if _, err := path.Match(g, ""); err != nil {
			return fmt.Errorf("class rule for %q: bad glob %q: %w", r.Class, g, err)
		}
	}
	return nil
}

// Matches tells whether the rule matches a port of device, with network interface netdev, on PCI function
// pciAddr. A rule that does not validate matches nothing.
func (r ClassRule) Matches(device, netdev, pciAddr string) bool {
	if r.Validate() != nil {
		return false
	}
	return globMatch(r.Device, device) && globMatch(r.NetDev, netdev) &&
		globMatch(strings.ToLower(r.PCIAddress), pciAddr)
}

func globMatch(pattern, s string) bool {
	if pattern == "" {
		return true
	}
	if s == "" {
		return false
	}
	ok, err := path.Match(pattern, s)
	return err == nil && ok
}

// String prints the rule in the form ParseClassRule reads.
func (r ClassRule) String() string {
	var m []string
	if r.Device != "" {
		m = append(m, "device="+r.Device)
	}
	if r.NetDev != "" {
		m = append(m, "netdev="+r.NetDev)
	}
	if r.PCIAddress != "" {
		m = append(m, "pci="+r.PCIAddress)
	}
	return string(r.Class) + ":" + strings.Join(m, ",")
}

// ParseClassRule reads a rule written as "<class>:<key>=<glob>[,<key>=<glob>...]" with keys device, netdev
// and pci, for example "storage:device=mlx5_8" or "storage:netdev=ens2*,pci=0000:a8:*".
func ParseClassRule(s string) (ClassRule, error) {
	class, matchers, ok := strings.Cut(strings.TrimSpace(s), ":")
	if !ok {
		return ClassRule{}, fmt.Errorf("class rule %q: want <class>:<key>=<glob>[,...]", s)
	}
	r := ClassRule{Class: v1alpha1.PortClass(strings.TrimSpace(class))}
	for _, kv := range strings.Split(matchers, ",") {
		k, v, ok := strings.Cut(strings.TrimSpace(kv), "=")
		if !ok || v == "" {
			return ClassRule{}, fmt.Errorf("class rule %q: matcher %q is not <key>=<glob>", s, kv)
		}
		var dst *string
		switch k {
		case "device":
			dst = &r.Device
		case "netdev":
			dst = &r.NetDev
		case "pci":
			dst = &r.PCIAddress
		default:
			return ClassRule{}, fmt.Errorf("class rule %q: unknown key %q (want device, netdev or pci)", s, k)
		}
		if *dst != "" {
			return ClassRule{}, fmt.Errorf("class rule %q: key %q given twice", s, k)
		}
		*dst = v
	}
	if err := r.Validate(); err != nil {
		return ClassRule{}, fmt.Errorf("class rule %q: %w", s, err)
	}
	return r, nil
}

// ParseClassRules reads rules separated by ";" (blank entries are skipped), in order.
func ParseClassRules(s string) ([]ClassRule, error) {
	var rules []ClassRule
	for _, part := range strings.Split(s, ";") {
		if strings.TrimSpace(part) == "" {
			continue
		}
		r, err := ParseClassRule(part)
		if err != nil {
			return nil, err
		}
		rules = append(rules, r)
	}
	return rules, nil
}

// Classify returns the class of the first rule that matches, else def (compute when def is empty).
func Classify(rules []ClassRule, def v1alpha1.PortClass, device, netdev, pciAddr string) v1alpha1.PortClass {
	for _, r := range rules {
		if r.Matches(device, netdev, pciAddr) {
			return r.Class
		}
	}
	if def == "" {
		return v1alpha1.PortClassCompute
	}
	return def
}
