// Package peers holds, in its tests only, this project's own implementations of other schedulers' published
// placement algorithms (first-fit, Volcano's tier gradient with binpack, Kueue's TAS BestFit, Slurm's
// topology/tree best-fit and the Koordinator network-topology seed's FindBestNode), written from their
// descriptions, and the trace replay and Go benchmarks that compare them with fabricmap's placement.
package peers
