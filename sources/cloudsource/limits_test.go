package cloudsource

import (
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestCappedBodies: an answer up to the limit is read whole, through either wrapper; one past it fails where
// it is read, with an error naming the provider, the request (not its query) and the limit, whether it
// announces its length or not.
func TestCappedBodies(t *testing.T) {
	const limit = 1000
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n, _ := strconv.Atoi(r.URL.Query().Get("n"))
		if r.URL.Query().Get("chunked") == "" {
			w.Header().Set("Content-Length", strconv.Itoa(n))
		}
		for range n / 100 {
			_, _ = w.Write([]byte(strings.Repeat("x", 100)))
			w.(http.Flusher).Flush()
		}
		_, _ = w.Write([]byte(strings.Repeat("x", n%100)))
	}))
	t.Cleanup(srv.Close)
	type result struct {
		Read int
		Err  string
	}
	tooLarge := "test: the answer to GET " + srv.URL + "/list is larger than 1000 bytes: the answer is refused"
	for _, tc := range []struct {
		name  string
		query string
		want  result
	}{
		{name: "under the limit", query: "n=999", want: result{Read: 999}},
		{name: "at the limit", query: "n=1000", want: result{Read: 1000}},
		{name: "at the limit, chunked", query: "n=1000&chunked=1", want: result{Read: 1000}},
		{name: "past the limit, announced", query: "n=1001", want: result{Err: tooLarge}},
		{name: "past the limit, chunked", query: "n=100000&chunked=1", want: result{Read: 1000, Err: tooLarge}},
	} {
		for _, via := range []string{"transport", "doer"} {
			t.Run(tc.name+" via "+via, func(t *testing.T) {
				req, _ := http.NewRequest(http.MethodGet, srv.URL+"/list?"+tc.query, nil)
				var resp *http.Response
				var err error
				if via == "transport" {
					resp, err = (&http.Client{Transport: CapTransport("test", limit, nil)}).Do(req)
				} else {
					resp, err = CapDoer("test", limit, http.DefaultClient).Do(req)
				}
				if err != nil {
					t.Fatal(err)
				}
				defer resp.Body.Close()
				b, err := io.ReadAll(resp.Body)
				got := result{Read: len(b)}
				if err != nil {
					got.Err = err.Error()
					var tl *BodyTooLarge
					if !errors.Is(err, ErrRefused) || !errors.As(err, &tl) || tl.RetryableError() {
						t.Errorf("error %v: want a BodyTooLarge, ErrRefused, not retryable", err)
					}
				}
				if diff := cmp.Diff(tc.want, got); diff != "" {
					t.Errorf("read (-want +got):\n%s", diff)
				}
			})
		}
	}
}

// TestCheckString: a string up to MaxStringBytes passes; a longer one is refused naming the field and the
// owner (cut and made printable), never quoting the string.
func TestCheckString(t *testing.T) {
	long := strings.Repeat("n", MaxStringBytes+1)
	for _, tc := range []struct {
		name, owner, value, want string
	}{
		{name: "short", owner: "i-0a", value: "nn-1"},
		{name: "at the limit", owner: "i-0a", value: long[1:]},
		{name: "past the limit", owner: "i-0a", value: long,
			want: "aws: network node 2 of i-0a is 257 bytes, over the limit of 256 bytes: the answer is refused"},
		{name: "past the limit, a hostile owner", owner: "i-\x1b" + long, value: long,
			want: "aws: network node 2 of i-\\x1b" + long[:125] + "… is 257 bytes, over the limit of 256 bytes: the answer is refused"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := CheckString("aws", "network node 2", tc.owner, tc.value)
			got := ""
			if err != nil {
				got = err.Error()
				if !errors.Is(err, ErrRefused) {
					t.Errorf("%v is no ErrRefused", err)
				}
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("error (-want +got):\n%s", diff)
			}
		})
	}
}

// TestPages: a listing ends on an empty token; a token that came before, one too long, or a page past Max is
// refused, naming the listing and the pages.
func TestPages(t *testing.T) {
	for _, tc := range []struct {
		name   string
		max    int
		tokens []string
		want   string // the error of the last token; "" for none
	}{
		{name: "three pages", tokens: []string{"a", "b", ""}},
		{name: "a token again", tokens: []string{"a", "b", "a"}, want: "list: page 3 gave the page token page 1 gave (\"a\"): the listing would go round: the answer is refused"},
		{name: "the same token twice in a row", tokens: []string{"a", "a"}, want: "list: page 2 gave the page token page 1 gave (\"a\"): the listing would go round: the answer is refused"},
		{name: "a token too long", tokens: []string{strings.Repeat("t", MaxTokenBytes+1)}, want: "list: page 1 gave a page token of 8193 bytes, over the limit of 8192 bytes: the answer is refused"},
		{name: "past Max", max: 2, tokens: []string{"a", "b"}, want: "list: still paging after 2 pages: the answer is refused"},
		{name: "the last page at Max", max: 2, tokens: []string{"a", ""}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := Pages{What: "list", Max: tc.max}
			var err error
			for i, tok := range tc.tokens {
				if err = p.Next(tok); err != nil && i < len(tc.tokens)-1 {
					t.Fatalf("token %d: %v", i, err)
				}
			}
			got := ""
			if err != nil {
				got = err.Error()
			}
			if diff := cmp.Diff(tc.want, got); diff != "" || p.Read() != len(tc.tokens) {
				t.Errorf("error (-want +got):\n%s; %d pages read, want %d", diff, p.Read(), len(tc.tokens))
			}
		})
	}
}
