package podread

import "k8s.io/apimachinery/pkg/api/resource"

// mustQ parses a quantity.
func mustQ(s string) resource.Quantity { return resource.MustParse(s) }
