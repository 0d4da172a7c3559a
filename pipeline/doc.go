// Package pipeline is fabricmap's pure core between the evidence and the tree: evidence from the agents'
// reports (EvidenceFromReport, CloudEvidence, ReportGUIDs), the one inference from every source's evidence
// (Infer), fabric health on the tree (AssessHealth, HealthPorts, SwitchLinksFromFabric, the uplink-lost
// annotation's form) and the expected topology an admin approved (ReadExpectedTopology, ExpectedTopology).
// It holds no Kubernetes client and no state: the aggregator runs it on what its informers hold, and the CLI
// on files and lists, so both judge the same input alike.
package pipeline
