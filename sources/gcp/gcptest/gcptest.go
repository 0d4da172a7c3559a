// Package gcptest is the one stand-in for the Compute Engine API that tests and the demo serve on 127.0.0.1:
// instances.list of one project (GET {base}projects/{project}/zones/{zone}/instances, with maxResults and
// pageToken paging) answered from a small fixture of instances in Compute Engine's JSON, and Google's JSON
// errors (a throttle, a refusal) on demand, so that the real SDK runs against it.
package gcptest

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
)

// APIPrefix is the path under which the stand-in serves Compute Engine v1, as Google does.
const APIPrefix = "/compute/v1/"

// defaultPageSize is the page size when the request gives no maxResults, and the most it may ask for.
const defaultPageSize = 500

// Instance is one instance of the fixture.
type Instance struct {
	// Zone and Name identify the instance in its project.
	Zone, Name string
	// MachineType is the machine type's name, such as a4x-highgpu-4g.
	MachineType string
	// Cluster, Block, Subblock and Host are its resourceStatus.physicalHostTopology; all empty: none reported.
	Cluster, Block, Subblock, Host string
}

// Error is an error answer, as Google's JSON error body gives it.
type Error struct {
	// Code is the HTTP status.
	Code int
	// Status is the canonical status (RESOURCE_EXHAUSTED, PERMISSION_DENIED, …); empty: none given.
	Status string
	// Reason and Domain are the error's reason (rateLimitExceeded, forbidden, …) and domain (usageLimits, global).
	Reason, Domain string
	// Message is the human message.
	Message string
}

// Errors Compute Engine answers.
var (
	// RateLimited is Compute Engine's answer to a rate quota exceeded: 403 with the reason rateLimitExceeded.
	RateLimited = Error{Code: http.StatusForbidden, Reason: "rateLimitExceeded", Domain: "usageLimits", Message: "Rate Limit Exceeded"}
	// Exhausted is the 429 form of a quota exceeded.
	Exhausted = Error{Code: http.StatusTooManyRequests, Status: "RESOURCE_EXHAUSTED", Reason: "rateLimitExceeded", Domain: "usageLimits",
		Message: "Quota exceeded for quota metric 'List requests' and limit 'List requests per minute' of service 'compute.googleapis.com'"}
	// Forbidden is a caller without compute.instances.list on the project.
	Forbidden = Error{Code: http.StatusForbidden, Status: "PERMISSION_DENIED", Reason: "forbidden", Domain: "global",
		Message: "Required 'compute.instances.list' permission for 'projects/%s'"}
	// Unavailable is a server error worth asking again for.
	Unavailable = Error{Code: http.StatusServiceUnavailable, Status: "UNAVAILABLE", Reason: "backendError", Domain: "global", Message: "The service is currently unavailable."}
)

// API is the stand-in Compute Engine API of one project. Set its fields before serving; the methods may be
// called while it serves.
type API struct {
	// Project is the project's ID; other projects are not found (404).
	Project string
	// Zones are zones that exist besides those of Instances; other zones are not found (404).
	Zones []string
	// Instances are the project's instances.
	Instances []Instance
	// PageSize is the most instances one page holds, below the request's maxResults (0: maxResults alone).
	PageSize int

	// Padding is the bytes of a field the SDK does not know added to every page (0: none), written as it is
	// sent: a hostile or broken endpoint's huge page.
	Padding int
	// RepeatTokens makes a page asked for with a pageToken answer that same token as its next one, as a broken
	// endpoint would: paging never ends.
	RepeatTokens bool

	mu       sync.Mutex
	next     []Error // answered to the next requests, one each
	always   *Error  // answered to every request once next is used up
	requests []string
}

// Serve starts an HTTP server for a on 127.0.0.1, closed when the test ends, and returns the base URL the SDK
// takes (option.WithEndpoint, --gcp-endpoint): http://127.0.0.1:<port>/compute/v1/.
func Serve(t testing.TB, a *API) string {
	t.Helper()
	srv := httptest.NewServer(a) // listens on 127.0.0.1
	t.Cleanup(srv.Close)
	return srv.URL + APIPrefix
}

// Offline keeps Google's SDK off the network for the rest of the test: no Application Default Credentials
// from the environment or ~/.config/gcloud, and a metadata server (GCE_METADATA_HOST) on a closed port of
// 127.0.0.1, so that nothing ever asks 169.254.169.254; no client certificate either.
func Offline(t testing.TB) {
	t.Helper()
	t.Setenv("GOOGLE_APPLICATION_CREDENTIALS", "")
	t.Setenv("HOME", t.TempDir())
	t.Setenv("CLOUDSDK_CONFIG", t.TempDir())
	t.Setenv("GCE_METADATA_HOST", "127.0.0.1:1")
	t.Setenv("GCE_METADATA_IP", "127.0.0.1:1")
	t.Setenv("GOOGLE_API_USE_CLIENT_CERTIFICATE", "false")
	t.Setenv("GOOGLE_API_USE_MTLS_ENDPOINT", "never")
	t.Setenv("EXPERIMENTAL_GOOGLE_API_USE_S2A", "false")
}

// FailNext answers the next requests with errs, one each, before answering as usual again.
func (a *API) FailNext(errs ...Error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.next = append(a.next, errs...)
}

// FailAlways answers every request with e from now on; nil answers as usual again.
func (a *API) FailAlways(e *Error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.always = e
}

// Requests returns the requests served so far: method, path and query, in order.
func (a *API) Requests() []string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return slices.Clone(a.requests)
}

// failure returns the error to answer the request with, if any, and records it.
func (a *API) failure(r *http.Request) *Error {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.requests = append(a.requests, r.Method+" "+r.URL.RequestURI())
	if len(a.next) > 0 {
		e := a.next[0]
		a.next = a.next[1:]
		return &e
	}
	return a.always
}

// ServeHTTP answers GET {prefix}projects/{project}/zones/{zone}/instances.
func (a *API) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if e := a.failure(r); e != nil {
		writeError(w, *e, a.Project)
		return
	}
	rest, ok := strings.CutPrefix(r.URL.Path, APIPrefix)
	parts := strings.Split(rest, "/")
	if !ok || len(parts) != 5 || parts[0] != "projects" || parts[2] != "zones" || parts[4] != "instances" {
		writeError(w, Error{Code: http.StatusNotFound, Reason: "notFound", Domain: "global", Message: "The requested URL " + r.URL.Path + " was not found."}, "")
		return
	}
	if r.Method != http.MethodGet {
		writeError(w, Error{Code: http.StatusMethodNotAllowed, Reason: "httpMethodNotAllowed", Domain: "global", Message: "HTTP method " + r.Method + " is not supported by this URL"}, "")
		return
	}
	project, zone := parts[1], parts[3]
	if project != a.Project {
		writeError(w, notFound("projects/"+project), "")
		return
	}
	if !a.zoneExists(zone) {
		writeError(w, notFound("projects/"+project+"/zones/"+zone), "")
		return
	}
	size, start, e := a.page(r, zone)
	if e != nil {
		writeError(w, *e, "")
		return
	}
	a.writePage(w, r, zone, start, size)
}

// page reads maxResults and pageToken.
func (a *API) page(r *http.Request, zone string) (size, start int, e *Error) {
	q := r.URL.Query()
	size = defaultPageSize
	if v := q.Get("maxResults"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 || n > defaultPageSize {
			return 0, 0, invalid("maxResults", v)
		}
		if n > 0 {
			size = n
		}
	}
	if a.PageSize > 0 {
		size = min(size, a.PageSize)
	}
	if tok := q.Get("pageToken"); tok != "" {
		var ok bool
		if start, ok = readToken(tok, zone); !ok {
			return 0, 0, invalid("pageToken", tok)
		}
	}
	return size, start, nil
}

// writePage answers one page of the zone's instances, from start.
func (a *API) writePage(w http.ResponseWriter, r *http.Request, zone string, start, size int) {
	var inZone []Instance
	for _, in := range a.Instances {
		if in.Zone == zone {
			inZone = append(inZone, in)
		}
	}
	zoneURL := "https://www.googleapis.com/compute/v1/projects/" + a.Project + "/zones/" + zone
	list := map[string]any{"kind": "compute#instanceList", "id": "projects/" + a.Project + "/zones/" + zone + "/instances", "selfLink": zoneURL + "/instances"}
	var items []map[string]any
	end := min(start+size, len(inZone))
	for _, in := range inZone[min(start, end):end] {
		items = append(items, instanceJSON(in, zoneURL))
	}
	if items != nil {
		list["items"] = items
	}
	if end < len(inZone) {
		list["nextPageToken"] = writeToken(zone, end)
	}
	if tok := r.URL.Query().Get("pageToken"); tok != "" && a.RepeatTokens {
		list["nextPageToken"] = tok
	}
	w.Header().Set("Content-Type", "application/json; charset=UTF-8")
	if a.Padding == 0 {
		_ = json.NewEncoder(w).Encode(list)
		return
	}
	b, _ := json.Marshal(list)
	_, _ = w.Write([]byte(`{"padding":"`))
	chunk := []byte(strings.Repeat("x", 64<<10))
	for n := a.Padding; n > 0; n -= len(chunk) {
		if _, err := w.Write(chunk[:min(n, len(chunk))]); err != nil {
			return // the client hung up: what a client that refuses the answer does
		}
	}
	_, _ = w.Write([]byte(`",`))
	_, _ = w.Write(b[1:])
}

// instanceJSON is an instance as Compute Engine writes it.
func instanceJSON(in Instance, zoneURL string) map[string]any {
	h := fnv.New64a()
	_, _ = h.Write([]byte(in.Zone + "/" + in.Name))
	out := map[string]any{
		"kind": "compute#instance", "id": strconv.FormatUint(h.Sum64(), 10), "name": in.Name,
		"zone": zoneURL, "machineType": zoneURL + "/machineTypes/" + in.MachineType,
		"status": "RUNNING", "selfLink": zoneURL + "/instances/" + in.Name,
	}
	topo := map[string]string{}
	for k, v := range map[string]string{"cluster": in.Cluster, "block": in.Block, "subblock": in.Subblock, "host": in.Host} {
		if v != "" {
			topo[k] = v
		}
	}
	if len(topo) > 0 {
		out["resourceStatus"] = map[string]any{"physicalHostTopology": topo}
	}
	return out
}

func (a *API) zoneExists(zone string) bool {
	if slices.Contains(a.Zones, zone) {
		return true
	}
	return slices.ContainsFunc(a.Instances, func(in Instance) bool { return in.Zone == zone })
}

// writeToken and readToken make and read the opaque page tokens: the zone and the next instance's index.
func writeToken(zone string, next int) string {
	return base64.RawURLEncoding.EncodeToString([]byte(zone + "@" + strconv.Itoa(next)))
}

func readToken(tok, zone string) (int, bool) {
	b, err := base64.RawURLEncoding.DecodeString(tok)
	if err != nil {
		return 0, false
	}
	z, n, ok := strings.Cut(string(b), "@")
	next, err := strconv.Atoi(n)
	return next, ok && z == zone && err == nil && next >= 0
}

func notFound(resource string) Error {
	return Error{Code: http.StatusNotFound, Status: "NOT_FOUND", Reason: "notFound", Domain: "global", Message: "The resource '" + resource + "' was not found"}
}

func invalid(field, value string) *Error {
	return &Error{Code: http.StatusBadRequest, Status: "INVALID_ARGUMENT", Reason: "invalid", Domain: "global",
		Message: fmt.Sprintf("Invalid value for field '%s': '%s'.", field, value)}
}

// writeError answers e as Google's JSON error body; a message with %s gets the project.
func writeError(w http.ResponseWriter, e Error, project string) {
	msg := e.Message
	if strings.Contains(msg, "%s") {
		msg = fmt.Sprintf(msg, project)
	}
	body := map[string]any{"code": e.Code, "message": msg,
		"errors": []map[string]string{{"message": msg, "domain": e.Domain, "reason": e.Reason}}}
	if e.Status != "" {
		body["status"] = e.Status
	}
	w.Header().Set("Content-Type", "application/json; charset=UTF-8")
	w.WriteHeader(e.Code)
	_ = json.NewEncoder(w).Encode(map[string]any{"error": body})
}
