package ufm

import (
	"reflect"
	"strconv"
	"strings"
)

// member is one member of an entry that fabricmap keeps.
type member struct {
	name  string
	what  string // the name quoted, for messages
	field int    // the field of T it fills; -1 for an extra member
	extra int    // for an extra member, its index among the extras
	list  bool   // a []string field (see listDecoder.names); otherwise a string (see listDecoder.scalar)
}

// entryShape is which members of an entry are kept in T: one per json-tagged string or []string field of T,
// plus the extra members, whose values go to fix (see decodeList).
type entryShape[T any] struct {
	members []member
	names   []string // the members' names, in order
	extras  int
	size    int64 // the size of a T, counted as kept for every entry
}

func newEntryShape[T any](extra ...string) *entryShape[T] {
	t := reflect.TypeFor[T]()
	s := &entryShape[T]{size: int64(t.Size())}
	for i := range t.NumField() {
		f := t.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		isList := f.Type.Kind() == reflect.Slice && f.Type.Elem().Kind() == reflect.String
		if name == "" || name == "-" || f.Type.Kind() != reflect.String && !isList {
			continue
		}
		s.members = append(s.members, member{name: name, what: strconv.Quote(name), field: i, list: isList})
	}
	for i, name := range extra {
		s.members = append(s.members, member{name: name, what: strconv.Quote(name), field: -1, extra: i})
	}
	s.extras = len(extra)
	for _, m := range s.members {
		s.names = append(s.names, m.name)
	}
	return s
}

// entryList collects entries: the first chunkEntries in a slice that grows, the others in chunks of
// chunkEntries, so that a long list leaves no garbage as it grows (only its live entries count in the heap).
type entryList[T any] struct {
	chunks [][]T
	n      int
}

const chunkEntries = 4096

func (l *entryList[T]) add(v T) {
	switch k := len(l.chunks); {
	case k == 0:
		l.chunks = append(l.chunks, make([]T, 0, 16))
	case len(l.chunks[k-1]) == chunkEntries:
		l.chunks = append(l.chunks, make([]T, 0, chunkEntries))
	}
	last := &l.chunks[len(l.chunks)-1]
	*last = append(*last, v) // the first chunk grows up to chunkEntries
	l.n++
}

// slice returns the entries in one slice (empty, not nil, for none), of their number exactly when there were
// more than chunkEntries; the chunks are let go as they are copied.
func (l *entryList[T]) slice() []T {
	switch len(l.chunks) {
	case 0:
		return []T{}
	case 1:
		return l.chunks[0]
	}
	out := make([]T, 0, l.n)
	for i := range l.chunks {
		out = append(out, l.chunks[i]...)
		l.chunks[i] = nil
	}
	return out
}
