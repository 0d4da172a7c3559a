package ufm

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net/http"
	"os"
)

// newTransport returns an HTTP transport that trusts the system's CAs plus those of cfg.CAFile, or any
// certificate when cfg.InsecureSkipVerify.
func newTransport(cfg Config) (*http.Transport, error) {
	if cfg.CAFile != "" && cfg.InsecureSkipVerify {
		return nil, errors.New("give UFM either a CA file or InsecureSkipVerify, not both")
	}
	tc := &tls.Config{MinVersion: tls.VersionTLS12, InsecureSkipVerify: cfg.InsecureSkipVerify} //nolint:gosec // an explicit, logged choice
	if cfg.CAFile != "" {
		pem, err := os.ReadFile(cfg.CAFile)
		if err != nil {
			return nil, fmt.Errorf("reading the UFM CA file: %w", err)
		}
		pool, err := x509.SystemCertPool()
		if err != nil {
			pool = x509.NewCertPool()
		}
		if !pool.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("the UFM CA file %s holds no PEM certificate", cfg.CAFile)
		}
		tc.RootCAs = pool
	}
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.TLSClientConfig = tc
	return t, nil
}
