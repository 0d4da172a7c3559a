package slurm

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"

	"github.com/fabricmap/fabricmap/topology"
)

// maxNameLen is the longest switch or block name written: Slurm keeps names in fixed buffers of 64 bytes in
// places, so longer ones are cut (with a hash that keeps them apart).
const maxNameLen = 63

// nameOK reports whether r may stand in a Slurm switch, block or node name: letters, digits, '-', '_' and '.'
// (never the hostlist's '[', ']' and ',', nor '=', '#' or space, which end a key=value pair or start a comment).
func nameOK(r rune) bool {
	return r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_' || r == '.'
}

// SwitchName maps a domain name to a name valid as a Slurm SwitchName or BlockName: a valid name of at most 63
// bytes stays as it is; otherwise each character Slurm reserves becomes '-' and, since two names could then
// meet, a short hash of the domain name is added (the name cut to make room for it).
func SwitchName(name string) string {
	if name != "" && len(name) <= maxNameLen && strings.IndexFunc(name, func(r rune) bool { return !nameOK(r) }) < 0 {
		return name
	}
	mapped := strings.Map(func(r rune) rune {
		if nameOK(r) {
			return r
		}
		return '-'
	}, name)
	sum := sha256.Sum256([]byte(name))
	tag := "-" + hex.EncodeToString(sum[:4])
	if len(mapped) > maxNameLen-len(tag) {
		mapped = mapped[:maxNameLen-len(tag)]
	}
	return mapped + tag
}

// checkNodes refuses node names Slurm cannot take, naming the first one and its domain.
func checkNodes(t *topology.Tree) error {
	for _, name := range t.Names() {
		for _, n := range t.Domains[name].Nodes {
			if n == "" || strings.IndexFunc(n, func(r rune) bool { return !nameOK(r) }) >= 0 {
				return fmt.Errorf("node %q (in %s) cannot be a Slurm node name: Slurm takes letters, digits, '-', '_' and '.'", n, name)
			}
		}
	}
	return nil
}

// switchNames maps every domain to its Slurm name (SwitchName), refusing two domains that would share one.
func switchNames(t *topology.Tree) (map[string]string, error) {
	out := make(map[string]string, len(t.Domains))
	taken := make(map[string]string, len(t.Domains))
	for _, name := range t.Names() {
		s := SwitchName(name)
		if other, dup := taken[s]; dup {
			return nil, fmt.Errorf("domains %q and %q both map to the Slurm name %q", other, name, s)
		}
		taken[s], out[name] = name, s
	}
	return out, nil
}

// checkTree refuses a tree that cannot be written: nil, empty or invalid, or with node names Slurm refuses.
func checkTree(t *topology.Tree) error {
	if t == nil || len(t.Domains) == 0 {
		return fmt.Errorf("the tree is empty")
	}
	if err := t.Validate(); err != nil {
		return fmt.Errorf("invalid topology tree: %w", err)
	}
	return checkNodes(t)
}
