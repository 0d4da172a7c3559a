// Command docs writes the flag tables of docs/*.md from the binaries' own --help output (`make docs`), or
// checks that they are current (`make verify-docs`, part of `make test`).
//
// It builds fabricmap-agent, fabricmap-aggregator, fabricmap-placer and fabricmap into a temporary folder,
// runs each with --help in a bare environment (so $POD_NAMESPACE, $NODE_NAME or a kubeconfig of the machine
// never leak into a default), and, for the CLI, walks cobra's "Available Commands" down to every subcommand.
// In every page under docs/, the text between
//
//	<!-- flags:begin NAME -->
//	<!-- flags:end -->
//
// is replaced by the tables for NAME (a binary, or a CLI command such as "fabricmap get nodes"); the prose
// around the markers is left as written. A CLI command with no block anywhere gets a new section at the end
// of docs/cli.md, so a new subcommand is never missed. A block naming something no --help lists is an error.
//
// It also looks for --flags mentioned in the hand-written prose of README.md and docs/*.md that no binary
// lists (a renamed flag the prose still names): a warning, or with -check an error.
//
// Run from the repository root: go run ./hack/tools/docs [-check]. Needs no network (the module's
// dependencies are those of the build).
package main

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
)

// binaries are documented one page each; the CLI's subcommands are found from its help.
var binaries = []string{"fabricmap-agent", "fabricmap-aggregator", "fabricmap-placer", "fabricmap"}

const cli = "fabricmap"

// skipCommands are cobra's own commands: they take no flags of fabricmap's.
var skipCommands = map[string]bool{"help": true, "completion": true}

// foreignFlags are flags of other tools (helm, kubectl, docker, git, aws, eksctl, gcloud, sbatch, krew, the
// Kubernetes components, Volcano) that the prose may name.
var foreignFlags = map[string]bool{
	"set": true, "set-file": true, "create-namespace": true, "from-literal": true, "from-file": true,
	"overwrite": true, "field-selector": true, "build-arg": true, "porcelain": true, "namespace": true,
	"reuse-values": true, "take-ownership": true, "set-string": true, "no-hooks": true, "server-side": true, "dry-run": true,
	// eksctl and gcloud, in docs/clouds.md
	"cluster-name": true, "service-account": true, "role-arn": true, "role": true, "member": true,
	// sbatch, in docs/slurm.md
	"switches": true, "segment": true,
	// kubectl krew, in README.md
	"manifest": true, "archive": true, "manifest-url": true,
	// kubectl, kube-apiserver and kube-scheduler (Kubernetes 1.36's gates), Volcano's controller-manager, in docs/schedulers.md
	"api-group": true, "feature-gates": true, "runtime-config": true, "controllers": true,
}

// help is one parsed --help output.
type help struct {
	name        string   // "fabricmap-agent", "fabricmap get nodes"
	description string   // the text before "Usage:"
	usage       []string // the lines under "Usage:"
	aliases     string
	commands    []string // "Available Commands", without cobra's own
	env         [][2]string
	flags       []flagRow
	global      []flagRow
}

type flagRow struct {
	short, long, typ, def, meaning string
}

func main() {
	check := flag.Bool("check", false, "write nothing; fail when a page is not what the binaries' --help gives, or the prose names a flag no binary has")
	binDir := flag.String("bin", "", "run the binaries in this folder instead of building them from ./cmd")
	flag.Parse()
	if err := run(*check, *binDir); err != nil {
		fmt.Fprintln(os.Stderr, "docs:", err)
		os.Exit(1)
	}
}

func run(check bool, binDir string) error {
	if _, err := os.Stat("go.mod"); err != nil {
		return errors.New("run from the repository root (go run ./hack/tools/docs)")
	}
	tmp, err := os.MkdirTemp("", "fabricmap-docs-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	args := []string{"build", "-o", tmp + string(os.PathSeparator)}
	for _, b := range binaries {
		args = append(args, "./cmd/"+b)
	}
	if binDir == "" {
		build := exec.Command("go", args...)
		build.Stdout, build.Stderr = os.Stderr, os.Stderr
		if err := build.Run(); err != nil {
			return fmt.Errorf("go build: %w", err)
		}
	} else {
		for _, b := range binaries {
			if err := copyFile(filepath.Join(binDir, b), filepath.Join(tmp, b)); err != nil {
				return err
			}
		}
	}

	helps := map[string]*help{}
	var cliOrder []string // the CLI's commands, depth first, as its help lists them
	for _, b := range binaries {
		h, err := runHelp(tmp, b, nil)
		if err != nil {
			return err
		}
		helps[b] = h
	}
	var walk func(path []string) error
	walk = func(path []string) error {
		h := helps[strings.Join(append([]string{cli}, path...), " ")]
		cliOrder = append(cliOrder, h.name)
		for _, c := range h.commands {
			sub := append(append([]string{}, path...), c)
			sh, err := runHelp(tmp, cli, sub)
			if err != nil {
				return err
			}
			helps[sh.name] = sh
			if err := walk(sub); err != nil {
				return err
			}
		}
		return nil
	}
	if err := walk(nil); err != nil {
		return err
	}

	pages, err := filepath.Glob("docs/*.md")
	if err != nil {
		return err
	}
	sort.Strings(pages)
	used := map[string]bool{}
	want := map[string][]byte{}
	for _, p := range pages {
		old, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		out, names, err := fill(p, old, helps)
		if err != nil {
			return err
		}
		if out, err = fillRegistries(p, out); err != nil {
			return err
		}
		for _, n := range names {
			used[n] = true
		}
		want[p] = out
	}
	for _, b := range binaries[:3] {
		if !used[b] {
			return fmt.Errorf("no page has a flags block for %s: add <!-- flags:begin %s --> and <!-- flags:end --> to its page", b, b)
		}
	}
	cliPage := filepath.Join("docs", "cli.md")
	for _, n := range cliOrder {
		h := helps[n]
		if used[n] || (len(h.commands) > 0 && !hasOwnFlags(h)) { // a group such as "fabricmap get": its subcommands have the flags
			continue
		}
		fmt.Fprintf(os.Stderr, "docs: %s has no flags block: adding a section for it at the end of %s (describe it there)\n", n, cliPage)
		var b bytes.Buffer
		b.Write(bytes.TrimRight(want[cliPage], "\n"))
		fmt.Fprintf(&b, "\n\n## `%s`\n\n%s\n\n%s%s\n%s\n", n, h.description, beginMarker(n), block(h), endMarker)
		want[cliPage] = b.Bytes()
	}

	known := map[string]bool{}
	for _, h := range helps {
		for _, f := range append(h.flags, h.global...) {
			known[f.long] = true
		}
	}
	known["help"] = true
	var unknown []string
	for _, p := range append([]string{"README.md"}, pages...) {
		text := want[p]
		if text == nil {
			if text, err = os.ReadFile(p); err != nil {
				return err
			}
		}
		for _, m := range proseFlags(text) {
			if !known[m] && !foreignFlags[m] {
				unknown = append(unknown, fmt.Sprintf("%s: --%s is named in the prose but no binary's --help lists it", p, m))
			}
		}
	}

	var stale []string
	for _, p := range sortedKeys(want) {
		old, err := os.ReadFile(p)
		if err != nil && !errors.Is(err, os.ErrNotExist) {
			return err
		}
		if bytes.Equal(old, want[p]) {
			continue
		}
		stale = append(stale, p)
		if !check {
			if err := os.WriteFile(p, want[p], 0o644); err != nil {
				return err
			}
			fmt.Fprintln(os.Stderr, "docs: wrote", p)
		}
	}
	for _, u := range unknown {
		fmt.Fprintln(os.Stderr, "docs:", u)
	}
	if check {
		var msgs []string
		if len(stale) > 0 {
			msgs = append(msgs, fmt.Sprintf("the flag tables in %s are stale: run 'make docs' and commit the result", strings.Join(stale, ", ")))
		}
		if len(unknown) > 0 {
			msgs = append(msgs, fmt.Sprintf("%d flag(s) named in the prose exist nowhere (above): correct the prose", len(unknown)))
		}
		if len(msgs) > 0 {
			return errors.New(strings.Join(msgs, "; "))
		}
		fmt.Fprintln(os.Stderr, "docs: every flag table is current")
	}
	return nil
}

func hasOwnFlags(h *help) bool {
	for _, f := range h.flags {
		if f.long != "help" {
			return true
		}
	}
	return false
}

func sortedKeys(m map[string][]byte) []string {
	var ks []string
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}

// runHelp runs a binary (and CLI subcommand) with --help in a bare environment and parses what it prints.
func runHelp(dir, bin string, sub []string) (*help, error) {
	name := strings.Join(append([]string{bin}, sub...), " ")
	home := filepath.Join(dir, "home")
	cmd := exec.Command(filepath.Join(dir, bin), append(append([]string{}, sub...), "--help")...)
	cmd.Env = []string{"PATH=/usr/bin:/bin", "HOME=" + home, "LC_ALL=C", "KUBECONFIG=" + filepath.Join(home, "none")}
	cmd.Dir = dir
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	text := out.String()
	if !strings.Contains(text, "Usage:") {
		return nil, fmt.Errorf("%s --help printed no usage (%v):\n%s", name, err, text)
	}
	h := parse(text)
	h.name = name
	// The Kubeconfig environment above is only there to keep the machine's own out; no default may show it.
	if strings.Contains(text, home) {
		return nil, fmt.Errorf("%s --help shows a path of the generator's environment (%s): a default taken from the environment", name, home)
	}
	return h, nil
}

var (
	envLine = regexp.MustCompile(`^\s+([A-Z][A-Z0-9_]*)\s{2,}(.*)$`)
	cmdLine = regexp.MustCompile(`^\s+(\S+)\s{2,}(.*)$`)
)

// parseFlag reads one pflag line, "-o, --output string   usage": the type is what stands between the name and
// the first run of two spaces (pflag's type name, or a `backquoted` word of the usage, which may hold spaces).
func parseFlag(line string) (flagRow, bool) {
	var r flagRow
	if len(line) > 4 && line[0] == '-' && line[1] != '-' && line[2:4] == ", " {
		r.short, line = line[1:2], line[4:]
	}
	if !strings.HasPrefix(line, "--") {
		return r, false
	}
	line = line[2:]
	name, rest, _ := strings.Cut(line, " ")
	if name == "" {
		return r, false
	}
	r.long = name
	if i := strings.Index(rest, "  "); i >= 0 {
		r.typ, r.meaning = strings.TrimSpace(rest[:i]), strings.TrimSpace(rest[i:])
	} else {
		r.typ = strings.TrimSpace(rest) // a flag without usage
	}
	return r, true
}

// headers are the section titles of pflag's and cobra's help (fabricmap's binaries add Environment).
var headers = map[string]bool{"Usage:": true, "Aliases:": true, "Examples:": true, "Available Commands:": true,
	"Flags:": true, "Global Flags:": true, "Environment:": true, "Additional help topics:": true}

func parse(text string) *help {
	h := &help{}
	section := "description"
	var desc []string
	var last *[]flagRow
	for _, line := range strings.Split(strings.ReplaceAll(text, "\r", ""), "\n") {
		trimmed := strings.TrimSpace(line)
		if !strings.HasPrefix(line, " ") && trimmed != "" {
			if headers[trimmed] {
				section = strings.TrimSuffix(trimmed, ":")
				last = nil
				continue
			}
			if section != "description" { // cobra's closing "Use ... for more information"
				section = "trailer"
			}
		}
		if trimmed == "" {
			continue
		}
		switch section {
		case "description":
			desc = append(desc, trimmed)
		case "Usage":
			h.usage = append(h.usage, trimmed)
		case "Aliases":
			h.aliases = trimmed
		case "Available Commands":
			if m := cmdLine.FindStringSubmatch(line); m != nil && !skipCommands[m[1]] {
				h.commands = append(h.commands, m[1])
			}
		case "Environment":
			if m := envLine.FindStringSubmatch(line); m != nil {
				h.env = append(h.env, [2]string{m[1], m[2]})
			} else if len(h.env) > 0 {
				h.env[len(h.env)-1][1] += " " + trimmed
			}
		case "Flags", "Global Flags":
			rows := &h.flags
			if section == "Global Flags" {
				rows = &h.global
			}
			if r, ok := parseFlag(trimmed); ok {
				*rows = append(*rows, r)
				last = rows
			} else if last != nil && len(*last) > 0 { // a usage of several lines
				r := &(*last)[len(*last)-1]
				r.meaning = strings.TrimSpace(r.meaning + " " + trimmed)
			}
		}
	}
	h.description = strings.Join(desc, " ")
	for _, rows := range []*[]flagRow{&h.flags, &h.global} {
		for i := range *rows {
			r := &(*rows)[i]
			r.meaning, r.def = splitDefault(r.meaning)
			if r.typ == "" {
				r.typ = "bool"
			}
		}
	}
	return h
}

// splitDefault takes pflag's trailing "(default X)" (or a usage's own "(default: X)") off a usage.
func splitDefault(usage string) (meaning, def string) {
	usage = strings.TrimSpace(usage)
	if !strings.HasSuffix(usage, ")") {
		return usage, ""
	}
	depth, quoted := 0, false
	for i := len(usage) - 1; i >= 0; i-- {
		switch usage[i] {
		case '"':
			quoted = !quoted
		case ')':
			if !quoted {
				depth++
			}
		case '(':
			if quoted {
				continue
			}
			if depth--; depth > 0 {
				continue
			}
			group := usage[i+1 : len(usage)-1]
			for _, p := range []string{"default: ", "default "} {
				if strings.HasPrefix(group, p) {
					d := strings.TrimPrefix(group, p)
					if len(d) >= 2 && d[0] == '"' && d[len(d)-1] == '"' {
						d = d[1 : len(d)-1]
						if d == "" {
							d = `""`
						}
					}
					return strings.TrimSpace(usage[:i]), d
				}
			}
			return usage, ""
		}
	}
	return usage, ""
}

const endMarker = "<!-- flags:end -->"

func beginMarker(name string) string {
	return "<!-- flags:begin " + name + " -->\n<!-- generated by `make docs` from `" + name + " --help`: edit the binary, not this table -->\n"
}

var beginRE = regexp.MustCompile(`(?m)^<!-- flags:begin ([^>]*?) -->\n`)

// fill replaces every flags block of a page; it returns the new page and the names of its blocks.
func fill(page string, text []byte, helps map[string]*help) ([]byte, []string, error) {
	var out bytes.Buffer
	var names []string
	rest := text
	for {
		loc := beginRE.FindSubmatchIndex(rest)
		if loc == nil {
			out.Write(rest)
			return out.Bytes(), names, nil
		}
		name := strings.Join(strings.Fields(string(rest[loc[2]:loc[3]])), " ")
		h, ok := helps[name]
		if !ok {
			return nil, nil, fmt.Errorf("%s: a flags block for %q, which no --help lists (renamed or removed? fix the page)", page, name)
		}
		end := bytes.Index(rest[loc[1]:], []byte(endMarker))
		if end < 0 {
			return nil, nil, fmt.Errorf("%s: the flags block for %q has no %s", page, name, endMarker)
		}
		out.Write(rest[:loc[0]])
		out.WriteString(beginMarker(name))
		out.WriteString(block(h))
		out.WriteString(endMarker)
		rest = rest[loc[1]+end+len(endMarker):]
		names = append(names, name)
	}
}

// block is the generated text for one binary or command.
func block(h *help) string {
	var b strings.Builder
	if strings.Contains(h.name, " ") || h.name == cli { // a CLI command: how to call it
		for _, u := range h.usage {
			fmt.Fprintf(&b, "Usage: `%s`", u)
			b.WriteString("\n")
		}
		if h.aliases != "" {
			fmt.Fprintf(&b, "\nAliases: `%s`\n", strings.Join(strings.Fields(strings.ReplaceAll(h.aliases, ",", " ")), "`, `"))
		}
		b.WriteString("\n")
	}
	if len(h.env) > 0 {
		b.WriteString("| environment | meaning |\n| --- | --- |\n")
		for _, e := range h.env {
			fmt.Fprintf(&b, "| `%s` | %s |\n", e[0], cell(e[1]))
		}
		b.WriteString("\n")
	}
	table(&b, h.flags)
	if len(h.global) > 0 { // cobra's persistent flags of the parents: in the table of the command that defines them
		var names []string
		for _, f := range h.global {
			names = append(names, "`--"+f.long+"`")
		}
		what := "flag"
		if len(names) > 1 {
			what = "flags"
		}
		fmt.Fprintf(&b, "It also takes the global %s %s.\n\n", what, strings.Join(names, ", "))
	}
	return b.String()
}

func table(b *strings.Builder, rows []flagRow) {
	var kept []flagRow
	for _, r := range rows {
		if r.long != "help" {
			kept = append(kept, r)
		}
	}
	if len(kept) == 0 {
		b.WriteString("No flags of its own (`--help` aside).\n\n")
		return
	}
	b.WriteString("| flag | type | default | meaning |\n| --- | --- | --- | --- |\n")
	for _, r := range kept {
		name := "`--" + r.long + "`"
		if r.short != "" {
			name = "`-" + r.short + "`, " + name
		}
		def := ""
		if r.def != "" {
			def = code(r.def)
		} else if r.typ == "bool" { // pflag leaves out a zero default
			def = "`false`"
		}
		fmt.Fprintf(b, "| %s | %s | %s | %s |\n", name, r.typ, def, cell(r.meaning))
	}
	b.WriteString("\n")
}

// cell escapes text for a Markdown table cell, keeping `code` spans as they are.
func cell(s string) string {
	parts := strings.Split(s, "`")
	for i := range parts {
		if i%2 == 1 && len(parts)%2 == 1 { // inside a code span
			parts[i] = strings.ReplaceAll(parts[i], "|", `\|`)
			continue
		}
		r := strings.NewReplacer("|", `\|`, "*", `\*`, "_", `\_`, "<", "&lt;", ">", "&gt;", "[", `\[`, "]", `\]`)
		parts[i] = r.Replace(parts[i])
	}
	return strings.Join(parts, "`")
}

func code(s string) string {
	s = strings.ReplaceAll(s, "|", `\|`)
	if strings.Contains(s, "`") {
		return "``" + s + "``"
	}
	return "`" + s + "`"
}

var proseFlagRE = regexp.MustCompile("(?:^|[^A-Za-z0-9_-])--([a-z0-9][a-z0-9-]*[a-z0-9])(-?\\*)?")

// proseFlags lists the --flags a page names outside its generated blocks.
func proseFlags(text []byte) []string {
	var prose bytes.Buffer
	rest := text
	for {
		loc := beginRE.FindIndex(rest)
		if loc == nil {
			prose.Write(rest)
			break
		}
		prose.Write(rest[:loc[0]])
		end := bytes.Index(rest[loc[1]:], []byte(endMarker))
		if end < 0 {
			break
		}
		rest = rest[loc[1]+end+len(endMarker):]
	}
	seen := map[string]bool{}
	var out []string
	for _, m := range proseFlagRE.FindAllStringSubmatch(prose.String(), -1) {
		if m[2] != "" || seen[m[1]] { // --ufm-* names a family, not a flag
			continue
		}
		seen[m[1]] = true
		out = append(out, m[1])
	}
	return out
}

func copyFile(from, to string) error {
	b, err := os.ReadFile(from)
	if err != nil {
		return err
	}
	return os.WriteFile(to, b, 0o755)
}
