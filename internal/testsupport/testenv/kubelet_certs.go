package testenv

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"time"

	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// certValidity is how long the harness's certificates are valid: longer than any test run.
const certValidity = 7 * 24 * time.Hour

// keyPair is a PEM certificate and its PEM private key.
type keyPair struct {
	cert, key []byte
}

// clusterPKI is the certificate authority of a KubeletCluster and every key pair it issued, all ECDSA P-256
// (a whole set takes well under a second; RSA took seconds).
type clusterPKI struct {
	caCert *x509.Certificate
	caKey  *ecdsa.PrivateKey
	ca     keyPair

	apiServer       keyPair // serving
	apiServerClient keyPair // kube-apiserver → kubelet
	kubeletServing  keyPair
	admin           keyPair // system:masters
	kubelet         keyPair // system:node:NAME in system:nodes, for the Node authorizer
	controllerMgr   keyPair
	scheduler       keyPair
	kubeProxy       keyPair
	serviceAccount  []byte // PEM private key signing service-account tokens
}

// Client identities. kube-proxy's user is the one the bootstrap ClusterRoleBinding system:node-proxier names.
const (
	adminUser             = "fabricmap-admin"
	controllerManagerUser = "system:kube-controller-manager"
	schedulerUser         = "system:kube-scheduler"
	kubeProxyUser         = "system:kube-proxy"
)

// newClusterPKI makes the authority and every key pair the cluster needs.
func newClusterPKI(nodeName string, nodeIP, serviceIP net.IP) (*clusterPKI, error) {
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, fmt.Errorf("generating CA key: %w", err)
	}
	now := time.Now()
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "fabricmap-kubelet-cluster-ca"},
		NotBefore:             now.Add(-time.Hour),
		NotAfter:              now.Add(certValidity),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature | x509.KeyUsageCRLSign,
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &caKey.PublicKey, caKey)
	if err != nil {
		return nil, fmt.Errorf("self-signing CA: %w", err)
	}
	caCert, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, fmt.Errorf("parsing CA: %w", err)
	}
	caKeyPEM, err := keyPEM(caKey)
	if err != nil {
		return nil, err
	}
	p := &clusterPKI{caCert: caCert, caKey: caKey, ca: keyPair{cert: certPEM(der), key: caKeyPEM}}
	loopback := net.IPv4(127, 0, 0, 1)
	issues := []struct {
		into   *keyPair
		cn     string
		orgs   []string
		server bool
		dns    []string
		ips    []net.IP
	}{
		{&p.apiServer, "kube-apiserver", nil, true,
			[]string{"kubernetes", "kubernetes.default", "kubernetes.default.svc", "kubernetes.default.svc.cluster.local", "localhost", nodeName},
			[]net.IP{nodeIP, serviceIP, loopback}},
		{&p.apiServerClient, "kube-apiserver-kubelet-client", []string{"system:masters"}, false, nil, nil},
		{&p.kubeletServing, nodeName, nil, true, []string{nodeName, "localhost"}, []net.IP{nodeIP, loopback}},
		{&p.admin, adminUser, []string{"system:masters"}, false, nil, nil},
		{&p.kubelet, "system:node:" + nodeName, []string{"system:nodes"}, false, nil, nil},
		{&p.controllerMgr, controllerManagerUser, nil, false, nil, nil},
		{&p.scheduler, schedulerUser, nil, false, nil, nil},
		{&p.kubeProxy, kubeProxyUser, nil, false, nil, nil},
	}
	for i, is := range issues {
		kp, err := p.issue(int64(i+2), is.cn, is.orgs, is.server, is.dns, is.ips)
		if err != nil {
			return nil, fmt.Errorf("issuing certificate for %s: %w", is.cn, err)
		}
		*is.into = kp
	}
	saKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, fmt.Errorf("generating service-account key: %w", err)
	}
	if p.serviceAccount, err = keyPEM(saKey); err != nil {
		return nil, err
	}
	return p, nil
}

// issue signs a new key pair: a server certificate with the given names, or a client certificate whose
// common name is the user and whose organizations are the groups.
func (p *clusterPKI) issue(serial int64, cn string, orgs []string, server bool, dns []string, ips []net.IP) (keyPair, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return keyPair{}, fmt.Errorf("generating key: %w", err)
	}
	now := time.Now()
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(serial),
		Subject:      pkix.Name{CommonName: cn, Organization: orgs},
		NotBefore:    now.Add(-time.Hour),
		NotAfter:     now.Add(certValidity),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
		DNSNames:     dns,
		IPAddresses:  ips,
	}
	if server {
		tmpl.ExtKeyUsage = []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, p.caCert, &key.PublicKey, p.caKey)
	if err != nil {
		return keyPair{}, fmt.Errorf("signing: %w", err)
	}
	k, err := keyPEM(key)
	if err != nil {
		return keyPair{}, err
	}
	return keyPair{cert: certPEM(der), key: k}, nil
}

func certPEM(der []byte) []byte {
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
}

func keyPEM(k *ecdsa.PrivateKey) ([]byte, error) {
	der, err := x509.MarshalECPrivateKey(k)
	if err != nil {
		return nil, fmt.Errorf("encoding key: %w", err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: der}), nil
}

// writeFiles writes the key pairs the processes read from files into dir, as NAME.crt and NAME.key.
func (p *clusterPKI) writeFiles(dir string) error {
	files := map[string][]byte{
		"ca.crt": p.ca.cert, "ca.key": p.ca.key,
		"apiserver.crt": p.apiServer.cert, "apiserver.key": p.apiServer.key,
		"apiserver-kubelet-client.crt": p.apiServerClient.cert, "apiserver-kubelet-client.key": p.apiServerClient.key,
		"kubelet.crt": p.kubeletServing.cert, "kubelet.key": p.kubeletServing.key,
		"sa.key": p.serviceAccount,
	}
	for name, b := range files {
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o600); err != nil {
			return fmt.Errorf("writing %s: %w", name, err)
		}
	}
	return nil
}

// writeKubeconfig writes a kubeconfig for server authenticating with kp, certificates embedded.
func (p *clusterPKI) writeKubeconfig(path, server, user string, kp keyPair) error {
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["cluster"] = &clientcmdapi.Cluster{Server: server, CertificateAuthorityData: p.ca.cert}
	cfg.AuthInfos[user] = &clientcmdapi.AuthInfo{ClientCertificateData: kp.cert, ClientKeyData: kp.key}
	cfg.Contexts["default"] = &clientcmdapi.Context{Cluster: "cluster", AuthInfo: user}
	cfg.CurrentContext = "default"
	if err := clientcmd.WriteToFile(*cfg, path); err != nil {
		return fmt.Errorf("writing kubeconfig %s: %w", path, err)
	}
	return nil
}

// SelfSignedServingCert returns a PEM certificate and key for a TLS server on ips, signed by its own key, so
// that the certificate is also the CA bundle its clients trust (a webhook configuration's caBundle).
func SelfSignedServingCert(cn string, ips ...net.IP) (cert, key []byte, err error) {
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, fmt.Errorf("generating a key for %s: %w", cn, err)
	}
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: cn},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(24 * time.Hour),
		IsCA:                  true,
		BasicConstraintsValid: true,
		KeyUsage:              x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		IPAddresses:           ips,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &k.PublicKey, k)
	if err != nil {
		return nil, nil, fmt.Errorf("signing the certificate of %s: %w", cn, err)
	}
	key, err = keyPEM(k)
	if err != nil {
		return nil, nil, err
	}
	return certPEM(der), key, nil
}
