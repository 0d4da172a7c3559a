// Package ufmtest is the one stand-in for NVIDIA UFM's REST API that tests and the demo serve on 127.0.0.1: the
// resources fabricmap reads (systems, links, ports), behind basic authentication under /ufmRest, as UFM
// answers them.
package ufmtest

import (
	"errors"
	"fmt"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"strings"

	"github.com/fabricmap/fabricmap/sources/ufm"
)

// resourcesPrefix is where UFM serves its resources to basic authentication.
const resourcesPrefix = "/ufmRest/resources/"

// Answers are UFM's answers by resource: "systems", "links", "ports" → the JSON body.
type Answers map[string][]byte

// DumpAnswers reads the answers saved in a dump folder (ufm.DumpSystemsFile, ufm.DumpLinksFile,
// ufm.DumpPortsFile). A file the dump does not hold is not answered (404), as a UFM without that resource;
// systems.json and links.json must be there.
func DumpAnswers(dir string) (Answers, error) {
	a := Answers{}
	for resource, file := range map[string]string{"systems": ufm.DumpSystemsFile, "links": ufm.DumpLinksFile, "ports": ufm.DumpPortsFile} {
		b, err := os.ReadFile(filepath.Join(dir, file))
		switch {
		case errors.Is(err, fs.ErrNotExist) && resource == "ports":
			continue
		case err != nil:
			return nil, fmt.Errorf("the UFM dump to serve: %w", err)
		}
		a[resource] = b
	}
	return a, nil
}

// Handler answers GET /ufmRest/resources/<resource> from answers for the user and password given (401
// otherwise, 404 for a resource answers does not hold), with UFM's content type.
func Handler(user, password string, answers Answers) http.Handler {
	return HandlerFor(func(u, p string) bool { return u == user && p == password }, answers)
}

// HandlerFor is Handler with the credentials checked by accept, which a test may change while UFM serves (a
// rotated password).
func HandlerFor(accept func(user, password string) bool, answers Answers) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if u, p, ok := r.BasicAuth(); !ok || !accept(u, p) {
			http.Error(w, "Unauthorized", http.StatusUnauthorized)
			return
		}
		resource, ok := strings.CutPrefix(r.URL.Path, resourcesPrefix)
		body, known := answers[resource]
		if !ok || !known {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(body)
	})
}
