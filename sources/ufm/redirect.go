package ufm

import (
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
)

// ErrRedirectRefused is the error (under errors.Is) of a request that UFM redirected to another origin
// (scheme, host or port), or whose answer was obtained without the credentials. The credentials (a user name
// and password, or an access token, both sent in the Authorization header) go to UFM's origin only, and an
// answer obtained without them is never used. Such a request is not retried.
var ErrRedirectRefused = errors.New("redirect refused")

// maxRedirects bounds a chain of redirects within UFM's origin.
const maxRedirects = 5

// checkRedirect is the HTTP client's redirect policy (http.Client.CheckRedirect): a redirect within the origin
// of the first request, whose request still carries its credentials, is followed; any other is refused with an
// error naming both addresses. Go's own policy would send the credentials to another port or scheme of the
// same host name (https://ufm to http://ufm:8080, in clear), and follow a redirect to another host without
// them.
func checkRedirect(req *http.Request, via []*http.Request) error {
	first, from := via[0], via[len(via)-1]
	switch {
	case !sameOrigin(first.URL, req.URL):
		return fmt.Errorf("%w: %s redirects to %s, another origin (scheme, host or port) than UFM's %s, which alone is sent the credentials",
			ErrRedirectRefused, showURL(from.URL), showURL(req.URL), origin(first.URL))
	case req.Header.Get("Authorization") != first.Header.Get("Authorization"):
		return fmt.Errorf("%w: %s redirects to %s, and the request lost its credentials on the way", ErrRedirectRefused,
			showURL(from.URL), showURL(req.URL))
	case len(via) > maxRedirects:
		return fmt.Errorf("%w: %s redirects more than %d times, last to %s", ErrRedirectRefused, showURL(first.URL), maxRedirects,
			showURL(req.URL))
	}
	return nil
}

// checkAnswered refuses an answer that did not come from a request to UFM's origin at base carrying the
// credentials auth: whatever redirects led to it, an answer obtained without the credentials is not UFM's.
func checkAnswered(resp *http.Response, base *url.URL, auth string) error {
	last := resp.Request
	switch {
	case last == nil:
		return nil
	case !sameOrigin(base, last.URL):
		return fmt.Errorf("%w: the answer came from %s, another origin than UFM's %s", ErrRedirectRefused, showURL(last.URL), origin(base))
	case last.Header.Get("Authorization") != auth:
		return fmt.Errorf("%w: the answer came from %s, asked without the credentials", ErrRedirectRefused, showURL(last.URL))
	}
	return nil
}

// redirectError is the redirect refusal within err (a *url.Error of the HTTP client, wrapped by retryablehttp),
// alone, for a shorter message; err itself when there is none.
func redirectError(err error) error {
	if uerr, ok := errors.AsType[*url.Error](err); ok && errors.Is(uerr.Err, ErrRedirectRefused) {
		return uerr.Err
	}
	return err
}

// sameOrigin reports whether a and b have the same scheme, host and port (the default port of the scheme when
// none is given).
func sameOrigin(a, b *url.URL) bool {
	return strings.EqualFold(a.Scheme, b.Scheme) && strings.EqualFold(a.Hostname(), b.Hostname()) && port(a) == port(b)
}

// port is u's port, or its scheme's default.
func port(u *url.URL) string {
	if p := u.Port(); p != "" {
		return p
	}
	switch strings.ToLower(u.Scheme) {
	case "https":
		return "443"
	case "http":
		return "80"
	}
	return ""
}

// origin writes u's scheme and host.
func origin(u *url.URL) string { return (&url.URL{Scheme: u.Scheme, Host: u.Host}).String() }

// showURL writes u without user information, query or fragment, which could hold secrets.
func showURL(u *url.URL) string {
	return (&url.URL{Scheme: u.Scheme, Host: u.Host, Path: u.Path, RawPath: u.RawPath}).String()
}
