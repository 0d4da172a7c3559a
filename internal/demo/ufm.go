package demo

import (
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"time"

	"github.com/fabricmap/fabricmap/sources/ufm/ufmtest"
)

// UFM's credentials in the demo: the aggregator reads them from files, as from a mounted Secret.
const (
	ufmUser     = "fabricmap-demo"
	ufmPassword = "demo-pa55"
)

// UFMServer answers UFM's REST resources (systems, links, ports under /ufmRest/resources/, with basic
// authentication) from a saved dump, on 127.0.0.1.
type UFMServer struct {
	// URL is the server's base URL, the aggregator's --ufm-url.
	URL string
	// UsernameFile and PasswordFile hold the credentials (--ufm-username-file, --ufm-password-file).
	UsernameFile, PasswordFile string

	srv  *http.Server
	done chan error
}

// ServeUFMDump serves the dump in dumpDir on a free port of 127.0.0.1 and writes the credential files into dir.
func ServeUFMDump(dumpDir, dir string) (*UFMServer, error) {
	u := &UFMServer{UsernameFile: filepath.Join(dir, "ufm-username"), PasswordFile: filepath.Join(dir, "ufm-password"), done: make(chan error, 1)}
	for path, v := range map[string]string{u.UsernameFile: ufmUser, u.PasswordFile: ufmPassword} {
		if err := os.WriteFile(path, []byte(v+"\n"), 0o600); err != nil {
			return nil, fmt.Errorf("writing the UFM credentials: %w", err)
		}
	}
	answers, err := ufmtest.DumpAnswers(dumpDir)
	if err != nil {
		return nil, err
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("listening for the demo's UFM: %w", err)
	}
	u.URL = "http://" + l.Addr().String()
	u.srv = &http.Server{
		Handler:           ufmtest.Handler(ufmUser, ufmPassword, answers),
		ReadHeaderTimeout: 10 * time.Second,
		ErrorLog:          log.New(io.Discard, "", 0),
	}
	go func() { u.done <- u.srv.Serve(l) }()
	return u, nil
}

// Close stops the server.
func (u *UFMServer) Close() error {
	err := u.srv.Close()
	if serr := <-u.done; !errors.Is(serr, http.ErrServerClosed) && err == nil {
		err = serr
	}
	return err
}
