// Package podread is what placement reads from a gang's pods, shared by the placer (placer), `fabricmap place`
// and fabricmap-scheduler's plugin (scheduler/fabricplacement): a pod's request in placement's units and the
// rank order of a gang's pods. It links the Kubernetes API types and no client, so that the scheduler's module,
// on another Kubernetes version, compiles the same code.
package podread
