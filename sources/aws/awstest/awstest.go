// Package awstest is the stand-in for EC2's DescribeInstanceTopology that tests and the demo serve on
// 127.0.0.1: the EC2 query protocol (a form POST with Action and Version, an XML answer) for that one action,
// answered from a fixture of instances, with NextToken paging and modes that throttle or fail calls, so that
// the real AWS SDK runs against it.
package awstest

import (
	"encoding/xml"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Version is the EC2 API version the SDK sends.
const Version = "2016-11-15"

// DefaultPageSize is how many instances a page holds when the call gives no MaxResults (the API's default).
const DefaultPageSize = 20

// Instance is one instance the stand-in describes. An instance of a type without topology has no network node.
type Instance struct {
	// ID, Type, Zone, ZoneID, Group and CapacityBlock are instanceId, instanceType, availabilityZone, zoneId,
	// groupName and capacityBlockId (the last two left out of the answer when empty).
	ID, Type, Zone, ZoneID, Group, CapacityBlock string
	// NetworkNodes are the network nodes above the instance, top first.
	NetworkNodes []string
}

// ProviderID is the Kubernetes providerID of a Node on the instance: "aws:///<zone>/<id>".
func (i Instance) ProviderID() string { return "aws:///" + i.Zone + "/" + i.ID }

// Request is what one call asked, as the stand-in read it.
type Request struct {
	// InstanceIDs are the InstanceId.N parameters, in order.
	InstanceIDs []string
	// NextToken and MaxResults are the parameters as sent ("" when not).
	NextToken, MaxResults string
	// Region is the region of the signature's credential scope ("" when unsigned).
	Region string
}

// EC2 is the stand-in: an http.Handler (serve it with httptest.NewServer, on 127.0.0.1) answering
// DescribeInstanceTopology from Instances. Its settings may change between calls.
type EC2 struct {
	mu        sync.Mutex
	instances []Instance
	pageSize  int
	throttle  int    // calls still to throttle
	failCode  string // every call fails with this code while set
	failHTTP  int
	unknown   bool // instance IDs not in the fixture are an InvalidInstanceID.NotFound error, not left out
	padding   int  // bytes of an unknown element in each answer
	stuck     bool // a page asked with a token answers that token again
	requests  []Request
}

// New returns a stand-in describing instances, DefaultPageSize a page.
func New(instances ...Instance) *EC2 {
	return &EC2{instances: slices.Clone(instances), pageSize: DefaultPageSize}
}

// SetInstances replaces the fixture.
func (e *EC2) SetInstances(instances ...Instance) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.instances = slices.Clone(instances)
}

// SetPageSize sets how many instances a page holds when the call gives no MaxResults.
func (e *EC2) SetPageSize(n int) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.pageSize = max(n, 1)
}

// Throttle answers the next n calls with RequestLimitExceeded (HTTP 503), as EC2 throttles.
func (e *EC2) Throttle(n int) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.throttle = n
}

// Fail answers every call with the error code and HTTP status ("UnauthorizedOperation", 403) until it is
// called with an empty code.
func (e *EC2) Fail(code string, status int) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.failCode, e.failHTTP = code, status
}

// RejectUnknownIDs makes instance IDs that are not in the fixture fail the call with
// InvalidInstanceID.NotFound, naming them (on: as EC2's Describe calls answer an ID they do not know), rather
// than leave them out of the answer (off, the default).
func (e *EC2) RejectUnknownIDs(on bool) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.unknown = on
}

// Pad adds an element the SDK does not know, of n bytes, to every answer (0: none), written as it is sent:
// a hostile or broken endpoint's huge page.
func (e *EC2) Pad(n int) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.padding = n
}

// RepeatTokens makes a page asked for with a NextToken answer that same token as its next one (on), as a
// broken endpoint would: paging never ends, and a paginator that stops on a repeated token reads one page
// of the rest.
func (e *EC2) RepeatTokens(on bool) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.stuck = on
}

// Requests returns the calls served so far, throttled and failed ones too.
func (e *EC2) Requests() []Request {
	e.mu.Lock()
	defer e.mu.Unlock()
	return slices.Clone(e.requests)
}

// credentialRegion finds the region in a SigV4 Authorization header's credential scope.
var credentialRegion = regexp.MustCompile(`Credential=[^/]+/[0-9]+/([^/]+)/ec2/aws4_request`)

// ServeHTTP answers one call of the EC2 query protocol.
func (e *EC2) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		writeError(w, http.StatusMethodNotAllowed, "InvalidAction", "the EC2 query protocol wants POST")
		return
	}
	if err := r.ParseForm(); err != nil {
		writeError(w, http.StatusBadRequest, "MalformedQueryString", err.Error())
		return
	}
	f := r.PostForm
	if f.Get("Action") != "DescribeInstanceTopology" || f.Get("Version") != Version {
		writeError(w, http.StatusBadRequest, "InvalidAction", fmt.Sprintf("the action %s (version %s) is not valid for this web service", f.Get("Action"), f.Get("Version")))
		return
	}
	req := Request{NextToken: f.Get("NextToken"), MaxResults: f.Get("MaxResults")}
	for i := 1; f.Has("InstanceId." + strconv.Itoa(i)); i++ {
		req.InstanceIDs = append(req.InstanceIDs, f.Get("InstanceId."+strconv.Itoa(i)))
	}
	if m := credentialRegion.FindStringSubmatch(r.Header.Get("Authorization")); m != nil {
		req.Region = m[1]
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	e.requests = append(e.requests, req)
	switch {
	case !strings.HasPrefix(r.Header.Get("Authorization"), "AWS4-HMAC-SHA256 "):
		writeError(w, http.StatusUnauthorized, "AuthFailure", "AWS was not able to validate the provided access credentials")
	case e.throttle > 0:
		e.throttle--
		writeError(w, http.StatusServiceUnavailable, "RequestLimitExceeded", "Request limit exceeded.")
	case e.failCode != "":
		writeError(w, e.failHTTP, e.failCode, "the stand-in fails this call")
	default:
		e.answer(w, req)
	}
}

// answer writes the page req asks for.
func (e *EC2) answer(w http.ResponseWriter, req Request) {
	size := e.pageSize
	if req.MaxResults != "" {
		n, err := strconv.Atoi(req.MaxResults)
		switch {
		case len(req.InstanceIDs) > 0:
			writeError(w, http.StatusBadRequest, "InvalidParameterCombination", "MaxResults cannot be specified with InstanceIds")
			return
		case err != nil || n < 5 || n > 100:
			writeError(w, http.StatusBadRequest, "InvalidParameterValue", "MaxResults must be from 5 to 100")
			return
		}
		size = n
	}
	if len(req.InstanceIDs) > 100 {
		writeError(w, http.StatusBadRequest, "InvalidParameterValue", "at most 100 instance IDs may be given")
		return
	}
	selected, unknown := e.selectInstances(req.InstanceIDs)
	if len(unknown) > 0 && e.unknown {
		writeError(w, http.StatusBadRequest, "InvalidInstanceID.NotFound", fmt.Sprintf("The instance IDs '%s' do not exist", strings.Join(unknown, ", ")))
		return
	}
	from := 0
	if req.NextToken != "" {
		n, err := strconv.Atoi(strings.TrimPrefix(req.NextToken, "page-"))
		if err != nil || !strings.HasPrefix(req.NextToken, "page-") || n < 0 || n > len(selected) {
			writeError(w, http.StatusBadRequest, "InvalidParameterValue", "invalid NextToken "+req.NextToken)
			return
		}
		from = n
	}
	to := min(from+size, len(selected))
	answer := response{Xmlns: "http://ec2.amazonaws.com/doc/" + Version + "/", RequestID: "stand-in"}
	for _, i := range selected[from:to] {
		answer.Instances = append(answer.Instances, item{ID: i.ID, Type: i.Type, Group: i.Group, NetworkNodes: i.NetworkNodes,
			Zone: i.Zone, ZoneID: i.ZoneID, CapacityBlock: i.CapacityBlock})
	}
	if to < len(selected) {
		answer.NextToken = "page-" + strconv.Itoa(to)
	}
	if e.stuck && req.NextToken != "" {
		answer.NextToken = req.NextToken
	}
	w.Header().Set("Content-Type", "text/xml;charset=UTF-8")
	_, _ = w.Write([]byte(xml.Header))
	if e.padding == 0 {
		_ = xml.NewEncoder(w).Encode(answer)
		return
	}
	// net/http's client may still be finishing the request when the answer comes at once, and the SDK closes
	// the request's body as soon as the answer's head is read: the connection then breaks under a long body
	// and the SDK asks again. A moment's wait keeps the tests of a huge page to one call.
	time.Sleep(50 * time.Millisecond)
	b, _ := xml.Marshal(answer)
	head, tail, _ := strings.Cut(string(b), "<requestId>")
	_, _ = w.Write([]byte(head + "<padding>"))
	writePadding(w, e.padding)
	_, _ = w.Write([]byte("</padding><requestId>" + tail))
}

// writePadding writes n bytes of text in pieces, never holding them all.
func writePadding(w io.Writer, n int) {
	chunk := []byte(strings.Repeat("x", 64<<10))
	for n > 0 {
		k := min(n, len(chunk))
		if _, err := w.Write(chunk[:k]); err != nil {
			return // the client hung up: what a client that refuses the answer does
		}
		n -= k
	}
}

// selectInstances returns the fixture's instances ids names, in that order (all, by ID, when ids is empty),
// and the ids it does not hold.
func (e *EC2) selectInstances(ids []string) (selected []Instance, unknown []string) {
	if len(ids) == 0 {
		return slices.SortedFunc(slices.Values(e.instances), func(a, b Instance) int { return strings.Compare(a.ID, b.ID) }), nil
	}
	for _, id := range ids {
		i := slices.IndexFunc(e.instances, func(in Instance) bool { return in.ID == id })
		if i < 0 {
			unknown = append(unknown, id)
			continue
		}
		selected = append(selected, e.instances[i])
	}
	return selected, unknown
}

// response is DescribeInstanceTopology's answer in the EC2 query protocol.
type response struct {
	XMLName   xml.Name `xml:"DescribeInstanceTopologyResponse"`
	Xmlns     string   `xml:"xmlns,attr"`
	RequestID string   `xml:"requestId"`
	Instances []item   `xml:"instanceSet>item"`
	NextToken string   `xml:"nextToken,omitempty"`
}

// item is one instance of instanceSet.
type item struct {
	ID            string   `xml:"instanceId"`
	Type          string   `xml:"instanceType"`
	Group         string   `xml:"groupName,omitempty"`
	NetworkNodes  []string `xml:"networkNodeSet>item"`
	Zone          string   `xml:"availabilityZone"`
	ZoneID        string   `xml:"zoneId"`
	CapacityBlock string   `xml:"capacityBlockId,omitempty"`
}

// errorResponse is an error in the EC2 query protocol.
type errorResponse struct {
	XMLName   xml.Name `xml:"Response"`
	Code      string   `xml:"Errors>Error>Code"`
	Message   string   `xml:"Errors>Error>Message"`
	RequestID string   `xml:"RequestID"`
}

// writeError writes an EC2 error answer.
func writeError(w http.ResponseWriter, status int, code, message string) {
	w.Header().Set("Content-Type", "text/xml;charset=UTF-8")
	w.WriteHeader(status)
	_, _ = w.Write([]byte(xml.Header))
	_ = xml.NewEncoder(w).Encode(errorResponse{Code: code, Message: message, RequestID: "stand-in"})
}
