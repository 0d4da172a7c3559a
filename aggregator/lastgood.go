package aggregator

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/fabricmap/fabricmap/api/v1alpha1"
	"github.com/fabricmap/fabricmap/pipeline"
	"github.com/fabricmap/fabricmap/topology"
)

// evidence turns reports into evidence, falling back to a node's last good evidence when its report cannot
// be used, so that one bad report never shrinks a domain. Reports whose agent has been silent past the expiry
// and the grace period are left out; their nodes are returned as dropped.
//
// What is kept of a good report is its spec as the cache holds it (a few words: its lists are the cached
// report's own, shared, not copied), and its evidence is made again only when a later report of the node
// cannot be used: at 50,000 nodes keeping every node's evidence cost about 100 MiB, while a spec kept beside
// the cache costs memory of its own only once the report it came from has been replaced by a bad one.
func (es *evidenceStage) evidence(reports []*v1alpha1.NodeFabricReport, nodes map[string]*metav1.PartialObjectMetadata) (out []topology.NodeEvidence, dropped []string) {
	out = make([]topology.NodeEvidence, 0, len(reports))
	seen := make(map[string]bool, len(reports))
	for i := range reports {
		rep := reports[i]
		seen[rep.Name] = true
		age, silent := es.age(rep.Name)
		es.noteAge(rep.Name, age, silent, nodes)
		if age == reportDropped {
			dropped = append(dropped, rep.Name)
			continue
		}
		e := pipeline.EvidenceFromReport(rep)
		if reason := e.Check(); reason != "" {
			prev, ok := es.lastGood[rep.Name]
			if ok {
				out = append(out, pipeline.EvidenceFromReport(&v1alpha1.NodeFabricReport{ObjectMeta: metav1.ObjectMeta{Name: rep.Name}, Spec: prev}))
			}
			es.rejectReport(rep.Name, reason, ok, nodes)
			continue
		}
		es.lastGood[rep.Name] = rep.Spec
		out = append(out, e)
	}
	for n := range es.lastGood {
		if !seen[n] {
			delete(es.lastGood, n) // the report is gone (node deleted): its evidence goes with it
		}
	}
	es.forgetAges(seen)
	return out, dropped
}
