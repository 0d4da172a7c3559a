// Package wellknown is the one home of the keys fabricmap shares with users, schedulers and its own parts: labels,
// annotations, taints, the scheduling gate, server-side apply field managers and the sources' names. It imports
// nothing, so every writer, reader and the uninstall hook can use it without linking the part that writes a key.
package wellknown
