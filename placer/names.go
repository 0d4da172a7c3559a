package placer

// Event reasons.
const (
	ReasonPlaced       = "Placed"
	ReasonUnplaceable  = "GangUnplaceable"
	ReasonBadGang      = "InvalidGang"
	ReasonPreempting   = "Preempting"
	ReasonPreempted    = "Preempted"
	ReasonEvictRefused = "EvictionRefused"
	ReasonReleased     = "ReservationReleased"
	ReasonRetrying     = "PlacementRetrying"
)
