package topology

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"
)

// maxNameLen is the longest domain name fabricmap makes. HyperNode names and label values share it, so a
// name is also a valid label value (63 characters).
const maxNameLen = 63

// SafeName turns any identifier (a switch name, a GUID, a MAC address) into a stable DNS-1123 label: lower
// case, runs of other characters folded to "-", trimmed; when the result is empty or too long, it is cut and
// a short hash of the raw identifier appended. The same input always gives the same name.
func SafeName(raw string) string {
	var b strings.Builder
	lastDash := true
	for _, r := range strings.ToLower(raw) {
		switch {
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9':
			b.WriteRune(r)
			lastDash = false
		default:
			if !lastDash {
				b.WriteByte('-')
				lastDash = true
			}
		}
	}
	clean := strings.Trim(b.String(), "-")
	if clean != "" && len(clean) <= maxNameLen {
		return clean
	}
	return hashed(clean, raw)
}

// UniqueName is SafeName with the hash always appended: for identifiers whose SafeName collides with another's.
func UniqueName(raw string) string {
	return hashed(strings.Trim(SafeName(raw), "-"), raw)
}

func hashed(clean, raw string) string {
	sum := sha256.Sum256([]byte(raw))
	suffix := hex.EncodeToString(sum[:])[:8]
	if clean == "" {
		return "x-" + suffix
	}
	if keep := maxNameLen - len(suffix) - 1; len(clean) > keep {
		clean = strings.TrimRight(clean[:keep], "-")
	}
	return clean + "-" + suffix
}

// JoinName builds a name from a prefix and an identifier, as SafeName does for the identifier.
func JoinName(prefix, raw string) string {
	return SafeName(prefix + "-" + raw)
}
