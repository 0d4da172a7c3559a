package lldp

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"
	"github.com/gopacket/gopacket/pcapgo"
)

var update = flag.Bool("update", false, "rewrite testdata/switches.pcap")

const switchesPcap = "switches.pcap"

// fixtureStart is the capture time of the first frame in switches.pcap.
var fixtureStart = time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)

// switchesFixture is what testdata/switches.pcap holds: leaf01 (chassis MAC) and leaf02 (chassis name), an
// IPv4 frame, a truncated LLDP frame, and leaf03 whose 5 s TTL runs out before the last frame (leaf01 again).
func switchesFixture(t testing.TB) []CapturedFrame {
	leaf01 := testAdvert()
	leaf02 := testAdvert()
	leaf02.ChassisMAC, leaf02.ChassisName, leaf02.PortName, leaf02.SystemName = nil, "leaf02", "Ethernet1/2", "leaf02"
	leaf02.ManagementIPv4 = leaf02.ManagementIPv4.Next()
	leaf03 := Advert{ChassisName: "leaf03", PortName: "swp3", TTL: 5 * time.Second}
	ipv4 := append(append(append([]byte{}, testSrcMAC...), testSrcMAC...), 0x08, 0x00, 0x45, 0, 0, 20)
	truncated := mustFrame(t, leaf01)[:30]

	at := func(s int) time.Time { return fixtureStart.Add(time.Duration(s) * time.Second) }
	return []CapturedFrame{
		{Timestamp: at(0), Data: mustFrame(t, leaf01)},
		{Timestamp: at(1), Data: ipv4},
		{Timestamp: at(2), Data: mustFrame(t, leaf02)},
		{Timestamp: at(3), Data: truncated},
		{Timestamp: at(4), Data: mustFrame(t, leaf03)},
		{Timestamp: at(10), Data: mustFrame(t, leaf01)},
	}
}

func mustFrame(t testing.TB, a Advert) []byte {
	t.Helper()
	f, err := a.Frame(testSrcMAC)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

func TestPcapFixture(t *testing.T) {
	path := filepath.Join("testdata", switchesPcap)
	want := switchesFixture(t)
	if *update {
		var buf bytes.Buffer
		if err := WritePcap(&buf, want); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got, err := ReadPcapFile(path)
	if err != nil {
		t.Fatalf("ReadPcapFile: %v (regenerate with go test -run TestPcapFixture -update)", err)
	}
	lldpOnly := append(want[:1:1], want[2:]...)
	if len(got) != len(lldpOnly) {
		t.Fatalf("read %d frames, want the %d LLDP ones", len(got), len(lldpOnly))
	}
	for i := range got {
		if !got[i].Timestamp.Equal(lldpOnly[i].Timestamp) || !bytes.Equal(got[i].Data, lldpOnly[i].Data) {
			t.Errorf("frame %d differs from the fixture's source (regenerate with -update)", i)
		}
	}
}

func TestReadPcapErrors(t *testing.T) {
	if _, err := ReadPcap(bytes.NewReader([]byte("not a capture"))); err == nil {
		t.Error("ReadPcap accepted garbage")
	}
	var buf bytes.Buffer
	w := pcapgo.NewWriter(&buf)
	if err := w.WriteFileHeader(snapLen, layers.LinkTypeRaw); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadPcap(&buf); err == nil {
		t.Error("ReadPcap accepted a capture of raw IP")
	}
	if _, err := ReadPcapFile(filepath.Join(t.TempDir(), "missing.pcap")); err == nil {
		t.Error("ReadPcapFile accepted a missing file")
	}
}

func TestReadPcapng(t *testing.T) {
	var buf bytes.Buffer
	w, err := pcapgo.NewNgWriterInterface(&buf, pcapgo.NgInterface{Name: "ens1f0np0", LinkType: layers.LinkTypeEthernet},
		pcapgo.DefaultNgWriterOptions)
	if err != nil {
		t.Fatal(err)
	}
	f := mustFrame(t, testAdvert())
	ci := gopacket.CaptureInfo{Timestamp: fixtureStart, CaptureLength: len(f), Length: len(f)}
	if err := w.WritePacket(ci, f); err != nil {
		t.Fatal(err)
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	got, err := ReadPcap(&buf)
	if err != nil {
		t.Fatalf("ReadPcap: %v", err)
	}
	if len(got) != 1 || got[0].Interface != "ens1f0np0" || !bytes.Equal(got[0].Data, f) {
		t.Errorf("ReadPcap = %+v", got)
	}
}
