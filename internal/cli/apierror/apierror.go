// Package apierror tells an API server's refusal in its own words where client-go lost them: only the CLI needs
// it, and it links discovery, which the agent must not.
package apierror

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/rest"
)

// Explain returns err with the API server's own words wherever client-go lost them, so that a person
// can act on it. An API error (apierrors.APIStatus) normally carries them already ("hypernodes.topology.volcano.sh
// is forbidden: User "x" cannot list resource …"). But discovery (the GET of /api and /apis behind every
// client's REST mapper, and of each group's version) decodes no error body: a refusal there reads "unknown".
// For such an error, and for each such group of a discovery.ErrGroupDiscoveryFailed, the same path is read
// again as plain JSON with cfg's credentials, and the Status the API server answers gives the message (e.g.
// `forbidden: User "system:anonymous" cannot get path "/api"`). Any other error, or one the API server no
// longer refuses, is returned as it is; the result still matches err with errors.Is and errors.As.
func Explain(ctx context.Context, cfg *rest.Config, err error) error {
	if err == nil || cfg == nil {
		return err
	}
	text := err.Error()
	changed := false
	if groups, ok := discovery.GroupDiscoveryFailedErrorGroups(err); ok {
		for gv, gerr := range groups {
			if code, lost := lostMessage(gerr); lost {
				if msg, ok := serverMessage(ctx, cfg, code, groupVersionPath(gv)); ok {
					text = strings.Replace(text, fmt.Sprintf("%s: %v", gv, gerr), fmt.Sprintf("%s: %s", gv, msg), 1)
					changed = true
				}
			}
		}
	} else if code, lost := lostMessage(err); lost {
		var status apierrors.APIStatus
		errors.As(err, &status)
		if msg, ok := serverMessage(ctx, cfg, code, "/api", "/apis"); ok {
			if i := strings.LastIndex(text, status.Status().Message); i >= 0 {
				text = text[:i] + msg + text[i+len(status.Status().Message):]
				changed = true
			}
		}
	}
	if !changed {
		return err
	}
	return &explainedError{text: text, err: err}
}

// explainedError is an error told in the API server's words; it unwraps to the error client-go gave.
type explainedError struct {
	text string
	err  error
}

func (e *explainedError) Error() string { return e.text }
func (e *explainedError) Unwrap() error { return e.err }

// lostMessage tells whether err holds an API error whose message client-go could not read from the answer
// (rest.Request's "unknown", with an UnexpectedServerResponse cause), and its HTTP code.
func lostMessage(err error) (int32, bool) {
	var status apierrors.APIStatus
	if !errors.As(err, &status) {
		return 0, false
	}
	s := status.Status()
	if s.Message != "unknown" || s.Details == nil {
		return 0, false
	}
	for _, c := range s.Details.Causes {
		if c.Type == metav1.CauseTypeUnexpectedServerResponse {
			return s.Code, true
		}
	}
	return 0, false
}

// groupVersionPath is the discovery path of gv: /api/v1 for the core group, else /apis/GROUP/VERSION.
func groupVersionPath(gv schema.GroupVersion) string {
	if gv.Group == "" {
		return "/api/" + gv.Version
	}
	return "/apis/" + gv.Group + "/" + gv.Version
}

// serverMessage GETs each path in turn, as plain JSON with cfg's credentials, and returns the message of the
// first Status the API server answers with code; false when none does (the error has passed, or the server
// cannot be reached again).
func serverMessage(ctx context.Context, cfg *rest.Config, code int32, paths ...string) (string, bool) {
	hc, err := rest.HTTPClientFor(cfg)
	if err != nil {
		return "", false
	}
	host := cfg.Host
	if !strings.Contains(host, "://") { // a bare host:port, as rest.Config allows
		host = "https://" + host
	}
	for _, p := range paths {
		u, err := url.JoinPath(host, p)
		if err != nil {
			return "", false
		}
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
		if err != nil {
			return "", false
		}
		req.Header.Set("Accept", "application/json")
		resp, err := hc.Do(req)
		if err != nil {
			return "", false
		}
		body, err := io.ReadAll(io.LimitReader(resp.Body, 1<<16))
		resp.Body.Close()
		if err != nil || int32(resp.StatusCode) != code {
			continue
		}
		var s metav1.Status
		if json.Unmarshal(body, &s) == nil && s.Kind == "Status" && s.Message != "" {
			return s.Message, true
		}
	}
	return "", false
}
