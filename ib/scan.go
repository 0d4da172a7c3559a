package ib

import "strings"

// The parser reads the two line shapes that make up almost all of a capture, port lines and node headers, with
// hand-written scanners rather than regular expressions: a capture of 50,000 hosts has 1 million port lines,
// and matching each with a backtracking regular expression was most of the parse's time and garbage. Each
// scanner takes one line (no '\n' in it: the parser splits the input there) and accepts exactly the lines its
// grammar below accepts, giving the same parts; scan_test.go holds the grammars as regular expressions and
// fuzzes the scanners against them.

// Port line, both shapes:
//
//	switch: `[3]	"H-0002c90300a1b2c4"[1](2c90300a1b2c4) 		# "dgx-001 mlx5_0" lid 12 4xNDR`
//	CA:     `[1](2c90300a1b2c4) 	"S-0002c90300a1b2c3"[3]		# lid 12 lmc 0 "MF0;sw-leaf-01:MQM9700/U1" lid 3 4xNDR`
//
// with optional "[ext N]" after either port number (grouping mode) and optional trailing fields
// (" s=64 w=2 v=4" with --full, " (scp)", " slot N"). As a regular expression (\s is [\t\n\f\r ]):
//
//	^\[(\d+)\](?:\[ext \d+\])?(?:\(([0-9A-Fa-fxX]+)\))?\s*
//	"([SHR?])-([^"]*)"\[(\d+)\](?:\[ext \d+\])?\s*(?:\(([0-9A-Fa-fxX]+)\))?\s*
//	#\s*(?:lid\s+(\d+)\s+lmc\s+\d+\s+)?"(.*)"(?:\s+lid\s+(\d+))?(?:\s+(\S+))?(.*)$
//
// The description runs to the line's last double quote.
type portLine struct {
	localPort, localPortGUID                     string
	peerLetter, peerGUID, peerPort, peerPortGUID string
	localLID, peerDesc, peerLID, rate, rest      string
}

// scanPortLine splits a port line into its parts; ok is false (and the parts empty) when t is no port line.
func scanPortLine(t string) (portLine, bool) {
	if m, ok := scanPortParts(t); ok {
		return m, true
	}
	return portLine{}, false
}

// scanPortParts is scanPortLine, with the parts read before a mismatch left set.
func scanPortParts(t string) (m portLine, ok bool) {
	s := scanner{t}
	if m.localPort, ok = s.bracketedNumber(); !ok {
		return m, false
	}
	if !s.ext() {
		return m, false
	}
	if m.localPortGUID, ok = s.portGUID(); !ok {
		return m, false
	}
	s.spaces()
	if !s.byte('"') || !s.peerLetter() {
		return m, false
	}
	m.peerLetter = s.t[:1]
	s.t = s.t[2:]
	end := strings.IndexByte(s.t, '"')
	if end < 0 {
		return m, false
	}
	m.peerGUID, s.t = s.t[:end], s.t[end+1:]
	if m.peerPort, ok = s.bracketedNumber(); !ok {
		return m, false
	}
	if !s.ext() {
		return m, false
	}
	s.spaces()
	if m.peerPortGUID, ok = s.portGUID(); !ok {
		return m, false
	}
	s.spaces()
	if !s.byte('#') {
		return m, false
	}
	s.spaces()
	if !strings.HasPrefix(s.t, `"`) {
		// lid\s+(\d+)\s+lmc\s+\d+\s+ and then the quote
		if !s.word("lid") || !s.someSpaces() {
			return m, false
		}
		if m.localLID = s.digits(); m.localLID == "" || !s.someSpaces() || !s.word("lmc") || !s.someSpaces() ||
			s.digits() == "" || !s.someSpaces() || !strings.HasPrefix(s.t, `"`) {
			return m, false
		}
	}
	last := strings.LastIndexByte(s.t, '"')
	if last < 1 {
		return m, false
	}
	m.peerDesc, s.t = s.t[1:last], s.t[last+1:]
	// (?:\s+lid\s+(\d+))? then (?:\s+(\S+))? then the rest
	if try := s; try.someSpaces() && try.word("lid") && try.someSpaces() {
		if lid := try.digits(); lid != "" {
			m.peerLID, s = lid, try
		}
	}
	if try := s; try.someSpaces() {
		if tok := try.nonSpaces(); tok != "" {
			m.rate, s = tok, try
		}
	}
	m.rest = s.t
	return m, true
}

// Node header: `Switch	41 "S-0002c90300a1b2c3"		# "MF0;sw-leaf-01:MQM9700/U1" enhanced port 0 lid 3 lmc 0`
// or `Ca	1 "H-0002c90300a1b2c4"		# "dgx-001 mlx5_0"`; old releases and node-name maps may change the comment.
// As a regular expression:
//
//	^(Switch|Ca|Rt)\s+(\d+)\s+"([SHR?])-([^"]*)"\s*(?:#\s*"(.*)"(.*))?$
//
// The description runs to the line's last double quote; the tail is what follows it.
type nodeHeader struct {
	keyword, ports, letter, guid, desc, tail string
}

// scanNodeHeader splits a node header into its parts; ok is false (and the parts empty) when t is no node
// header.
func scanNodeHeader(t string) (nodeHeader, bool) {
	if m, ok := scanNodeParts(t); ok {
		return m, true
	}
	return nodeHeader{}, false
}

// scanNodeParts is scanNodeHeader, with the parts read before a mismatch left set.
func scanNodeParts(t string) (m nodeHeader, ok bool) {
	s := scanner{t}
	for _, kw := range []string{"Switch", "Ca", "Rt"} {
		if s.word(kw) {
			m.keyword = kw
			break
		}
	}
	if m.keyword == "" || !s.someSpaces() {
		return m, false
	}
	if m.ports = s.digits(); m.ports == "" || !s.someSpaces() || !s.byte('"') || !s.peerLetter() {
		return m, false
	}
	m.letter = s.t[:1]
	s.t = s.t[2:]
	end := strings.IndexByte(s.t, '"')
	if end < 0 {
		return m, false
	}
	m.guid, s.t = s.t[:end], s.t[end+1:]
	s.spaces()
	if s.t == "" {
		return m, true
	}
	if !s.byte('#') {
		return m, false
	}
	s.spaces()
	last := strings.LastIndexByte(s.t, '"')
	if !strings.HasPrefix(s.t, `"`) || last < 1 {
		return m, false
	}
	m.desc, m.tail = s.t[1:last], s.t[last+1:]
	return m, true
}

// scanRate splits a width and speed token, "4xNDR" or "??" and "???", into the width and the speed:
// ^(\d+x|\?\?)([A-Za-z0-9?]+)$ as a regular expression.
func scanRate(tok string) (width, speed string, ok bool) {
	s := scanner{tok}
	if d := s.digits(); d != "" {
		if !s.byte('x') {
			return "", "", false
		}
	} else if !s.word("??") {
		return "", "", false
	}
	width = tok[:len(tok)-len(s.t)]
	if s.t == "" {
		return "", "", false
	}
	for i := 0; i < len(s.t); i++ {
		if c := s.t[i]; !(c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '?') {
			return "", "", false
		}
	}
	return width, s.t, true
}

// scanner reads a line from its start; every method consumes what it matched, or nothing.
type scanner struct{ t string }

// isSpace is a regular expression's \s: [\t\n\f\r ].
func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\f' || c == '\r' }

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

// spaces consumes \s*.
func (s *scanner) spaces() {
	i := 0
	for i < len(s.t) && isSpace(s.t[i]) {
		i++
	}
	s.t = s.t[i:]
}

// someSpaces consumes \s+.
func (s *scanner) someSpaces() bool {
	if s.t == "" || !isSpace(s.t[0]) {
		return false
	}
	s.spaces()
	return true
}

// nonSpaces consumes \S+ (or nothing) and returns it.
func (s *scanner) nonSpaces() string {
	i := 0
	for i < len(s.t) && !isSpace(s.t[i]) {
		i++
	}
	tok := s.t[:i]
	s.t = s.t[i:]
	return tok
}

// digits consumes \d+ (or nothing) and returns it.
func (s *scanner) digits() string {
	i := 0
	for i < len(s.t) && isDigit(s.t[i]) {
		i++
	}
	d := s.t[:i]
	s.t = s.t[i:]
	return d
}

func (s *scanner) byte(c byte) bool {
	if s.t == "" || s.t[0] != c {
		return false
	}
	s.t = s.t[1:]
	return true
}

func (s *scanner) word(w string) bool {
	if !strings.HasPrefix(s.t, w) {
		return false
	}
	s.t = s.t[len(w):]
	return true
}

// bracketedNumber consumes \[(\d+)\].
func (s *scanner) bracketedNumber() (string, bool) {
	try := *s
	if !try.byte('[') {
		return "", false
	}
	d := try.digits()
	if d == "" || !try.byte(']') {
		return "", false
	}
	*s = try
	return d, true
}

// ext consumes (?:\[ext \d+\])? and tells whether the line can still match: a '[' here that starts no
// "[ext N]" can match nothing that may follow.
func (s *scanner) ext() bool {
	if !strings.HasPrefix(s.t, "[") {
		return true
	}
	try := *s
	if !try.word("[ext ") || try.digits() == "" || !try.byte(']') {
		return false
	}
	*s = try
	return true
}

// portGUID consumes (?:\(([0-9A-Fa-fxX]+)\))? and returns the group; ok is false when a '(' here starts no
// such group (nothing that may follow can match it).
func (s *scanner) portGUID() (string, bool) {
	if !strings.HasPrefix(s.t, "(") {
		return "", true
	}
	i := 1
	for i < len(s.t) && isPortGUIDByte(s.t[i]) {
		i++
	}
	if i == 1 || i == len(s.t) || s.t[i] != ')' {
		return "", false
	}
	g := s.t[1:i]
	s.t = s.t[i+1:]
	return g, true
}

func isPortGUIDByte(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F' || c == 'x' || c == 'X'
}

// peerLetter tells whether the line goes on with ([SHR?])- (it consumes nothing).
func (s *scanner) peerLetter() bool {
	if len(s.t) < 2 || s.t[1] != '-' {
		return false
	}
	switch s.t[0] {
	case 'S', 'H', 'R', '?':
		return true
	}
	return false
}
