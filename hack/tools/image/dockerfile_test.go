package main

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func evalString(t *testing.T, text, target string, buildArgs map[string]string) (*buildPlan, error) {
	t.Helper()
	df, err := parseDockerfile("Dockerfile", strings.NewReader(text))
	if err != nil {
		return nil, err
	}
	return evaluate(df, target, buildArgs)
}

func TestExpandWords(t *testing.T) {
	vars := map[string]string{"A": "x y", "EMPTY": ""}
	lookup := func(n string) (string, bool) { v, ok := vars[n]; return v, ok }
	for in, want := range map[string][]string{
		`a b  c`:                 {"a", "b", "c"},
		`k="v 1" k2='$A'`:        {"k=v 1", "k2=$A"},
		`$A`:                     {"x y"},
		`${A}-z`:                 {"x y-z"},
		`"${A}"`:                 {"x y"},
		`${NOPE:-d}`:             {"d"},
		`${EMPTY:-d} ${EMPTY-d}`: {"d"},
		`${A:+set} ${NOPE:+set}`: {"set"},
		`a\ b \$A "\$A" "\x"`:    {"a b", "$A", "$A", `\x`},
		`$ $1`:                   {"$", "$1"},
	} {
		got, err := expandWords(in, lookup)
		if err != nil {
			t.Errorf("expandWords(%q): %v", in, err)
			continue
		}
		if d := cmp.Diff(want, got); d != "" {
			t.Errorf("expandWords(%q) (-want +got):\n%s", in, d)
		}
	}
	for _, bad := range []string{`"open`, `'open`, `${A`, `${A?x}`, `${}`} {
		if _, err := expandWords(bad, lookup); err == nil {
			t.Errorf("expandWords(%q) succeeded, want an error", bad)
		}
	}
}

// TestRepositoryDockerfile evaluates fabricmap's own Dockerfile as hack/image.sh does.
func TestRepositoryDockerfile(t *testing.T) {
	f, err := os.Open(filepath.Join("..", "..", "..", "Dockerfile"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	df, err := parseDockerfile("Dockerfile", f)
	if err != nil {
		t.Fatal(err)
	}
	p, err := evaluate(df, "", map[string]string{"VERSION": "1.2.3", "REVISION": "abc"})
	if err != nil {
		t.Fatal(err)
	}
	if p.Base != "debian:bookworm-slim" {
		t.Errorf("base %q, want debian:bookworm-slim", p.Base)
	}
	if len(p.UnusedBuildArgs) != 0 {
		t.Errorf("unused build args %v", p.UnusedBuildArgs)
	}
	c := p.Config
	if d := cmp.Diff(
		map[string]string{"user": "65532:65532", "version": "1.2.3", "revision": "abc", "workdir": "/"},
		map[string]string{"user": c.User, "version": c.Labels["org.opencontainers.image.version"],
			"revision": c.Labels["org.opencontainers.image.revision"], "workdir": c.WorkingDir},
	); d != "" {
		t.Errorf("config (-want +got):\n%s", d)
	}
	if c.Labels["org.opencontainers.image.source"] == "" {
		t.Error("no org.opencontainers.image.source label")
	}
	// The binaries into /usr/local/bin/, and the LICENSE beside the image's docs.
	type dest struct {
		Dest  string
		IsDir bool
	}
	var got []dest
	for _, c := range p.Copies {
		got = append(got, dest{c.Dest, c.DestIsDir})
	}
	if d := cmp.Diff([]dest{{"/usr/local/bin", true}, {"/usr/share/doc/fabricmap/LICENSE", false}}, got); d != "" {
		t.Errorf("final-stage copies (-want +got):\n%s", d)
	}
}

func TestEvaluate(t *testing.T) {
	const text = `# syntax=docker/dockerfile:1
ARG BASE=debian:bookworm-slim
FROM ${BASE} AS base
ENV A=1 \
    # a comment inside a continuation
    B="two words"
CMD ["base-cmd"]
RUN echo covered

FROM base AS final
ARG V=dev
ARG BASE
LABEL v=$V from=${BASE} b="$B"
ENV PATH=/bin A=${A}x
WORKDIR /srv
WORKDIR sub
USER 1000
ENTRYPOINT ["/app"]
EXPOSE 8080 53/udp
COPY --chmod=0755 --chown=10:20 app rel/
`
	p, err := evalString(t, text, "", map[string]string{"V": "9"})
	if err != nil {
		t.Fatal(err)
	}
	want := imageConfig{
		User:         "1000",
		Env:          []string{"A=1x", "B=two words", "PATH=/bin"},
		WorkingDir:   "/srv/sub",
		Entrypoint:   []string{"/app"},
		Cmd:          nil, // ENTRYPOINT drops the CMD inherited from stage base
		Labels:       map[string]string{"v": "9", "from": "debian:bookworm-slim", "b": "two words"},
		ExposedPorts: []string{"8080/tcp", "53/udp"},
	}
	if d := cmp.Diff(want, p.Config); d != "" {
		t.Errorf("config (-want +got):\n%s", d)
	}
	if d := cmp.Diff([]string{"base", "final"}, p.Stages); d != "" {
		t.Errorf("stages (-want +got):\n%s", d)
	}
	if len(p.Covered) != 1 || !strings.Contains(p.Covered[0], "RUN") {
		t.Errorf("covered %v, want the RUN of stage base", p.Covered)
	}
	mode := int64(0o755)
	wantCopy := copySpec{Line: 20, Sources: []string{"app"}, Dest: "/srv/sub/rel", DestIsDir: true, Mode: &mode, UID: 10, GID: 20,
		Text: "COPY --chmod=0755 --chown=10:20 app rel/"}
	if d := cmp.Diff([]copySpec{wantCopy}, p.Copies); d != "" {
		t.Errorf("copies (-want +got):\n%s", d)
	}

	// A target stage, and CMD after ENTRYPOINT in one stage.
	p, err = evalString(t, "FROM scratch AS a\nCMD [\"x\"]\nENTRYPOINT [\"e\"]\nFROM a\n", "a", nil)
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff([]string{"x"}, p.Config.Cmd); d != "" {
		t.Errorf("CMD set before ENTRYPOINT in the same stage is kept (-want +got):\n%s", d)
	}
	p, err = evalString(t, "FROM scratch\nCMD echo hi\n", "", nil)
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff([]string{"/bin/sh", "-c", "echo hi"}, p.Config.Cmd); d != "" {
		t.Errorf("shell-form CMD (-want +got):\n%s", d)
	}
}

func TestEvaluateRefuses(t *testing.T) {
	for name, text := range map[string]string{
		"RUN in final":      "FROM debian\nRUN true\n",
		"ADD in final":      "FROM debian\nADD x /x\n",
		"VOLUME":            "FROM debian\nVOLUME /data\n",
		"HEALTHCHECK":       "FROM debian\nHEALTHCHECK NONE\n",
		"ONBUILD in base":   "FROM debian AS b\nONBUILD RUN x\nFROM b\n",
		"unknown flag":      "FROM debian\nCOPY --exclude=x a /a\n",
		"named chown":       "FROM debian\nCOPY --chown=app a /a\n",
		"heredoc":           "FROM debian AS b\nRUN <<EOF\necho\nEOF\nFROM b\n",
		"instruction first": "LABEL a=b\nFROM debian\n",
		"no FROM":           "ARG A=1\n",
		"escape directive":  "# escape=`\nFROM debian\n",
		"bad ENV":           "FROM debian\nENV =x\n",
		"empty USER":        "FROM debian\nUSER \"\"\n",
		"bad substitution":  "FROM debian\nLABEL a=${B\n",
	} {
		if _, err := evalString(t, text, "", nil); err == nil {
			t.Errorf("%s: evaluated, want an error", name)
		} else {
			var pe *ParseError
			var ee *EvalError
			if !errors.As(err, &pe) && !errors.As(err, &ee) {
				t.Errorf("%s: error %v names no line (%T)", name, err, err)
			}
		}
	}
	if _, err := evalString(t, "FROM debian\n", "nope", nil); err == nil {
		t.Error("an unknown --target was accepted")
	}
}

func TestMatchAdds(t *testing.T) {
	copies := []copySpec{
		{Line: 3, Dest: "/usr/local/bin", DestIsDir: true, Text: "COPY out/ /usr/local/bin/"},
		{Line: 4, Dest: "/pause", Text: "COPY pause /pause", UID: 1, GID: 2},
	}
	adds, err := matchAdds("Dockerfile", []string{"b/x=/usr/local/bin/", "b/pause=/pause"}, copies)
	if err != nil {
		t.Fatal(err)
	}
	want := []addFile{{Src: "b/x", Dest: "/usr/local/bin/x"}, {Src: "b/pause", Dest: "/pause", UID: 1, GID: 2}}
	if d := cmp.Diff(want, adds); d != "" {
		t.Errorf("adds (-want +got):\n%s", d)
	}
	for name, specs := range map[string][]string{
		"uncovered add":  {"b/x=/usr/local/bin/", "b/pause=/pause", "b/y=/etc/y"},
		"uncovered copy": {"b/x=/usr/local/bin/x"},
		"relative dest":  {"b/x=usr/local/bin/x", "b/pause=/pause"},
		"duplicate dest": {"b/x=/usr/local/bin/", "a/x=/usr/local/bin/", "b/pause=/pause"},
		"not SRC=DEST":   {"b/x"},
	} {
		if _, err := matchAdds("Dockerfile", specs, copies); err == nil {
			t.Errorf("%s: matched, want an error", name)
		}
	}
}
