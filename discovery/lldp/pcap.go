package lldp

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"
	"github.com/gopacket/gopacket/pcapgo"
)

// CapturedFrame is one LLDP frame from a capture file.
type CapturedFrame struct {
	// Timestamp is when the frame was captured.
	Timestamp time.Time
	// Interface is the capturing interface when the file records it (pcapng), else empty.
	Interface string
	// Data is the whole Ethernet frame.
	Data []byte
}

// pcapngMagic starts every pcapng file (the section header block type).
var pcapngMagic = []byte{0x0a, 0x0d, 0x0d, 0x0a}

// snapLen is the snapshot length WritePcap declares; LLDP frames are far shorter.
const snapLen = 65535

// ReadPcapFile reads every LLDP frame from a pcap or pcapng file; other frames are skipped.
func ReadPcapFile(path string) ([]CapturedFrame, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("open LLDP capture: %w", err)
	}
	defer f.Close()
	frames, err := ReadPcap(f)
	if err != nil {
		return nil, fmt.Errorf("LLDP capture %s: %w", path, err)
	}
	return frames, nil
}

// packetSource is what pcapgo's pcap and pcapng readers have in common.
type packetSource interface {
	ReadPacketData() ([]byte, gopacket.CaptureInfo, error)
	LinkType() layers.LinkType
}

// ReadPcap reads every LLDP frame from a pcap or pcapng stream of Ethernet frames; other frames are skipped.
func ReadPcap(r io.Reader) ([]CapturedFrame, error) {
	br := bufio.NewReader(r)
	magic, _ := br.Peek(len(pcapngMagic))
	var (
		src    packetSource
		ifName func(int) string
		err    error
	)
	if bytes.Equal(magic, pcapngMagic) {
		var ng *pcapgo.NgReader
		ng, err = pcapgo.NewNgReader(br, pcapgo.DefaultNgReaderOptions)
		src = ng
		ifName = func(i int) string {
			ifc, err := ng.Interface(i)
			if err != nil {
				return ""
			}
			return ifc.Name
		}
	} else {
		src, err = pcapgo.NewReader(br)
		ifName = func(int) string { return "" }
	}
	if err != nil {
		return nil, fmt.Errorf("read capture header: %w", err)
	}
	if lt := src.LinkType(); lt != layers.LinkTypeEthernet {
		return nil, fmt.Errorf("link type %v, want Ethernet", lt)
	}
	var frames []CapturedFrame
	for i := 0; ; i++ {
		data, ci, err := src.ReadPacketData()
		if errors.Is(err, io.EOF) {
			return frames, nil
		}
		if err != nil {
			return frames, fmt.Errorf("packet %d: %w", i, err)
		}
		if !isLLDP(data) {
			continue
		}
		frames = append(frames, CapturedFrame{Timestamp: ci.Timestamp, Interface: ifName(ci.InterfaceIndex), Data: data})
	}
}

// isLLDP reports whether an Ethernet frame's ethertype (after at most one 802.1Q tag) is LLDP's; the LLDPDU
// itself is left for Decode to judge.
func isLLDP(frame []byte) bool {
	_, _, err := lldpPayload(frame)
	return err == nil
}

// WritePcap writes frames as a classic pcap stream of Ethernet frames with microsecond timestamps.
func WritePcap(w io.Writer, frames []CapturedFrame) error {
	pw := pcapgo.NewWriter(w)
	if err := pw.WriteFileHeader(snapLen, layers.LinkTypeEthernet); err != nil {
		return fmt.Errorf("write pcap header: %w", err)
	}
	for i, f := range frames {
		ci := gopacket.CaptureInfo{Timestamp: f.Timestamp, CaptureLength: len(f.Data), Length: len(f.Data)}
		if err := pw.WritePacket(ci, f.Data); err != nil {
			return fmt.Errorf("write pcap packet %d: %w", i, err)
		}
	}
	return nil
}
