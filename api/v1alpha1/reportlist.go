package v1alpha1

// Pointers returns a pointer to each of the list's items, in order, without copying them: the form the
// aggregator's pipeline reads reports in (it reads the manager's cache the same way, where a copy of every
// report per pass would be tens of MiB at 50,000 nodes).
func (l *NodeFabricReportList) Pointers() []*NodeFabricReport {
	out := make([]*NodeFabricReport, len(l.Items))
	for i := range l.Items {
		out[i] = &l.Items[i]
	}
	return out
}
