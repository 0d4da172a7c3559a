package ocitest

import (
	"crypto"
	"crypto/md5"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/pem"
	"errors"
	"fmt"
	"net/http"
	"regexp"
	"slices"
	"strings"

	"github.com/oracle/oci-go-sdk/v65/common"
)

// Test identities: a tenancy and a user as OCIDs look, for the key ID the SDK signs with.
const (
	Tenancy = "ocid1.tenancy.oc1..aaaaaaaafabricmaptesttenancy0000000000000000000000000000000"
	User    = "ocid1.user.oc1..aaaaaaaafabricmaptestuser000000000000000000000000000000000000"
)

// Key is an API signing key made for a test: an RSA key pair, the identity it signs for and its region. Its
// Provider gives the SDK static credentials, so that no instance-principal or metadata lookup happens.
type Key struct {
	// Region is the region the credentials name (the SDK derives its default endpoint from it).
	Region string
	// Fingerprint is the public key's fingerprint as OCI writes it (MD5 of the DER form, hex pairs joined by ':').
	Fingerprint string
	// PEM is the private key, PKCS#1 PEM, as an OCI config file's key_file holds it.
	PEM []byte

	public *rsa.PublicKey
}

// NewKey makes a 2048-bit RSA signing key for Tenancy and User in region.
func NewKey(region string) (*Key, error) {
	priv, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		return nil, fmt.Errorf("generating a test signing key: %w", err)
	}
	der, err := x509.MarshalPKIXPublicKey(&priv.PublicKey)
	if err != nil {
		return nil, fmt.Errorf("encoding the test public key: %w", err)
	}
	sum := md5.Sum(der)
	pairs := make([]string, len(sum))
	for i, b := range sum {
		pairs[i] = fmt.Sprintf("%02x", b)
	}
	return &Key{
		Region:      region,
		Fingerprint: strings.Join(pairs, ":"),
		PEM:         pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(priv)}),
		public:      &priv.PublicKey,
	}, nil
}

// KeyID is the keyId the SDK puts in its signatures: "<tenancy>/<user>/<fingerprint>".
func (k *Key) KeyID() string { return Tenancy + "/" + User + "/" + k.Fingerprint }

// Provider returns static credentials that sign with the key (common.NewRawConfigurationProvider).
func (k *Key) Provider() common.ConfigurationProvider {
	return common.NewRawConfigurationProvider(Tenancy, User, k.Region, k.Fingerprint, string(k.PEM), nil)
}

// ConfigFile returns an OCI config file holding the key under profile, its key_file at keyFile.
func (k *Key) ConfigFile(profile, keyFile string) string {
	return fmt.Sprintf("[%s]\nuser=%s\nfingerprint=%s\ntenancy=%s\nregion=%s\nkey_file=%s\n",
		profile, User, k.Fingerprint, Tenancy, k.Region, keyFile)
}

// signatureParam is one `name="value"` parameter of an Authorization header of the Signature scheme.
var signatureParam = regexp.MustCompile(`([a-zA-Z]+)="([^"]*)"`)

// errUnsigned is the error of a request whose Authorization header is not an OCI signature.
var errUnsigned = errors.New(`no OCI request signature (want an authorization header "Signature version=\"1\",keyId=...,signature=...")`)

// verify checks r's Authorization header: the Signature scheme of version 1, rsa-sha256, a keyId and the
// signed headers including (request-target), host and date (or x-date). With k set, the keyId must be k's and
// the signature must verify with k's public key over the signing string OCI's request signing documents: each
// signed header as "name: value", joined by line breaks, (request-target) being the lower-case method, a space
// and the path with its query.
func verify(r *http.Request, k *Key) error {
	auth, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Signature ")
	if !ok {
		return errUnsigned
	}
	params := map[string]string{}
	for _, m := range signatureParam.FindAllStringSubmatch(auth, -1) {
		params[m[1]] = m[2]
	}
	headers := strings.Fields(params["headers"])
	switch {
	case params["version"] != "1" || params["keyId"] == "" || params["signature"] == "":
		return errUnsigned
	case params["algorithm"] != "" && params["algorithm"] != "rsa-sha256":
		return fmt.Errorf("signature algorithm %q: want rsa-sha256", params["algorithm"])
	case !hasAll(headers, "(request-target)", "host") || !(hasAll(headers, "date") || hasAll(headers, "x-date")):
		return fmt.Errorf("signed headers %q: want (request-target), host and date", params["headers"])
	case k == nil:
		return nil
	case params["keyId"] != k.KeyID():
		return fmt.Errorf("keyId %q is not the test key's", params["keyId"])
	}
	lines := make([]string, len(headers))
	for i, h := range headers {
		var v string
		switch h {
		case "(request-target)":
			v = strings.ToLower(r.Method) + " " + r.URL.RequestURI()
		case "host":
			v = r.Host
		default:
			v = r.Header.Get(h)
		}
		lines[i] = h + ": " + v
	}
	sig, err := base64.StdEncoding.DecodeString(params["signature"])
	if err != nil {
		return fmt.Errorf("signature is not base64: %w", err)
	}
	sum := sha256.Sum256([]byte(strings.Join(lines, "\n")))
	if err := rsa.VerifyPKCS1v15(k.public, crypto.SHA256, sum[:], sig); err != nil {
		return fmt.Errorf("signature does not verify: %w", err)
	}
	return nil
}

// hasAll reports whether list holds every one of want.
func hasAll(list []string, want ...string) bool {
	for _, w := range want {
		if !slices.Contains(list, w) {
			return false
		}
	}
	return true
}
