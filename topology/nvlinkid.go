package topology

import "strings"

// CanonicalNVLinkID is the form in which NVLink domain and sub-domain identifiers are compared, recorded
// (Domain.NVLinkDomain, Domain.NVLinkSubDomain) and named: the spellings of one identifier are one domain,
// whoever reports them and in whatever order. Letters are lower-cased, each run of the separators '-', '_' and
// ':' becomes one '-', and white space and separators at either end are dropped. Every
// other character is kept as it is, '.' (between the cluster UUID and the clique ID) among them: "AAAA.1",
// " aaaa.1 " and "aaaa.1" are one domain; "aaaa_b:c.1" and "aaaa-b-c.1" are one; "aaaa-1" is another, whose
// name clashes with the first's (see nameAccelerators). "" (or only white space and separators) is no domain.
func CanonicalNVLinkID(id string) string {
	var b strings.Builder
	sep := false
	for _, r := range strings.ToLower(strings.TrimSpace(id)) {
		if r == '-' || r == '_' || r == ':' {
			sep = true
			continue
		}
		if sep && b.Len() > 0 {
			b.WriteByte('-')
		}
		sep = false
		b.WriteRune(r)
	}
	return strings.TrimSpace(b.String())
}
