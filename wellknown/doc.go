// Package wellknown is the one home of the keys fabricmap shares with users, schedulers and its own parts: labels,
// annotations, taints, the scheduling gate and server-side apply field managers. It imports nothing, so every
// writer, reader and the uninstall hook can use it without linking the part that writes a key.
package wellknown
