// Package sim replays job traces through a placer on a generated fabric and measures placement quality:
// the share of gangs at the optimal gang tier, mean gang and PP-group tiers, leaves used against the minimum,
// fragmentation, acceptance, queueing delay and utilisation. `fabricmap simulate` and the peer comparison use it.
package sim
