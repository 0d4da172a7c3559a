package ufm

import (
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"
	"sync"
)

// API prefixes by authentication scheme. UFM serves the same resources under one prefix per scheme:
// /ufmRest/ for basic authentication (user name and password), /ufmRestV2/ for a session cookie,
// /ufmRestV3/ for an access token. An access token goes in the header "Authorization: Basic <token>" (the
// token as it is, not base64 of user:password). Sources: the "REST API Complementary Information" and
// "Access Tokens API" pages of the NVIDIA UFM Enterprise REST API Guide (v6.x), and the UFM SDK's
// utils/ufm_rest_client.py (github.com/Mellanox/ufm_sdk_3.0), which does the same.
const (
	prefixBasic = "ufmRest"
	prefixToken = "ufmRestV3"
)

// maxSecretBytes bounds a credentials file: a password or a token is short, a larger file is a mistake.
const maxSecretBytes = 64 << 10

// secret is one credential: a fixed value, or the content of a file (a mounted Kubernetes Secret) read
// again for every request, so that a rotated Secret is used without a restart.
type secret struct {
	what  string // "user name", "password", "token": for messages, never the value
	value string
	path  string
	log   *slog.Logger

	mu   sync.Mutex
	last string // the value read last time, to log that the file changed
}

func newSecret(what, value, path string, log *slog.Logger) (*secret, error) {
	if value != "" && path != "" {
		return nil, fmt.Errorf("the UFM %s is given both as a value and as a file (%s); give one", what, path)
	}
	if value == "" && path == "" {
		return nil, nil
	}
	return &secret{what: what, value: value, path: path, log: log}, nil
}

// get returns the credential, reading the file when there is one. Trailing line breaks are dropped (files
// written with echo end in one); an empty file is an error.
func (s *secret) get() (string, error) {
	if s.path == "" {
		return s.value, nil
	}
	f, err := os.Open(s.path)
	if err != nil {
		return "", fmt.Errorf("reading the UFM %s file: %w", s.what, err)
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, maxSecretBytes+1))
	if err != nil {
		return "", fmt.Errorf("reading the UFM %s file %s: %w", s.what, s.path, err)
	}
	if len(b) > maxSecretBytes {
		return "", fmt.Errorf("the UFM %s file %s is larger than %d bytes", s.what, s.path, maxSecretBytes)
	}
	v := strings.TrimRight(string(b), "\r\n")
	if v == "" {
		return "", fmt.Errorf("the UFM %s file %s is empty", s.what, s.path)
	}
	s.mu.Lock()
	changed := s.last != "" && s.last != v
	s.last = v
	s.mu.Unlock()
	if changed {
		s.log.Info("UFM credentials file changed; using its new content", "credential", s.what, "file", s.path)
	}
	return v, nil
}

// credentials authorise requests: with an access token, or with a user name and a password.
type credentials struct {
	token, user, pass *secret
}

func newCredentials(cfg Config, log *slog.Logger) (*credentials, error) {
	var c credentials
	var err error
	if c.token, err = newSecret("token", "", cfg.TokenFile, log); err != nil {
		return nil, err
	}
	if c.user, err = newSecret("user name", cfg.Username, cfg.UsernameFile, log); err != nil {
		return nil, err
	}
	if c.pass, err = newSecret("password", cfg.Password, cfg.PasswordFile, log); err != nil {
		return nil, err
	}
	switch {
	case c.token != nil && (c.user != nil || c.pass != nil):
		return nil, errors.New("give UFM either a token file or a user name and password, not both")
	case c.token == nil && (c.user == nil || c.pass == nil):
		return nil, errors.New("no UFM credentials: give a user name and a password (file), or a token file")
	}
	return &c, nil
}

// authorize returns the Authorization header value and the API prefix for the next request.
func (c *credentials) authorize() (header, prefix string, err error) {
	if c.token != nil {
		tok, err := c.token.get()
		if err != nil {
			return "", "", err
		}
		return "Basic " + tok, prefixToken, nil
	}
	user, err := c.user.get()
	if err != nil {
		return "", "", err
	}
	pass, err := c.pass.get()
	if err != nil {
		return "", "", err
	}
	return "Basic " + base64.StdEncoding.EncodeToString([]byte(user+":"+pass)), prefixBasic, nil
}
