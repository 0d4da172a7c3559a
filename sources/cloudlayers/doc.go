// Package cloudlayers is each cloud's network layers as topology evidence: the keys under which both its API
// source (sources/gcp, sources/oci) and the nodes' own instance metadata (the agents' cloud probe, read by
// pipeline.CloudEvidence) give a node's place, and the values they give, so that the two agree on every domain.
// It links no cloud SDK, so the pipeline reads the metadata without linking the API sources.
package cloudlayers
