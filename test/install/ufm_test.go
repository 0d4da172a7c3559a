package install

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"path/filepath"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/fabricmap/fabricmap/aggregator"
	"github.com/fabricmap/fabricmap/internal/testsupport/testenv"
	"github.com/fabricmap/fabricmap/sources/ufm/ufmtest"
	"github.com/fabricmap/fabricmap/wellknown"
)

// The admin's own UFM objects, made before the chart is told about them, as docs/install.md says.
const (
	ufmSecretName = "ufm-readonly"
	ufmCAName     = "ufm-ca"
	ufmUser       = "fabricmap-ro"
	// ufmHost is a host of the sources/ufm threetier fixture, behind leaf ib-p1-leaf-1.
	ufmHost = "node-01"
)

// ufmPasswords are the UFM account's password at install and after the rotation.
var ufmPasswords = []string{"first-pa55word", "rotated-pa55word"}

// ufmStandIn is UFM's REST API serving the threetier fixture over HTTPS on the node's address, where the
// aggregator's pods reach it, with a certificate only the admin's CA bundle vouches for. It accepts the
// password held by password and counts the requests it accepted with each password and those it refused.
type ufmStandIn struct {
	url      string
	caPEM    []byte
	password atomic.Value // string
	refused  atomic.Int64
	accepted map[string]*atomic.Int64 // by password
}

// startUFMStandIn serves until t ends: the release keeps polling it after the UFM checks, and a new leader
// must find it there.
func startUFMStandIn(t *testing.T, addr net.IP, passwords ...string) *ufmStandIn {
	t.Helper()
	answers, err := ufmtest.DumpAnswers(filepath.Join(testenv.RepoRoot(), "sources", "ufm", "testdata", "threetier"))
	if err != nil {
		t.Fatal(err)
	}
	certPEM, keyPEM, err := testenv.SelfSignedServingCert("ufm-standin", addr)
	if err != nil {
		t.Fatal(err)
	}
	cert, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		t.Fatal(err)
	}
	u := &ufmStandIn{caPEM: certPEM, accepted: map[string]*atomic.Int64{}}
	for _, p := range passwords {
		u.accepted[p] = &atomic.Int64{}
	}
	u.password.Store(passwords[0])
	handler := ufmtest.HandlerFor(func(user, password string) bool {
		if user != ufmUser || password != u.password.Load().(string) {
			u.refused.Add(1)
			return false
		}
		if n := u.accepted[password]; n != nil {
			n.Add(1)
		}
		return true
	}, answers)
	ln, err := net.Listen("tcp", net.JoinHostPort(addr.String(), "0"))
	if err != nil {
		t.Fatalf("UFM stand-in on the node's address: %v", err)
	}
	srv := &http.Server{Handler: handler, TLSConfig: &tls.Config{Certificates: []tls.Certificate{cert}},
		ReadHeaderTimeout: 10 * time.Second, ErrorLog: log.New(io.Discard, "", 0)}
	go func() {
		if err := srv.ServeTLS(ln, "", ""); err != nil && !errors.Is(err, http.ErrServerClosed) {
			t.Errorf("UFM stand-in: %v", err)
		}
	}()
	t.Cleanup(func() { _ = srv.Close() })
	u.url = "https://" + ln.Addr().String()
	return u
}

// testUFMFromTheAdminsSecret feeds UFM credentials as docs/install.md tells an admin to: their own Secret and
// CA ConfigMap in the release namespace, then `helm upgrade` with ufm.enabled, ufm.existingSecret and
// ufm.caFrom.configMap. The aggregator's pods poll the stand-in over TLS on the node's address; the larger
// tree UFM brings is held until the admin confirms on the Lease, then UFM's hosts appear in the HyperNodes;
// a rotated Secret keeps the polls working without a restart.
func testUFMFromTheAdminsSecret(t *testing.T, ufm *ufmStandIn, cl *testenv.KubeletCluster, admin *helmRun) {
	ctx := context.Background()
	c := cl.Client
	first, rotated := ufmPasswords[0], ufmPasswords[1]

	secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: ufmSecretName},
		StringData: map[string]string{"username": ufmUser, "password": first}}
	ca := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: ufmCAName},
		Data: map[string]string{"ca.crt": string(ufm.caPEM)}}
	for _, o := range []client.Object{secret, ca} {
		if err := c.Create(ctx, o); err != nil {
			t.Fatalf("the admin's %T: %v", o, err)
		}
	}
	admin.run("upgrade", release, chartDir(), "--namespace", namespace, "--reuse-values",
		"--set", "ufm.enabled=true", "--set", "ufm.url="+ufm.url,
		"--set", "ufm.existingSecret="+ufmSecretName, "--set", "ufm.caFrom.configMap="+ufmCAName,
		"--set", "ufm.interval=30s", "--wait", "--timeout", "5m")
	aggs := waitPods(t, cl, "aggregator", 2)
	for _, p := range aggs {
		if !slices.Contains(p.Spec.Containers[0].Args, "--ufm-url="+ufm.url) {
			t.Fatalf("aggregator pod %s does not poll the stand-in: args %v", p.Name, p.Spec.Containers[0].Args)
		}
	}

	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("--- aggregator logs ---\n%s", componentLogs(t, cl, "aggregator", 60))
		}
	})
	// UFM's fabric is larger than the one the agents saw: the tree's tiers and every node's labels would
	// change at once, which the aggregator holds until an admin confirms, as its Event tells them to.
	lease := client.ObjectKey{Namespace: namespace, Name: "fabricmap-aggregator"}
	testenv.Eventually(t, 2*time.Minute, "a RewritesHeld Event on the Lease", func() (bool, string) {
		var events corev1.EventList
		if err := c.List(ctx, &events, client.InNamespace(namespace)); err != nil {
			return false, err.Error()
		}
		for _, e := range events.Items {
			if e.InvolvedObject.Kind == "Lease" && e.InvolvedObject.Name == lease.Name && e.Reason == aggregator.ReasonRewritesHeld {
				return true, ""
			}
		}
		return false, fmt.Sprintf("UFM accepted %d requests and refused %d; HyperNodes %v", ufm.accepted[first].Load(), ufm.refused.Load(), hyperNodes(t, c))
	})
	confirmOnLease(t, c, lease)

	var leaf string
	testenv.Eventually(t, 2*time.Minute, "UFM's host "+ufmHost+" in a HyperNode", func() (bool, string) {
		tree := hyperNodes(t, c)
		leaf = leafOf(tree, tierNames(t, c), ufmHost)
		return leaf != "", fmt.Sprintf("UFM accepted %d requests and refused %d; HyperNodes %v", ufm.accepted[first].Load(), ufm.refused.Load(), tree)
	})
	t.Logf("UFM's %s is in HyperNode %s", ufmHost, leaf)
	if n := ufm.refused.Load(); n > 0 {
		t.Errorf("UFM refused %d requests before the rotation: the Secret's credentials did not reach the aggregator", n)
	}

	// Rotation: UFM takes the new password, then the admin updates their Secret; the kubelet refreshes the
	// mounted files and the running aggregator reads them on its next poll.
	ufm.password.Store(rotated)
	secret.StringData = map[string]string{"password": rotated}
	if err := c.Update(ctx, secret); err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, 3*time.Minute, "a UFM poll with the rotated password", func() (bool, string) {
		return ufm.accepted[rotated].Load() > 0, fmt.Sprintf("refused %d requests so far", ufm.refused.Load())
	})
	now := readyPods(t, c, "aggregator")
	for _, p := range now {
		for _, s := range p.Status.ContainerStatuses {
			if s.RestartCount > 0 {
				t.Errorf("aggregator pod %s restarted %d times across the rotation", p.Name, s.RestartCount)
			}
		}
	}
	if diff := cmp.Diff(podUIDs(aggs), podUIDs(now), cmpopts.SortSlices(func(a, b string) bool { return a < b })); diff != "" {
		t.Errorf("the aggregator pods changed across the rotation (-before +after):\n%s", diff)
	}
	if got := leafOf(hyperNodes(t, c), tierNames(t, c), ufmHost); got != leaf {
		t.Errorf("after the rotation %s is in HyperNode %q, want %q", ufmHost, got, leaf)
	}
}

// confirmOnLease confirms what the aggregator holds, as its Event says: the Lease annotated with the time now.
func confirmOnLease(t *testing.T, c client.Client, key client.ObjectKey) {
	t.Helper()
	var l coordinationv1.Lease
	if err := c.Get(context.Background(), key, &l); err != nil {
		t.Fatal(err)
	}
	patch := client.MergeFrom(l.DeepCopy())
	if l.Annotations == nil {
		l.Annotations = map[string]string{}
	}
	l.Annotations[wellknown.ConfirmDeletionsAnnotation] = time.Now().UTC().Format(time.RFC3339)
	if err := c.Patch(context.Background(), &l, patch); err != nil {
		t.Fatalf("confirming on Lease %s: %v", key, err)
	}
}

func podUIDs(pods []corev1.Pod) []string {
	var uids []string
	for _, p := range pods {
		uids = append(uids, string(p.UID))
	}
	return uids
}
