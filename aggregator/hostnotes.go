package aggregator

import (
	"context"
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/fabricmap/fabricmap/sources"
)

// Reasons of the Events about hosts a source did not take by their name (sources.Noter).
const (
	// ReasonHostReidentified is the Warning Event on a Node that a source found under another name: its HCA
	// carries an adapter's default description or a generic name, and the node was known by its GUID.
	ReasonHostReidentified = "FabricHostReidentified"
	// ReasonHostsLeftOut is the Warning Event on the leader Lease that lists the hosts a source left out: no
	// node could be found for them (a default description no report explains, a management host).
	ReasonHostsLeftOut = "FabricHostsLeftOut"
)

// maxNotedHosts is how many hosts one Event about hosts left out names; the rest are counted.
const maxNotedHosts = 10

// noteHosts says which hosts the source p did not take by their name, with the reason, when that list changed
// since it last said so: a Warning Event on each Node a host was re-identified as, one on the leader Lease
// listing the hosts left out, and the fabricmap_aggregator_source_hosts_noted gauge. A source that is no
// sources.Noter says nothing.
func (ps *pollStage) noteHosts(ctx context.Context, p *polledSource, nodes map[string]*metav1.PartialObjectMetadata) {
	noter, ok := p.src.(sources.Noter)
	if !ok {
		return
	}
	notes := noter.Notes()
	var said strings.Builder
	for _, n := range notes {
		said.WriteString(n.String())
		said.WriteByte('\n')
	}
	if said.String() == p.noted {
		return
	}
	p.noted = said.String()
	name := p.src.Name()
	var left []string
	reidentified := 0
	for _, n := range notes {
		if n.Node == "" {
			left = append(left, n.String())
			continue
		}
		reidentified++
		ps.r.nodeEvent(n.Node, nodes, corev1.EventTypeWarning, ReasonHostReidentified, "source %s: %s", name, n.String())
	}
	ps.r.Metrics.sourceHostsNoted.WithLabelValues(name, "reidentified").Set(float64(reidentified))
	ps.r.Metrics.sourceHostsNoted.WithLabelValues(name, "left-out").Set(float64(len(left)))
	if len(left) == 0 {
		return
	}
	count, more := len(left), ""
	if count > maxNotedHosts {
		more = fmt.Sprintf("; and %d more", count-maxNotedHosts)
		left = left[:maxNotedHosts]
	}
	ps.r.fabricEvent(ctx, corev1.EventTypeWarning, ReasonHostsLeftOut,
		"source %s left out %d hosts or systems it found no node for (each with its reason: a default description, a management host, a gateway or router UFM lists as a host): %s%s", name, count, strings.Join(left, "; "), more)
}
