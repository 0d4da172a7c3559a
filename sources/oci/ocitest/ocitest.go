// Package ocitest is the one stand-in for OCI's Core Services API that tests and the demo serve on 127.0.0.1
// (httptest.NewServer): ListComputeHosts, GET /20160918/computeHosts, the one call the OCI source makes,
// answered from a fixture of compute hosts as OCI answers it: a ComputeHostCollection in JSON, paged with the
// opc-next-page header and the page query parameter, errors as OCI's {"code","message"} body, throttling
// (429 TooManyRequests) and other errors on demand. Requests must be signed as the SDK signs them (an
// authorization header "Signature version=\"1\",keyId=...,signature=..."); with a Key set, the signature is
// verified.
package ocitest

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync"
)

// Path is where the API serves ListComputeHosts: the Core Services API version and the resource.
const Path = "/20160918/computeHosts"

// DefaultPageSize is how many hosts a page holds when the API's PageSize is zero and the request gives no limit.
const DefaultPageSize = 100

// maxLimit is the largest limit the stand-in accepts.
const maxLimit = 1000

// Host is one compute host of the fixture. The IDs are OCIDs (see OCID); empty ones are left out of the
// answer, as OCI leaves them out for a host without that placement or without an instance.
type Host struct {
	// ID is the compute host's OCID.
	ID string
	// InstanceID is the OCID of the instance on the host; empty: no instance (an available host).
	InstanceID string
	// Shape is the host's shape, e.g. BM.GPU.GB200.4 or BM.GPU.H100.8.
	Shape string
	// AvailabilityDomain is the host's availability domain; "Uocm:US-ASHBURN-AD-1" when empty.
	AvailabilityDomain string
	// HPCIsland, NetworkBlock and LocalBlock are the host's network placement, top first.
	HPCIsland, NetworkBlock, LocalBlock string
	// GPUMemoryFabric is the host's GPU memory fabric (its NVLink domain on GB200 and GB300 shapes).
	GPUMemoryFabric string
	// DisplayName is the host's display name.
	DisplayName string
}

// hostJSON is a ComputeHostSummary as the API writes it (the members the API reference lists as required,
// and the optional ones a Host gives).
type hostJSON struct {
	AvailabilityDomain    string `json:"availabilityDomain"`
	CompartmentID         string `json:"compartmentId"`
	ID                    string `json:"id"`
	FaultDomain           string `json:"faultDomain"`
	Shape                 string `json:"shape"`
	Health                string `json:"health"`
	LifecycleState        string `json:"lifecycleState"`
	HasImpactedComponents bool   `json:"hasImpactedComponents"`
	TimeCreated           string `json:"timeCreated"`
	TimeUpdated           string `json:"timeUpdated"`
	HPCIslandID           string `json:"hpcIslandId,omitempty"`
	NetworkBlockID        string `json:"networkBlockId,omitempty"`
	LocalBlockID          string `json:"localBlockId,omitempty"`
	GPUMemoryFabricID     string `json:"gpuMemoryFabricId,omitempty"`
	InstanceID            string `json:"instanceId,omitempty"`
	DisplayName           string `json:"displayName,omitempty"`
}

// Request is what one request to ListComputeHosts asked: the query parameters the source sets.
type Request struct {
	// Compartment, Page, Limit and InSubtree are the compartmentId, page, limit and computeHostInSubtree
	// query parameters ("" when absent).
	Compartment, Page, Limit, InSubtree string
}

// API serves ListComputeHosts for one compartment. Set its fields before it serves; SetHosts, Throttle and
// Fail may be called while it serves. It is safe for concurrent use.
type API struct {
	// Compartment is the compartment OCID the hosts are in; a request for another is answered 404
	// NotAuthorizedOrNotFound, as OCI answers a compartment the caller may not see.
	Compartment string
	// PageSize is the most hosts one page holds (a smaller limit in the request wins); DefaultPageSize when zero.
	PageSize int
	// Key, when set, is the only key whose signatures are accepted, and each signature is verified.
	Key *Key
	// Padding is the bytes of a member the SDK does not know added to every page (0: none), written as it is
	// sent: a hostile or broken endpoint's huge page.
	Padding int
	// RepeatTokens makes a page asked for with a page token answer that same token as its next one, as a
	// broken endpoint would: paging never ends.
	RepeatTokens bool

	mu       sync.Mutex
	hosts    []Host
	failures []failure
	requests []Request
}

// failure is an error answer queued for the next request.
type failure struct {
	status  int
	code    string
	message string
}

// New returns an API serving hosts in compartment.
func New(compartment string, hosts []Host) *API {
	return &API{Compartment: compartment, hosts: hosts}
}

// SetHosts replaces the hosts the API serves.
func (a *API) SetHosts(hosts []Host) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.hosts = hosts
}

// Throttle answers the next n requests 429 TooManyRequests, as OCI throttles.
func (a *API) Throttle(n int) {
	a.Fail(n, http.StatusTooManyRequests, "TooManyRequests")
}

// Fail answers the next n requests with status and OCI's error code (e.g. 500 InternalServerError, 404
// NotAuthorizedOrNotFound).
func (a *API) Fail(n, status int, code string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	for range n {
		a.failures = append(a.failures, failure{status: status, code: code, message: "ocitest: " + http.StatusText(status)})
	}
}

// Requests returns the requests served so far (the failed ones included), in order.
func (a *API) Requests() []Request {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([]Request(nil), a.requests...)
}

// ServeHTTP answers GET Path as ListComputeHosts does.
func (a *API) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	a.mu.Lock()
	a.requests = append(a.requests, Request{Compartment: q.Get("compartmentId"), Page: q.Get("page"), Limit: q.Get("limit"),
		InSubtree: q.Get("computeHostInSubtree")})
	n := len(a.requests)
	var fail *failure
	if len(a.failures) > 0 {
		fail = &a.failures[0]
		a.failures = a.failures[1:]
	}
	hosts := a.hosts
	a.mu.Unlock()

	w.Header().Set("opc-request-id", fmt.Sprintf("ocitest-%d", n))
	if err := verify(r, a.Key); err != nil {
		writeError(w, http.StatusUnauthorized, "NotAuthenticated", err.Error())
		return
	}
	if fail != nil {
		writeError(w, fail.status, fail.code, fail.message)
		return
	}
	if r.Method != http.MethodGet || r.URL.Path != Path {
		writeError(w, http.StatusNotFound, "NotAuthorizedOrNotFound", "ocitest serves GET "+Path+" only")
		return
	}
	switch c := q.Get("compartmentId"); {
	case c == "":
		writeError(w, http.StatusBadRequest, "MissingParameter", "compartmentId is required")
		return
	case c != a.Compartment:
		writeError(w, http.StatusNotFound, "NotAuthorizedOrNotFound", "compartment "+c+" not found or not authorized")
		return
	}
	from, err := parsePage(q.Get("page"), len(hosts))
	if err != nil {
		writeError(w, http.StatusBadRequest, "InvalidParameter", err.Error())
		return
	}
	size, err := a.pageSize(q.Get("limit"))
	if err != nil {
		writeError(w, http.StatusBadRequest, "InvalidParameter", err.Error())
		return
	}
	to := min(from+size, len(hosts))
	items := make([]hostJSON, 0, to-from)
	for _, h := range hosts[from:to] {
		items = append(items, a.wire(h))
	}
	if to < len(hosts) {
		w.Header().Set("opc-next-page", pageToken(to))
	}
	if p := q.Get("page"); p != "" && a.RepeatTokens {
		w.Header().Set("opc-next-page", p)
	}
	w.Header().Set("Content-Type", "application/json")
	if a.Padding == 0 {
		_ = json.NewEncoder(w).Encode(struct {
			Items []hostJSON `json:"items"`
		}{items})
		return
	}
	b, _ := json.Marshal(items)
	_, _ = w.Write([]byte(`{"padding":"`))
	chunk := []byte(strings.Repeat("x", 64<<10))
	for n := a.Padding; n > 0; n -= len(chunk) {
		if _, err := w.Write(chunk[:min(n, len(chunk))]); err != nil {
			return // the client hung up: what a client that refuses the answer does
		}
	}
	_, _ = w.Write([]byte(`","items":`))
	_, _ = w.Write(b)
	_, _ = w.Write([]byte("}"))
}

// pageSize is the page size for the request's limit parameter.
func (a *API) pageSize(limit string) (int, error) {
	size := a.PageSize
	if size <= 0 {
		size = DefaultPageSize
	}
	if limit == "" {
		return size, nil
	}
	l, err := strconv.Atoi(limit)
	if err != nil || l < 1 || l > maxLimit {
		return 0, fmt.Errorf("limit %q: want 1 to %d", limit, maxLimit)
	}
	return min(l, size), nil
}

// wire writes h as the API does.
func (a *API) wire(h Host) hostJSON {
	state := "AVAILABLE"
	if h.InstanceID != "" {
		state = "OCCUPIED"
	}
	ad := h.AvailabilityDomain
	if ad == "" {
		ad = "Uocm:US-ASHBURN-AD-1"
	}
	return hostJSON{
		AvailabilityDomain: ad, CompartmentID: a.Compartment, ID: h.ID, FaultDomain: "FAULT-DOMAIN-1", Shape: h.Shape,
		Health: "HEALTHY", LifecycleState: state, TimeCreated: "2025-06-02T10:00:00.000Z", TimeUpdated: "2025-06-02T10:00:00.000Z",
		HPCIslandID: h.HPCIsland, NetworkBlockID: h.NetworkBlock, LocalBlockID: h.LocalBlock, GPUMemoryFabricID: h.GPUMemoryFabric,
		InstanceID: h.InstanceID, DisplayName: h.DisplayName,
	}
}

// pagePrefix starts every page token before it is encoded; tokens are opaque to clients, as OCI's are.
const pagePrefix = "ocitest-offset-"

// pageToken is the opc-next-page value of the page that starts at offset.
func pageToken(offset int) string {
	return base64.RawURLEncoding.EncodeToString([]byte(pagePrefix + strconv.Itoa(offset)))
}

// parsePage returns the offset a page token stands for (0 for none).
func parsePage(token string, hosts int) (int, error) {
	if token == "" {
		return 0, nil
	}
	raw, err := base64.RawURLEncoding.DecodeString(token)
	rest, ok := strings.CutPrefix(string(raw), pagePrefix)
	offset, convErr := strconv.Atoi(rest)
	if err != nil || !ok || convErr != nil || offset < 0 || offset > hosts {
		return 0, fmt.Errorf("page %q is not a page token this API gave", token)
	}
	return offset, nil
}

// writeError writes OCI's error body.
func writeError(w http.ResponseWriter, status int, code, message string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(map[string]string{"code": code, "message": message})
}
