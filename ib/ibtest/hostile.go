package ibtest

import (
	"bufio"
	"fmt"
	"io"
	"strings"
)

// Hostile is a generated capture made to exhaust the memory of whatever reads it: what an attacker who can
// write the capture's ConfigMap (or a broken capture job) gives the aggregator. Its text is written as a
// stream, never held whole, so that a test or benchmark can gzip gigabytes of it into a file of a few MB.
type Hostile struct {
	// Name names the shape in test and benchmark names.
	Name string
	// Write writes the capture's text.
	Write func(w io.Writer) error
}

// hostileSwitchPorts is how many port lines each switch record of the hostile shapes has (port numbers stay
// within the switch's declared ports).
const hostileSwitchPorts = 64

// SwitchesNamingCAs is the shape the issue reproduced: switch records whose port lines each name a new CA
// (one with no record of its own) with a description of descBytes bytes, until about textBytes of text are
// written. 65,000-byte descriptions made a 446 KB gzip take a parser keeping 64 KiB a description to 1.2 GB.
func SwitchesNamingCAs(descBytes int, textBytes int64) Hostile {
	return Hostile{
		Name: fmt.Sprintf("switches-naming-CAs-%dB-descriptions-%s", descBytes, sizeName(textBytes)),
		Write: func(w io.Writer) error {
			bw := bufio.NewWriterSize(w, 1<<20)
			pad := strings.Repeat("x", max(0, descBytes-len("h00000000 mlx5_0 ")))
			var n int64
			ca := 0
			for sw := 0; n < textBytes; sw++ {
				k, err := fmt.Fprintf(bw, "vendid=0x2c9\ndevid=0xd2f0\nswitchguid=0x%016x(%016x)\n"+
					"Switch\t%d \"S-%016x\"\t\t# \"MF0;hostile-%d:MQM9700/U1\" enhanced port 0 lid %d lmc 0\n",
					0xb800000000000000+uint64(sw), 0xb800000000000000+uint64(sw), hostileSwitchPorts, 0xb800000000000000+uint64(sw), sw, sw%0xbfff+1)
				n += int64(k)
				if err != nil {
					return err
				}
				for port := 1; port <= hostileSwitchPorts && n < textBytes; port++ {
					ca++
					k, err := fmt.Fprintf(bw, "[%d]\t\"H-%016x\"[1](%016x) \t\t# \"h%08d mlx5_0 %s\" lid %d 4xNDR\n",
						port, 0x9400000000000000+uint64(ca), 0x9400000000000000+uint64(ca), ca, pad, ca%0xbfff+1)
					n += int64(k)
					if err != nil {
						return err
					}
				}
				if _, err := bw.WriteString("\n"); err != nil {
					return err
				}
				n++
			}
			return bw.Flush()
		},
	}
}

// CARecords is many small records: CA records of descriptions of descBytes bytes, each cabled to a port of
// one of a few switches that have no record (every byte of text becomes a node, a link and a peer), until
// about textBytes of text are written.
func CARecords(descBytes int, textBytes int64) Hostile {
	return Hostile{
		Name: fmt.Sprintf("CA-records-%dB-descriptions-%s", descBytes, sizeName(textBytes)),
		Write: func(w io.Writer) error {
			bw := bufio.NewWriterSize(w, 1<<20)
			pad := strings.Repeat("x", max(0, descBytes-len("h00000000 mlx5_0 ")))
			var n int64
			for ca := 1; n < textBytes; ca++ {
				g := 0x9400000000000000 + uint64(ca)
				k, err := fmt.Fprintf(bw, "caguid=0x%016x\nCa\t1 \"H-%016x\"\t\t# \"h%08d mlx5_0 %s\"\n"+
					"[1](%016x) \t\"S-%016x\"[%d]\t\t# lid %d lmc 0 \"MF0;hostile:MQM9700/U1\" lid 1 4xNDR\n\n",
					g, g, ca, pad, g, 0xb800000000000000+uint64(ca/255), ca%255+1, ca%0xbfff+1)
				n += int64(k)
				if err != nil {
					return err
				}
			}
			return bw.Flush()
		},
	}
}

// RepeatedRecord is a gzip bomb's text: one small valid switch record, then the same port line again and again
// until textBytes are written. It keeps nothing new past its first lines (each repeat is a port already
// linked, a warning the parser caps), and gzip packs it a thousand to one: 1 GB of text in about 1 MB.
func RepeatedRecord(textBytes int64) Hostile {
	return Hostile{
		Name: "repeated-record-" + sizeName(textBytes),
		Write: func(w io.Writer) error {
			bw := bufio.NewWriterSize(w, 1<<20)
			head := "switchguid=0xb800000000000001\n" +
				"Switch\t64 \"S-b800000000000001\"\t\t# \"MF0;bomb:MQM9700/U1\" enhanced port 0 lid 1 lmc 0\n"
			line := "[1]\t\"H-9400000000000001\"[1](9400000000000001) \t\t# \"h1 mlx5_0\" lid 2 4xNDR\n"
			if _, err := bw.WriteString(head); err != nil {
				return err
			}
			for n := int64(len(head)); n < textBytes; n += int64(len(line)) {
				if _, err := bw.WriteString(line); err != nil {
					return err
				}
			}
			return bw.Flush()
		},
	}
}

// LongLine is a capture of one line of lineBytes bytes, with no line end: a valid switch header whose
// description never ends.
func LongLine(lineBytes int64) Hostile {
	return Hostile{
		Name: "one-line-" + sizeName(lineBytes),
		Write: func(w io.Writer) error {
			bw := bufio.NewWriterSize(w, 1<<20)
			head := "Switch\t64 \"S-b800000000000001\"\t\t# \"MF0;"
			if _, err := bw.WriteString(head); err != nil {
				return err
			}
			chunk := strings.Repeat("x", 64<<10)
			for n := int64(len(head)); n < lineBytes; n += int64(len(chunk)) {
				if _, err := bw.WriteString(chunk[:min(int64(len(chunk)), lineBytes-n)]); err != nil {
					return err
				}
			}
			return bw.Flush()
		},
	}
}

// sizeName writes a byte count for a name: "64MiB", "900KiB", "1000B".
func sizeName(n int64) string {
	switch {
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%dMiB", n>>20)
	case n >= 1<<10 && n%(1<<10) == 0:
		return fmt.Sprintf("%dKiB", n>>10)
	}
	return fmt.Sprintf("%dB", n)
}
