package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"path"
	"regexp"
	"sort"
	"strconv"
	"strings"
)

// instruction is one Dockerfile instruction with its continuation lines joined.
type instruction struct {
	// Line is the 1-based line the instruction starts on.
	Line int
	// Cmd is the instruction's keyword in upper case (FROM, COPY, ...).
	Cmd string
	// Flags are the leading --name=value options (FROM, COPY, ADD, RUN).
	Flags map[string]string
	// Rest is the argument text after the keyword and flags.
	Rest string
}

// stage is one FROM ... section.
type stage struct {
	// Name is the AS name, lower case; empty when unnamed.
	Name string
	// From is the FROM argument as written (before ARG substitution).
	From string
	// Line is the line of the FROM instruction.
	Line int
	// Instrs are the stage's instructions after FROM.
	Instrs []instruction
}

// dockerfile is a parsed Dockerfile: the ARGs before the first FROM, and the stages.
type dockerfile struct {
	// Name is the file's name, for messages.
	Name       string
	GlobalArgs []instruction
	Stages     []*stage
}

// ParseError says which line of which Dockerfile could not be parsed, and why.
type ParseError struct {
	File string
	Line int
	Err  error
}

func (e *ParseError) Error() string { return fmt.Sprintf("%s:%d: %v", e.File, e.Line, e.Err) }

func (e *ParseError) Unwrap() error { return e.Err }

var (
	directiveRE = regexp.MustCompile(`^#\s*([a-zA-Z][a-zA-Z0-9]*)\s*=\s*(.+?)\s*$`)
	heredocRE   = regexp.MustCompile(`<<-?\s*["']?[A-Za-z_]`)
	flagRE      = regexp.MustCompile(`^--([a-z][a-z-]*)(?:=(\S*))?$`)
)

// parseDockerfile reads a Dockerfile: parser directives, comments, line continuations with a backslash,
// instructions and their leading --flags. Heredocs and an escape character other than '\' are refused.
func parseDockerfile(name string, r io.Reader) (*dockerfile, error) {
	df := &dockerfile{Name: name}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64*1024), 1024*1024)
	lineNo := 0
	directives := true
	var cur strings.Builder
	start := 0
	flush := func() error {
		text := strings.TrimSpace(cur.String())
		cur.Reset()
		if text == "" {
			return nil
		}
		in, err := splitInstruction(start, text)
		if err != nil {
			return &ParseError{File: name, Line: start, Err: err}
		}
		switch {
		case in.Cmd == "FROM":
			st, err := parseFrom(in)
			if err != nil {
				return &ParseError{File: name, Line: start, Err: err}
			}
			df.Stages = append(df.Stages, st)
		case len(df.Stages) == 0 && in.Cmd == "ARG":
			df.GlobalArgs = append(df.GlobalArgs, in)
		case len(df.Stages) == 0:
			return &ParseError{File: name, Line: start, Err: fmt.Errorf("%s before the first FROM (only ARG may come first)", in.Cmd)}
		default:
			st := df.Stages[len(df.Stages)-1]
			st.Instrs = append(st.Instrs, in)
		}
		return nil
	}
	for sc.Scan() {
		lineNo++
		line := sc.Text()
		trimmed := strings.TrimSpace(line)
		if directives {
			if m := directiveRE.FindStringSubmatch(trimmed); m != nil {
				if strings.EqualFold(m[1], "escape") && m[2] != `\` {
					return nil, &ParseError{File: name, Line: lineNo, Err: fmt.Errorf("escape directive %q: only the default escape character '\\' is supported", m[2])}
				}
				continue
			}
			directives = false
		}
		if strings.HasPrefix(trimmed, "#") {
			continue // a comment, also between continuation lines
		}
		if cur.Len() == 0 {
			if trimmed == "" {
				continue
			}
			start = lineNo
		} else if trimmed == "" {
			continue // empty continuation lines are dropped
		}
		body := strings.TrimRight(line, " \t\r")
		if strings.HasSuffix(body, `\`) {
			cur.WriteString(strings.TrimSuffix(body, `\`))
			cur.WriteString(" ")
			continue
		}
		cur.WriteString(body)
		if err := flush(); err != nil {
			return nil, err
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("reading %s: %w", name, err)
	}
	if err := flush(); err != nil {
		return nil, err
	}
	if len(df.Stages) == 0 {
		return nil, &ParseError{File: name, Line: lineNo, Err: fmt.Errorf("no FROM instruction")}
	}
	return df, nil
}

// splitInstruction splits an instruction's text into keyword, leading flags and the rest.
func splitInstruction(line int, text string) (instruction, error) {
	kw, rest, _ := strings.Cut(text, " ")
	in := instruction{Line: line, Cmd: strings.ToUpper(strings.TrimSpace(kw)), Flags: map[string]string{}}
	rest = strings.TrimSpace(rest)
	if heredocRE.MatchString(rest) && (in.Cmd == "RUN" || in.Cmd == "COPY" || in.Cmd == "ADD") {
		return in, fmt.Errorf("%s with a heredoc is not supported", in.Cmd)
	}
	if in.Cmd == "FROM" || in.Cmd == "COPY" || in.Cmd == "ADD" || in.Cmd == "RUN" {
		for strings.HasPrefix(rest, "--") {
			word, tail, _ := strings.Cut(rest, " ")
			m := flagRE.FindStringSubmatch(word)
			if m == nil {
				return in, fmt.Errorf("%s: malformed flag %q", in.Cmd, word)
			}
			in.Flags[m[1]] = m[2]
			rest = strings.TrimSpace(tail)
		}
	}
	in.Rest = rest
	return in, nil
}

func parseFrom(in instruction) (*stage, error) {
	for f := range in.Flags {
		if f != "platform" {
			return nil, fmt.Errorf("FROM --%s is not supported", f)
		}
	}
	f := strings.Fields(in.Rest)
	st := &stage{Line: in.Line}
	switch {
	case len(f) == 1:
		st.From = f[0]
	case len(f) == 3 && strings.EqualFold(f[1], "AS"):
		st.From, st.Name = f[0], strings.ToLower(f[2])
	default:
		return nil, fmt.Errorf("FROM %q: want FROM IMAGE [AS NAME]", in.Rest)
	}
	return st, nil
}

// execForm returns the JSON array form of an argument (["a", "b"]), or ok=false for the shell form.
func execForm(rest string) (args []string, ok bool) {
	if !strings.HasPrefix(strings.TrimSpace(rest), "[") {
		return nil, false
	}
	if err := json.Unmarshal([]byte(rest), &args); err != nil {
		return nil, false
	}
	return args, true
}

// copySpec is a COPY of the final stage: which paths it writes, and with what owner and mode.
type copySpec struct {
	Line int
	// From is the --from stage or image, if any.
	From string
	// Sources are the source paths as written.
	Sources []string
	// Dest is the absolute destination (WORKDIR applied). DestIsDir says whether it names a folder: it ends
	// in '/', or several sources are copied.
	Dest      string
	DestIsDir bool
	// Mode, when set, is the --chmod mode of every copied file.
	Mode *int64
	// UID and GID are the --chown owner (0:0 by default).
	UID, GID int
	// Text is the instruction as written, for the image history.
	Text string
}

// covers tells whether the copy writes the file at dest.
func (c copySpec) covers(dest string) bool {
	if !c.DestIsDir {
		return dest == c.Dest
	}
	return strings.HasPrefix(dest, strings.TrimSuffix(c.Dest, "/")+"/")
}

// imageConfig is what an image's configuration takes from the Dockerfile.
type imageConfig struct {
	User         string
	Env          []string
	WorkingDir   string
	Entrypoint   []string
	Cmd          []string
	Labels       map[string]string
	ExposedPorts []string
	StopSignal   string
}

// buildPlan is the evaluated target stage of a Dockerfile: its configuration, its COPYs, and what its
// filesystem is based on.
type buildPlan struct {
	Config imageConfig
	// Copies are the final stage's COPY instructions, whose files --add supplies.
	Copies []copySpec
	// Base is the external image the stage chain starts from: "scratch" or an image reference.
	Base string
	// Stages are the stages from the chain's root to the target, by name (or "#N" when unnamed).
	Stages []string
	// Covered lists the instructions of earlier stages whose results the --rootfs must already hold
	// (their RUN, COPY and ADD), as "stage:line CMD".
	Covered []string
	// UnusedBuildArgs are the --build-arg names no ARG of the chain declared.
	UnusedBuildArgs []string
}

// EvalError says which instruction of which Dockerfile the writer cannot reproduce, and why.
type EvalError struct {
	File string
	Line int
	Cmd  string
	Err  error
}

func (e *EvalError) Error() string {
	return fmt.Sprintf("%s:%d: %s: %v", e.File, e.Line, e.Cmd, e.Err)
}

func (e *EvalError) Unwrap() error { return e.Err }

// evaluate walks the stages from the chain's root to target (the last stage when empty), substituting
// ARGs (buildArgs override their defaults) and ENV values, and collects the image configuration and the
// final stage's COPYs. Earlier stages may RUN, COPY and ADD: their results are what the --rootfs holds. The
// final stage may only set configuration and COPY files; any other instruction is refused.
func evaluate(df *dockerfile, target string, buildArgs map[string]string) (*buildPlan, error) {
	used := map[string]bool{}
	global := map[string]string{}
	globalSet := map[string]bool{}
	for _, in := range df.GlobalArgs {
		if err := declareArgs(in, buildArgs, nil, nil, global, globalSet, used); err != nil {
			return nil, &EvalError{File: df.Name, Line: in.Line, Cmd: in.Cmd, Err: err}
		}
	}
	globalLookup := func(n string) (string, bool) { v, ok := global[n]; return v, ok && globalSet[n] }

	byName := map[string]int{}
	for i, st := range df.Stages {
		if st.Name != "" {
			byName[st.Name] = i
		}
	}
	ti := len(df.Stages) - 1
	if target != "" {
		i, ok := byName[strings.ToLower(target)]
		if !ok {
			return nil, fmt.Errorf("%s: no stage named %q", df.Name, target)
		}
		ti = i
	}
	// The chain from the target back to a stage whose FROM is not another stage.
	chain := []int{ti}
	base := ""
	for {
		st := df.Stages[chain[0]]
		from, err := expandString(st.From, globalLookup)
		if err != nil {
			return nil, &EvalError{File: df.Name, Line: st.Line, Cmd: "FROM", Err: err}
		}
		if i, ok := byName[strings.ToLower(from)]; ok && i < chain[0] {
			chain = append([]int{i}, chain...)
			continue
		}
		base = from
		break
	}

	p := &buildPlan{Base: base, Config: imageConfig{Labels: map[string]string{}}}
	cfg := &p.Config
	shell := []string{"/bin/sh", "-c"}
	for ci, si := range chain {
		st := df.Stages[si]
		final := ci == len(chain)-1
		label := st.Name
		if label == "" {
			label = "#" + strconv.Itoa(si)
		}
		p.Stages = append(p.Stages, label)
		args, argSet := map[string]string{}, map[string]bool{}
		lookup := func(n string) (string, bool) {
			for _, kv := range cfg.Env {
				if k, v, _ := strings.Cut(kv, "="); k == n {
					return v, true
				}
			}
			v, ok := args[n]
			return v, ok && argSet[n]
		}
		cmdSet := false
		for _, in := range st.Instrs {
			fail := func(err error) error { return &EvalError{File: df.Name, Line: in.Line, Cmd: in.Cmd, Err: err} }
			switch in.Cmd {
			case "ARG":
				if err := declareArgs(in, buildArgs, global, globalSet, args, argSet, used); err != nil {
					return nil, fail(err)
				}
			case "ENV":
				kvs, err := keyValues(in.Rest, lookup, true)
				if err != nil {
					return nil, fail(err)
				}
				for _, kv := range kvs {
					cfg.Env = setEnv(cfg.Env, kv[0], kv[1])
				}
			case "LABEL":
				kvs, err := keyValues(in.Rest, lookup, false)
				if err != nil {
					return nil, fail(err)
				}
				for _, kv := range kvs {
					cfg.Labels[kv[0]] = kv[1]
				}
			case "USER":
				v, err := expandString(in.Rest, lookup)
				if err != nil {
					return nil, fail(err)
				}
				if v == "" {
					return nil, fail(fmt.Errorf("empty user"))
				}
				cfg.User = v
			case "WORKDIR":
				v, err := expandString(in.Rest, lookup)
				if err != nil {
					return nil, fail(err)
				}
				if v == "" {
					return nil, fail(fmt.Errorf("empty path"))
				}
				cfg.WorkingDir = absPath(cfg.WorkingDir, v)
			case "ENTRYPOINT":
				cfg.Entrypoint = commandLine(in.Rest, shell)
				if !cmdSet {
					cfg.Cmd = nil // as docker build: ENTRYPOINT drops a CMD inherited from the base
				}
			case "CMD":
				cfg.Cmd = commandLine(in.Rest, shell)
				cmdSet = true
			case "EXPOSE":
				ports, err := expandWords(in.Rest, lookup)
				if err != nil {
					return nil, fail(err)
				}
				for _, port := range ports {
					if !strings.Contains(port, "/") {
						port += "/tcp"
					}
					cfg.ExposedPorts = append(cfg.ExposedPorts, port)
				}
			case "STOPSIGNAL":
				v, err := expandString(in.Rest, lookup)
				if err != nil {
					return nil, fail(err)
				}
				cfg.StopSignal = v
			case "SHELL":
				s, ok := execForm(in.Rest)
				if !ok || len(s) == 0 {
					return nil, fail(fmt.Errorf("SHELL needs a non-empty JSON array"))
				}
				shell = s
			case "COPY":
				if !final {
					p.Covered = append(p.Covered, fmt.Sprintf("%s:%d COPY", label, in.Line))
					continue
				}
				c, err := parseCopy(in, lookup, cfg.WorkingDir)
				if err != nil {
					return nil, fail(err)
				}
				p.Copies = append(p.Copies, c)
			case "RUN", "ADD":
				if final {
					return nil, fail(fmt.Errorf("the final stage cannot %s offline: move it into an earlier stage, whose filesystem --rootfs supplies", in.Cmd))
				}
				p.Covered = append(p.Covered, fmt.Sprintf("%s:%d %s", label, in.Line, in.Cmd))
			default:
				return nil, fail(fmt.Errorf("not supported by the offline image writer (it understands ARG, ENV, LABEL, USER, WORKDIR, ENTRYPOINT, CMD, EXPOSE, STOPSIGNAL, SHELL and COPY; earlier stages may also RUN and ADD)"))
			}
		}
	}
	for k := range buildArgs {
		if !used[k] {
			p.UnusedBuildArgs = append(p.UnusedBuildArgs, k)
		}
	}
	sort.Strings(p.UnusedBuildArgs)
	return p, nil
}

// declareArgs handles one ARG instruction: NAME or NAME=default, several per line. A --build-arg wins over
// the default; a bare NAME in a stage takes the value of the global ARG of that name.
func declareArgs(in instruction, buildArgs, global map[string]string, globalSet map[string]bool,
	args map[string]string, argSet map[string]bool, used map[string]bool) error {
	lookup := func(n string) (string, bool) { v, ok := args[n]; return v, ok && argSet[n] }
	words, err := expandWords(in.Rest, lookup)
	if err != nil {
		return err
	}
	if len(words) == 0 {
		return fmt.Errorf("ARG needs a name")
	}
	for _, w := range words {
		name, def, hasDef := strings.Cut(w, "=")
		if !isName(name) {
			return fmt.Errorf("invalid ARG name %q", name)
		}
		if v, ok := buildArgs[name]; ok {
			args[name], argSet[name] = v, true
			used[name] = true
			continue
		}
		switch {
		case hasDef:
			args[name], argSet[name] = def, true
		case globalSet[name]:
			args[name], argSet[name] = global[name], true
		default:
			args[name], argSet[name] = "", false
		}
	}
	return nil
}

func isName(s string) bool {
	if s == "" || !isNameStart(rune(s[0])) {
		return false
	}
	for _, r := range s {
		if !isNameRune(r) {
			return false
		}
	}
	return true
}

// keyValues parses the KEY=VALUE pairs of ENV and LABEL. legacy allows ENV's old "ENV KEY VALUE" form.
func keyValues(rest string, lookup lookupFunc, legacy bool) ([][2]string, error) {
	words, err := expandWords(rest, lookup)
	if err != nil {
		return nil, err
	}
	if len(words) == 0 {
		return nil, fmt.Errorf("needs KEY=VALUE")
	}
	if legacy && !strings.Contains(words[0], "=") {
		if len(words) < 2 {
			return nil, fmt.Errorf("%q has no value", words[0])
		}
		return [][2]string{{words[0], strings.Join(words[1:], " ")}}, nil
	}
	var out [][2]string
	for _, w := range words {
		k, v, ok := strings.Cut(w, "=")
		if !ok || k == "" {
			return nil, fmt.Errorf("%q is not KEY=VALUE", w)
		}
		out = append(out, [2]string{k, v})
	}
	return out, nil
}

func setEnv(env []string, k, v string) []string {
	for i, kv := range env {
		if name, _, _ := strings.Cut(kv, "="); name == k {
			env[i] = k + "=" + v
			return env
		}
	}
	return append(env, k+"="+v)
}

func absPath(wd, p string) string {
	if !path.IsAbs(p) {
		if wd == "" {
			wd = "/"
		}
		p = path.Join(wd, p)
	}
	return path.Clean(p)
}

// commandLine is ENTRYPOINT's and CMD's argument: the JSON form as is, the shell form run by the shell.
func commandLine(rest string, shell []string) []string {
	if args, ok := execForm(rest); ok {
		return args
	}
	return append(append([]string{}, shell...), rest)
}

func parseCopy(in instruction, lookup lookupFunc, wd string) (copySpec, error) {
	c := copySpec{Line: in.Line, Text: "COPY " + flagText(in.Flags) + in.Rest}
	for f, v := range in.Flags {
		switch f {
		case "from":
			c.From = v
		case "chmod":
			m, err := strconv.ParseInt(v, 8, 32)
			if err != nil || m < 0 || m > 0o7777 {
				return c, fmt.Errorf("--chmod=%s: want an octal mode", v)
			}
			c.Mode = &m
		case "chown":
			u, g, hasG := strings.Cut(v, ":")
			uid, err := strconv.Atoi(u)
			if err != nil {
				return c, fmt.Errorf("--chown=%s: only numeric UID[:GID] is supported offline", v)
			}
			gid := uid
			if hasG {
				if gid, err = strconv.Atoi(g); err != nil {
					return c, fmt.Errorf("--chown=%s: only numeric UID[:GID] is supported offline", v)
				}
			}
			c.UID, c.GID = uid, gid
		case "link":
			// a layering hint for BuildKit; the result is the same
		default:
			return c, fmt.Errorf("--%s is not supported", f)
		}
	}
	words, ok := execForm(in.Rest)
	if !ok {
		var err error
		if words, err = expandWords(in.Rest, lookup); err != nil {
			return c, err
		}
	}
	if len(words) < 2 {
		return c, fmt.Errorf("needs at least one source and a destination")
	}
	c.Sources = words[:len(words)-1]
	dest := words[len(words)-1]
	c.DestIsDir = strings.HasSuffix(dest, "/") || len(c.Sources) > 1
	c.Dest = absPath(wd, dest)
	return c, nil
}

func flagText(flags map[string]string) string {
	keys := make([]string, 0, len(flags))
	for k := range flags {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	for _, k := range keys {
		fmt.Fprintf(&b, "--%s=%s ", k, flags[k])
	}
	return b.String()
}
