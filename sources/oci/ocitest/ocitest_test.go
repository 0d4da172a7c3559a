package ocitest

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/oracle/oci-go-sdk/v65/common"
)

var testKey = sync.OnceValues(func() (*Key, error) { return NewKey("us-ashburn-1") })

// answer is what a request got: the status, OCI's error code or the hosts' display names, and the next page.
type answer struct {
	Status int
	Code   string
	Names  []string
	Next   bool
}

// get asks api for ListComputeHosts with query, signed with k when given (the SDK's signer), and decodes the answer.
func get(t *testing.T, base string, query url.Values, k *Key, tamper bool) (answer, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, base+Path+"?"+query.Encode(), nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Date", "Mon, 02 Jun 2025 10:00:00 GMT")
	if k != nil {
		if err := common.DefaultRequestSigner(k.Provider()).Sign(req); err != nil {
			t.Fatal(err)
		}
	}
	if tamper {
		req.URL.RawQuery += "&limit=1"
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var body struct {
		Code  string `json:"code"`
		Items []struct {
			DisplayName string `json:"displayName"`
		} `json:"items"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
		t.Fatal(err)
	}
	a := answer{Status: resp.StatusCode, Code: body.Code, Next: resp.Header.Get("opc-next-page") != ""}
	for _, it := range body.Items {
		a.Names = append(a.Names, it.DisplayName)
	}
	return a, resp.Header.Get("opc-next-page")
}

// TestAPI: the stand-in answers as ListComputeHosts does: pages, limits, errors, signatures.
func TestAPI(t *testing.T) {
	k, err := testKey()
	if err != nil {
		t.Fatal(err)
	}
	machines := Fixture()
	_, hosts := Split(machines)
	q := func(kv ...string) url.Values {
		v := url.Values{"compartmentId": {Compartment}}
		for i := 0; i+1 < len(kv); i += 2 {
			v.Set(kv[i], kv[i+1])
		}
		return v
	}
	tests := []struct {
		name     string
		query    url.Values
		unsigned bool
		tamper   bool
		throttle int
		want     answer
	}{{
		name:  "a first page of three",
		query: q(),
		want:  answer{Status: 200, Names: []string{"gb-a1", "gb-a2", "gb-a3"}, Next: true},
	}, {
		name:  "a smaller limit wins",
		query: q("limit", "2"),
		want:  answer{Status: 200, Names: []string{"gb-a1", "gb-a2"}, Next: true},
	}, {
		name:  "a limit out of range",
		query: q("limit", "0"),
		want:  answer{Status: 400, Code: "InvalidParameter"},
	}, {
		name:  "a page token it did not give",
		query: q("page", "bm90LWEtdG9rZW4"),
		want:  answer{Status: 400, Code: "InvalidParameter"},
	}, {
		name:  "another compartment",
		query: url.Values{"compartmentId": {"ocid1.compartment.oc1..aaaaother"}},
		want:  answer{Status: 404, Code: "NotAuthorizedOrNotFound"},
	}, {
		name:  "no compartment",
		query: url.Values{},
		want:  answer{Status: 400, Code: "MissingParameter"},
	}, {
		name:     "unsigned",
		query:    q(),
		unsigned: true,
		want:     answer{Status: 401, Code: "NotAuthenticated"},
	}, {
		name:   "a signature that does not cover the query sent",
		query:  q(),
		tamper: true,
		want:   answer{Status: 401, Code: "NotAuthenticated"},
	}, {
		name:     "throttled",
		query:    q(),
		throttle: 1,
		want:     answer{Status: 429, Code: "TooManyRequests"},
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			api := New(Compartment, hosts)
			api.Key, api.PageSize = k, 3
			api.Throttle(tc.throttle)
			srv := httptest.NewServer(api)
			defer srv.Close()
			signer := k
			if tc.unsigned {
				signer = nil
			}
			got, _ := get(t, srv.URL, tc.query, signer, tc.tamper)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("answer (-want +got):\n%s", diff)
			}
		})
	}
}

// TestAPIPages: following opc-next-page reads every host once, in order.
func TestAPIPages(t *testing.T) {
	k, err := testKey()
	if err != nil {
		t.Fatal(err)
	}
	machines := Fixture()
	_, hosts := Split(machines)
	api := New(Compartment, hosts)
	api.Key, api.PageSize = k, 3
	srv := httptest.NewServer(api)
	defer srv.Close()
	var names []string
	query := url.Values{"compartmentId": {Compartment}}
	for pages := 1; ; pages++ {
		a, next := get(t, srv.URL, query, k, false)
		if a.Status != 200 {
			t.Fatalf("page %d: %+v", pages, a)
		}
		names = append(names, a.Names...)
		if next == "" {
			if pages != 3 {
				t.Errorf("%d pages, want 3", pages)
			}
			break
		}
		query.Set("page", next)
	}
	var want []string
	for _, m := range machines {
		want = append(want, m.Node.Name)
	}
	if diff := cmp.Diff(want, names); diff != "" {
		t.Errorf("hosts read (-want +got):\n%s", diff)
	}
}

// TestOCID: fixture OCIDs look like OCI's and end in the name they were made from.
func TestOCID(t *testing.T) {
	id := OCID("computelocalblock", "local-1")
	if !strings.HasPrefix(id, "ocid1.computelocalblock.oc1.iad.") || !strings.HasSuffix(id, "local1") || len(id) != len("ocid1.computelocalblock.oc1.iad.")+60 {
		t.Errorf("OCID = %q", id)
	}
	if OCID("computelocalblock", "local-1") != id || OCID("computelocalblock", "local-2") == id {
		t.Error("OCID is not a function of its arguments")
	}
}
